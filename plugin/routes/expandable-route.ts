import type { FastifyReply, FastifyRequest, FastifySchema, RouteHandlerMethod, RouteOptions } from 'fastify'
import { unknownKey } from '../graph/checks.js'
import type { ExpandEngine, RegisteredTarget } from '../engine.js'
import { InvalidOptionError, messages } from '../errors.js'
import { listTargetOf, planRequest, routePlanner, type RoutePlanner } from '../plan/request-plan.js'
import type { ResolvedOptions } from '../options.js'
import { isResource, type AnyResource } from '../graph/resource.js'
import { expandableSetting, markPrepared } from './route-declarations.js'
import { planChannel, tracedPlan } from '../trace/channels.js'
import type { ExpandedListsOption } from './expanded-list-declarations.js'
import { armReply, type RouteWriting } from './reply-writer.js'

/** The `expandable` route option (also accepted as `config.expandable`). */
export interface ExpandableRouteOptions {
  /** The resource the payload is, or its name in the registry. */
  resource: AnyResource | string
  /** The payload is an array of the resource (or, with `envelope`, an object holding one). */
  list?: boolean
  /** List payloads: the property of the payload object holding the array; other properties pass through. */
  envelope?: string
  /** List routes: the expansion paths a client may request (prefixes included). Absent: every path. */
  permitListExpands?: readonly string[]
  /**
   * Any route, list or detail: the expansion paths a client may request
   * (prefixes included). Absent: every path. Not with permitListExpands.
   */
  permitExpands?: readonly string[]
  /**
   * Paths expanded when the request has no `expand` parameter at all
   * (`expand=` asks for none). With permitExpands (or permitListExpands on a list route), each must be permitted.
   */
  defaultExpand?: readonly string[]
  /**
   * To-many relation paths (`pets`, `owner.pets`) whose expanded arrays a
   * request may order, limit and narrow: `sort[pets]=-born,name`,
   * `limit[pets]=5`, `where[pets.species]=cat`, `where[pets.born][gte]=2020-01-01`.
   */
  expandedLists?: ExpandedListsOption
  /**
   * The OpenAPI document marks this route's default fields `required` (the
   * plugin option of the same name, for this route); its description says so.
   */
  openApiRequiredDefaults?: boolean
}

const routeOptionKeys = new Set([
  'resource', 'list', 'envelope', 'permitListExpands', 'permitExpands', 'defaultExpand', 'expandedLists', 'openApiRequiredDefaults',
])
/** The phases before the handler, in the order Fastify runs them: a hook of any of them may reply. */
const phasesBeforeHandler = ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const

/**
 * Prepares an `expandable` route at startup: its plan target, its planner
 * (kept in the route's config for hooks that ask before the handler), and a
 * handler that arms the reply (reply-writer.ts: the compiled serializer for
 * 2xx bodies, the check of every body sent) and plans the request if nothing
 * asked yet. No hook of the plugin's own: the first of the route's own hooks
 * arms the reply too, so that a reply one of them sends is written alike.
 * The plan is made when first needed: the route's preHandler hooks
 * (authentication) run before it unless one of them asks.
 */
export function prepareRoute (engine: ExpandEngine, routeOptions: RouteOptions): void {
  const setting = expandableSetting(routeOptions)
  if (setting === undefined || setting === false) return
  const context = `Route ${String(routeOptions.method)} ${routeOptions.url}`
  checkRouteSetting(setting, context)
  let target: RegisteredTarget
  try {
    target = engine.target(setting.resource, {
      list: setting.list,
      envelope: setting.envelope,
      permittedExpands: setting.permitExpands ?? setting.permitListExpands,
      permitOption: setting.permitExpands === undefined ? 'permitListExpands' : 'permitExpands',
      defaultExpand: setting.defaultExpand,
      expandedLists: setting.expandedLists,
    }, context)
  } catch (error) {
    // An unknown resource or path here is a mistake in the route's options, not in a definition.
    throw new InvalidOptionError((error as Error).message)
  }
  if (routeOptions.schema !== undefined) routeOptions.schema = withExpansionParameters(routeOptions.schema, engine.options, context)
  // A generated list route's requests are planned with their list part (routes/resource-routes.ts).
  const list = listTargetOf(routeOptions.config)
  const planner: RoutePlanner = (request) => {
    if (!planChannel.hasSubscribers) return engine.planRequest(target, request, list)
    const misses = engine.planMisses
    const plan = () => engine.planRequest(target, request, list)
    return tracedPlan(request, routeOptions.url, request.method, plan, () => engine.planMisses === misses)
  }
  routeOptions.config = { ...routeOptions.config, expandable: setting, [routePlanner]: planner } as typeof routeOptions.config
  const writing: RouteWriting = { engine, planner, resource: target.node.qualifiedName }
  routeOptions.handler = armedHandler(routeOptions.handler, writing)
  armInFirstHook(routeOptions, writing)
  markPrepared(routeOptions)
}

/**
 * The route's schema, checked and completed for expansion (a new object: the
 * user's schema is never changed). The 2xx body is written by the compiled
 * serializer of each request, so a 2xx (or default) response schema would be
 * silently ignored: it is refused. A querystring schema gets the expansion
 * parameters declared, so that `additionalProperties: false` (which Fastify's
 * validator enforces by removing unknown properties) cannot drop them.
 */
