import { isPositiveInteger, unknownKey } from '../graph/checks.js'
import { messages } from '../errors.js'
import { readsCompositeKey } from '../graph/composite-relations.js'
import { relationAt, type RelationEdge, type ResourceNode } from '../graph/resource-graph.js'
import { readFilterOption, readSortOption, type FilterDeclaration, type FilterField, type SortField } from './list-declarations.js'

/**
 * What a client may ask of one expanded to-many relation of a route
 * (`sort[path]`, `limit[path]`, `where[path.field]`): the sort fields and
 * filters of the related resource, and the largest `limit[path]`.
 */
export interface ExpandedListOptions {
  /** Fields of the related resource an expanded array may be ordered by (non-nullable scalars with a column). */
  sort?: readonly string[]
  /** A larger `limit[path]` is clamped to this. Absent: clamped to the plugin's `maxObjects`. */
  maxLimit?: number
  /** Fields of the related resource (no dots) and their operators, as a list route's `filter` option declares them. */
  filter?: Readonly<Record<string, FilterDeclaration>>
}

/** The `expandedLists` route option: a dot path of relations ending in a to-many one (`pets`, `owner.pets`) -> its options. */
export type ExpandedListsOption = Readonly<Record<string, ExpandedListOptions>>

/** One declared expanded list, checked at startup: what planning its request parameters reads. */
export interface ExpandedListDeclaration {
  /** As declared and written in the query: `owner.pets`. */
  readonly path: string
  /** The to-many relation the path ends in. */
  readonly relation: RelationEdge
  /** Its related resource: the resource the sort fields and filters are fields of. */
  readonly node: ResourceNode
  readonly sortFields: ReadonlyMap<string, SortField>
  /** By field name; each filter's `path` is the list's path and the field (`pets.species`), as messages name it. */
  readonly filters: ReadonlyMap<string, FilterField>
  readonly maxLimit: number | undefined
}

/** A route's declared expanded lists, by path. */
export type ExpandedListDeclarations = ReadonlyMap<string, ExpandedListDeclaration>

const listOptionKeys = new Set(['sort', 'maxLimit', 'filter'])

/**
 * The route's `expandedLists` option, checked against `node` (the route's
 * resource): each mistake through `fail`, naming the route (`context`) and
 * the mistake. Read at startup by the route, and again by the OpenAPI
 * documentation from the same option. Undefined when the option is absent.
 */
export function readExpandedLists (
  node: ResourceNode, option: ExpandedListsOption | undefined, context: string, fail: (message: string) => never
): ExpandedListDeclarations | undefined {
  if (option === undefined) return undefined
  if (typeof option !== 'object' || option === null || Array.isArray(option)) fail(messages.expandedListsNotObject(context))
  const declarations = new Map<string, ExpandedListDeclaration>()
  for (const [path, listOptions] of Object.entries(option)) {
    if (typeof listOptions !== 'object' || listOptions === null || Array.isArray(listOptions)) {
      fail(messages.expandedListNotObject(context, path))
    }
    const unknown = unknownKey(listOptions, listOptionKeys)
    if (unknown !== undefined) fail(messages.unknownExpandedListKey(context, path, unknown))
    const relation = toManyAt(node, path, context, fail)
    const target = relation.target
    const at = (message: string): never => fail(`${context}: expandedLists '${path}': ${message}`)
    const { maxLimit } = listOptions
    if (maxLimit !== undefined && !isPositiveInteger(maxLimit)) fail(messages.badExpandedMaxLimit(context, path))
    for (const field of Object.keys(listOptions.filter ?? {})) {
      if (field.includes('.')) fail(messages.expandedListFilterPath(context, path, field, target.qualifiedName))
    }
    const filters = new Map<string, FilterField>()
    for (const [field, filter] of readFilterOption(target, listOptions.filter, at)) {
      // The relation's statement reads its table itself: no subquery adds derived fields there.
      if (filter.derived !== undefined) fail(messages.expandedListDerived(context, path, field))
      filters.set(field, Object.freeze({ ...filter, path: `${path}.${field}` }))
    }
    const sortFields = readSortOption(target, listOptions.sort, at)
    for (const field of sortFields.values()) {
      if (field.derived !== undefined) fail(messages.expandedListDerived(context, path, field.name))
      // The relation's statement orders by columns of its own table, NULLs where each database puts them.
      if (field.joins.length > 0 || field.nullable) fail(messages.expandedListSortField(context, path, field.name))
    }
    declarations.set(path, Object.freeze({
      path,
      relation,
      node: target,
      sortFields,
      filters,
      maxLimit,
    }))
  }
  return declarations
}

/** The to-many relation `path` ends in, walked through each relation's own level; any other path is a mistake. */
function toManyAt (node: ResourceNode, path: string, context: string, fail: (message: string) => never): RelationEdge {
  let current = node
  let names = node.clientFields
  let relation: RelationEdge | undefined
  for (const segment of path.split('.')) {
    relation = relationAt(current, names, segment)
    if (relation === undefined) {
      fail(messages.expandedListNotToMany(context, path, `'${segment}' is not an expandable relation of ${current.qualifiedName}`))
    }
    current = relation!.target
    names = relation!.clientFields
  }
  if (!relation!.many) fail(messages.expandedListNotToMany(context, path, `${relation!.owner.qualifiedName}.${relation!.field} is to-one`))
  const { link } = relation!
  if (link.kind === 'function') {
    fail(messages.expandedListNotToMany(context, path, `${relation!.owner.qualifiedName}.${relation!.field} is resolved by a function (load), ` +
      'which returns its rows as they are: a statement cannot order, limit or filter them'))
  }
  if (current.table === undefined || (link.kind === 'to-many' && link.foreignKey === undefined)) {
    fail(messages.expandedListNotToMany(context, path, `${relation!.owner.qualifiedName}.${relation!.field} is not loaded from a table`))
  }
  if (readsCompositeKey(relation!)) {
    fail(messages.expandedListNotToMany(context, path, `${relation!.owner.qualifiedName}.${relation!.field} reads a composite key, ` +
      'which expanded lists do not follow yet'))
  }
  return relation!
}
