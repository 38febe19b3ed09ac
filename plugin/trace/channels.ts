import { tracingChannel, type TracingChannel } from 'node:diagnostics_channel'
import type { ExpandDialect } from '../sql/dialects/index.js'
import type { SerializerMechanism } from '../compile/mechanisms.js'

/*
 * The stages of a request as `node:diagnostics_channel` tracing channels
 * (docs/observability.md). Each message is an object built here, holding
 * only what its interface lists: statement texts with placeholders, paths,
 * counts, never a parameter value, a row or a body. So the plugin publishes
 * start/end (and asyncStart/asyncEnd/error) itself instead of
 * `tracePromise`/`traceSync`, which would store the traced function's return
 * value (the rows, the body) in the message's `result`. Every publisher asks
 * `hasSubscribers` first: without a subscriber no message is made.
 */

/** The planning of one request (plan/request-plan.ts, by its route's planner): start, end, and error when it is refused. */
export interface PlanMessage {
  /** The route's path as declared (`/pets/:id`), never the request's URL. */
  readonly route: string
  readonly method: string
  /** The request (`requestToken`). */
  readonly request: RequestToken
  /** Whether the expansion part came from the plan cache; set before `end`. */
  cached: boolean | undefined
  /** Set on `error`: the error's code alone. */
  error?: PublishedFailure
}

/** Which statement of a request: the root's (`page`, `one`, `count`) or a relation path's (`rows`, `ids`, `aggregates`). */
export type StatementKind = 'page' | 'one' | 'count' | 'rows' | 'ids' | 'aggregates'

/** Where a statement sits in a request, known before it runs. */
export interface StatementLabel {
  readonly kind: StatementKind
  /** The relation path it loads, dotted (`owner.employer`); '' for the root. */
  readonly path: string
  /** The database, as OpenTelemetry's `db.system.name` says it: 'sqlite', 'postgresql', 'mysql' (MariaDB's too). */
  readonly system: ExpandDialect['systemName']
  /**
   * The round trip it is sent in: 0 for the root's statements, 1 for a relation of the root, and so on; 0 for
   * every relation's where the database loads in one wave (load/one-wave.ts), sent with the root's.
   */
  readonly wave: number
  /** The distinct keys the statement binds (before padding); undefined for the root's statements and those of one wave. */
  readonly keyCount: number | undefined
  /** The request it loads for (`requestToken`); undefined for `app.expand.load` without a request. */
  readonly request: RequestToken | undefined
}

/** One statement: start, end (its promise made), then asyncStart and asyncEnd when it settles, error before them when it fails. */
export interface LoadMessage extends StatementLabel {
  /** The compiled SQL, with placeholders. */
  readonly sql: string
  /** The rows it returned; set before asyncStart. */
  rowCount: number | undefined
  error?: PublishedFailure
}

/** What wrote a body: a compiled mechanism, or the generic writer past `maxCompilesPerSecond`. */
export type WriterKind = SerializerMechanism | 'generic'

/** One 2xx body written by the compiled serializer: start, end, and error when the data does not fit. */
export interface SerializeMessage {
  /** The request whose body it writes (`requestToken`). */
  readonly request: RequestToken
  readonly mechanism: WriterKind
  /** Whether the serializer cache held the combination's serializer. */
  readonly cached: boolean
  /** The body's length in UTF-8 bytes; set before end. */
  bytes: number | undefined
  error?: PublishedFailure
}

/**
 * An empty frozen object standing for one request in every message published
 * for it, never the request itself (its headers and parameters are not
 * published): what ties a request's statements to its body where several
 * requests are served at once, even within one trace.
 */
export type RequestToken = Readonly<Record<string, never>>

/** Where a request holds its token: a request decoration of the plugin (index.ts), null until a message needs it. */
export const requestTokenKey = Symbol('fastify-expand request token')

/** The token of a load's request, if it has one. */
export function tokenOf (context: { readonly request: object | undefined }): RequestToken | undefined {
  return context.request === undefined ? undefined : requestToken(context.request)
}

/** The token of `request`: the same object for every message of the request, kept on it and gone with it. */
export function requestToken (request: object): RequestToken {
  const holder = request as { [requestTokenKey]?: RequestToken | null }
  return (holder[requestTokenKey] ??= Object.freeze({}))
}

export const planChannel: TracingChannel<unknown, PlanMessage> = tracingChannel('fastify-expand:plan')
export const loadChannel: TracingChannel<unknown, LoadMessage> = tracingChannel('fastify-expand:load')
export const serializeChannel: TracingChannel<unknown, SerializeMessage> = tracingChannel('fastify-expand:serialize')

/**
 * What an error event carries as `error`: the code of the plugin's error
 * (`FST_EXPAND_*`), or 'ERROR' for another, as its message too. Never the
 * error itself: a driver's message (the cause of `FST_EXPAND_DATABASE_ERROR`)
 * may quote a value, and a request error's message names what the request
 * asked. A plain object (the thrown error goes on to Fastify's error
 * handler, as without a subscriber), with the `name`, `message` and `code`
 * an exception recorder reads.
 */
export interface PublishedFailure {
  readonly name: 'FastifyExpandFailure'
  readonly code: string
  readonly message: string
}

export function publishedFailure (error: unknown): PublishedFailure {
  const code = (error as { code?: unknown } | null)?.code
  const published = typeof code === 'string' && /^FST_EXPAND_[A-Z_]+$/.test(code) ? code : 'ERROR'
  return Object.freeze({ name: 'FastifyExpandFailure', code: published, message: published })
}

/**
 * Runs one statement with its events on the load channel: a message made of
 * `label`, the SQL and, once it settles, its row count.
 */
export async function tracedStatement<R> (label: StatementLabel, sql: string, execute: () => Promise<readonly R[]>): Promise<R[]> {
  const message: LoadMessage = {
    kind: label.kind,
    path: label.path,
    system: label.system,
    wave: label.wave,
    keyCount: label.keyCount,
    request: label.request,
    sql,
    rowCount: undefined,
  }
  loadChannel.start.publish(message)
  const pending = execute()
  loadChannel.end.publish(message)
  try {
    const rows = await pending
    message.rowCount = rows.length
    return rows as R[]
  } catch (error) {
    message.error = publishedFailure(error)
    loadChannel.error.publish(message)
    throw error
  } finally {
    loadChannel.asyncStart.publish(message)
    loadChannel.asyncEnd.publish(message)
  }
}

/** A request's planning with its events on the plan channel; `isCached` tells, after `plan`, whether it hit the cache. */
export function tracedPlan<P> (request: object, route: string, method: string, plan: () => P, isCached: () => boolean): P {
  const message: PlanMessage = { route, method, request: requestToken(request), cached: undefined }
  planChannel.start.publish(message)
  try {
    const planned = plan()
    message.cached = isCached()
    return planned
  } catch (error) {
    message.error = publishedFailure(error)
    planChannel.error.publish(message)
    throw error
  } finally {
    planChannel.end.publish(message)
  }
}

/** A body writer that publishes each body's length (never the body) on the serialize channel. */
export function tracedWriter (
  request: object, write: (data: unknown) => string, mechanism: WriterKind, cached: boolean
): (data: unknown) => string {
  return (data) => {
    const message: SerializeMessage = { request: requestToken(request), mechanism, cached, bytes: undefined }
    serializeChannel.start.publish(message)
    try {
      const body = write(data)
      message.bytes = Buffer.byteLength(body)
      return body
    } catch (error) {
      message.error = publishedFailure(error)
      serializeChannel.error.publish(message)
      throw error
    } finally {
      serializeChannel.end.publish(message)
    }
  }
}
