import type { JsonSchema, RelationEdge, ResourceNode } from '../graph/resource-graph.js'
import {
  describeVariant,
  isRootVariant,
  levelExample,
  levelSchema,
  relationVariant,
  rootVariant,
  variantKey,
  type Variant,
} from './level-schemas.js'

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

  /** What every `$ref` to one of these components starts with. */
  get refBase (): string {
    return this.naming.refBase
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
