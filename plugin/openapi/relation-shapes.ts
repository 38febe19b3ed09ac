import type { JsonSchema, RelationEdge, RelationKind } from '../graph/resource-graph.js'

/**
 * How the documentation writes a relation of each kind: its identifiers, its
 * expanded value and the words describing both. One entry per kind of
 * `RelationKind`, so that a new kind does not compile until it is documented.
 */
export interface RelationShape {
  /** The relation's value as identifiers: the identifier's schema, or an array of them bounded by the relation's `limit`. */
  identifiers(idSchema: JsonSchema, relation: RelationEdge): JsonSchema
  /** The relation's value expanded, from the nested level's schema. */
  expanded(nested: JsonSchema, relation: RelationEdge): JsonSchema
  /** The expanded value where no identifier is admitted beside it: null where the identifier may be null. */
  withoutIdentifier(expanded: JsonSchema, idSchema: JsonSchema): JsonSchema
  /** The example of the expanded value, from the nested level's. */
  example(nested: unknown): unknown
  /** `Pet` / `Pet list`. */
  noun(target: string): string
  /** `Identifier of the Pet` / `Identifiers of the Pet list`. */
  identifierNoun(target: string): string
  /** `the object` / `the objects`. */
  objectNoun: string
}

/** To-many relations: arrays, at most the relation's `limit` long, as identifiers or expanded. */
const toMany: RelationShape = {
  identifiers: (idSchema, relation) => ({ ...idSchema, ...maxItems(relation) }),
  expanded: (nested, relation) => ({ type: 'array', items: nested, ...maxItems(relation) }),
  withoutIdentifier: (expanded) => expanded,
  example: (nested) => [nested],
  noun: (target) => `${target} list`,
  identifierNoun: (target) => `Identifiers of the ${target} list`,
  objectNoun: 'the objects',
}

/** To-one relations: one identifier, or one object (null where the identifier may be). */
const toOne: RelationShape = {
  identifiers: (idSchema) => idSchema,
  expanded: (nested) => nested,
  // An expanded to-one relation is null when its key is null.
  withoutIdentifier: withNull,
  example: (nested) => nested,
  noun: (target) => target,
  identifierNoun: (target) => `Identifier of the ${target}`,
  objectNoun: 'the object',
}

/** A relation resolved by a function is written as a to-one or a to-many one: its `many` option says which. */
const byManyOption = 'by its many option'

export const relationShapes = {
  'to-one': toOne,
  'to-many': toMany,
  'many-to-many': toMany,
  function: byManyOption,
} satisfies Record<RelationKind, RelationShape | typeof byManyOption>

/** The shape of this relation's kind. */
export function relationShape (relation: RelationEdge): RelationShape {
  const shape = relationShapes[relation.link.kind]
  return shape === byManyOption ? (relation.many ? toMany : toOne) : shape
}

function maxItems (relation: RelationEdge): JsonSchema {
  return relation.keys.limit === undefined ? {} : { maxItems: relation.keys.limit }
}

/**
 * Nullability follows the identifier's schema: a key declared non-null that
 * points at a missing row is a broken database, not a shape clients should
 * plan for. Where the identifier is also admitted, it brings the null already.
 */
function withNull (object: JsonSchema, idSchema: JsonSchema): JsonSchema {
  if (!admitsNull(idSchema)) return object
  return { anyOf: [object, { type: 'null' }] }
}

function admitsNull (schema: JsonSchema): boolean {
  const type = schema.type
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined
  return Array.isArray(union) && union.some(admitsNull)
}
