import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import { LruMap } from 'toad-cache'
import { statementLimits } from './statement-cache.js'

export interface NamedStatementOptions {
  /**
   * Names held at once (default 256): a new text takes the place of the least
   * recently used, which is deallocated on each connection that prepared it.
   */
  maxStatements?: number
  /**
   * Longer SQL texts always run unnamed (default 16,384 characters: a request's wave of statements goes out as one
   * statement, plugin/sql/combined-statements.ts, a few thousand characters for a plan of a few relations).
   */
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
 * What pg's JavaScript client records of a connection's named statements:
 * those the server has parsed, and those sent and not yet parsed.
 */
interface PgConnection {
  parsedStatements: Record<string, string | undefined>
  submittedNamedStatements?: Record<string, string | undefined>
}

/** The names one connection was sent, and the eviction count it last deallocated up to. */
interface ConnectionNames {
  readonly connection: PgConnection
  readonly sent: Set<string>
  checked: number
}

/**
 * Wraps a pg pool for Kysely's `PostgresDialect` so that SQL texts that run
 * again are named prepared statements: PostgreSQL parses and plans each once
 * per connection, then only binds and executes it (pg keeps the names of
 * those a connection has prepared). The loader's statements run again and
 * again with other keys (see `StatementTemplates`), so they are the ones that
 * gain. A text is named the second time it is seen.
 *
 * At most `maxStatements` names are held, least recently used dropped first,
 * so a client sending ever new statement shapes cannot take them all for
 * good. A name is never given to another text; a dropped one is deallocated
 * (`DEALLOCATE`) on each connection that prepared it, sent on that connection
 * before its next statement, so no connection holds more than `maxStatements`
 * prepared statements. Names are given only on pg's JavaScript client, whose
 * record of what a connection has prepared tells what to deallocate; on any
 * other client every text runs unnamed.
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
  const { maxStatements, maxStatementLength } = statementLimits('namePreparedStatements', options, 16_384)
  // Names of their own per wrapper: two wrappers over one pool never give one name to two texts.
  const prefix = `fastify_expand_${wrappers++}_`
  let nextName = 0
  // Named texts, least recently used first (a Map keeps insertion order; a hit moves its text last).
  const names = new Map<string, string>()
  const liveNames = new Set<string>()
  // Names dropped so far: a connection that has seen fewer looks for names to deallocate.
  let evictions = 0
  // Texts seen once, not yet named: a text that never runs again takes no name.
  const seen = new LruMap<true>(maxStatements * 4)
  const nameOf = (sql: string): string | undefined => {
    if (sql.length > maxStatementLength) return undefined
    const name = names.get(sql)
    if (name !== undefined) {
      names.delete(sql)
      names.set(sql, name)
      return name
    }
    if (seen.get(sql) === undefined) {
      seen.set(sql, true)
      return undefined
    }
    seen.delete(sql)
    if (names.size >= maxStatements) {
      const [oldestText, oldestName] = names.entries().next().value as [string, string]
      names.delete(oldestText)
      liveNames.delete(oldestName)
      evictions++
    }
    const created = `${prefix}${nextName++}`
    names.set(sql, created)
    liveNames.add(created)
    return created
  }
  /**
   * Sends `DEALLOCATE` for the dropped names this connection has prepared,
   * ahead of its next statement (pg runs a client's queries in order). A name
   * still being prepared is left for a later look; one that failed to prepare
   * is forgotten.
   */
  const deallocateDropped = (client: PostgresPoolClient, state: ConnectionNames): void => {
    state.checked = evictions
    const dropped: string[] = []
    for (const name of state.sent) {
      if (liveNames.has(name)) continue
      if (state.connection.submittedNamedStatements?.[name] !== undefined) {
        state.checked = -1
        continue
      }
      state.sent.delete(name)
      if (state.connection.parsedStatements[name] !== undefined) dropped.push(name)
    }
    if (dropped.length === 0) return
    client.query(dropped.map((name) => `deallocate "${name}"`).join('; '), []).then(() => {
      for (const name of dropped) delete state.connection.parsedStatements[name]
    }, () => {
      // Say an aborted transaction refused it: the names are still prepared, try again later.
      for (const name of dropped) state.sent.add(name)
      state.checked = -1
    })
  }
  // Per pg connection (a pool may hand out another object over the same one): what it was sent.
  const connections = new WeakMap<PgConnection, ConnectionNames>()
  const namesOfConnection = (client: PostgresPoolClient): ConnectionNames | undefined => {
    const connection = pgConnectionOf(client)
    if (connection === undefined) return undefined
    let state = connections.get(connection)
    if (state === undefined) {
      state = { connection, sent: new Set(), checked: evictions }
      connections.set(connection, state)
    }
    return state
  }
  // One wrapper per client: Kysely keeps a connection per client object it is given.
  const clients = new WeakMap<PostgresPoolClient, PostgresPoolClient>()
  const wrap = (client: PostgresPoolClient): PostgresPoolClient => {
    let wrapped = clients.get(client)
    if (wrapped === undefined) {
      const state = namesOfConnection(client)
      const query = (sqlOrCursor: string | PostgresCursor<unknown>, parameters?: ReadonlyArray<unknown>) => {
        if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor)
        const name = state === undefined ? undefined : nameOf(sqlOrCursor)
        if (state !== undefined && state.checked !== evictions) deallocateDropped(client, state)
        if (name === undefined) return client.query(sqlOrCursor, parameters ?? [])
        state!.sent.add(name)
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

/** pg's record of a client's prepared statements, or undefined on a client that keeps none (pg-native, say). */
function pgConnectionOf (client: PostgresPoolClient): PgConnection | undefined {
  const connection = (client as { connection?: { parsedStatements?: unknown } }).connection
  const parsed = connection?.parsedStatements
  return typeof parsed === 'object' && parsed !== null ? connection as PgConnection : undefined
}

let wrappers = 0
