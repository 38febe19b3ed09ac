import { SqliteAdapter, sql, type Expression, type SqlBool } from 'kysely'
import type { LevelPlan, PlannedField } from '../plan/plan.js'
import type { RelationEdge, RelationKind, RelationLink } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import { foreignKeyOf, keyColumn, selectLevel, selectLevelColumns, selectionOf, tableOf, type AnySelect } from './selection.js'
import { executorOf } from './statement-templates.js'

type ExpandedField = Extract<PlannedField, { kind: 'expanded' }>
/** A planned relation field: expanded, or shown as ids. */
type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>

/** Column of loaded child rows holding the parent key they belong to; removed once they are grouped. */
export const parentKey = '__expand_parent'
/** A relation with `limit`: the subquery numbering each parent's rows, and the column holding the numbers. */
const numberedRows = '__expand_numbered'
const rowNumber = '__expand_row'

/**
 * The statements of one relation kind, for all parents at once (`IN` over
 * their keys). Every statement that reads a resource's table carries the
 * request's scope on it, so a row outside the scope is never loaded. Each
 * to-many statement ends with `limit <bound>`, a literal: the rows the object
 * budget lets it read (see `ObjectBudget.rowBound`).
 */
interface KindStatements<K extends RelationKind> {
  /** The related rows of the level, each to-many row tagged with its parent key. */
  rows(
    context: LoadContext, link: Extract<RelationLink, { kind: K }>, field: ExpandedField, keys: readonly unknown[], bound: number
  ): AnySelect
  /** To-many kinds: the related ids alone, tagged with their parent key (`id`, parent), in the field's order. */
  ids?(
    context: LoadContext, link: Extract<RelationLink, { kind: K }>, field: RelationField, keys: readonly unknown[], bound: number
  ): AnySelect
}

const statements: { [K in RelationKind]: KindStatements<K> } = {
  // A to-one statement reads at most one row per key, and its keys are those of parent rows already charged:
  // it needs no bound (batch-loader's `rowsOf` binds none). A `limit ?` there costs SQLite about 20% on an IN over the key.
  'to-one': {
    rows: (context, _link, { relation, level }, keys) =>
      selectLevel(context.db, level, context.scope(relation.target)).where(keyColumn(level.node), 'in', keys),
  },
  'to-many': {
    rows (context, link, field, keys, bound) {
      const { relation, level } = field
      const parentColumn = `${tableOf(relation.target)}.${foreignKeyOf(relation, link.foreignKey)}`
      if (readsPerParent(context, relation)) {
        return firstRowsPerParent(context, field, keys, bound, {
          table: tableOf(relation.target),
          parentColumn,
          relatedKey: keyColumn(relation.target),
          select: (query) => selectLevelColumns(query, level),
        })
      }
      const rows = selectLevel(context.db, level, context.scope(relation.target)).select(`${parentColumn} as ${parentKey}`).where(parentColumn, 'in', keys)
      return orderedByParent(context, rows, field, parentColumn, keyColumn(relation.target), rowColumns(level)).limit(sql.lit(bound))
    },
    ids (context, link, field, keys, bound) {
      const { relation } = field
      const parentColumn = `${tableOf(relation.target)}.${foreignKeyOf(relation, link.foreignKey)}`
      const relatedKey = keyColumn(relation.target)
      if (readsPerParent(context, relation)) {
        return firstRowsPerParent(context, field, keys, bound, {
          table: tableOf(relation.target), parentColumn, relatedKey, select: (query) => query.select(`${relatedKey} as id`),
        })
      }
      const scope = context.scope(relation.target)
      // The scope is the first condition of every statement: statement templates expect its values first.
      const from = context.db.selectFrom(tableOf(relation.target)).select([`${relatedKey} as id`, `${parentColumn} as ${parentKey}`])
      const ids = (scope === undefined ? from : from.where(scope)).where(parentColumn, 'in', keys)
      return orderedByParent(context, ids, field, parentColumn, relatedKey, idColumns).limit(sql.lit(bound))
    },
  },
  'many-to-many': {
    rows (context, { through }, field, keys, bound) {
      const { relation, level } = field
      const parentColumn = `${through.table}.${through.from}`
      const relatedKey = `${through.table}.${through.to}`
      if (readsPerParent(context, relation)) {
        return firstRowsPerParent(context, field, keys, bound, {
          table: tableOf(relation.target),
          join: (query) => query.innerJoin(through.table, relatedKey, keyColumn(level.node)),
          parentColumn,
          relatedKey,
          select: (query) => selectLevelColumns(query, level),
        })
      }
      const rows = selectLevel(context.db, level, context.scope(relation.target))
        .innerJoin(through.table, relatedKey, keyColumn(level.node))
        .select(`${parentColumn} as ${parentKey}`)
        .where(parentColumn, 'in', keys)
      return orderedByParent(context, rows, field, parentColumn, relatedKey, rowColumns(level)).limit(sql.lit(bound))
    },
    ids (context, { through }, field, keys, bound) {
      const { relation } = field
      // Always joined to the related table: an id exists for the request only where its row does, so the
      // related table's scope and the database's row-level security decide, as they do for expanded rows.
      const parentColumn = `${through.table}.${through.from}`
      const relatedKey = `${through.table}.${through.to}`
      if (readsPerParent(context, relation)) {
        const join = (query: AnySelect) => query.innerJoin(tableOf(relation.target), keyColumn(relation.target), relatedKey)
        return firstRowsPerParent(context, field, keys, bound, {
          table: through.table, join, parentColumn, relatedKey, select: (query) => query.select(`${relatedKey} as id`),
        })
      }
      const scope = context.scope(relation.target)
      const ids = context.db.selectFrom(through.table).select([`${relatedKey} as id`, `${parentColumn} as ${parentKey}`])
        .innerJoin(tableOf(relation.target), keyColumn(relation.target), relatedKey)
      const scoped = scope === undefined ? ids : ids.where(scope)
      const ordered = orderedByParent(context, scoped.where(parentColumn, 'in', keys), field, parentColumn, relatedKey, idColumns)
      return ordered.limit(sql.lit(bound))
    },
  },
}

