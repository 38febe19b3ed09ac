import { InvalidOptionError, messages } from './errors.js'
import type { ExpansionPlan } from './plan/plan.js'
import type { Expansion } from './request-helpers.js'

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
  // Only the plugin sets request.expansion; anything else there is not an expansion it planned.
  if (plan === undefined) throw new InvalidOptionError(messages.expansionReplaced)
  return plan
}
