import { emptyPathNode, withPaths, type PathNode } from '../parse/query.js'
import type { JsonSchema, RelationEdge, ResourceNode } from '../graph/resource-graph.js'
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
interface Variant {
  readonly node: ResourceNode
  readonly fields: readonly string[]
  /** Every name a client may use at the level. */
  readonly names: ReadonlySet<string>
  readonly always: PathNode
  /** The default response's fields are `required` (the opt-in), rather than none. */
  readonly requiredDefaults: boolean
}

export interface ComponentNaming {
  /** Prepended to every component name, to keep clear of the application's own components. */
  readonly prefix: string
  /** The base for `$ref`, e.g. `#/components/schemas/`. */
  readonly refBase: string
  /** The application's `openApiRequiredDefaults`: its levels take the plain names, the other kind `.defaults`/`.partial`. */
  readonly requiredDefaults: boolean
}

/**
 * Named schemas for the levels of an unrestricted route: one component per
 * resource and field set, relations pointing at each other through `$ref`, so
 * cycles (Person -> pets -> Pet -> owner -> Person) stay finite.
 */
export class ComponentSchemas {
  readonly schemas = new Map<string, JsonSchema>()
  private readonly names = new Map<string, string>()
  private readonly ambiguousNames: ReadonlySet<string>

  constructor (nodes: readonly ResourceNode[], private readonly naming: ComponentNaming) {
    const seen = new Set<string>()
    const ambiguous = new Set<string>()
    for (const node of nodes) {
      if (seen.has(node.name)) ambiguous.add(node.name)
      seen.add(node.name)
    }
    this.ambiguousNames = ambiguous
  }

  /** A `$ref` to the resource's default level, the response of a detail route. */
  root (node: ResourceNode, requiredDefaults: boolean): JsonSchema {
    return this.ref(rootVariant(node, requiredDefaults), this.rootName(node, requiredDefaults))
  }

  private rootName (node: ResourceNode, requiredDefaults: boolean): string {
    const kind = requiredDefaults === this.naming.requiredDefaults ? '' : requiredDefaults ? '.defaults' : '.partial'
    return this.naming.prefix + (this.ambiguousNames.has(node.name) ? node.qualifiedName : node.name) + kind
  }

  private ref (variant: Variant, suggestedName: string, relation?: RelationEdge): JsonSchema {
    const key = variantKey(variant)
    let name = this.names.get(key)
    if (name === undefined) {
      name = suggestedName
      for (let suffix = 2; this.schemas.has(name); suffix++) name = `${suggestedName}_${suffix}`
      this.names.set(key, name)
      // Registered before its properties are built, so a cycle finds the name.
      this.schemas.set(name, {})
      const schema = levelSchema(variant, (relation, child) => {
        const target = relationVariant(relation, child, variant.requiredDefaults)
        // A level shaped by a relation's options is named after the relation: `Pet.sold_from`.
        const targetName = isRootVariant(target)
          ? this.rootName(relation.target, variant.requiredDefaults)
          : `${this.rootName(relation.owner, variant.requiredDefaults)}.${relation.field}`
        return this.ref(target, targetName, relation)
      }, () => true)
      // The title is the component's own name: Swagger UI shows a schema under its title,
      // and `Company.employees` titled `Person` would list two schemas as `Person`.
      const example = levelExample(variant)
      this.schemas.set(name, {
        title: name,
        ...describeVariant(variant, isRootVariant(variant) ? undefined : relation),
        ...schema,
        ...(example === undefined ? {} : { examples: [example] }),
      })
    }
    return { $ref: `${this.naming.refBase}${name}` }
  }
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

function rootVariant (node: ResourceNode, requiredDefaults: boolean): Variant {
  return { node, fields: node.defaultFields, names: node.clientFields, always: emptyPathNode(), requiredDefaults }
}

function relationVariant (relation: RelationEdge, always: PathNode, requiredDefaults: boolean): Variant {
  return { node: relation.target, fields: relation.baseFields, names: relation.clientFields, always, requiredDefaults }
}

/**
 * One object level: its default fields in order, then deferred relations.
 * `expanded` gives the schema of a relation's nested level (its always-applied
 * expansions below); `expandable` says whether the client may expand it here.
 */
function levelSchema (
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
    // A to-many relation with `limit` holds that many items at most, as ids or expanded.
    const maxItems = relation?.many === true && relation.keys.limit !== undefined ? { maxItems: relation.keys.limit } : {}
    const idSchema = { ...node.fieldSchemas.get(name)!, ...maxItems }
    // A resource with fieldsFor may leave any field out for some request.
    const present = !node.optionalFields.has(name) && node.resource.fieldsFor === undefined
    if (relation === undefined) {
      properties[name] = idSchema
      return inDefaults && present
    }
    const alwaysBelow = always.children.get(name)
    const forced = relation.alwaysNested || alwaysBelow !== undefined
    const mayExpand = forced || expandable(relation)
    if (!mayExpand) {
      if (inDefaults) properties[name] = idSchema
      return inDefaults && present
    }
    const nested = expanded(relation, mergedAlways(alwaysBelow, relation))
    const object = relation.many ? { type: 'array', items: nested, ...maxItems } : nested
    const target = relation.target.name
    // One schema is written as it is, its description beside it: an `anyOf` of one member says nothing more.
    if (forced) {
      properties[name] = { description: `The ${target}${relation.many ? ' list' : ''}, always nested`, ...withNull(object, idSchema, relation) }
      return present
    }
    if (inDefaults) {
      properties[name] = {
        description: `${relation.many ? `Identifiers of the ${target} list` : `Identifier of the ${target}`}; ${relation.many ? 'the objects' : 'the object'} when expanded`,
        anyOf: [idSchema, object],
      }
      return present
    }
    properties[name] = { description: `The ${target}${relation.many ? ' list' : ''}; present only when expanded`, ...withNull(object, idSchema, relation) }
    return false
  }
  for (const name of fields) if (describe(name, true)) required.push(name)
  for (const name of node.expandableFields) if (!shown.has(name) && names.has(name) && describe(name, false)) required.push(name)
  // Without the opt-in nothing is required: `fields`/`omit` can leave out every field.
  const requiredKeyword = variant.requiredDefaults && required.length > 0 ? { required } : {}
  return { type: 'object', properties, ...requiredKeyword, additionalProperties: false }
}

