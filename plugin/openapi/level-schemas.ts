import { emptyPathNode, withPaths, type PathNode } from '../parse/query.js'
import type { JsonSchema, RelationEdge, ResourceNode } from '../graph/resource-graph.js'
import { relationShape } from './relation-shapes.js'
import { documentedIdentifiers } from './composite-identifiers.js'
import { exampleValue } from './schema-examples.js'

/*
 * Response schemas for documentation only. Unlike the per-request schemas of
 * compile/, they describe every combination a route can answer with at
 * once, so a relation the client may expand is a union of its identifier and
 * its object. Such unions must never reach fast-json-stringify (it validates
 * anyOf with Ajv at runtime), which is why these schemas are only
 * handed to the documentation generator.
 *
 * Every response validates against them, whatever its `expand`, `fields`
 * and `omit`: `fields` and `omit` can leave any field out (and `fieldsFor`
 * any field of its resource), so no field of a level is `required`. An
 * application that wants the default response typed (the one without
 * `fields` or `omit`) opts in (`openApiRequiredDefaults`, per route or for
 * the app): then every field of the level's field set (the resource's
 * `fields`, or the relation's) is required unless the schema makes it
 * optional (`Type.Optional`) or a `fieldsFor` may hide it, and so is a
 * relation the definitions always expand; deferred relations stay optional.
 * Such levels are components of their own (`Pet.defaults`), and the route's
 * description says what `required` means there.
 *
 * Objects forbid additional properties: only declared fields are ever
 * written, and only fields a client may name at the level (its field set and
 * the expandable relations it has: `clientFields`, which a relation's
 * `fields`/`omit` options narrow) are declared.
 */

/** Where the nested level of a relation comes from: the relation's field set, its names, and the expansions always applied below it. */
export interface Variant {
  readonly node: ResourceNode
  readonly fields: readonly string[]
  /** Every name a client may use at the level. */
  readonly names: ReadonlySet<string>
  readonly always: PathNode
  /** The default response's fields are `required` (the opt-in), rather than none. */
  readonly requiredDefaults: boolean
}

/**
 * The response level of a list route restricted by `permitListExpands`,
 * inline: a relation is expandable only along a permitted path, so the schema
 * is as precise as the route and finite (permitted paths are finite, and the
 * definitions' own expansions are checked for cycles at startup).
 */
export function restrictedLevelSchema (node: ResourceNode, permitted: (path: string) => boolean, requiredDefaults: boolean): JsonSchema {
  const build = (variant: Variant, path: readonly string[]): JsonSchema => levelSchema(
    variant,
    (relation, child) => build(relationVariant(relation, child, requiredDefaults), [...path, relation.field]),
    (relation) => permitted([...path, relation.field].join('.'))
  )
  const root = rootVariant(node, requiredDefaults)
  const example = levelExample(root)
  return { ...build(root, []), ...(example === undefined ? {} : { examples: [example] }) }
}

/** An example of the resource's default response (its `fields`, relations as identifiers), or undefined. */
export function defaultExample (node: ResourceNode): Record<string, unknown> | undefined {
  return levelExample(rootVariant(node, false))
}

export function rootVariant (node: ResourceNode, requiredDefaults: boolean): Variant {
  return { node, fields: node.defaultFields, names: node.clientFields, always: emptyPathNode(), requiredDefaults }
}

export function relationVariant (relation: RelationEdge, always: PathNode, requiredDefaults: boolean): Variant {
  return { node: relation.target, fields: relation.baseFields, names: relation.clientFields, always, requiredDefaults }
}

/**
 * One object level: its default fields in order, then deferred relations.
 * `expanded` gives the schema of a relation's nested level (its always-applied
 * expansions below); `expandable` says whether the client may expand it here.
 */
