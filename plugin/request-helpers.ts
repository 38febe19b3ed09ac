import type { ExpansionPlan } from './plan/plan.js'

/** Anything carrying a plan: a Fastify request of an expandable route. */
export interface HasExpansion {
  expansion?: ExpansionPlan | null
}

/**
 * Whether the request expands `path` (`'owner'`, `'owner.employer'`), read
 * from its validated plan: wildcards resolved, list restrictions and
 * fields/omit applied. Load exactly what this says and the data matches the serializer.
 */
export function isExpanded (request: HasExpansion, path: string): boolean {
  return request.expansion?.expandedPaths.has(path) ?? false
}

/** Whether the response of the request writes the field at `path` (`'name'`, `'owner.name'`). */
export function isIncluded (request: HasExpansion, path: string): boolean {
  return request.expansion?.includedPaths.has(path) ?? false
}