/**
 * The example of a level's default response: its field set, relations as
 * identifiers, always-expanded relations as objects; deferred relations left
 * out. Undefined when a field the level always holds has no example.
 */
function levelExample (variant: Variant, outer: ReadonlySet<string> = new Set()): Record<string, unknown> | undefined {
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
      value = nested === undefined ? undefined : relation.many ? [nested] : nested
    } else {
      value = exampleValue(node.fieldSchemas.get(name)!)
    }
    if (value !== undefined) example[name] = value
    else if (!node.optionalFields.has(name)) return undefined
  }
  return example
}

/** A level shaped by a relation says what it is: which resource, through which relation, with which fields. */
function describeVariant (variant: Variant, relation: RelationEdge | undefined): JsonSchema {
  const own = variant.node.resource.schema.description
  if (relation === undefined) return typeof own === 'string' ? { description: own } : {}
  return { description: `A ${variant.node.name} as ${relation.owner.name}.${relation.field} shows it (fields ${variant.fields.join(', ')})` }
}

/**
 * An expanded to-one relation is null when its key is null. Nullability
 * follows the identifier's schema: a key declared non-null that points at a
 * missing row is a broken database, not a shape clients should plan for.
 * Where the identifier is also admitted, it brings the null already.
 */
function withNull (object: JsonSchema, idSchema: JsonSchema, relation: RelationEdge): JsonSchema {
  if (relation.many || !admitsNull(idSchema)) return object
  return { anyOf: [object, { type: 'null' }] }
}

function admitsNull (schema: JsonSchema): boolean {
  const type = schema.type
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined
  return Array.isArray(union) && union.some(admitsNull)
}

function mergedAlways (below: PathNode | undefined, relation: RelationEdge): PathNode {
  return relation.alwaysExpand.length === 0 ? below ?? emptyPathNode() : withPaths(below, relation.alwaysExpand)
}

function isRootVariant (variant: Variant): boolean {
  return variant.always.children.size === 0 && sameList(variant.fields, variant.node.defaultFields) &&
    sameList([...variant.names], [...variant.node.clientFields])
}

function sameList (a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index])
}

function variantKey (variant: Variant): string {
  return `${variant.node.qualifiedName}|${variant.fields.join(',')}|${[...variant.names].join(',')}|${treeKey(variant.always)}|${variant.requiredDefaults ? 'required' : ''}`
}

function treeKey (tree: PathNode): string {
  return [...tree.children.keys()].sort().map((name) => `${name}(${treeKey(tree.children.get(name)!)})`).join(',')
}
