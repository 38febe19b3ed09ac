import { AsyncLocalStorage } from 'node:async_hooks'
import type { PostgresPool, PostgresPoolClient } from 'kysely'
import { InvalidOptionError, messages } from '../errors.js'

/**
 * What Kysely 0.29 reads of a pool and its clients besides Kysely 0.28's
 * `connect`, `end`, `query` and `release` (see named-statements.ts), and
 * pg's `pipeline` setting, which the pool hands to every client it makes.
 */
interface PoolSettings {
  Client?: unknown
  options?: { pipeline?: unknown }
  processID?: number
}

/**
 * The connections one request's load holds, one per pipelined pool: every
 * statement the load sends on that pool goes to the same connection, each
 * sent as soon as it is made (pg's pipeline mode), and the connection goes
 * back to its pool once the load has ended and its last statement answered.
 */
class StatementLease {
  readonly held = new Map<PipelinedPool, HeldConnection>()
  ended = false

  end (): void {
    this.ended = true
    for (const held of this.held.values()) held.releaseIfDone()
  }
}

/** A connection a lease holds: pg's client, the statements using it now, and whether one saw it fail. */
class HeldConnection {
  users = 0
  failed = false
  private released = false

  constructor (
    private readonly lease: StatementLease,
    readonly client: Promise<PostgresPoolClient>
  ) {}

  releaseIfDone (): void {
    if (!this.lease.ended || this.users > 0 || this.released) return
    this.released = true
    // A client the pool could not give needs no release.
    this.client.then((client) => { releaseClient(client, this.failed) }, () => {})
  }
}

/** The object Kysely is given for a pg client, and the lease holding the client now (none: a statement of its own). */
interface HandleState {
  handle: PostgresPoolClient
  held: HeldConnection | undefined
}

/** A client of the pool, which must run in pipeline mode: pg before 8.23 ignores the setting and would run one statement at a time. */
function pipelined (client: PostgresPoolClient): PostgresPoolClient {
  if ((client as { pipeline?: unknown }).pipeline === true) return client
  client.release()
  throw new InvalidOptionError(messages.poolNotPipelined)
}

/** Back to the pool; destroyed instead where a statement saw it fail (pg's `release(error)`). */
function releaseClient (client: PostgresPoolClient, failed: boolean): void {
  (client.release as (error?: boolean) => void).call(client, failed || undefined)
}

interface PipelinedPool {
  connect(): Promise<PostgresPoolClient>
}

const leases = new AsyncLocalStorage<StatementLease>()
// Until a pipelined pool exists, loads run without a lease: no asynchronous context is kept for nothing.
let pipelinedPools = 0

/**
 * Runs `load` (a request's loading: its route's statements and its relations')
 * with one connection per pipelined pool (`pipelineStatements`) for all its
 * statements; without a pipelined pool, just runs it.
 */
export async function withStatementLease<T> (load: () => Promise<T>): Promise<T> {
  if (pipelinedPools === 0 || leases.getStore() !== undefined) return await load()
  const lease = new StatementLease()
  try {
    return await leases.run(lease, load)
  } finally {
    lease.end()
  }
}

/**
 * Runs `call` outside the request's lease: code of the application's (a
 * relation's function) may open a transaction, which must have a connection
 * of its own, never the one the load's statements are pipelined on.
 */
export function outsideStatementLease<T> (call: () => T): T {
  return pipelinedPools === 0 ? call() : leases.exit(call)
}

/**
 * Wraps a pg pool whose clients run in pipeline mode (`new pg.Pool({ ...,
 * pipeline: true })`, pg 8.23 or later) for Kysely's `PostgresDialect`, so
 * that the statements of one request's load go to one connection, each sent
 * without waiting for the answer to the one before: the page, its count and
 * the relations of one wave (load/one-wave.ts) cost the server one
 * connection's work and the client one connection's reads, where a pool
 * hands each to a connection of its own. PostgreSQL answers them in order;
 * each is still a statement of its own (a failing one fails alone).
 *
 * Only the plugin's loading holds a connection this way (its route's
 * statements, its relations', `app.expand.load`); any other statement, a
 * transaction among them, takes a connection of the pool as usual. Composes
 * with `namePreparedStatements` (that one outside):
 *
 * ```ts
 * const pool = new pg.Pool({ connectionString, pipeline: true })
 * new Kysely({ dialect: new PostgresDialect({ pool: namePreparedStatements(pipelineStatements(pool)) }) })
 * ```
 */
export function pipelineStatements (pool: PostgresPool): PostgresPool {
  const settings = pool as unknown as PoolSettings
  if (settings.options?.pipeline !== true) {
    throw new InvalidOptionError(messages.poolNotPipelined)
  }
  pipelinedPools++
  // One wrapper per client: Kysely keeps a connection per client object it is given.
  const handles = new WeakMap<PostgresPoolClient, HandleState>()
  const handleOf = (client: PostgresPoolClient, held: HeldConnection | undefined): PostgresPoolClient => {
    let entry = handles.get(client)
    if (entry === undefined) {
      const state: HandleState = { handle: undefined as unknown as PostgresPoolClient, held }
      const query = client.query as (...values: unknown[]) => unknown
      const handle = {
        query: ((...args: unknown[]) => query.apply(client, args)) as PostgresPoolClient['query'],
        release: (error?: unknown) => {
          const current = state.held
          if (current === undefined) {
            releaseClient(client, error !== undefined && error !== false)
            return
          }
          if (error !== undefined && error !== false) current.failed = true
          current.users--
          current.releaseIfDone()
        },
      }
      // Read when asked: pg sets it once the client has connected (Kysely 0.29 cancels a statement by it).
      Object.defineProperty(handle, 'processID', { get: () => (client as unknown as PoolSettings).processID })
      state.handle = handle as unknown as PostgresPoolClient
      entry = state
      handles.set(client, entry)
    }
    entry.held = held
    return entry.handle
  }
  const wrapper: PipelinedPool & { end: () => Promise<void>; Client: unknown; options: unknown } = {
    async connect () {
      const lease = leases.getStore()
      if (lease === undefined || lease.ended) return handleOf(await pool.connect(), undefined)
      let held = lease.held.get(wrapper)
      if (held === undefined) {
        held = new HeldConnection(lease, pool.connect().then(pipelined))
        lease.held.set(wrapper, held)
      }
      held.users++
      try {
        return handleOf(await held.client, held)
      } catch (error) {
        held.users--
        throw error
      }
    },
    end: async () => { await pool.end() },
    Client: settings.Client,
    options: settings.options,
  }
  return wrapper as unknown as PostgresPool
}
