import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { RelationEdge, ResourceNode } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import { cursorColumn } from '../plan/cursors.js'
import type { RequestedFilter, ResolvedList } from '../plan/list-plan.js'
import { isDateFormat, type FilterField, type FilterOperator, type RequestedSort, type ValueType } from '../routes/list-declarations.js'
import { tableOf, type AnySelect } from './selection.js'
import { isSqlite, padKeys, type ScopeParts } from './statement-templates.js'

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
 * value, `(k1, k2) > (?, ?)` (SQLite and PostgreSQL both take it, and each
 * value is bound once); mixed directions are written out as an OR of
 * ANDs, `k1 < ? or (k1 = ? and k2 > ?)`, each comparison following its key.
 */
export function keysetCondition (keys: readonly RequestedSort[], after: readonly unknown[], values: unknown[]): Condition {
  const descending = keys[0]!.descending
  if (keys.every((key) => key.descending === descending)) {
    values.push(...after)
    const columns = sql.join(keys.map(({ field }) => sql.ref(field.column)))
    return () => sql<SqlBool>`(${columns}) ${sql.raw(descending ? '<' : '>')} (${sql.join(after.map((value) => sql`${value}`))})`
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
 * The columns a cursor is made of, selected under names of their own. On
 * PostgreSQL a `date` or `date-time` key is read as text: the value the
 * database compares, whatever the column's type. pg would read a `timestamp` or `date` as a
 * Date in the process's time zone, whose UTC text the database then reads
 * back as another wall-clock time (rows repeated or skipped outside UTC);
 * the text cast back to the column's type is the key itself, to the microsecond.
 */
export function selectKeys<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[], sqlite: boolean): Q {
  return query.select((eb) => keys.map(({ field }, index) => {
    const key = `${cursorColumn}${index}`
    return sqlite || !isDateFormat(field.type) ? eb.ref(field.column).as(key) : eb.cast(eb.ref(field.column), 'text').as(key)
  })) as Q
}

/** The condition of one filter, through its relations (`IN` subqueries, each with the related resource's scope). */
function filterCondition (
  requested: RequestedFilter, root: ResourceNode, context: LoadContext, values: unknown[]
): [Condition, string | null] {
  const { filter } = requested
  const comparison = comparisonOf(filter, requested.operator, requested.value, isSqlite(context.db))
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
    const link = hop.link as Extract<RelationEdge['link'], { kind: 'to-one' }>
    const table = tableOf(hop.target)
    let related = context.db.selectFrom(table).select(`${table}.${hop.target.column(hop.target.primaryKey)}`)
    const scope = scopes[index]
    if (scope !== undefined) related = related.where(scope)
    related = related.where(through(index + 1, hop.target))
    return eb(`${tableOf(owner)}.${link.column}`, 'in', related)
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
 * the field's schema (README, "Filter values"), the same on every dialect:
 * - a string holding NUL (which no PostgreSQL text holds, and which
 *   PostgreSQL refuses to bind) equals no stored text and orders after
 *   its text before the NUL: `eq` and `contains` find no row, `ne` every row
 *   not null, `in` leaves it out, `lt`/`lte` compare `<=` that text,
 *   `gt`/`gte` `>` it;
 * - on PostgreSQL, a number its untyped parameter could not be read as
 *   (an integer outside int4, a number outside real's range) is bound with
 *   a type that holds it (`valueExpression`);
 * - on SQLite, a date-time column is compared by its instant (`julianday`).
 */
function comparisonOf (filter: FilterField, operator: FilterOperator, value: unknown, sqlite: boolean): Comparison {
  const column = filter.column
  if (operator === 'null') {
    return { leaf: (eb) => eb(column, value === true ? 'is' : 'is not', null), values: [], shape: `null${String(value)}` }
  }
  if (operator === 'contains') {
    const text = value as string
    if (text.includes('\u0000')) return { leaf: never, values: [], shape: 'never' }
    if (sqlite) return { leaf: () => sql<SqlBool>`instr(lower(${sql.ref(column)}), lower(${text})) > 0`, values: [text], shape: 'contains' }
    const pattern = likePattern(text)
    return { leaf: () => sql<SqlBool>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`, values: [pattern], shape: 'contains' }
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
  const byInstant = sqlite && filter.type.format === 'date-time'
  const left = byInstant ? sql`julianday(${sql.ref(column)})` : sql.ref(column)
  const typed = bound.map((item) => valueExpression(filter.type, item, sqlite))
  const right = (item: unknown, cast: string | undefined) => byInstant
    ? sql`julianday(${item})`
    : cast === undefined ? sql`${item}` : sql`cast(${item} as ${sql.raw(cast)})`
  if (op !== 'in') {
    const { item, cast } = typed[0]!
    return { leaf: (eb) => eb(left, comparisonOperators[op as keyof typeof comparisonOperators], right(item, cast)), values: bound, shape: `${op}${cast ?? ''}` }
  }
  // PostgreSQL reads an IN list as one type, the column's where it can: a
  // typed value (an int4 column's 2^31 is bound as bigint, fine; a real's
  // 1e300 as numeric, which the list would read back as real) is compared alone.
  // Padded as relation keys are (padKeys): lists of any length make a handful of statement texts.
  const plain = padKeys(typed.filter(({ cast }) => cast === undefined)) as typeof typed
  const alone = typed.filter(({ cast }) => cast !== undefined)
  const shape = `in${plain.length}${alone.map(({ cast }) => `,${cast!}`).join('')}`
  const leaf: Condition = (eb) => {
    const parts: Array<Expression<SqlBool>> = plain.length === 0 ? [] : [eb(left, 'in', plain.map(({ item }) => right(item, undefined)))]
    for (const { item, cast } of alone) parts.push(eb(left, '=', right(item, cast)))
    return parts.length === 1 ? parts[0]! : eb.or(parts)
  }
  return { leaf, values: [...plain, ...alone].map(({ item }) => item), shape }
}

const int4 = { min: -2147483648, max: 2147483647 }
/** The largest finite PostgreSQL `real`. */
const realMax = 3.4028234663852886e38

/**
 * A value with the type PostgreSQL reads its parameter as: none (the
 * column's, as for every value the column's type can hold), `bigint` for an
 * integer outside int4 (an int2/int4 column compares with it through the
 * integer operators its index serves), `numeric` for a number that is an
 * integer outside int4 or beyond real's range. SQLite compares any value
 * with any column: never a cast.
 */
function valueExpression (type: ValueType, item: unknown, sqlite: boolean): { item: unknown; cast: 'bigint' | 'numeric' | undefined } {
  if (sqlite || typeof item !== 'number') return { item, cast: undefined }
  const outsideInt4 = Number.isInteger(item) && (item < int4.min || item > int4.max)
  if (type.kind === 'integer') return { item, cast: outsideInt4 ? 'bigint' : undefined }
  return { item, cast: outsideInt4 || Math.abs(item) > realMax ? 'numeric' : undefined }
}

/**
 * `contains` as a LIKE pattern: the text between wildcards, its own `%`, `_`
 * and `\\` escaped. PostgreSQL searches with LIKE, which a trigram index on
 * `lower(column)` serves; SQLite has no index for a substring and searches
 * with `instr`, which compares bytes at each position: 1,000-character values
 * over 200 rows of 20,000 characters measured about 0.2 s with `instr`
 * against 20 s with LIKE, whose matcher backtracks character by character.
 */
function likePattern (text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`
}
