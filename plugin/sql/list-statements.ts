import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { ownerColumn, type ResourceNode } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import { cursorColumn } from '../plan/cursors.js'
import type { RequestedFilter, ResolvedList } from '../plan/list-plan.js'
import type { FilterField, FilterOperator, RequestedSort } from '../routes/list-declarations.js'
import type { ExpandDialect, FilterValue } from './dialects/index.js'
import { tableOf, type AnySelect } from './selection.js'
import { padKeys, type ScopeParts } from './statement-templates.js'

// Conditions are written on the statement's own expression builder.
export type Condition = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>

/**
 * The request's filters as conditions on the route's table, to add in
 * order; each value (and each related scope's values) is pushed on
 * `values` now, in the order the statement binds them. `shape` is the
 * conditions' text up to values, or null when a related scope cannot be
 * told apart by shape (the statement is then not kept as a template).
 */
export function listConditions (
  root: ResourceNode, list: ResolvedList, context: LoadContext, values: unknown[]
): { conditions: Condition[]; shape: string | null } {
  let shape: string | null = ''
  const conditions: Condition[] = []
  for (const requested of list.filters) {
    const [condition, part] = filterCondition(requested, root, context, values)
    conditions.push(condition)
    shape = shape === null || part === null ? null : `${shape}&${part}`
  }
  return { conditions, shape }
}

/** Orders `query` by the request's sort keys. */
export function orderBy<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[]): Q {
  let result = query
  for (const { field, descending } of keys) result = result.orderBy(field.column, descending ? 'desc' : 'asc') as Q
  return result
}

/**
 * Rows after the cursor's. Keys all in one direction compare as a row
 * value (the dialect's `rowComparison`, each value bound once); mixed
 * directions are written out as an OR of ANDs, `k1 < ? or (k1 = ? and k2 > ?)`,
 * each comparison following its key.
 */
export function keysetCondition (
  keys: readonly RequestedSort[], after: readonly unknown[], values: unknown[], dialect: ExpandDialect
): Condition {
  const descending = keys[0]!.descending
  if (keys.every((key) => key.descending === descending)) {
    values.push(...after)
    const condition = dialect.rowComparison(keys.map(({ field }) => field.column), descending ? '<' : '>', after)
    return () => condition
  }
  keys.forEach((_key, index) => {
    for (let before = 0; before <= index; before++) values.push(after[before])
  })
  return (eb) => eb.or(keys.map(({ field, descending }, index) => {
    const parts: Array<Expression<SqlBool>> = []
    for (let before = 0; before < index; before++) parts.push(eb(keys[before]!.field.column, '=', after[before]))
    parts.push(eb(field.column, descending ? '<' : '>', after[index]))
    return parts.length === 1 ? parts[0]! : eb.and(parts)
  }))
}

/**
 * The columns a cursor is made of, selected under names of their own, each
 * in the form the database compares it in (the dialect's `cursorKey`).
 */
export function selectKeys<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[], dialect: ExpandDialect): Q {
  return query.select((eb) => keys.map(({ field }, index) => dialect.cursorKey(eb, field.type, field.column).as(`${cursorColumn}${index}`))) as Q
}

/** The condition of one filter, through its relations (`IN` subqueries, each with the related resource's scope). */
function filterCondition (
  requested: RequestedFilter, root: ResourceNode, context: LoadContext, values: unknown[]
): [Condition, string | null] {
  const { filter } = requested
  const comparison = comparisonOf(filter, requested.operator, requested.value, context.dialect)
  let shape: string | null = `${filter.path}[${comparison.shape}]`
  // Values in statement order: each hop's scope first, then the filter's own.
  const scopes: Array<Expression<SqlBool> | undefined> = filter.hops.map((hop) => {
    const scope = context.scope(hop.target)
    const parts: ScopeParts | undefined = context.scopeParts(hop.target)
    if (parts !== undefined) {
      values.push(...parts.values)
      shape = shape === null || parts.key === null ? null : `${shape}(${parts.key})`
    }
    return scope
  })
  values.push(...comparison.values)
  const through = (index: number, owner: ResourceNode): Condition => (eb) => {
    if (index === filter.hops.length) return comparison.leaf(eb)
    const hop = filter.hops[index]!
    // A hop is a to-one relation (list-declarations.ts checks it): its owner's column holds the related key.
    const column = ownerColumn(hop.link)!
    const table = tableOf(hop.target)
    let related = context.db.selectFrom(table).select(`${table}.${hop.target.column(hop.target.primaryKey)}`)
    const scope = scopes[index]
    if (scope !== undefined) related = related.where(scope)
    related = related.where(through(index + 1, hop.target))
    return eb(`${tableOf(owner)}.${column}`, 'in', related)
  }
  return [through(0, root), shape]
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
function comparisonOf (filter: FilterField, operator: FilterOperator, value: unknown, dialect: ExpandDialect): Comparison {
  const column = filter.column
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
    const { expression, cast } = typed[0]!
    return { leaf: (eb) => eb(left, comparisonOperators[op as keyof typeof comparisonOperators], expression), values: bound, shape: `${op}${cast ?? ''}` }
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

// An expanded list's `where[path.field]` conditions are written as a list's filters (sql/expanded-list-statements.ts).
export { filterCondition }
