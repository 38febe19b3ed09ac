import type { FastifyRequest } from 'fastify'
import { InvalidOptionError, messages } from '../errors.js'
import type { ExpansionPlan } from './plan.js'
import type { Expansion } from '../request-helpers.js'

/**
 * The plan behind each public expansion. `request.expansion` (and a
 * serializer's `expansion`) are small frozen objects holding the key and
 * paths only, so that the plan's internals (the resource graph, each level's
 * fields) stay out of the API and out of whatever logs a request; the
 * plugin's own modules find the plan here.
 */
const plans = new WeakMap<Expansion, ExpansionPlan>()

export function registerExpansion (plan: ExpansionPlan): void {
  plans.set(plan.expansion, plan)
}

export function expansionPlan (expansion: Expansion): ExpansionPlan
export function expansionPlan (expansion: Expansion | null | undefined): ExpansionPlan | null
export function expansionPlan (expansion: Expansion | null | undefined): ExpansionPlan | null {
  if (expansion === null || expansion === undefined) return null
  const plan = plans.get(expansion)
  // Only the plugin plans; anything else is not an expansion it planned.
  if (plan === undefined) throw new InvalidOptionError(messages.expansionReplaced)
  return plan
}

/** Plans one request of one route (routes/expandable-route.ts makes one per expandable route). */
export type RoutePlanner = (request: FastifyRequest) => ExpansionPlan

/**
 * Where an expandable route keeps its planner in its config, so that a hook
 * asking `request.expansion` before the handler finds it.
 */
export const routePlanner = Symbol('fastify-expand planner')

/**
 * A request decoration (see index.ts): the request's plan once made, or how
 * making it failed. The plan is made once, when first needed: by a hook
 * asking `request.expansion` (isExpanded, isIncluded), by load, select or
 * explain, and at the latest just before the handler. So it is made for the
 * caller that the hooks before the asking one authenticated, and every later
 * use (the body, a list's filter and sort checks, its cursor) reads that same
 * plan and the `fieldsFor` answers it was made with.
 */
export const plannedRequest = Symbol('fastify-expand plan')

/** What planning threw: asking again throws it again, rather than planning a second time. */
class PlanningFailure {
  constructor (readonly thrown: unknown) {}
}

type Planned = FastifyRequest & { [plannedRequest]: ExpansionPlan | PlanningFailure | null }

/**
 * The plan of `request`, made now if it is not yet (by `planner`, else by its
 * route's); null on a route that is not expandable. Throws what planning threw.
 */
export function requestPlan (request: FastifyRequest, planner?: RoutePlanner): ExpansionPlan | null {
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

// Reading routeOptions builds an object: this runs only when a hook asks before the handler, once per request.
function plannerOf (request: FastifyRequest): RoutePlanner | undefined {
  return (request.routeOptions.config as { [routePlanner]?: RoutePlanner } | undefined)?.[routePlanner]
}
