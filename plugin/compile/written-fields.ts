import type { JsonSchema } from '../graph/resource-graph.js'
import type { LevelPlan, PlannedField, PlannedFieldKind } from '../plan/plan.js'

/**
 * A planned field as the generators of this folder write it: a scalar of
 * the field's schema (a value, or an identifier where a relation is not
 * expanded), an expanded to-one object (null when there is none) or an
 * expanded to-many list.
 */
export type WrittenField =
  | { readonly kind: 'scalar', readonly name: string, readonly schema: JsonSchema, readonly optional: boolean }
  | { readonly kind: 'object', readonly name: string, readonly level: LevelPlan }
  | { readonly kind: 'list', readonly name: string, readonly level: LevelPlan }

export type WrittenFieldKind = WrittenField['kind']

type FieldOfKind<K extends PlannedFieldKind> = Extract<PlannedField, { kind: K }>

function scalar (field: PlannedField, level: LevelPlan): WrittenField {
  return {
    kind: 'scalar',
    name: field.name,
    schema: level.node.fieldSchemas.get(field.name)!,
    optional: level.node.optionalFields.has(field.name),
  }
}

/** How each kind of planned field is written: a kind without an entry here does not compile. */
const writtenAs: { readonly [K in PlannedFieldKind]: (field: FieldOfKind<K>, level: LevelPlan) => WrittenField } = {
  value: scalar,
  id: scalar,
  aggregate: scalar,
  computed: scalar,
  expanded: (field) => field.relation.many
    ? { kind: 'list', name: field.name, level: field.level }
    : { kind: 'object', name: field.name, level: field.level },
}

function writtenField<K extends PlannedFieldKind> (field: FieldOfKind<K>, level: LevelPlan): WrittenField {
  return (writtenAs[field.kind] as (field: FieldOfKind<K>, level: LevelPlan) => WrittenField)(field, level)
}

const byLevel = new WeakMap<LevelPlan, readonly WrittenField[]>()

/** The fields of a level in output order, as written (made once per level: the generic writer walks them per body). */
export function writtenFields (level: LevelPlan): readonly WrittenField[] {
  let fields = byLevel.get(level)
  if (fields === undefined) {
    fields = level.fields.map((field) => writtenField(field, level))
    byLevel.set(level, fields)
  }
  return fields
}
