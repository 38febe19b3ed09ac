import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { columnsOf } from '../graph/composite-relations.js'
import type { RelationEdge, ResourceNode } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import type { RequestedFilter, ResolvedList } from '../plan/list-plan.js'
import type { FilterField, FilterOperator } from '../routes/list-declarations.js'
import type { ExpandDialect, FilterValue } from './dialects/index.js'
import { foreignKeyOf, keyColumn, tableOf, type AnySelect } from './selection.js'
import { padKeys, type ScopeParts } from './statement-templates.js'

// Conditions are written on the statement's own expression builder.
export type Condition = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>

/**
 * The request's filters as conditions on the route's table, to add in
 * order; each value (and each related scope's values) is pushed on
 * `values` now, in the order the statement binds them. `shape` is the
 * conditions' text up to values, or null when a related scope cannot be
 * told apart by shape (the statement is then not kept as a template).
 *
 * Filters are grouped by the relations they go through, so that conditions
 * sharing a path hold on the same related row (`pets.species` and
 * `pets.name`: one pet that is both): each to-one hop is an `IN` over the
 * related keys, each to-many or many-to-many hop one `EXISTS`, never a join
 * that would repeat the parent row; each reads the related table under its
 * scope.
 */
export function listConditions (
  root: ResourceNode, list: Pick<ResolvedList, 'filters'>, context: LoadContext, values: unknown[]
): { conditions: Condition[]; shape: string | null } {
  const tree = filterTree(list.filters)
  const writer: FilterWriter = { context, values, shape: '', aliases: 0 }
  const conditions = levelConditions(tree, tableOf(root), writer)
  return { conditions, shape: writer.shape }
}

/** The filters of one level of a filter path: on its own columns, on its relations' existence, through its relations. */
interface FilterLevel {
  readonly entries: FilterEntry[]
  readonly children: Map<string, Extract<FilterEntry, { kind: 'through' }>>
}

type FilterEntry =
  | { readonly kind: 'compare'; readonly requested: RequestedFilter }
  | { readonly kind: 'exists'; readonly requested: RequestedFilter; readonly relation: RelationEdge }
  | { readonly kind: 'through'; readonly relation: RelationEdge; readonly level: FilterLevel }

/** What writing the conditions collects: the values in statement order, the shape, the aliases used. */
interface FilterWriter {
  readonly context: LoadContext
  readonly values: unknown[]
  shape: string | null
  aliases: number
}

/** Filter aliases: no table or column of a resource is read under this prefix. */
const filterAlias = '__expand_filter_'

/** The filters as a tree of the relations they go through, each level's entries in the order first written. */
function filterTree (filters: readonly RequestedFilter[]): FilterLevel {
  const root: FilterLevel = { entries: [], children: new Map() }
  for (const requested of filters) {
    let level = root
    for (const hop of requested.filter.hops) {
      let child = level.children.get(hop.field)
      if (child === undefined) {
        child = { kind: 'through', relation: hop, level: { entries: [], children: new Map() } }
        level.children.set(hop.field, child)
        level.entries.push(child)
      }
      level = child.level
    }
    if (requested.operator === 'exists') level.entries.push({ kind: 'exists', requested, relation: requested.filter.relation! })
    else level.entries.push({ kind: 'compare', requested })
  }
  return root
}

function addShape (writer: FilterWriter, part: string | null): void {
  writer.shape = writer.shape === null || part === null ? null : `${writer.shape}${part}`
}

/**
 * The conditions of one level on the row `reference` names (the route's
 * table, a to-one subquery's table, or a to-many subquery's alias), values
 * pushed in the order the conditions are written.
 */
function levelConditions (level: FilterLevel, reference: string, writer: FilterWriter): Condition[] {
  const conditions: Condition[] = []
  for (const entry of level.entries) {
    switch (entry.kind) {
      case 'compare': {
        const { filter, operator, value } = entry.requested
        const comparison = comparisonOf(filter, `${reference}.${filter.column!}`, operator as ComparedOperator, value, writer.context.dialect)
        writer.values.push(...comparison.values)
        addShape(writer, `&${filter.field}[${comparison.shape}]`)
        conditions.push(comparison.leaf)
        break
      }
      case 'exists': {
        const wanted = entry.requested.value === true
        addShape(writer, `&${entry.relation.field}[exists${String(wanted)}]`)
        const related = relatedRows(entry.relation, reference, writer)
        conditions.push((eb) => wanted ? eb.exists(related()) : eb.not(eb.exists(related())))
        break
      }
      case 'through': {
        addShape(writer, `&${entry.relation.field}{`)
        conditions.push(throughCondition(entry.relation, entry.level, reference, writer))
        addShape(writer, '}')
        break
      }
      default:
        entry satisfies never
    }
  }
  return conditions
}

/**
 * The condition that a related row of `relation` matches the level's
 * filters: a to-one hop as `column in (select key ...)`, the form an index
 * on the related key serves; a to-many or many-to-many hop as `exists`.
 */
