import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import { LruMap } from 'toad-cache'
import { statementLimits } from './statement-cache.js'

export interface NamedStatementOptions {
  /** SQL texts given a name, at most (default 256); later texts run unnamed, as without the wrapper. */
  maxStatements?: number
  /** Longer SQL texts always run unnamed (default 2,048 characters). */
  maxStatementLength?: number
}

/**
 * What Kysely 0.29 reads of a pool and its clients besides Kysely 0.28's `connect`, `end`, `query` and `release`:
 * it cancels a statement (an aborted signal) from a client of its own, made with the pool's `Client` and `options`,
 * naming the backend by the client's `processID`.
 */
interface CancellationSettings {
  Client?: unknown
  options?: object
  processID?: number
}

/** What pg's client accepts besides Kysely's `(sql, parameters)`: a named statement. */
interface NamingClient {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<PostgresQueryResult<R>>
}

/**
 * Wraps a pg pool for Kysely's `PostgresDialect` so that SQL texts that run
 * again are named prepared statements: PostgreSQL parses and plans each once
 * per connection, then only binds and executes it (pg keeps the names of
 * those a connection has prepared). The loader's statements run again and
 * again with other keys (see `StatementTemplates`), so they are the ones that
 * gain. A text is named the second time it is seen; at most `maxStatements`
 * texts are named, and a name is never given to another text, so each
 * connection holds at most that many prepared statements.
 *
 * Not for PgBouncer in transaction pooling mode (before 1.21 it does not
 * follow prepared statements across server connections), and a schema change
 * under a running process may fail a prepared statement whose result columns
 * changed (PostgreSQL's "cached plan must not change result type") until its
 * connection is replaced.
 *
 * ```ts
 * new Kysely({ dialect: new PostgresDialect({ pool: namePreparedStatements(new pg.Pool({ connectionString })) }) })
 * ```
 */
export function namePreparedStatements (pool: PostgresPool, options: NamedStatementOptions = {}): PostgresPool {
  const { maxStatements, maxStatementLength } = statementLimits('namePreparedStatements', options)
  // Names of their own per wrapper: two wrappers over one pool never give one name to two texts.
  const prefix = `fastify_expand_${wrappers++}_`
  const names = new Map<string, string>()
  // Texts seen once, not yet named: a text that never runs again takes no name.
  const seen = new LruMap<true>(maxStatements * 4)
  const nameOf = (sql: string): string | undefined => {
    const name = names.get(sql)
    if (name !== undefined || names.size >= maxStatements || sql.length > maxStatementLength) return name
    if (seen.get(sql) === undefined) {
      seen.set(sql, true)
      return undefined
    }
    seen.delete(sql)
    const created = `${prefix}${names.size}`
    names.set(sql, created)
    return created
  }
  // One wrapper per client: Kysely keeps a connection per client object it is given.
  const clients = new WeakMap<PostgresPoolClient, PostgresPoolClient>()
  const wrap = (client: PostgresPoolClient): PostgresPoolClient => {
    let wrapped = clients.get(client)
    if (wrapped === undefined) {
      const query = (sqlOrCursor: string | PostgresCursor<unknown>, parameters?: ReadonlyArray<unknown>) => {
        if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor)
        const name = nameOf(sqlOrCursor)
        if (name === undefined) return client.query(sqlOrCursor, parameters ?? [])
        const values = parameters === undefined ? [] : [...parameters]
        return (client as unknown as NamingClient).query({ name, text: sqlOrCursor, values })
      }
      const settings = client as unknown as CancellationSettings
      wrapped = { query: query as PostgresPoolClient['query'], release: () => client.release() }
      // Read when asked: pg sets it once the client has connected.
      Object.defineProperty(wrapped, 'processID', { get: () => settings.processID })
      clients.set(client, wrapped)
    }
    return wrapped
  }
  const settings = pool as unknown as CancellationSettings
  const wrapper = {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
    Client: settings.Client,
    options: settings.options,
  }
  // Kysely 0.28's type has neither `Client` nor `options`; 0.29's requires `options`: the pool's own, as given.
  return wrapper as unknown as PostgresPool
}

let wrappers = 0
