import type { LevelPlan, PlannedField } from '../plan/plan.js'

/** Where a planned relation field's statement sits: its dotted path from the root, and the loader's level (the root's is 0). */
export interface FieldPosition {
  readonly path: string
  readonly wave: number
}

// Made once per plan, the first time a traced load needs it; plans are cached and shared, and so are these.
const positionsByRoot = new WeakMap<LevelPlan, ReadonlyMap<PlannedField, FieldPosition>>()

/**
 * The position of each relation and aggregate field of the plan whose root
 * level is `root`, at every depth: what the load channel publishes of a
 * statement (trace/channels.ts). An aggregate is at its relation's path.
 */
export function positionsOf (root: LevelPlan): ReadonlyMap<PlannedField, FieldPosition> {
  let positions = positionsByRoot.get(root)
  if (positions === undefined) {
    const walked = new Map<PlannedField, FieldPosition>()
    walk(root, '', 1, walked)
    positions = walked
    positionsByRoot.set(root, positions)
  }
  return positions
}

function walk (level: LevelPlan, path: string, wave: number, positions: Map<PlannedField, FieldPosition>): void {
  const at = (name: string) => path === '' ? name : `${path}.${name}`
  for (const field of level.fields) {
    switch (field.kind) {
      case 'value': case 'computed': break
      case 'aggregate': positions.set(field, { path: at(field.aggregate.relation.field), wave }); break
      case 'id': positions.set(field, { path: at(field.name), wave }); break
      case 'expanded':
        positions.set(field, { path: at(field.name), wave })
        walk(field.level, at(field.name), wave + 1, positions)
        break
      default: field satisfies never
    }
  }
}
