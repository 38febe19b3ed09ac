import { sql, type AliasableExpression, type Expression, type ExpressionBuilder } from 'kysely'
import type { DerivedField } from '../graph/derived-fields.js'
import type { RelationEdge, ResourceNode } from '../graph/resource-graph.js'
import { derivedColumn } from '../routes/list-declarations.js'
import type { LoadContext } from '../load/load-context.js'
import type { AggregateField } from '../plan/plan.js'
import { parentKey, type ExpandDialect } from './dialects/index.js'
import { isWaveKeyed, withWaveColumns } from './key-subqueries.js'
import type { RelationKeys } from './relation-statements.js'
import { foreignKeyOf, keyColumn, tableOf, type AnySelect } from './selection.js'
import { parentKeyReadAsText } from './text-columns.js'

/**
 * Where an aggregated relation's rows are read from: the related table (a
 * to-many relation's, holding the parent key), or the join table joined to
 * it (many-to-many). The parent column names each row's parent.
 */
interface AggregateSource {
  readonly from: (query: AnySelect) => AnySelect
  readonly table: string
  readonly parentColumn: string
}

function sourceOf (relation: RelationEdge): AggregateSource {
  const { link, target } = relation
  const table = tableOf(target)
  switch (link.kind) {
    case 'to-many':
      return { table, from: (query) => query, parentColumn: `${table}.${foreignKeyOf(relation, link.foreignKey)}` }
    case 'many-to-many': {
      const { through } = link
      return {
        table: through.table,
        from: (query) => query.innerJoin(table, keyColumn(target), `${through.table}.${through.to}`),
        parentColumn: `${through.table}.${through.from}`,
      }
    }
    case 'to-one':
    case 'function':
      // Checked when the graph is built: an aggregate reads a to-many relation whose keys are in the database.
      throw new TypeError(`an aggregate reads a to-many relation of the database, not '${relation.field}'`)
    default:
      return link satisfies never
  }
}

/**
 * One aggregate over the related rows it reads: `count` an integer (0 over
 * no rows), `avg` and `sum` a double (PostgreSQL's integer sums and
 * averages are wider types that pg returns as text), `min`/`max` the
 * column's own type. A `where` narrows the rows of this aggregate alone, so
 * that the aggregates of one relation share a statement.
 */
export function aggregateExpression (
  eb: ExpressionBuilder<any, any>, aggregate: AggregateField, dialect: ExpandDialect
): Expression<unknown> {
  const { relation, column, where } = aggregate
  const { integer, double } = dialect.numberCasts
  const value = column === undefined ? sql.lit(1) : eb.ref(`${tableOf(relation.target)}.${column}`)
  const read = where === undefined ? value : sql`case when ${where(eb)} then ${value} end`
  // Integers added exactly (SQLite's integer sum, PostgreSQL's numeric, MariaDB's decimal), then rounded once;
  // SQLite's refuses to pass 2^63 - 1 (docs/derived.md).
  const sum = sql`cast(sum(${read}) as ${sql.raw(double)})`
  switch (aggregate.function) {
    case 'count': return where === undefined ? sql`cast(count(*) as ${sql.raw(integer)})` : sql`cast(count(${read}) as ${sql.raw(integer)})`
    case 'min': return sql`min(${read})`
    case 'max': return sql`max(${read})`
    case 'sum': return sum
    // That sum over the count of values, divided as doubles. PostgreSQL's avg of integers is a numeric of about 17
    // digits, whose conversion to a double can differ in the last bit from that quotient; its avg of doubles also
    // sums their squares, which overflow (an error) past about 1.3e154. Summing the values cast to doubles would
    // round each addition, which SQLite compensates and PostgreSQL and MariaDB do not: 1e16 + 1 - 1e16 is 1 on
    // one and 0 on the others. No value: NULL.
    case 'avg': return dialect.quotient(sum, sql`count(${read})`)
    default: return aggregate.function satisfies never
  }
}

/**
 * The statement of one aggregated relation path: for these parent keys,
 * each parent's aggregates in one grouped row (`parentKey` and one column
 * per aggregate), over the related rows in the request's scope. A parent
 * without related rows has no row: its counts are 0, the others null.
 * Without keys, every parent's (what a list sorted or filtered by an
 * aggregate joins). Keyed by a subquery (load/one-wave.ts), each group also
 * says the parent column it is joined on.
 */