/**
 * The statement loading the rows of an expanded relation for these parent
 * (to-many) or related (to-one) keys, `bound` rows at most.
 */
export function relationRowsQuery (
  context: LoadContext, field: Extract<PlannedField, { kind: 'expanded' }>, keys: readonly unknown[], bound: number
): AnySelect {
  const { link } = field.relation
  switch (link.kind) {
    case 'to-one': return statements['to-one'].rows(context, link, field, keys, bound)
    case 'to-many': return statements['to-many'].rows(context, link, field, keys, bound)
    case 'many-to-many': return statements['many-to-many'].rows(context, link, field, keys, bound)
  }
}

/** The statement loading a to-many relation's ids for these parent keys, `bound` rows at most. */
export function relationIdsQuery (context: LoadContext, field: RelationField, keys: readonly unknown[], bound: number): AnySelect {
  const { link } = field.relation
  switch (link.kind) {
    case 'to-one': throw new TypeError('a to-one relation shows the id its row holds: no statement')
    case 'to-many': return statements['to-many'].ids!(context, link, field, keys, bound)
    case 'many-to-many': return statements['many-to-many'].ids!(context, link, field, keys, bound)
  }
}

/** The columns of a to-many statement's rows, in the order they are selected. */
function rowColumns (level: LevelPlan): string[] {
  return [...selectionOf(level).map(([, field]) => field), parentKey]
}
const idColumns = ['id', parentKey]

/**
 * The parent key first: an index on it (a foreign key's, a join table's primary
 * key) hands over each parent's rows together and in order, without a sort. The
 * related key then orders them, or ends the relation's orderBy (`column`, or
 * `-column` for descending, checked by defineResource), so ties come out the
 * same on every run; expanded rows and id arrays share this order.
 *
 * With `limit`, still one statement: the rows are numbered per parent in that
 * order by `row_number()` (SQLite 3.25+, PostgreSQL) in a subquery, which
 * keeps the request's scope, so a row out of scope takes no place, and the
 * outer statement keeps the first `limit` of each parent, parent key first.
 * The limit is written as a literal (defineResource checked it is a positive
 * integer): the statement's parameters stay the scope's values and the keys.
 */
function orderedByParent (
  context: LoadContext,
  query: AnySelect,
  field: RelationField,
  parentColumn: string,
  relatedKey: string,
  columns: readonly string[]
): AnySelect {
  const order = relationOrder(field, relatedKey)
  const { limit } = field.relation.keys
  if (limit === undefined) {
    let ordered = query.orderBy(parentColumn)
    for (const [column, direction] of order) ordered = direction === 'desc' ? ordered.orderBy(column, 'desc') : ordered.orderBy(column)
    return ordered
  }
  const numbered = query.select((eb) => eb.fn.agg<number>('row_number').over((over) => {
    let window = over.partitionBy(parentColumn)
    for (const [column, direction] of order) window = direction === 'desc' ? window.orderBy(column, 'desc') : window.orderBy(column)
    return window
  }).as(rowNumber))
  return context.db.selectFrom(numbered.as(numberedRows))
    .select(columns.map((column) => sql.id(numberedRows, column).as(column)))
    .where(sql.id(numberedRows, rowNumber), '<=', sql.lit(limit))
    .orderBy(sql.id(numberedRows, parentKey))
    .orderBy(sql.id(numberedRows, rowNumber)) as AnySelect
}

