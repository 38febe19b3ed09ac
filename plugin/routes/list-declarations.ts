import { messages } from '../errors.js'
import type { DerivedField } from '../graph/derived-fields.js'
import { ownerColumn, type JsonSchema, type RelationEdge, type ResourceNode } from '../graph/resource-graph.js'
import { maxValueLength } from '../parse/list-query.js'
import type { CursorCodec } from '../plan/cursors.js'
import { readsCompositeKey } from '../graph/composite-relations.js'
import { tableOf } from '../sql/selection.js'
import { fieldReadAsText } from '../sql/text-columns.js'

/** The operators a declared filter may allow. */
export const filterOperators = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'null', 'contains', 'exists'] as const
export type FilterOperator = typeof filterOperators[number]

/** What a filter, sort key or cursor value is read as: the field's schema type. */
export interface ValueType {
  readonly kind: 'integer' | 'number' | 'boolean' | 'string'
  /** Strings only: `date` (YYYY-MM-DD) and `date-time` (RFC 3339) are checked. */
  readonly format?: string
}

/**
 * A declared filter: a column of the resource's table, or of a table reached
 * through relations of any kind (`owner.name`, `pets.species`,
 * `tags.name`), or a relation whose related rows may be asked to exist.
 */
export interface FilterField {
  /** As declared and written in the query: `species`, `owner.name`, `pets`. */
  readonly path: string
  /** The relations walked from the route's resource to the field's resource, in order. */
  readonly hops: readonly RelationEdge[]
  /** The resource holding the field, and the field. */
  readonly node: ResourceNode
  readonly field: string
  /** The field's column on its resource's table (unqualified); undefined for a to-many relation (`exists` only). */
  readonly column: string | undefined
  /** The relation the field is, when it is one (what `exists` asks about). */
  readonly relation: RelationEdge | undefined
  readonly type: ValueType
  readonly operators: readonly FilterOperator[]
  readonly nullable: boolean
  /** The longest `contains` value this filter takes, in characters. */
  readonly containsMaxLength: number
  /** An aggregate or computed field of the route's resource: its column is the one `derivedColumn` names. */
  readonly derived?: DerivedField | undefined
}

/**
 * A filter as `routes()` declares it: its operators, or its operators and
 * the longest `contains` value it takes (the cost of a substring search
 * grows with the text times the value: see docs/access.md, "Security model").
 */
export type FilterDeclaration = readonly FilterOperator[] | {
  readonly operators: readonly FilterOperator[]
  /** The longest `contains` value, in characters (default 32). */
  readonly containsMaxLength?: number
}

export interface SortField {
  /** As declared and written in the query: `born`, `owner.name`. */
  readonly name: string
  /**
   * The column the rows are ordered by, qualified: by the route's table, or
   * for a path through to-one relations by the alias of its last join.
   */
  readonly column: string
  readonly type: ValueType
  /** Whether the value may be NULL: a nullable field, or one reached through a relation (a missing or hidden row). */
  readonly nullable: boolean
  /** The to-one relations a path sorts through, each LEFT JOINed under the related scope; none for a field of the route's table. */
  readonly joins: readonly SortJoin[]
  /** An aggregate or computed field of the route's resource: its column is the one `derivedColumn` names. */
  readonly derived?: DerivedField | undefined
  /** A field declared a plain string, which a cursor reads as its text (sql/text-columns.ts); absent: as `cursorKey` reads it. */
  readonly readAsText?: boolean
}

/**
 * The column of the route's table under which a list statement reads an
 * aggregate or computed field it filters or sorts by: the statement then
 * reads the table through a subquery adding these columns (see
 * `derivedSource`). No column of a resource is read under this prefix.
 */
export function derivedColumn (name: string): string {
  return `__expand_derived_${name}`
}

/** One to-one relation a sort path passes through: joined as `alias`, its key matched to `from`'s column. */
export interface SortJoin {
  /** Names the join in the statement; the same for the same path prefix on one route. */
  readonly alias: string
  readonly relation: RelationEdge
  /** The owner's column holding the related key, qualified by the owner's table or join alias. */
  readonly ownerColumn: string
}

