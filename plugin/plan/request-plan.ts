import type { FastifyRequest } from 'fastify'
import { NoPlanError, messages } from '../errors.js'
import type { ExpandedLists } from './expanded-list-plan.js'
import type { ListPlan, ListTarget } from './list-plan.js'
import type { ExpansionPlan } from './plan.js'

/**
 * Everything one request asks, validated for its caller: the only thing the
 * stages after planning read (the generated routes' handlers, load, select,
 * explain, the serializer). Made once per request from the query object as
 * it is then, with the `fieldsFor` answers of that moment; immutable.
 */
export interface RequestPlan {
  /** What the body holds: shared by every request asking the same (engine.ts caches it). */
  readonly expansion: ExpansionPlan
  /** On a generated list route: its filters, sort keys, cursor and page, this request's own. Undefined elsewhere. */
  readonly list: ListPlan | undefined
  /**
   * On a route declaring `expandedLists`: the order, per-parent limit and
   * conditions this request asks of its expanded to-many relations, by
   * planned field. Undefined when it asks none (and on any other route).
   */
  readonly expandedLists: ExpandedLists | undefined
}

/** Plans one request of one route (routes/expandable-route.ts makes one per expandable route). */
export type RoutePlanner = (request: FastifyRequest) => RequestPlan

/**
 * Where an expandable route keeps its planner in its config, so that a hook
 * asking `request.expansion` before the handler finds it.
 */
export const routePlanner = Symbol('fastify-expand planner')

/**
 * Where a generated list route (routes/resource-routes.ts) keeps its list
 * target in its config, for routes/expandable-route.ts to plan its requests' list part.
 */
export const routeListTarget = Symbol('fastify-expand list target')

/**
 * A request decoration (see index.ts): the request's plan once made, or how
 * making it failed. The plan is made once, when first needed: by a hook
 * asking `request.expansion` (isExpanded, isIncluded), by load, select or
 * explain, and at the latest just before the handler. So it is made for the
 * caller that the hooks before the asking one authenticated, from the query
 * those hooks left, and every later use (the body, the list's filters, sort
 * and cursor) reads that same plan.
 */
export const plannedRequest = Symbol('fastify-expand plan')

/** What planning threw: asking again throws it again, rather than planning a second time. */
class PlanningFailure {
  constructor (readonly thrown: unknown) {}
}

type Planned = FastifyRequest & { [plannedRequest]: RequestPlan | PlanningFailure | null }

/**
 * The plan of `request`, made now if it is not yet (by `planner`, else by its
 * route's); null on a route that is not expandable. Throws what planning threw.
 */
export function planRequest (request: FastifyRequest, planner: RoutePlanner): RequestPlan
export function planRequest (request: FastifyRequest): RequestPlan | null
export function planRequest (request: FastifyRequest, planner?: RoutePlanner): RequestPlan | null {
  const planned = (request as Planned)[plannedRequest]
  if (planned !== null) {
    if (planned instanceof PlanningFailure) throw planned.thrown
    return planned
  }
  const plan = planner ?? plannerOf(request)
  if (plan === undefined) return null
  try {
    const made = plan(request)
    ;(request as Planned)[plannedRequest] = made
    return made
  } catch (error) {
    (request as Planned)[plannedRequest] = new PlanningFailure(error)
    throw error
  }
}

/**
 * The plan made for `request` before its handler, which a generated route's
 * handler reads and nothing else. A route that reaches its handler without
 * one (or, on a list route, without its list part) was not prepared as it was
 * registered: a 500 with its own code, logged, never a page planned from
 * nothing.
 */
export function attachedPlan (request: FastifyRequest, part: 'expansion'): RequestPlan
export function attachedPlan (request: FastifyRequest, part: 'list'): RequestPlan & { readonly list: ListPlan }
export function attachedPlan (request: FastifyRequest, part: 'expansion' | 'list'): RequestPlan {
  // A failed planning never reaches a handler (planBeforeHandler throws it): here it is no plan like any other.
  const planned = (request as Planned)[plannedRequest]
  const plan = planned === null || planned instanceof PlanningFailure ? undefined : planned
  if (plan !== undefined && (part === 'expansion' || plan.list !== undefined)) return plan
  const route = `${request.method} ${request.routeOptions.url ?? request.url}`
  const error = new NoPlanError(messages.noPlan(route, plan === undefined ? 'plan' : 'list part'))
  request.log.error({ err: error }, error.message)
  throw error
}

// Reading routeOptions builds an object: this runs only when a hook asks before the handler, once per request.
function plannerOf (request: FastifyRequest): RoutePlanner | undefined {
  return (request.routeOptions.config as { [routePlanner]?: RoutePlanner } | undefined)?.[routePlanner]
}

/** The list target a generated list route keeps in its config; undefined on any other route. */
export function listTargetOf (config: unknown): ListTarget | undefined {
  return (config as { [routeListTarget]?: ListTarget } | undefined)?.[routeListTarget]
}
