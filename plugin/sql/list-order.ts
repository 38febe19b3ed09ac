import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { LoadContext } from '../load/load-context.js'
import { cursorColumn } from '../plan/cursors.js'
import type { RequestedSort } from '../routes/list-declarations.js'
import type { ExpandDialect } from './dialects/index.js'
import { underAlias, type Condition } from './list-statements.js'
import { tableOf, type AnySelect } from './selection.js'

// The order of a list page: the joins its sort keys need, its ORDER BY, the
// keyset condition of a cursor page and the columns a cursor is made of.

/**
 * Orders `query` by the request's sort keys. A key that may be NULL has its
 * NULLs written explicitly (the dialect's `orderBy`): after every value
 * ascending, before every value descending, as if NULL were the largest
 * value, on every database (SQLite's default is the opposite).
 */
export function orderBy<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[], dialect: ExpandDialect): Q {
  let result = query
  for (const { field, descending } of keys) {
    result = field.nullable
      ? dialect.orderBy(result, field.column, descending ? 'desc' : 'asc', descending ? 'first' : 'last')
      : result.orderBy(field.column, descending ? 'desc' : 'asc') as Q
  }
  return result
}

/**
 * `query` with the LEFT JOINs its sort keys through to-one relations need,
 * each once: the related table under its alias, read through a subquery
 * under its scope when it has one (a related row the request may not see
 * sorts as NULL, as a missing one does). The joined scopes' values are
 * pushed on `scopeValues` in the order the joins bind them; they come
 * before the route's own scope in the statement.
 */
export function sortJoins<Q extends AnySelect> (
  query: Q, keys: readonly RequestedSort[], context: LoadContext, scopeValues: unknown[]
): { query: Q; shape: string | null } {
  let result = query
  let shape: string | null = ''
  const joined = new Set<string>()
  for (const { field } of keys) {
    for (const join of field.joins) {
      if (joined.has(join.alias)) continue
      joined.add(join.alias)
      const { target } = join.relation
      const table = tableOf(target)
      const scope = context.scope(target)
      const parts = context.scopeParts(target)
      if (parts !== undefined) scopeValues.push(...parts.values)
      shape = shape === null || parts?.key === null ? null : `${shape}${join.alias}(${parts?.key ?? ''})`
      result = result.leftJoin(underAlias(context, table, scope, join.alias) as never, `${join.alias}.${target.column(target.primaryKey)}` as never, join.ownerColumn as never) as Q
    }
  }
  return { query: result, shape }
}

/**
 * Rows after (or with `inclusive`, from) the position `at` holds, in the
 * order of `keys`, NULL counting as larger than every value (as `orderBy`
 * writes it). Keys all in one direction and never NULL compare as a row
 * value (the dialect's `rowComparison`, with the values it binds); otherwise
 * an OR of ANDs, `k1 < ? or (k1 = ? and k2 > ?)`, each comparison following
 * its key and NULL-aware where the key may be NULL, behind a bound on the
 * first key when it is never NULL. A page before a
 * position is the page after it in the reversed order: the caller reverses
 * the keys. `shape` tells apart the statements of different NULL positions.
 */
export function keysetCondition (
  keys: readonly RequestedSort[], at: readonly unknown[], inclusive: boolean, values: unknown[], dialect: ExpandDialect
): { condition: Condition; shape: string } {
  const descending = keys[0]!.descending
  if (!inclusive && keys.every((key) => key.descending === descending && !key.field.nullable)) {
    const { condition, values: bound } = dialect.rowComparison(keys.map(({ field }) => field.column), descending ? '<' : '>', at)
    values.push(...bound)
    return { condition: () => condition, shape: 'row' }
  }
  type Term = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>
  const equal = (index: number): Term => {
    const { field } = keys[index]!
    const value = at[index]
    if (value === null) return (eb) => eb(field.column, 'is', null)
    values.push(value)
    return (eb) => eb(field.column, '=', value)
  }
  /** The key's values after the position's, in its direction; undefined when none is. */
  const beyond = (index: number): Term | undefined => {
    const { field, descending } = keys[index]!
    const value = at[index]
    if (value === null) return descending ? (eb) => eb(field.column, 'is not', null) : undefined
    values.push(value)
    if (descending) return (eb) => eb(field.column, '<', value)
    return field.nullable
      ? (eb) => eb.or([eb(field.column, '>', value), eb(field.column, 'is', null)])
      : (eb) => eb(field.column, '>', value)
  }
  // The first key bounds every alternative (`k1 <= ?` descending, `k1 >= ?` ascending): said once more in front,
  // it is the range an index on the sort columns is entered at, which the OR alone does not give the planner.
  const lead = keys[0]!
  const leadValue = at[0]
  const bound: Term | undefined = keys.length > 1 && !lead.field.nullable && leadValue !== null
    ? (values.push(leadValue), (eb) => eb(lead.field.column, lead.descending ? '<=' : '>=', leadValue))
    : undefined
  const alternatives: Term[][] = []
  keys.forEach((_key, index) => {
    // Each alternative binds its own values, in the order it is written.
    const mark = values.length
    const parts: Term[] = []
    for (let before = 0; before < index; before++) parts.push(equal(before))
    const last = beyond(index)
    if (last === undefined) {
      values.length = mark
      return
    }
    parts.push(last)
    alternatives.push(parts)
  })
  if (inclusive) alternatives.push(keys.map((_key, index) => equal(index)))
  const shape = `${inclusive ? 'from' : 'after'}:${at.map((value) => (value === null ? 'n' : 'v')).join('')}`
  const condition: Condition = (eb) => {
    if (alternatives.length === 0) return sql<SqlBool>`1 = 0`
    const each = alternatives.map((parts) => parts.length === 1 ? parts[0]!(eb) : eb.and(parts.map((part) => part(eb))))
    const any = each.length === 1 ? each[0]! : eb.or(each)
    return bound === undefined ? any : eb.and([bound(eb), any])
  }
  return { condition, shape }
}

/**
 * The columns a cursor is made of, selected under names of their own, each
 * in the form the database compares it in (the dialect's `cursorKey`), a key
 * declared a plain string as its text (`asText`), which the cursor binds back.
 */
export function selectKeys<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[], dialect: ExpandDialect): Q {
  return query.select((eb) => keys.map(({ field }, index) => {
    const key = field.readAsText === true ? dialect.asText(field.column) : dialect.cursorKey(eb, field.type, field.column)
    return key.as(`${cursorColumn}${index}`)
  })) as Q
}
