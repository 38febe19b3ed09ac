import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ExpandEngine } from '../engine.js'
import { InvalidDataError, messages } from '../errors.js'
import { planRequest, type RoutePlanner } from '../plan/request-plan.js'
import { serializeChannel, tracedWriter } from '../trace/channels.js'

/*
 * How an expandable route's replies are written, without a hook of the
 * plugin's own (each hook Fastify runs costs its hook runner on every
 * request). The route's handler (and, before it, the first of the route's own
 * hooks: expandable-route.ts) arms the reply: its `send` checks each body as
 * it is sent, and a 2xx object is written by the compiled serializer of the
 * request's plan, chosen when the body is written (after the application's
 * preSerialization hooks, which may replace it or change the status).
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
export function armReply (request: FastifyRequest, reply: FastifyReply, writing: RouteWriting): void {
  if ((request as Armed)[armedReply] !== null) return
  (request as Armed)[armedReply] = writing
  ;(reply as { send: Send }).send = checkedSend
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
function checkedSend (this: FastifyReply, payload?: unknown): FastifyReply {
  const send = (Object.getPrototypeOf(this) as { send: Send }).send
  const request = this.request as Armed
  const status = this.statusCode
  if (status < 200 || status >= 300 || payload instanceof Error) {
    if (request[replyWriter]) {
      request[replyWriter] = false
      this.serializer(null as never)
    }
    return send.call(this, payload)
  }
  if (!isRawBody(payload)) {
    if (!request[replyWriter]) {
      request[replyWriter] = true
      // An unnamed function: one per reply, and naming it (as a transpiler may do for a named one) costs more than it does.
      this.serializer((data: unknown): string => writeBody(this, request[armedReply]!, data))
    }
    return send.call(this, payload)
  }
  if (status === 204) return send.call(this, payload)
  return send.call(this, new InvalidDataError(messages.unserializedBody(request[armedReply]!.resource, describePayload(payload))))
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
  return tracedWriter(stringify, mechanism, cached)(data)
}

/** A non-2xx body, as Fastify writes it where the reply has no serializer of its own. */
function fastifyBody (reply: FastifyReply, data: unknown): string {
  ;(reply.request as Armed)[replyWriter] = false
  reply.serializer(null as never)
  if (!reply.hasHeader('content-type')) reply.type(jsonContentType)
  // Fastify's serializers write strings (its types also allow what a custom one may return).
  return reply.serialize(data) as string
}