export interface ListQueryOptions {
  filter?: Readonly<Record<string, FilterDeclaration>>
  sort?: readonly string[]
  cursorSecret?: string | Buffer
}

/** The longest `contains` value by default: a substring search costs the text's length times the value's. */
export const defaultContainsMaxLength = 32

/** A sort key of a request: a declared sort field, and its direction. */
export interface RequestedSort {
  readonly field: SortField
  readonly descending: boolean
}

/**
 * A list route's filters, sort keys and cursor codec, checked at startup
 * (`readListDeclaration`): what every later stage reads of the route's
 * `filter`, `sort` and `cursorSecret` options.
 */
export interface ListDeclaration {
  readonly node: ResourceNode
  readonly filters: ReadonlyMap<string, FilterField>
  readonly sortFields: ReadonlyMap<string, SortField>
  /** The primary key's parts, in key order: one for a single key. */
  readonly primaryKey: readonly SortField[]
  readonly cursors: CursorCodec
}

/** The route's list options, checked (each mistake through `fail`, naming it). */
export function readListDeclaration (
  node: ResourceNode,
  options: ListQueryOptions,
  cursors: CursorCodec,
  fail: (message: string) => never
): ListDeclaration {
  return {
    node,
    filters: readFilterOption(node, options.filter, fail),
    sortFields: readSortOption(node, options.sort, fail),
    primaryKey: node.key.fields.map((field) => ({
      name: field,
      column: `${tableOf(node)}.${node.column(field)}`,
      type: valueTypeOf(node.fieldSchemas.get(field))?.type ?? { kind: 'string' },
      nullable: false,
      joins: [],
      readAsText: fieldReadAsText(node, field),
    })),
    cursors,
  }
}

/**
 * The sort keys of a request, the primary key (ascending) last unless it is
 * already there; each part of a composite key not already sorted by, in key order.
 */
export function keysOf (declaration: ListDeclaration, sort: readonly RequestedSort[]): RequestedSort[] {
  const keys = [...sort]
  for (const part of declaration.primaryKey) {
    if (!keys.some(({ field }) => field.column === part.column)) keys.push({ field: part, descending: false })
  }
  return keys
}

export function isDateFormat (type: ValueType): boolean {
  return type.format === 'date' || type.format === 'date-time'
}

/** The plain types a filter or sort key reads: a field's schema type, less null. */
function valueTypeOf (schema: JsonSchema | undefined): { type: ValueType; nullable: boolean } | undefined {
  if (schema === undefined) return undefined
  const types = Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  const nullable = types.includes('null')
  const plain = types.filter((type) => type !== 'null')
  if (plain.length !== 1) return undefined
  const kind = plain[0]
  if (kind !== 'integer' && kind !== 'number' && kind !== 'boolean' && kind !== 'string') return undefined
  return { type: typeof schema.format === 'string' && kind === 'string' ? { kind, format: schema.format } : { kind }, nullable }
}

/** A field's column on its resource's table: a value field's, or a to-one relation's local column. */
function columnOf (node: ResourceNode, field: string): string | undefined {
  const relation = node.relations.get(field)
  if (relation === undefined) return node.column(field)
  return ownerColumn(relation.link)
}

