import { emptyPathNode, withPaths, type PathNode } from '../parse/query.js'
import type { JsonSchema, RelationEdge, ResourceNode } from '../resource-graph.js'

/*
 * Response schemas for documentation only. Unlike the per-request schemas of
 * compile/, they describe every combination a route can answer with at
 * once, so a relation the client may expand is a union of its identifier and
 * its object. Such unions must never reach fast-json-stringify (FINDINGS:
 * anyOf falls back to Ajv at runtime), which is why these schemas are only
 * handed to the documentation generator.
 *
 * No property is `required`: `fields` and `omit` may leave any of them out.
 * Objects forbid additional properties: only declared fields are ever written.
 */

/** Where the nested level of a relation comes from: the relation's field set and the expansions always applied below it. */
interface Variant {
  readonly node: ResourceNode
  readonly fields: readonly string[]
  readonly always: PathNode
}

export interface ComponentNaming {
  /** Prepended to every component name, to keep clear of the application's own components. */
  readonly prefix: string
  /** The base for `$ref`, e.g. `#/components/schemas/`. */
  readonly refBase: string
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
  root (node: ResourceNode): JsonSchema {
    return this.ref({ node, fields: node.defaultFields, always: emptyPathNode() }, this.rootName(node))
  }

  private rootName (node: ResourceNode): string {
    return this.naming.prefix + (this.ambiguousNames.has(node.name) ? node.qualifiedName : node.name)
  }

  private ref (variant: Variant, suggestedName: string): JsonSchema {
    const key = variantKey(variant)
    let name = this.names.get(key)
    if (name === undefined) {
      name = suggestedName
      for (let suffix = 2; this.schemas.has(name); suffix++) name = `${suggestedName}_${suffix}`
      this.names.set(key, name)
      // Registered before its properties are built, so a cycle finds the name.
      this.schemas.set(name, {})
      const schema = levelSchema(variant, (relation, child) => {
        const target = { node: relation.target, fields: relation.baseFields, always: child }
        // A level shaped by a relation's options is named after the relation: `Pet.sold_from`.
        const targetName = isRootVariant(target) ? this.rootName(relation.target) : `${this.rootName(relation.owner)}.${relation.field}`
        return this.ref(target, targetName)
      }, () => true)
      this.schemas.set(name, { title: variant.node.name, ...schema })
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
export function restrictedLevelSchema (node: ResourceNode, permitted: (path: string) => boolean): JsonSchema {
  const build = (variant: Variant, path: readonly string[]): JsonSchema => levelSchema(
    variant,
    (relation, child) => build({ node: relation.target, fields: relation.baseFields, always: child }, [...path, relation.field]),
    (relation) => permitted([...path, relation.field].join('.'))
  )
  return build({ node, fields: node.defaultFields, always: emptyPathNode() }, [])
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
  const { node, fields, always } = variant
  const properties: Record<string, JsonSchema> = {}
  const shown = new Set(fields)
  const describe = (name: string, inDefaults: boolean) => {
    const relation = node.relations.get(name)
    const idSchema = node.fieldSchemas.get(name)!
    if (relation === undefined) {
      properties[name] = idSchema
      return
    }
    const alwaysBelow = always.children.get(name)
    const forced = relation.alwaysNested || alwaysBelow !== undefined
    const mayExpand = forced || expandable(relation)
    if (!mayExpand) {
      if (inDefaults) properties[name] = idSchema
      return
    }
    const nested = expanded(relation, mergedAlways(alwaysBelow, relation))
    const object = relation.many ? { type: 'array', items: nested } : nested
    const target = relation.target.name
    if (forced) {
      properties[name] = { description: `The ${target}${relation.many ? ' list' : ''}, always nested`, anyOf: [withNull(object, idSchema, relation)] }
    } else if (inDefaults) {
      properties[name] = {
        description: `${relation.many ? `Identifiers of the ${target} list` : `Identifier of the ${target}`}; ${relation.many ? 'the objects' : 'the object'} when expanded`,
        anyOf: [idSchema, object],
      }
    } else {
      properties[name] = { description: `The ${target}${relation.many ? ' list' : ''}; present only when expanded`, anyOf: [withNull(object, idSchema, relation)] }
    }
  }
  for (const name of fields) describe(name, true)
  for (const name of node.expandableFields) if (!shown.has(name)) describe(name, false)
  return { type: 'object', properties, additionalProperties: false }
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
  return variant.always.children.size === 0 &&
    variant.fields.length === variant.node.defaultFields.length &&
    variant.fields.every((field, index) => field === variant.node.defaultFields[index])
}

function variantKey (variant: Variant): string {
  return `${variant.node.qualifiedName}|${variant.fields.join(',')}|${treeKey(variant.always)}`
}

function treeKey (tree: PathNode): string {
  return [...tree.children.keys()].sort().map((name) => `${name}(${treeKey(tree.children.get(name)!)})`).join(',')
}
