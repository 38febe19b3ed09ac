import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ExpandEngine } from '../engine.js'
import { InvalidDataError, messages } from '../errors.js'
import { planRequest, type RoutePlanner } from '../plan/request-plan.js'
import { serializeChannel, tracedWriter } from '../trace/channels.js'

/*
 * How an expandable route's replies are written, without a hook of the
 * plugin's own (each hook Fastify runs costs its hook runner on every
 * request). The route's handler (and, before it, the first of the route's own
 * hooks: expandable-route.ts) arms the reply: from then on its `send` checks
 * each body as it is sent, and a 2xx object is written by the compiled
 * serializer of the request's plan, chosen when the body is written (after
 * the application's preSerialization hooks, which may replace it or change
 * the status). The `send` of every reply in the plugin's scope is
 * `replySend`'s (a reply decoration, index.ts), which hands an armed reply's
 * bodies to `checkedSend` and any other's to Fastify's own `send`: a reply
 * is never given a `send` of its own, which would make its object another
 * shape than every other reply's (2-4% of a one-pet request through `inject`:
 * benchmarks/profile-notes.md).
 */

/** What a reply of one route needs to be written: made once per route at startup. */
export interface RouteWriting {
  readonly engine: ExpandEngine
  readonly planner: RoutePlanner
  /** The resource's qualified name, for the refusal of a body the plan did not write. */
  readonly resource: string
}

/**
 * A request decoration (see index.ts): the route's writing once its reply is
 * armed, null before. Only `armReply` sets it, once per request.
 */
export const armedReply = Symbol('fastify-expand armed reply')
/** A request decoration: whether the reply's serializer is the plan's writer (set by `checkedSend`). */
export const replyWriter = Symbol('fastify-expand reply writer')

type Armed = FastifyRequest & { [armedReply]: RouteWriting | null; [replyWriter]: boolean }
type Send = FastifyReply['send']

const jsonContentType = 'application/json; charset=utf-8'

/**
 * Makes `reply` write its bodies for `writing`'s route: from now on, each
 * body it is sent goes through `checkedSend`. Once per request: arming again
 * (a route's hook, then its handler) changes nothing.
 */
export function armReply (request: FastifyRequest, writing: RouteWriting): void {
  if ((request as Armed)[armedReply] !== null) return
  (request as Armed)[armedReply] = writing
}

/** Marks the plugin's `send` functions, so that Fastify's own is found below any of them. */
const pluginSend = Symbol('fastify-expand send')

/**
 * The `send` of the replies in the plugin's scope (one per registration of
 * the plugin, a reply decoration): an armed reply's bodies go through
 * `checkedSend`, any other's straight to Fastify's `send`.
 */
export function replySend (): Send {
  let fastifySend: Send | undefined
  const send = function (this: FastifyReply, payload?: unknown): FastifyReply {
    // Found above the prototype holding this function, whichever reply asks first: one look up.
    fastifySend ??= fastifySendAbove(this, send)
    // Undefined on a request of a context made before the plugin's decorations (no route of it is expandable).
    const writing = (this.request as Armed)[armedReply]
    if (writing === null || writing === undefined) return fastifySend.call(this, payload)
    return checkedSend(this, fastifySend, payload)
  } as Send
  Object.defineProperty(send, pluginSend, { value: true })
  return send
}

/**
 * The `send` that `own` (the plugin's, on one of the reply's prototypes)
 * stands in front of: Fastify's, the first up the prototypes above it that is
 * not the plugin's. Never one below it, which a child context may have
 * decorated for its own replies alone.
 */
function fastifySendAbove (reply: FastifyReply, own: Send): Send {
  let above = false
  for (let prototype = Object.getPrototypeOf(reply) as object | null; prototype !== null; prototype = Object.getPrototypeOf(prototype)) {
    const send = Object.getOwnPropertyDescriptor(prototype, 'send')?.value as (Send & { [pluginSend]?: true }) | undefined
    if (send === own) above = true
    else if (above && typeof send === 'function' && send[pluginSend] !== true) return send
  }
  throw new TypeError('a Fastify reply has a send method')
}