function withExpansionParameters (schema: FastifySchema, options: ResolvedOptions, context: string): FastifySchema {
  const response = schema.response as Record<string, unknown> | undefined
  if (typeof response === 'object' && response !== null) {
    const success = Object.keys(response).filter((status) => /^(2\d\d|2xx|default)$/i.test(status))
    if (success.length > 0) {
      throw new InvalidOptionError(messages.successSchema(context, success))
    }
  }
  const querystring = schema.querystring as Record<string, unknown> | undefined
  if (querystring === undefined) return schema
  if (typeof querystring !== 'object' || querystring === null || querystring.type !== 'object' ||
    (querystring.properties !== undefined && (typeof querystring.properties !== 'object' || querystring.properties === null))) {
    throw new InvalidOptionError(messages.querystringSchema(context, options.expandParam, options.fieldsParam, options.omitParam))
  }
  const declared = (querystring.properties ?? {}) as Record<string, unknown>
  const properties: Record<string, unknown> = {}
  for (const name of [options.expandParam, options.fieldsParam, options.omitParam]) {
    for (const key of [name, `${name}[]`]) {
      if (!Object.hasOwn(declared, key)) properties[key] = expansionParameterSchema()
    }
  }
  // Bracketed forms other than `[]` (`expand[0]`, `expand[x]`) must reach the plugin too: it reads or refuses them.
  const patternProperties: Record<string, unknown> = {}
  for (const name of [options.expandParam, options.fieldsParam, options.omitParam]) {
    patternProperties[`^${name.replace(/[.-]/g, '\\$&')}\\[[^\\]]+\\]$`] = expansionParameterSchema()
  }
  return {
    ...schema,
    querystring: {
      ...querystring,
      properties: { ...properties, ...declared },
      patternProperties: { ...patternProperties, ...(querystring.patternProperties as Record<string, unknown> | undefined) },
    },
  }
}

/** A comma list, once or repeated: what readParam takes. */
function expansionParameterSchema (): Record<string, unknown> {
  return { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }
}

/**
 * The route's handler, after its reply is armed and the request planned: an
 * invalid `expand`, `fields` or `omit` is answered 400 before the handler
 * runs, as it is when a hook asks first (it is thrown there).
 */
function armedHandler (handler: RouteHandlerMethod, writing: RouteWriting): RouteHandlerMethod {
  return function expandableHandler (this: ThisParameterType<RouteHandlerMethod>, request, reply) {
    armReply(request, writing)
    planRequest(request, writing.planner)
    return handler.call(this, request, reply)
  }
}

/**
 * Puts the arming of the reply before the first of the route's own hooks,
 * in the same phase: one more function in a hook list the route runs anyway.
 * A route without hooks of its own before the handler gets none.
 */
function armInFirstHook (routeOptions: RouteOptions, writing: RouteWriting): void {
  const phase = phasesBeforeHandler.find((name) => asArray(routeOptions[name]).length > 0)
  if (phase === undefined) return
  const hooks = asArray(routeOptions[phase] as Array<(...parameters: never[]) => unknown> | undefined)
  type PayloadDone = (error: null, payload: unknown) => void
  const arm = phase === 'preParsing'
    ? function armReplyHook (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadDone) {
      armReply(request, writing)
      done(null, payload)
    }
    : function armReplyHook (request: FastifyRequest, reply: FastifyReply, done: () => void) {
      armReply(request, writing)
      done()
    }
  ;(routeOptions as unknown as Record<string, unknown>)[phase] = [arm, ...hooks]
}

function checkRouteSetting (setting: ExpandableRouteOptions, context: string): void {
  const fail = (message: string): never => { throw new InvalidOptionError(message) }
  if (typeof setting !== 'object' || setting === null) fail(messages.routeSettingNotObject(context))
  const unknown = unknownKey(setting, routeOptionKeys)
  if (unknown !== undefined) fail(messages.unknownRouteOption(context, unknown))
  if (!isResource(setting.resource) && typeof setting.resource !== 'string') fail(messages.badRouteResource(context))
  if (setting.list !== undefined && typeof setting.list !== 'boolean') fail(messages.badRouteList(context))
  if (setting.openApiRequiredDefaults !== undefined && typeof setting.openApiRequiredDefaults !== 'boolean') {
    fail(messages.badOpenApiRequiredDefaults(`${context}: expandable`))
  }
  if (setting.envelope !== undefined && (typeof setting.envelope !== 'string' || setting.envelope === '')) {
    fail(messages.badRouteEnvelope(context))
  }
  if (setting.envelope !== undefined && setting.list !== true) fail(messages.envelopeNeedsList(context))
  if (setting.permitListExpands !== undefined &&
    (!Array.isArray(setting.permitListExpands) || !setting.permitListExpands.every((path) => typeof path === 'string'))) {
    fail(messages.badPermitListExpands(context))
  }
  if (setting.permitListExpands !== undefined && setting.list !== true) {
    fail(messages.permitListExpandsNeedsList(context))
  }
  if (setting.permitExpands !== undefined &&
    (!Array.isArray(setting.permitExpands) || !setting.permitExpands.every((path) => typeof path === 'string'))) {
    fail(messages.badPermitExpands(context))
  }
  if (setting.permitExpands !== undefined && setting.permitListExpands !== undefined) fail(messages.permitExpandsAndListExpands(context))
  if (setting.defaultExpand !== undefined &&
    (!Array.isArray(setting.defaultExpand) || !setting.defaultExpand.every((path) => typeof path === 'string'))) {
    fail(messages.badDefaultExpand(context))
  }
}

function asArray<T> (value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}