/**
 * Whether a relation's statement reads each parent's first rows from an index
 * instead of numbering every child: a relation with `limit` on SQLite, where a
 * correlated subquery with LIMIT runs once per parent (see `firstRowsPerParent`).
 */
export function readsPerParent (context: LoadContext, relation: RelationEdge): boolean {
  return relation.keys.limit !== undefined && executorOf(context.db)?.adapter instanceof SqliteAdapter
}

/** The tables a relation's statement reads, as `firstRowsPerParent` writes them twice. */
interface RelationSource {
  /** The first table read, and the joins after it. */
  readonly table: string
  readonly join?: ((query: AnySelect) => AnySelect) | undefined
  readonly parentColumn: string
  readonly relatedKey: string
  /** The columns selected besides the parent key. */
  readonly select: (query: AnySelect) => AnySelect
}

/** The distinct parent keys of a statement reading each parent's first rows, and its column. */
const parentKeys = '__expand_keys'
const parentKeyColumn = `${parentKeys}.key`

/**
 * A relation with `limit` on SQLite: for each parent key (a table of the
 * distinct keys, read first: `cross join` keeps SQLite from reordering it),
 * the related rows whose key is among the first `limit` of that parent, in
 * the relation's order and under the request's scope, found by a correlated
 * subquery with LIMIT. With an index on the parent column (and the order's
 * columns), each parent's rows are read from the index up to the limit, where
 * `row_number()` numbers every child of every parent first. The keys are the
 * statement's first parameters, then the scope's values (in the subquery),
 * then the bound (see `keysBeforeScope`).
 */
function firstRowsPerParent (
  context: LoadContext, field: RelationField, keys: readonly unknown[], bound: number, source: RelationSource
): AnySelect {
  const { relation } = field
  const { table, join = (query: AnySelect) => query, parentColumn, relatedKey, select } = source
  const order = relationOrder(field, relatedKey)
  const scope: Expression<SqlBool> | undefined = context.scope(relation.target)
  const scoped = join(context.db.selectFrom(table) as AnySelect)
  let first = (scope === undefined ? scoped : scoped.where(scope))
    .select(relatedKey)
    .where(parentColumn, '=', sql.ref(parentKeyColumn))
  for (const [column, direction] of order) first = direction === 'desc' ? first.orderBy(column, 'desc') : first.orderBy(column)
  const distinctKeys = sql`(select distinct "column1" as "key" from (values ${sql.join(keys.map((key) => sql`(${key})`))}))`
  let rows = select(join(context.db.with(parentKeys, () => distinctKeys as never).selectFrom(parentKeys).crossJoin(table) as AnySelect))
    .select(sql.ref(parentKeyColumn).as(parentKey))
    .where(parentColumn, '=', sql.ref(parentKeyColumn))
    .where(relatedKey, 'in', first.limit(sql.lit(relation.keys.limit!)))
    .orderBy(parentKeyColumn)
  for (const [column, direction] of order) rows = direction === 'desc' ? rows.orderBy(column, 'desc') : rows.orderBy(column)
  return rows.limit(sql.lit(bound))
}

/**
 * A to-many relation's order within one parent: the planned field's orderBy
 * column if any (the relation's, unless the request may not see that field),
 * then the related key, ascending.
 */
function relationOrder ({ relation, orderBy }: RelationField, relatedKey: string): Array<[column: string, direction: 'asc' | 'desc']> {
  if (orderBy === undefined) return [[relatedKey, 'asc']]
  return [[`${tableOf(relation.target)}.${orderBy.replace(/^-/, '')}`, orderBy.startsWith('-') ? 'desc' : 'asc'], [relatedKey, 'asc']]
}

/**
 * The statements a plan runs after its root one, in order, compiled with one
 * placeholder key each: what `explain` shows.
 */
export function plannedStatements (context: LoadContext, level: LevelPlan, path = ''): Array<{ path: string; sql: string }> {
  const planned: Array<{ path: string; sql: string }> = []
  for (const field of level.fields) {
    if (field.kind === 'value' || (field.kind === 'id' && field.relation.link.kind === 'to-one')) continue
    const at = path === '' ? field.name : `${path}.${field.name}`
    if (field.kind === 'id') {
      planned.push({ path: at, sql: relationIdsQuery(context, field, [0], context.budget.rowBound).compile().sql })
      continue
    }
    const sql = relationRowsQuery(context, field, [0], context.budget.rowBound).compile().sql
    planned.push({ path: at, sql }, ...plannedStatements(context, field.level, at))
  }
  return planned
}