/**
 * `reply.send` of an armed reply. A 2xx body Fastify serializes (an object,
 * null, a number) gets the plan's writer as the reply's serializer; a 2xx
 * string, Buffer, stream or no body is refused, since Fastify would send it
 * as it is, past the plan (only a 204 goes, without a body). Anything else, errors and non-2xx replies, goes as
 * on any route, with Fastify's serializer: the writer is taken off if an
 * earlier 2xx body set it (the error handler's body after a body that did
 * not fit).
 */
function checkedSend (reply: FastifyReply, send: Send, payload: unknown): FastifyReply {
  const request = reply.request as Armed
  const status = reply.statusCode
  if (status < 200 || status >= 300 || payload instanceof Error) {
    if (request[replyWriter]) {
      request[replyWriter] = false
      reply.serializer(null as never)
    }
    return send.call(reply, payload)
  }
  if (!isRawBody(payload)) {
    if (!request[replyWriter]) {
      request[replyWriter] = true
      // An unnamed function: one per reply, and naming it (as a transpiler may do for a named one) costs more than it does.
      reply.serializer((data: unknown): string => writeBody(reply, request[armedReply]!, data))
    }
    return send.call(reply, payload)
  }
  if (status === 204) return send.call(reply, payload)
  return send.call(reply, new InvalidDataError(messages.unserializedBody(request[armedReply]!.resource, describePayload(payload))))
}

/**
 * A body Fastify sends as it is, without serialization: no body, a string, a
 * stream (node or web), a Response, a Buffer or another view of bytes.
 */
function isRawBody (payload: unknown): boolean {
  if (payload === undefined || typeof payload === 'string') return true
  if (typeof payload !== 'object' || payload === null) return false
  const candidate = payload as { pipe?: unknown; getReader?: unknown; buffer?: unknown }
  return typeof candidate.pipe === 'function' || typeof candidate.getReader === 'function' ||
    candidate.buffer instanceof ArrayBuffer || Object.prototype.toString.call(payload) === '[object Response]'
}

function describePayload (payload: unknown): string {
  if (payload === undefined) return 'no body'
  if (typeof payload === 'string') return 'a string'
  if ((payload as { buffer?: unknown }).buffer instanceof ArrayBuffer) return 'a Buffer'
  return 'a stream'
}

/**
 * Writes a body sent as a 2xx object. The status is read again: a
 * preSerialization hook may have changed it, and a body that is no longer
 * 2xx is Fastify's to write. The plan is the request's (made now if nothing
 * asked before: a hook's reply before the handler); a failed planning is
 * thrown again, and Fastify answers it as a serialization error.
 */
function writeBody (reply: FastifyReply, writing: RouteWriting, data: unknown): string {
  const status = reply.statusCode
  if (status < 200 || status >= 300) return fastifyBody(reply, data)
  const plan = planRequest(reply.request, writing.planner)
  if (!reply.hasHeader('content-type')) reply.type(jsonContentType)
  if (!serializeChannel.hasSubscribers) return writing.engine.serializerFor(plan.expansion)(data)
  const { stringify, mechanism, cached } = writing.engine.serializers.lookup(plan.expansion)
  return tracedWriter(reply.request, stringify, mechanism, cached)(data)
}

/** A non-2xx body, as Fastify writes it where the reply has no serializer of its own. */
function fastifyBody (reply: FastifyReply, data: unknown): string {
  ;(reply.request as Armed)[replyWriter] = false
  reply.serializer(null as never)
  if (!reply.hasHeader('content-type')) reply.type(jsonContentType)
  // Fastify's serializers write strings (its types also allow what a custom one may return).
  return reply.serialize(data) as string
}
