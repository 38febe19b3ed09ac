import type { Expansion } from '../request-helpers.js'
import type { DerivedField } from '../graph/derived-fields.js'
import type { RelationEdge, ResourceNode } from '../graph/resource-graph.js'

/** One field of the response, decided for one combination of expand/fields/omit. */
export type PlannedField =
  | { readonly kind: 'value'; readonly name: string }
  | { readonly kind: 'id'; readonly name: string; readonly relation: RelationEdge; readonly orderBy: string | undefined }
  | {
    readonly kind: 'expanded'
    readonly name: string
    readonly relation: RelationEdge
    readonly level: LevelPlan
    readonly orderBy: string | undefined
  }
  | { readonly kind: 'aggregate'; readonly name: string; readonly aggregate: AggregateField }
  | { readonly kind: 'computed'; readonly name: string; readonly computed: ComputedField }

export type AggregateField = Extract<DerivedField, { kind: 'aggregate' }>
export type ComputedField = Extract<DerivedField, { kind: 'computed' }>

/** A planned relation field that is expanded. */
export type ExpandedField = Extract<PlannedField, { kind: 'expanded' }>

/** The kinds of planned fields: each consumer handles every one (a table keyed by it, or an exhaustive switch). */
export type PlannedFieldKind = PlannedField['kind']

/*
 * `orderBy` of a to-many relation field: the relation's `orderBy` when the
 * request may see the field it orders by, else undefined (the related key
 * orders the rows): an order by a field `fieldsFor` hides would tell its
 * values' ranking. Plans are made per visibility, so each caller's order is
 * its plan's, and so are the statements kept for that plan's fields.
 */

/**
 * What one request may see of each resource: the answers of the resources'
 * `fieldsFor`. `key` tells apart requests that see differently, so that
 * they never share a plan.
 */
export interface Visibility {
  readonly key: string
  /** The fields of `node` this request may see; undefined: all of them. */
  visible(node: ResourceNode): ReadonlySet<string> | undefined
}

/**
 * Whether a dot path from `root` names a field `visibility` hides, at any
 * step: `owner.name` is hidden where `owner` is on the route's resource or
 * `name` on the owner's. Each segment but the last is a relation of the
 * resource before it. What list filters, sort keys and expanded lists ask.
 */
export function hiddenOnPath (visibility: Visibility, root: ResourceNode, segments: readonly string[]): boolean {
  let node = root
  for (const [index, segment] of segments.entries()) {
    const visible = visibility.visible(node)
    if (visible !== undefined && !visible.has(segment)) return true
    if (index < segments.length - 1) node = node.relations.get(segment)!.target
  }
  return false
}

/** Every field of every resource: requests without access rules, standalone serializers. */
export const fullVisibility: Visibility = Object.freeze({ key: '', visible: () => undefined })

/** The fields of one resource at one level, in output order. */
export interface LevelPlan {
  readonly node: ResourceNode
  readonly fields: readonly PlannedField[]
}

/** Where a plan is used: one route, or one standalone serializer. */
export interface PlanTarget {
  readonly node: ResourceNode
  readonly list: boolean
  /** List payloads wrapped in an object: the property holding the array. */
  readonly envelope: string | undefined
  /** Permitted expansion paths and their prefixes; undefined permits every path. */
  readonly permitted: ReadonlySet<string> | undefined
  readonly maxDepth: number
  /** Paths expanded when the request has no `expand` parameter at all (checked at startup); undefined: none. */
  readonly defaultExpand?: readonly (readonly string[])[]
}

/** The validated meaning of one request's expand/fields/omit. Immutable and shared through the cache. */
export interface ExpansionPlan {
  readonly target: PlanTarget
  readonly root: LevelPlan
  /** Canonical: two requests that mean the same thing have the same key. */
  readonly key: string
  /** Dot paths of every expanded relation. */
  readonly expandedPaths: ReadonlySet<string>
  /** Dot paths of every written field (relations included, expanded or not). */
  readonly includedPaths: ReadonlySet<string>
  /** What requests planned this way show publicly (`request.expansion`): the key and paths, none of the above. */
  readonly expansion: Expansion
  /**
   * The `fieldsFor` answers the plan was made for. Requests share a plan only
   * when their answers are the same, so these are each request's own: its
   * filter and sort checks read them instead of asking `fieldsFor` again.
   */
  readonly visibility: Visibility
}

export function levelKey (level: LevelPlan): string {
  let key = `${level.node.qualifiedName}{`
  level.fields.forEach((field, index) => {
    if (index > 0) key += ','
    key += field.name
    switch (field.kind) {
      case 'value': case 'id': case 'aggregate': case 'computed': break
      case 'expanded': key += `(${field.relation.many ? '*' : ''}${levelKey(field.level)})`; break
      default: field satisfies never
    }
  })
  return `${key}}`
}

export function planKey (target: PlanTarget, root: LevelPlan): string {
  return `${target.list ? `list:${target.envelope ?? ''}` : 'one'}|${levelKey(root)}`
}
