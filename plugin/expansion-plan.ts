import type { ExpansionPlan } from './plan/plan.js'
import type { Expansion } from './request-helpers.js'

/**
 * The plan behind an expansion. `request.expansion` (and a serializer's
 * `expansion`) hold the plan itself, typed publicly as the `Expansion` it
 * satisfies so that the plan's internals stay out of the API; the plugin's
 * own modules read the rest through this function.
 */
export function expansionPlan (expansion: Expansion): ExpansionPlan
export function expansionPlan (expansion: Expansion | null | undefined): ExpansionPlan | null
export function expansionPlan (expansion: Expansion | null | undefined): ExpansionPlan | null {
  return (expansion ?? null) as ExpansionPlan | null
}