export function aggregateStatement (
  context: LoadContext, relation: RelationEdge, aggregates: readonly AggregateField[], keys?: RelationKeys
): AnySelect {
  const source = sourceOf(relation)
  const scope = context.scope(relation.target)
  // The loader's statement (with keys) tags each group as its parents hold their key (text-columns.ts); a list's join
  // compares the parent column with the parent's own key, as stored.
  const tag: AliasableExpression<unknown> = keys !== undefined && parentKeyReadAsText(relation.owner)
    ? context.dialect.asText(source.parentColumn)
    : sql.ref(source.parentColumn)
  let query = source.from(context.db.selectFrom(source.table) as AnySelect)
    .select(tag.as(parentKey))
    .select((eb) => aggregates.map((aggregate) => sql`${aggregateExpression(eb, aggregate, context.dialect)}`.as(aggregate.name)))
  // The scope is the first condition, as in every statement: statement templates expect its values first.
  if (scope !== undefined) query = query.where(scope)
  if (keys === undefined) return query.groupBy(source.parentColumn)
  if (Array.isArray(keys)) return query.where(source.parentColumn, 'in', keys).groupBy(source.parentColumn)
  const keyed = query.where(context.dialect.amongKeys(source.parentColumn, keys as AnySelect))
  return (isWaveKeyed(keys) ? withWaveColumns(keyed, [source.parentColumn]) : keyed).groupBy(source.parentColumn)
}

/**
 * A level's aggregates (as declared, or as planned) grouped by the relation
 * each reads, in the level's order: one statement per group.
 */
export function aggregatesByRelation<T> (fields: Iterable<T>, relationOf: (field: T) => RelationEdge): Map<RelationEdge, T[]> {
  const groups = new Map<RelationEdge, T[]>()
  for (const field of fields) {
    const relation = relationOf(field)
    const group = groups.get(relation)
    if (group === undefined) groups.set(relation, [field])
    else group.push(field)
  }
  return groups
}

/**
 * The route's table as a list statement reads it when the request filters
 * or sorts by aggregates or computed fields: a subquery named as the table
 * (so the scope, the filters and the sort keys name its columns as they
 * name the table's), holding every column of the table and each of these
 * fields under `derivedColumn(name)`. The aggregates of a relation come from
 * its grouped statement, LEFT JOINed by the parent key (a count with no
 * related rows is 0); a computed field is its expression.
 *
 * Each grouped statement reads under the request's scope on the related
 * table: its values are pushed to `scopeValues` (bound first, the subquery
 * being the statement's FROM), and `shape` tells the statements of
 * different scopes apart, with values or without, as `sortJoins`' does
 * (null: a scope that cannot be told apart, a statement for this request alone).
 */
export function derivedSource (
  context: LoadContext, node: ResourceNode, fields: readonly DerivedField[], scopeValues: unknown[]
): { source: AliasedSelect; shape: string | null } {
  const table = tableOf(node)
  const aggregates = fields.filter((field): field is AggregateField => field.kind === 'aggregate')
  const aliases = new Map<RelationEdge, string>()
  let shape: string | null = ''
  let query = context.db.selectFrom(table).selectAll(table) as AnySelect
  for (const [relation, group] of aggregatesByRelation(aggregates, (aggregate) => aggregate.relation)) {
    const alias = `${aggregateAlias}${aliases.size}`
    aliases.set(relation, alias)
    const parts = context.scopeParts(relation.target)
    if (parts !== undefined) scopeValues.push(...parts.values)
    shape = shape === null || parts?.key === null ? null : `${shape}${alias}(${parts?.key ?? ''})`
    query = query.leftJoin(aggregateStatement(context, relation, group).as(alias), `${alias}.${parentKey}`, keyColumn(node)) as AnySelect
  }
  query = query.select((eb) => fields.map((field) => {
    switch (field.kind) {
      case 'computed': return sql`${field.sql(eb)}`.as(derivedColumn(field.name))
      case 'aggregate': {
        const value = eb.ref(`${aliases.get(field.relation)!}.${field.name}`)
        return (field.function === 'count' ? sql`coalesce(${value}, 0)` : sql`${value}`).as(derivedColumn(field.name))
      }
      default: return field satisfies never
    }
  }))
  return { source: query.as(table), shape }
}

/** The aggregate statements joined by `derivedSource`: no table or column of a resource is read under this prefix. */
const aggregateAlias = '__expand_aggregate_'

export type AliasedSelect = ReturnType<AnySelect['as']>