function throughCondition (relation: RelationEdge, level: FilterLevel, reference: string, writer: FilterWriter): Condition {
  const { link, target } = relation
  switch (link.kind) {
    case 'to-one': {
      const table = tableOf(target)
      const scope = scopeOf(target, writer)
      const inner = levelConditions(level, table, writer)
      return (eb) => {
        let related = writer.context.db.selectFrom(table).select(keyColumn(target))
        if (scope !== undefined) related = related.where(scope)
        for (const condition of inner) related = related.where(condition)
        return eb(`${reference}.${link.column}`, 'in', related)
      }
    }
    case 'to-many':
    case 'many-to-many': {
      const related = relatedRows(relation, reference, writer, (alias) => levelConditions(level, alias, writer))
      return (eb) => eb.exists(related())
    }
    case 'function': return throughFunction()
    default:
      return link satisfies never
  }
}

/** List declarations refuse a path through a relation resolved by a function (routes/list-declarations.ts): no statement meets one. */
function throughFunction (): never {
  throw new TypeError('a list cannot filter or sort through a relation resolved by a function')
}

/** The related table's scope for this request, its values pushed and its shape added. */
function scopeOf (target: ResourceNode, writer: FilterWriter): Expression<SqlBool> | undefined {
  const scope = writer.context.scope(target)
  const parts: ScopeParts | undefined = writer.context.scopeParts(target)
  if (parts !== undefined) {
    writer.values.push(...parts.values)
    addShape(writer, `(${parts.key ?? ''})`)
    if (parts.key === null) writer.shape = null
  }
  return scope
}

/**
 * `select 1` from the rows of `relation` that belong to the row `reference`
 * names, under the related scope, and match `inner`'s conditions. The
 * related table is read under an alias of its own (a subquery with its
 * scope when it has one), so that a relation from a table to itself
 * compares the related row with the outer one, not with itself.
 */
function relatedRows (
  relation: RelationEdge, reference: string, writer: FilterWriter, inner?: (alias: string) => Condition[]
): () => AnySelect {
  const { db } = writer.context
  const { link, target } = relation
  const table = tableOf(target)
  const alias = `${filterAlias}${writer.aliases++}`
  const scope = scopeOf(target, writer)
  const source = () => underAlias(writer.context, table, scope, alias)
  const key = `${alias}.${target.column(target.primaryKey)}`
  let from: () => AnySelect
  switch (link.kind) {
    case 'to-one':
      from = () => (db.selectFrom(source() as never) as AnySelect).whereRef(key, '=', `${reference}.${link.column}`)
      break
    case 'to-many':
      from = () => (db.selectFrom(source() as never) as AnySelect)
        .whereRef(`${alias}.${foreignKeyOf(relation, link.foreignKey)}`, '=', `${reference}.${relation.owner.column(relation.owner.primaryKey)}`)
      break
    case 'many-to-many': {
      const joinAlias = `${alias}_through`
      const { through } = link
      from = () => ((db.selectFrom(`${through.table} as ${joinAlias}`) as AnySelect)
        .innerJoin(source() as never, key as never, `${joinAlias}.${through.to}` as never) as AnySelect)
        .whereRef(`${joinAlias}.${through.from}`, '=', `${reference}.${relation.owner.column(relation.owner.primaryKey)}`)
      break
    }
    case 'function': return throughFunction()
    default:
      from = link satisfies never
  }
  const conditions = inner === undefined ? [] : inner(alias)
  const { dialect } = writer.context
  const select = () => conditions.reduce((query, condition) => query.where(condition), from().select(sql.lit(1).as('found')))
  return () => dialect.correlatedSubquery(select())
}

/**
 * A related table read under an alias of its own, as a filter's subquery and
 * a sort's join read it: the table itself, or with a scope the subquery of
 * its rows in that scope (the scope's columns are written `table.column`,
 * which the alias would hide).
 */
export function underAlias (context: LoadContext, table: string, scope: Expression<SqlBool> | undefined, alias: string) {
  return scope === undefined ? `${table} as ${alias}` : context.db.selectFrom(table).selectAll(table).where(scope).as(alias)
}

/**
 * The indexes that serve a list's filters and order, as `table (columns)`,
 * each once: the key a to-many hop correlates on (the foreign key, or the
 * join table's parent column then its related one), a filtered column
 * compared by value, and, when every sort key is a column of the route's
 * table, those columns then the primary key (a keyset page reads the index
 * from where it left off). A related table's primary key, which each to-one
 * hop and sort join reads by, is not listed: every table has it. Neither is
 * `contains`, which a plain index does not serve (docs/lists.md, "Indexes").
 */
