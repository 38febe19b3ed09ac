import type { MysqlPool, MysqlPoolConnection, MysqlQueryResult } from 'kysely'
import { statementLimits } from './statement-cache.js'

export interface PreparedMysqlStatementOptions {
  /**
   * Statements each connection keeps prepared (default 256): a new text takes
   * the place of the connection's least recently used, which is closed.
   */
  maxStatements?: number
  /** Longer SQL texts always run unprepared (default 2,048 characters). */
  maxStatementLength?: number
}

/** What mysql2's connection has besides what Kysely calls: its prepared statements. */
interface PreparingConnection extends MysqlPoolConnection {
  execute(sql: string, parameters: unknown[], callback: (error: unknown, result: MysqlQueryResult) => void): void
  unprepare(sql: string): unknown
}

/**
 * Wraps a mysql2 pool for Kysely's `MysqlDialect` so that statements with
 * parameters run as prepared statements (mysql2's `execute`): MariaDB and
 * MySQL parse each text once per connection, then only bind and run it. The
 * loader's statements run again and again with other keys (see
 * `StatementTemplates`), so they are the ones that gain. Statements without
 * parameters, and streams, run as Kysely sends them.
 *
 * Each connection keeps at most `maxStatements` prepared, least recently used
 * closed first: the server's `max_prepared_stmt_count` (16,382 by default) is
 * shared by every connection, so a pool of 10 stays far under it, and a client
 * sending ever new statement shapes cannot take them all. (mysql2 keeps its
 * own per-connection cache too, `maxPreparedStatements`, 16,000 by default;
 * the smaller bound closes first.)
 *
 * The binary protocol binds a JavaScript number as a double: exact for every
 * integer up to 2^53, which is where JavaScript's integers end too (wider keys
 * are bound as text: docs/databases.md, "Wide keys").
 *
 * ```ts
 * new Kysely({ dialect: new MysqlDialect({ pool: prepareMysqlStatements(createPool(uri)) }) })
 * ```
 */
export function prepareMysqlStatements<P extends MysqlPool> (pool: P, options: PreparedMysqlStatementOptions = {}): P {
  const { maxStatements, maxStatementLength } = statementLimits('prepareMysqlStatements', options)
  // Per connection: its prepared texts, least recently used first (a Map keeps insertion order; a hit moves its text last).
  const prepared = new WeakMap<PreparingConnection, Map<string, true>>()
  const preparing = (connection: PreparingConnection): MysqlPoolConnection => {
    const query = (sql: string, parameters: unknown[], callback?: (error: unknown, result: MysqlQueryResult) => void) => {
      if (callback === undefined) return connection.query(sql, parameters)
      if (parameters.length === 0 || sql.length > maxStatementLength) return connection.query(sql, parameters, callback)
      let texts = prepared.get(connection)
      if (texts === undefined) prepared.set(connection, texts = new Map())
      if (!texts.delete(sql) && texts.size >= maxStatements) {
        const oldest = texts.keys().next().value as string
        texts.delete(oldest)
        connection.unprepare(oldest)
      }
      texts.set(sql, true)
      connection.execute(sql, parameters, callback)
    }
    return new Proxy(connection, {
      get: (target, key) => key === 'query' ? query : bound(target, key),
    })
  }
  return new Proxy(pool, {
    get: (target, key) => {
      if (key !== 'getConnection') return bound(target, key)
      return (callback: (error: unknown, connection: MysqlPoolConnection) => void) => {
        target.getConnection((error, connection) => {
          callback(error, error === null || error === undefined ? preparing(connection as PreparingConnection) : connection)
        })
      }
    },
  })
}

/** A member of the wrapped object, its methods called on the object itself (mysql2's read private state). */
function bound (target: object, key: string | symbol): unknown {
  const value: unknown = Reflect.get(target, key)
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
}