export function readFilterOption (
  node: ResourceNode, option: ListQueryOptions['filter'], fail: (message: string) => never
): Map<string, FilterField> {
  const filters = new Map<string, FilterField>()
  if (option === undefined) return filters
  if (typeof option !== 'object' || option === null || Array.isArray(option)) fail(messages.filterOptionNotObject)
  for (const [path, declaration] of Object.entries(option)) {
    const at = `filter '${path}'`
    const { operators, containsMaxLength } = readFilterDeclaration(declaration, at, fail)
    const segments = path.split('.')
    const hops: RelationEdge[] = []
    let current = node
    for (const [index, segment] of segments.slice(0, -1).entries()) {
      if (current.derived.has(segment)) fail(messages.belowDerivedOption(at, segments.slice(0, index + 1).join('.')))
      const relation = current.relations.get(segment)
      if (relation?.link.kind === 'function') fail(messages.filterThroughFunction(at, segment, current.qualifiedName))
      const refused = refusalOf(relation, at, segment, messages.filterNotRelation(at, segment, current.qualifiedName))
      if (refused !== undefined) fail(refused)
      hops.push(relation!)
      current = relation!.target
    }
    const field = segments[segments.length - 1]!
    if (!current.fieldSchemas.has(field)) fail(messages.noSuchField(at, current.qualifiedName, field))
    const derived = current.derived.get(field)
    if (derived !== undefined && hops.length > 0) fail(messages.derivedThroughRelation(at, field, current.qualifiedName))
    const relation = current.relations.get(field)
    const column = derived !== undefined ? derivedColumn(field) : columnOf(current, field)
    if (!Array.isArray(operators) || operators.length === 0) fail(messages.noFilterOperators(at, filterOperators))
    for (const operator of operators) {
      if (!(filterOperators as readonly string[]).includes(operator)) {
        fail(messages.unknownFilterOperator(at, String(operator), filterOperators))
      }
    }
    const valueOperators = operators.filter((operator) => operator !== 'exists')
    if (operators.includes('exists') && relation?.link.kind === 'function') {
      fail(messages.filterThroughFunction(at, field, current.qualifiedName))
    }
    if (operators.includes('exists')) {
      const refused = refusalOf(relation, at, field, messages.existsNeedsRelation(at, field))
      if (refused !== undefined) fail(refused)
    }
    const read = valueTypeOf(current.fieldSchemas.get(field))
    if (valueOperators.length > 0) {
      if (column === undefined || (relation?.alwaysNested ?? false)) fail(messages.notAColumn(at, field, current.qualifiedName))
      if (read === undefined) fail(messages.badFilterFieldType(at, field))
    }
    for (const operator of valueOperators) {
      if (operator === 'contains' && read!.type.kind !== 'string') fail(messages.containsNeedsString(at))
      if (['lt', 'lte', 'gt', 'gte'].includes(operator) && read!.type.kind === 'boolean') fail(messages.comparisonOnBoolean(at, operator))
    }
    filters.set(path, Object.freeze({
      path,
      hops: Object.freeze(hops),
      node: current,
      field,
      column,
      relation: operators.includes('exists') ? relation : undefined,
      type: read?.type ?? { kind: 'boolean' as const },
      operators: Object.freeze([...new Set(operators)]),
      nullable: read?.nullable ?? false,
      containsMaxLength,
      derived,
    }))
  }
  return filters
}

/**
 * Why a filter cannot follow `relation` (`name` in the option `at`), or undefined where its statements can:
 * `unfollowed` for no relation, one without a table, or one whose keys the plugin does not know.
 */
function refusalOf (relation: RelationEdge | undefined, at: string, name: string, unfollowed: string): string | undefined {
  if (relation === undefined || relation.target.table === undefined) return unfollowed
  // Lists do not follow a relation over a composite key yet: one key column is what their statements compare.
  if (readsCompositeKey(relation)) return messages.filterThroughCompositeKey(at, name)
  return loadable(relation) ? undefined : unfollowed
}

/** Whether the statements can follow a relation of one key column: a to-one column, a to-many foreign key, a join table. */
function loadable (relation: RelationEdge): boolean {
  const { link } = relation
  switch (link.kind) {
    case 'to-one': return true
    case 'to-many': return link.foreignKey !== undefined
    case 'many-to-many': return true
    // Its rows are not in a table: no statement reads them (refused with its own message before this is asked).
    case 'function': return false
    default: return link satisfies never
  }
}