export function levelSchema (
  variant: Variant,
  expanded: (relation: RelationEdge, always: PathNode) => JsonSchema,
  expandable: (relation: RelationEdge) => boolean
): JsonSchema {
  const { node, fields, names, always } = variant
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  const shown = new Set(fields)
  /** Declares the field; returns whether the default response always holds it. */
  const describe = (name: string, inDefaults: boolean): boolean => {
    const relation = node.relations.get(name)
    const fieldSchema = node.fieldSchemas.get(name)!
    // A resource with fieldsFor may leave any field out for some request.
    const present = !node.optionalFields.has(name) && node.resource.fieldsFor === undefined
    if (relation === undefined) {
      properties[name] = fieldSchema
      return inDefaults && present
    }
    const shape = relationShape(relation)
    const idSchema = documentedIdentifiers(shape.identifiers(fieldSchema, relation), relation)
    const alwaysBelow = always.children.get(name)
    const forced = relation.alwaysNested || alwaysBelow !== undefined
    const mayExpand = forced || expandable(relation)
    if (!mayExpand) {
      if (inDefaults) properties[name] = idSchema
      return inDefaults && present
    }
    const object = shape.expanded(expanded(relation, mergedAlways(alwaysBelow, relation)), relation)
    const target = relation.target.name
    // One schema is written as it is, its description beside it: an `anyOf` of one member says nothing more.
    if (forced) {
      properties[name] = { description: `The ${shape.noun(target)}, always nested`, ...shape.withoutIdentifier(object, idSchema) }
      return present
    }
    if (inDefaults) {
      properties[name] = {
        description: `${shape.identifierNoun(target)}; ${shape.objectNoun} when expanded`,
        anyOf: [idSchema, object],
      }
      return present
    }
    properties[name] = { description: `The ${shape.noun(target)}; present only when expanded`, ...shape.withoutIdentifier(object, idSchema) }
    return false
  }
  for (const name of fields) if (describe(name, true)) required.push(name)
  for (const name of node.expandableFields) if (!shown.has(name) && names.has(name) && describe(name, false)) required.push(name)
  // Deferred aggregates and computed fields: read-only, and present only when the request names them.
  for (const name of node.derived.keys()) {
    if (shown.has(name) || !names.has(name)) continue
    const description = 'Derived by the database; present only when named in expand or fields'
    properties[name] = { description, ...node.fieldSchemas.get(name)! }
  }
  // Without the opt-in nothing is required: `fields`/`omit` can leave out every field.
  const requiredKeyword = variant.requiredDefaults && required.length > 0 ? { required } : {}
  return { type: 'object', properties, ...requiredKeyword, additionalProperties: false }
}

/**
 * The example of a level's default response: its field set, relations as
 * identifiers, always-expanded relations as objects; deferred relations left
 * out. Undefined when a field the level always holds has no example.
 */
export function levelExample (variant: Variant, outer: ReadonlySet<string> = new Set()): Record<string, unknown> | undefined {
  const key = variantKey(variant)
  if (outer.has(key)) return undefined
  const { node, fields, names, always } = variant
  const seen = new Set([...outer, key])
  const example: Record<string, unknown> = {}
  const shown = new Set(fields)
  for (const name of [...fields, ...node.expandableFields.filter((name) => !shown.has(name) && names.has(name))]) {
    const relation = node.relations.get(name)
    const alwaysBelow = always.children.get(name)
    const forced = relation !== undefined && (relation.alwaysNested || alwaysBelow !== undefined)
    if (!shown.has(name) && !forced) continue
    let value: unknown
    if (forced) {
      const nested = levelExample(relationVariant(relation, mergedAlways(alwaysBelow, relation), variant.requiredDefaults), seen)
      value = nested === undefined ? undefined : relationShape(relation).example(nested)
    } else {
      value = exampleValue(node.fieldSchemas.get(name)!)
    }
    if (value !== undefined) example[name] = value
    else if (!node.optionalFields.has(name)) return undefined
  }
  return example
}

/** A level shaped by a relation says what it is: which resource, through which relation, with which fields. */
export function describeVariant (variant: Variant, relation: RelationEdge | undefined): JsonSchema {
  const own = variant.node.resource.schema.description
  if (relation === undefined) return typeof own === 'string' ? { description: own } : {}
  return { description: `A ${variant.node.name} as ${relation.owner.name}.${relation.field} shows it (fields ${variant.fields.join(', ')})` }
}

function mergedAlways (below: PathNode | undefined, relation: RelationEdge): PathNode {
  return relation.alwaysExpand.length === 0 ? below ?? emptyPathNode() : withPaths(below, relation.alwaysExpand)
}

export function isRootVariant (variant: Variant): boolean {
  return variant.always.children.size === 0 && sameList(variant.fields, variant.node.defaultFields) &&
    sameList([...variant.names], [...variant.node.clientFields])
}

function sameList (a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index])
}

export function variantKey (variant: Variant): string {
  return `${variant.node.qualifiedName}|${variant.fields.join(',')}|${[...variant.names].join(',')}|${treeKey(variant.always)}|${variant.requiredDefaults ? 'required' : ''}`
}

function treeKey (tree: PathNode): string {
  return [...tree.children.keys()].sort().map((name) => `${name}(${treeKey(tree.children.get(name)!)})`).join(',')
}