export function servingIndexes (root: ResourceNode, list: Pick<ResolvedList, 'filters' | 'sort' | 'keys'>): string[] {
  const indexes = new Set<string>()
  const index = (table: string, columns: readonly string[]) => indexes.add(`${table} (${columns.join(', ')})`)
  /** The key a relation's related rows are found by from their owner's: none for a to-one hop, which reads the primary key. */
  const correlation = (relation: RelationEdge) => {
    const { link } = relation
    switch (link.kind) {
      case 'to-one': break
      case 'to-many': index(tableOf(relation.target), [foreignKeyOf(relation, link.foreignKey)]); break
      case 'many-to-many': index(link.through.table, [...columnsOf(link.through.from), ...columnsOf(link.through.to)]); break
      case 'function': return throughFunction()
      default: link satisfies never
    }
  }
  for (const { filter, operator } of list.filters) {
    for (const hop of filter.hops) correlation(hop)
    const { derived } = filter
    if (derived !== undefined) {
      // An aggregate is read by its relation's key; a computed value is no column an index holds.
      if (derived.kind === 'aggregate') correlation(derived.relation)
    } else if (operator === 'exists') {
      correlation(filter.relation!)
    } else if (operator !== 'contains' && filter.column !== filter.node.column(filter.node.primaryKey)) {
      index(tableOf(filter.node), [filter.column!])
    }
  }
  const table = tableOf(root)
  if (list.sort.length > 0 && list.keys.every(({ field }) => field.joins.length === 0 && field.derived === undefined)) {
    index(table, list.keys.map(({ field }) => field.column.slice(table.length + 1)))
  }
  return [...indexes]
}

/** A filter's comparison on its own column: the condition, the values it binds in order, and its shape up to values. */
interface Comparison {
  readonly leaf: Condition
  readonly values: readonly unknown[]
  readonly shape: string
}

const comparisonOperators = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const
const never: Condition = () => sql<SqlBool>`1 = 0`

/**
 * The comparison of one filter, as if the column could hold any value of
 * the field's schema (docs/lists.md, "Filter values"), the same on every dialect:
 * - a string holding NUL (which no PostgreSQL text holds, and which
 *   PostgreSQL refuses to bind) equals no stored text and orders after
 *   its text before the NUL: `eq` and `contains` find no row, `ne` every row
 *   not null, `in` leaves it out, `lt`/`lte` compare `<=` that text,
 *   `gt`/`gte` `>` it;
 * - a number the database would not read its bare parameter as is bound with
 *   a type that holds it (the dialect's `filterValue`), and a column is
 *   compared in the form its dialect compares it in (`filterColumn`).
 */
/** The operators that compare a column with values: all but `exists`, which asks about related rows. */
type ComparedOperator = Exclude<FilterOperator, 'exists'>

function comparisonOf (
  filter: FilterField, column: string, operator: ComparedOperator, value: unknown, dialect: ExpandDialect
): Comparison {
  if (operator === 'null') {
    return { leaf: (eb) => eb(column, value === true ? 'is' : 'is not', null), values: [], shape: `null${String(value)}` }
  }
  if (operator === 'contains') {
    const text = value as string
    if (text.includes('\u0000')) return { leaf: never, values: [], shape: 'never' }
    const { condition, value: bound } = dialect.contains(column, text)
    return { leaf: () => condition, values: [bound], shape: 'contains' }
  }
  let op: keyof typeof comparisonOperators | 'in' = operator
  let bound = operator === 'in' ? value as unknown[] : [value]
  if (filter.type.kind === 'string') {
    const cut = (text: unknown) => (text as string).indexOf('\u0000')
    if (operator === 'in') bound = bound.filter((item) => cut(item) < 0)
    else if (cut(value) >= 0) {
      const before = (value as string).slice(0, cut(value))
      switch (operator) {
        case 'eq': return { leaf: never, values: [], shape: 'never' }
        case 'ne': return { leaf: (eb) => eb(column, 'is not', null), values: [], shape: 'nullfalse' }
        case 'lt': case 'lte': op = 'lte'; break
        default: op = 'gt'
      }
      bound = [before]
    }
    if (bound.length === 0) return { leaf: never, values: [], shape: 'never' }
  }
  const left = dialect.filterColumn(filter.type, column)
  const typed: FilterValue[] = bound.map((item) => dialect.filterValue(filter.type, item))
  if (op !== 'in') {
    const { expression, cast, item } = typed[0]!
    return { leaf: (eb) => eb(left, comparisonOperators[op as keyof typeof comparisonOperators], expression), values: [item], shape: `${op}${cast ?? ''}` }
  }
  // PostgreSQL reads an IN list as one type, the column's where it can: a
  // typed value (an int4 column's 2^31 is bound as bigint, fine; a real's
  // 1e300 as numeric, which the list would read back as real) is compared alone.
  // Padded as relation keys are (padKeys): lists of any length make a handful of statement texts.
  const plain = padKeys(typed.filter(({ cast }) => cast === undefined)) as typeof typed
  const alone = typed.filter(({ cast }) => cast !== undefined)
  const shape = `in${plain.length}${alone.map(({ cast }) => `,${cast!}`).join('')}`
  const leaf: Condition = (eb) => {
    const parts: Array<Expression<SqlBool>> = plain.length === 0 ? [] : [eb(left, 'in', plain.map(({ expression }) => expression))]
    for (const { expression } of alone) parts.push(eb(left, '=', expression))
    return parts.length === 1 ? parts[0]! : eb.or(parts)
  }
  return { leaf, values: [...plain, ...alone].map(({ item }) => item), shape }
}