/** A filter's declaration, in either form: its operators and the longest `contains` value. */
function readFilterDeclaration (
  declaration: FilterDeclaration, at: string, fail: (message: string) => never
): { operators: readonly FilterOperator[]; containsMaxLength: number } {
  if (Array.isArray(declaration)) return { operators: declaration, containsMaxLength: defaultContainsMaxLength }
  if (typeof declaration !== 'object' || declaration === null) fail(messages.noFilterOperators(at, filterOperators))
  const { operators, containsMaxLength, ...rest } = declaration as Exclude<FilterDeclaration, readonly FilterOperator[]>
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) fail(messages.unknownFilterKey(at, unknown))
  const lengthFits = (length: number) => Number.isSafeInteger(length) && length >= 1 && length <= maxValueLength
  if (containsMaxLength !== undefined && !lengthFits(containsMaxLength)) {
    fail(messages.badContainsMaxLength(at, maxValueLength))
  }
  return { operators, containsMaxLength: containsMaxLength ?? defaultContainsMaxLength }
}

export function readSortOption (
  node: ResourceNode, option: readonly string[] | undefined, fail: (message: string) => never
): Map<string, SortField> {
  const fields = new Map<string, SortField>()
  if (option === undefined) return fields
  if (!Array.isArray(option)) fail(messages.sortOptionNotArray)
  // One join per distinct path prefix: `owner.name` and `owner.born` share the join of `owner`.
  const joins = new Map<string, SortJoin>()
  for (const name of option) {
    if (typeof name !== 'string') fail(messages.noSuchField('sort', node.qualifiedName, String(name)))
    const segments = name.split('.')
    const path: SortJoin[] = []
    let current = node
    let from = tableOf(node)
    for (const [index, segment] of segments.slice(0, -1).entries()) {
      if (current.derived.has(segment)) fail(messages.belowDerivedOption('sort', segments.slice(0, index + 1).join('.')))
      const relation = current.relations.get(segment)
      if (relation?.link.kind === 'function') fail(messages.sortThroughFunction(name, segment, current.qualifiedName))
      if (relation === undefined || relation.target.table === undefined) {
        fail(messages.sortNotRelation(name, segment, current.qualifiedName))
      }
      const column = ownerColumn(relation!.link)
      // A to-many relation has many values per row: which one would order it is not a question a list can answer.
      // A to-one relation without one column holds a composite key, which the sort's join does not match yet.
      if (column === undefined) {
        fail(relation!.link.kind === 'to-one' ? messages.sortThroughCompositeKey(name, segment) : messages.sortThroughMany(name, segment))
      }
      const prefix = segments.slice(0, index + 1).join('.')
      let join = joins.get(prefix)
      if (join === undefined) {
        join = Object.freeze({ alias: `${sortJoinAlias}${joins.size}`, relation: relation!, ownerColumn: `${from}.${column!}` })
        joins.set(prefix, join)
      }
      path.push(join)
      from = join.alias
      current = relation!.target
    }
    const field = segments[segments.length - 1]!
    if (!current.fieldSchemas.has(field)) fail(messages.noSuchField('sort', current.qualifiedName, name))
    const derived = current.derived.get(field)
    if (derived !== undefined && path.length > 0) fail(messages.derivedThroughRelation(`sort '${name}'`, field, current.qualifiedName))
    const column = derived !== undefined ? derivedColumn(field) : columnOf(current, field)
    if (column === undefined || (current.relations.get(field)?.alwaysNested ?? false)) {
      fail(messages.notAColumn('sort', name, current.qualifiedName))
    }
    const read = valueTypeOf(current.fieldSchemas.get(field))
    if (read === undefined) fail(messages.badSortFieldType(name))
    fields.set(name, Object.freeze({
      name,
      column: `${from}.${column!}`,
      type: read!.type,
      nullable: read!.nullable || path.length > 0,
      joins: Object.freeze(path),
      derived,
      readAsText: derived === undefined && fieldReadAsText(current, field),
    }))
  }
  return fields
}

/** Sort joins are named by this prefix and their number: no column or table of a resource is read under it. */
export const sortJoinAlias = '__expand_sort_'
