import { sql, type AliasableExpression, type AliasedExpression, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { columnsOf } from '../graph/composite-relations.js'
import { identifierOf, partsOf, type ResourceKey } from '../graph/identifiers.js'
import type { RelationEdge, RelationLink } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import type { PlannedField } from '../plan/plan.js'
import { orderedBy, parentKey, type RelationOrder } from './dialects/index.js'
import { isWaveKeyed, withWaveColumns } from './key-subqueries.js'
import type { RelationKeys } from './relation-statements.js'
import {
  foreignKeyOf, keyColumns, orderByKeys, partAlias, selectLevel, selectLevelColumns, tableOf, type AnySelect, type Row,
} from './selection.js'
import { idsReadAsText, parentKeyReadAsText } from './text-columns.js'

// The statements of relations over a composite key (graph/composite-relations.ts, `readsCompositeKey`): a
// to-one relation over several columns, a to-many or many-to-many relation from or to a resource whose key has
// several parts. The loader hands them keys as it holds them: a composite key as its identifier
// (graph/identifiers.ts), which is parsed back into its parts to be bound.

type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>
type ExpandedField = Extract<PlannedField, { kind: 'expanded' }>

/**
 * `(a = ? and b = ?) or (a = ? and b = ?) ...`: rows whose columns hold one of
 * the keys, part by part. Written so on every dialect: SQLite (a MULTI-INDEX
 * OR), PostgreSQL (a BitmapOr of index scans) and MariaDB (a range over the
 * primary key) each read it through the index on those columns, as
 * test/sql/composite-key-index-use.test.ts checks. One column: `in`, as a single key is found.
 */
export function matchingKeys (
  eb: ExpressionBuilder<any, any>, columns: readonly string[], keys: ReadonlyArray<readonly unknown[]>
): Expression<SqlBool> {
  if (columns.length === 1) return eb(columns[0]!, 'in', keys.map((parts) => parts[0]))
  return eb.or(keys.map((parts) => eb.and(columns.map((column, index) => eb(column, '=', parts[index])))))
}

/**
 * The parts of each key: a single key alone (as padded by statement templates,
 * whose template the statement may be); a composite key's, each once, from
 * its identifier (no row has a key that does not parse: all null). Once:
 * templates pad a key list by repeating its last key, which a statement over
 * composite keys (never kept as a template: its parameters are the parts, not
 * the keys) would only repeat.
 */
export function keyParts (key: ResourceKey, keys: readonly unknown[]): Array<readonly unknown[]> {
  if (key.kind === 'single') return keys.map((value) => [value])
  return [...new Set(keys)].map((identifier) => partsOf(String(identifier), key.types) ?? key.types.map(() => null))
}

/** A function reading a to-many row's parent key as the loader groups parents: the tag, or the identifier of its parts. */
export function parentKeyReader (relation: RelationEdge): (row: Row) => unknown {
  return tagReader(relation.owner.key, parentKey)
}

/** A function reading a to-many id row's id: its `id`, or the identifier of the related key's parts. */
export function relatedIdReader (relation: RelationEdge): (row: Row) => unknown {
  return tagReader(relation.target.key, 'id')
}

function tagReader (key: ResourceKey, name: string): (row: Row) => unknown {
  if (key.kind === 'single') return (row) => row[name]
  const aliases = key.fields.map((_, index) => partAlias(name, index))
  return (row) => identifierOf(aliases.map((alias) => row[alias]))
}

/** Columns selected each under `name`'s part alias. */
function tagged (query: AnySelect, columns: readonly string[], name: string): AnySelect {
  return query.select(columns.map((column, index) => sql.ref(column).as(partAlias(name, index))))
}

/** A to-many or many-to-many relation's link. */
type ToManyLink = Extract<RelationLink, { kind: 'to-many' | 'many-to-many' }>

/** Where a to-many relation's rows are: the table read first, its joins, the parent and related key columns. */
interface CompositeSource {
  readonly table: string
  readonly join: (query: AnySelect) => AnySelect
  readonly parentColumns: readonly string[]
  readonly relatedColumns: readonly string[]
}

function sourceOf (relation: RelationEdge, link: ToManyLink, ids: boolean): CompositeSource {
  const { target } = relation
  const targetTable = tableOf(target)
  if (link.kind === 'to-many') {
    return {
      table: targetTable,
      join: (query) => query,
      parentColumns: columnsOf(link.foreignKey ?? foreignKeyOf(relation, undefined)).map((column) => `${targetTable}.${column}`),
      relatedColumns: keyColumns(target),
    }
  }
  const { through } = link
  const to = columnsOf(through.to).map((column) => `${through.table}.${column}`)
  const targetKey = keyColumns(target)
  // Ids read the join table and the related one (so that a related row out of scope has no id); rows read the related table first.
  const join = (query: AnySelect, table: string) => query.innerJoin(table, (on) => {
    let joined = on
    for (const [index, column] of to.entries()) joined = joined.onRef(column, '=', targetKey[index]!)
    return joined
  })
  return {
    table: ids ? through.table : targetTable,
    join: (query) => join(query, ids ? targetTable : through.table),
    parentColumns: columnsOf(through.from).map((column) => `${through.table}.${column}`),
    relatedColumns: to,
  }
}

/**
 * Rows whose `columns` hold one of `keys`: a list of keys (`matchingKeys`,
 * each parsed into its parts), or a subquery selecting them (load/one-wave.ts)
 * as the dialect writes it for one column, a row value's `in` for several.
 */
function whereKeys (context: LoadContext, query: AnySelect, key: ResourceKey, columns: readonly string[], keys: RelationKeys): AnySelect {
  if (Array.isArray(keys)) return query.where((eb) => matchingKeys(eb, columns, keyParts(key, keys)))
  const subquery = keys as AnySelect
  if (columns.length === 1) return query.where(context.dialect.amongKeys(columns[0]!, subquery))
  return query.where(sql<SqlBool>`(${sql.join(columns.map((column) => sql.ref(column)))}) in ${subquery}`)
}

/**
 * A to-one relation's related rows over several columns: each key matched
 * part by part, under the request's scope; keyed by a subquery, each row
 * with its key's parts to be joined on (`withWaveColumns`).
 */
export function compositeToOneStatement (context: LoadContext, field: ExpandedField, keys: RelationKeys): AnySelect {
  const { target } = field.relation
  const columns = keyColumns(target)
  const statement = whereKeys(context, selectLevel(context.db, field.level, context.scope(target)), target.key, columns, keys)
  return isWaveKeyed(keys) ? withWaveColumns(statement, columns) : statement
}

/**
 * The statement of a to-many or many-to-many relation from or to a resource
 * with a composite key: its rows (or ids) under the request's scope, each
 * tagged with its parent's key (a composite key: each part under its alias),
 * in parent order, then the relation's `orderBy`, then the related key's
 * parts; `bound` rows at most. Keyed by a subquery, each row also carries
 * its parent's key parts to be joined on and its place in that order.
 */
export function compositeToManyStatement (
  context: LoadContext, link: ToManyLink, field: RelationField, keys: RelationKeys, bound: number
): AnySelect {
  const { db, dialect } = context
  const { relation } = field
  const { owner, target } = relation
  const scope = context.scope(target)
  const source = sourceOf(relation, link, field.kind === 'id')
  const from = source.join(db.selectFrom(source.table) as AnySelect)
  const scoped = scope === undefined ? from : from.where(scope)
  const selected = field.kind === 'expanded'
    ? selectLevelColumns(scoped, field.level, dialect)
    : target.key.kind === 'single'
      ? scoped.select(idOf(context, relation, source.relatedColumns[0]!))
      : tagged(scoped, source.relatedColumns, 'id')
  const parentTag: AliasableExpression<unknown> = parentKeyReadAsText(owner)
    ? dialect.asText(source.parentColumns[0]!)
    : sql.ref(source.parentColumns[0]!)
  const withParent = owner.key.kind === 'single'
    ? selected.select(parentTag.as(parentKey))
    : tagged(selected, source.parentColumns, parentKey)
  const matched = whereKeys(context, withParent, owner.key, source.parentColumns, keys)
  // Each parent's rows together, in the relation's order, then by the related key (a column already ordered by is not repeated).
  const order: RelationOrder[] = source.parentColumns.map((column) => [column, 'asc'])
  if (field.orderBy !== undefined) order.push(...orderByKeys(dialect, target, field.orderBy))
  for (const column of source.relatedColumns) if (!order.some(([ordered]) => ordered === column)) order.push([column, 'asc'])
  const keyed = isWaveKeyed(keys) ? withWaveColumns(matched, source.parentColumns, order) : matched
  return dialect.limit(orderedBy(keyed, order), bound)
}

/** A related id selected as `id`: as text where the field declares its ids plain strings (text-columns.ts). */
function idOf (context: LoadContext, relation: RelationEdge, column: string): AliasedExpression<unknown, 'id'> {
  const id: AliasableExpression<unknown> = idsReadAsText(relation.owner, relation.field) ? context.dialect.asText(column) : sql.ref(column)
  return id.as('id')
}
