import { sql, type AliasableExpression, type AliasedExpression } from 'kysely'
import type { AggregateField, LevelPlan, PlannedField } from '../plan/plan.js'
import { aggregatesByRelation, aggregateStatement } from './aggregate-statements.js'
import type { RelationEdge, RelationKind, RelationLink } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import { readsCompositeKey } from '../graph/composite-relations.js'
import { compositeToManyStatement, compositeToOneStatement } from './composite-keys.js'
import { orderedBy, parentKey, type ExpandDialect, type RelationOrder, type RelationSource } from './dialects/index.js'
import { foreignKeyOf, keyColumn, orderByKeys, selectLevel, selectLevelColumns, selectionOf, tableOf, type AnySelect } from './selection.js'
import { idsReadAsText, parentKeyReadAsText } from './text-columns.js'
import { isWaveKeyed, nativeKeyName, waveJoin, waveRow, withNativeKeys, withWaveColumns, type NativeKeys } from './key-subqueries.js'

export { parentKey } from './dialects/index.js'

type ExpandedField = Extract<PlannedField, { kind: 'expanded' }>
/** A planned relation field: expanded, or shown as ids. */
type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>
/** The keys a relation's statement reads rows for: a list of values, or a subquery selecting them (sql/key-subqueries.ts). */
export type RelationKeys = readonly unknown[] | AnySelect

/**
 * The statements of one relation kind, for all parents at once (`IN` over
 * their keys). Every statement that reads a resource's table carries the
 * request's scope on it, so a row outside the scope is never loaded. Each
 * to-many statement ends with `limit <bound>`, a literal: the rows the object
 * budget lets it read (see `ObjectBudget.rowBound`).
 */
interface KindStatements<K extends RelationKind> {
  /** Whether its statements end with `limit <bound>`: a kind that reads at most a row per key needs none. */
  readonly bounded: boolean
  /** The related rows of the level, each to-many row tagged with its parent key; undefined for a kind that reads no table. */
  readonly rows: ((
    context: LoadContext, link: Extract<RelationLink, { kind: K }>, field: ExpandedField, keys: RelationKeys, bound: number,
    native: NativeKeys
  ) => AnySelect) | undefined
  /**
   * The related ids alone, tagged with their parent key (`id`, parent), in the
   * field's order; undefined for a kind whose ids its owner's row holds (no statement).
   */
  readonly ids: ((
    context: LoadContext, link: Extract<RelationLink, { kind: K }>, field: RelationField, keys: RelationKeys, bound: number
  ) => AnySelect) | undefined
}

// Typed by kind: a kind added to RelationLink does not compile until it has its statements here.
const statements = {
  // A to-one statement reads at most one row per key, and its keys are those of parent rows already charged:
  // it needs no bound (batch-loader's `rowsOf` binds none). A `limit ?` there costs SQLite about 20% on an IN over the key.
  'to-one': {
    bounded: false,
    rows (context, _link, { relation, level }, keys, _bound, native) {
      const statement = whereKeys(context, selectLevel(context.db, level, context.scope(relation.target)), keyColumn(level.node), keys)
      return withNativeKeys(isWaveKeyed(keys) ? withWaveColumns(statement, [keyColumn(level.node)]) : statement, native)
    },
    ids: undefined,
  },
  'to-many': {
    bounded: true,
    rows: (context, link, field, keys, bound, native) => toManyStatement(context, field, keys, bound, native, {
      table: tableOf(field.relation.target),
      parentColumn: `${tableOf(field.relation.target)}.${foreignKeyOf(field.relation, link.foreignKey)}`,
      relatedKey: keyColumn(field.relation.target),
      select: (query) => selectLevelColumns(query, field.level, context.dialect),
      columns: rowColumns(field.level),
    }),
    ids (context, link, field, keys, bound) {
      const relatedKey = keyColumn(field.relation.target)
      return toManyStatement(context, field, keys, bound, [], {
        table: tableOf(field.relation.target),
        parentColumn: `${tableOf(field.relation.target)}.${foreignKeyOf(field.relation, link.foreignKey)}`,
        relatedKey,
        select: (query) => query.select(idOf(context, field, relatedKey)),
        columns: idColumns,
      })
    },
  },
  'many-to-many': {
    bounded: true,
    rows (context, { through }, field, keys, bound, native) {
      const relatedKey = `${through.table}.${through.to}`
      return toManyStatement(context, field, keys, bound, native, {
        table: tableOf(field.relation.target),
        join: (query) => query.innerJoin(through.table, relatedKey, keyColumn(field.level.node)),
        parentColumn: `${through.table}.${through.from}`,
        relatedKey,
        select: (query) => selectLevelColumns(query, field.level, context.dialect),
        columns: rowColumns(field.level),
      })
    },
    // Always joined to the related table: an id exists for the request only where its row does, so the
    // related table's scope and the database's row-level security decide, as they do for expanded rows.
    ids (context, { through }, field, keys, bound) {
      const relatedKey = `${through.table}.${through.to}`
      const { target } = field.relation
      return toManyStatement(context, field, keys, bound, [], {
        table: through.table,
        join: (query) => query.innerJoin(tableOf(target), keyColumn(target), relatedKey),
        parentColumn: `${through.table}.${through.from}`,
        relatedKey,
        select: (query) => query.select(idOf(context, field, relatedKey)),
        columns: idColumns,
      })
    },
  },
  // A relation resolved by a function runs no statement: load/function-relations.ts calls its function.
  function: { bounded: false, rows: undefined, ids: undefined },
} satisfies { readonly [K in RelationKind]: KindStatements<K> }

/**
 * A to-many statement from its parts: the related rows of every parent key,
 * under the request's scope, the parent key first in the order (an index on
 * it, a foreign key's or a join table's primary key, hands over each
 * parent's rows together and in order, without a sort), then the relation's
 * order (`relationOrder`). With `limit`, the dialect's statement of each
 * parent's first rows, which carries the keys `native` out of its numbered
 * rows as well.
 */
function toManyStatement (
  context: LoadContext, field: RelationField, keys: RelationKeys, bound: number, native: NativeKeys, source: RelationSource
): AnySelect {
  const { db, dialect } = context
  const { relation } = field
  // A request's expanded list: its order, limit and conditions instead of the relation's (its scope stays).
  const listed = context.listed(field)
  const scope = listed === undefined ? context.scope(relation.target) : listed.condition
  const order = listed?.order === undefined ? relationOrder(dialect, field, source.relatedKey) : listed.order(source.relatedKey)
  // The scope is the first condition of every statement: statement templates expect its values first.
  const tagged = () => {
    const from = (source.join ?? same)(db.selectFrom(source.table) as AnySelect)
    // Tagged with the parent key in the form the parent rows hold it, so that the two meet (load/parent-keys.ts's keyOf).
    const tag: AliasableExpression<unknown> = parentKeyReadAsText(relation.owner)
      ? dialect.asText(source.parentColumn)
      : sql.ref(source.parentColumn)
    const selected = source.select(scope === undefined ? from : from.where(scope)).select(tag.as(parentKey))
    const statement = whereKeys(context, withNativeKeys(selected, native), source.parentColumn, keys)
    // Keyed by its parents' statement (load/one-wave.ts): each row says its parent and its place in the order.
    return isWaveKeyed(keys) ? withWaveColumns(statement, [source.parentColumn], [[source.parentColumn, 'asc'], ...order]) : statement
  }
  const limit = limitOf(context, field)
  if (limit !== undefined) {
    const addedColumns = [...(isWaveKeyed(keys) ? [waveJoin, waveRow] : []), ...native.map(([, name]) => nativeKeyName(name))]
    return dialect.firstRowsPerParent({ db, source, scope, keys, addedColumns, order, limit, bound, tagged })
  }
  return dialect.limit(orderedBy(tagged().orderBy(source.parentColumn), order), bound)
}

/** `query` reading the rows of `column` among `keys`: a list bound as values, or a subquery as the dialect writes it. */
function whereKeys (context: LoadContext, query: AnySelect, column: string, keys: RelationKeys): AnySelect {
  return Array.isArray(keys) ? query.where(column, 'in', keys) : query.where(context.dialect.amongKeys(column, keys as AnySelect))
}

const same = (query: AnySelect): AnySelect => query

/** Batch-loader calls a relation resolved by a function (load/function-relations.ts), never asks its statement. */
function noStatement (): never {
  throw new TypeError('a relation resolved by a function runs no statement')
}

/**
 * The statement loading the rows of an expanded relation for these parent
 * (to-many) or related (to-one) keys, `bound` rows at most; selecting also
 * the keys `native` as their columns hold them, where the statement is read
 * as its rows' keys (sql/key-subqueries.ts's `withNativeKeys`).
 */
export function relationRowsQuery (
  context: LoadContext, field: Extract<PlannedField, { kind: 'expanded' }>, keys: RelationKeys, bound: number, native: NativeKeys = []
): AnySelect {
  const { link } = field.relation
  // A relation over a composite key: its statements are sql/composite-keys.ts's.
  const composite = readsCompositeKey(field.relation)
  // Every case returns: a kind without one does not compile (the function would lack a return).
  switch (link.kind) {
    case 'to-one':
      return composite
        ? withNativeKeys(compositeToOneStatement(context, field, keys), native)
        : statements['to-one'].rows(context, link, field, keys, bound, native)
    case 'to-many':
      return composite
        ? withNativeKeys(compositeToManyStatement(context, link, field, keys, bound), native)
        : statements['to-many'].rows(context, link, field, keys, bound, native)
    case 'many-to-many':
      return composite
        ? withNativeKeys(compositeToManyStatement(context, link, field, keys, bound), native)
        : statements['many-to-many'].rows(context, link, field, keys, bound, native)
    case 'function': return noStatement()
  }
}

/** The statement loading a to-many relation's ids for these parent keys, `bound` rows at most. */
export function relationIdsQuery (context: LoadContext, field: RelationField, keys: RelationKeys, bound: number): AnySelect {
  const { link } = field.relation
  const composite = readsCompositeKey(field.relation)
  switch (link.kind) {
    case 'to-one': throw new TypeError('a to-one relation shows the id its row holds: no statement')
    case 'to-many':
      return composite
        ? compositeToManyStatement(context, link, field, keys, bound)
        : statements['to-many'].ids(context, link, field, keys, bound)
    case 'many-to-many':
      return composite
        ? compositeToManyStatement(context, link, field, keys, bound)
        : statements['many-to-many'].ids(context, link, field, keys, bound)
    case 'function': return noStatement()
  }
}

/** The columns of a to-many statement's rows, in the order they are selected. */
function rowColumns (level: LevelPlan): string[] {
  return [...selectionOf(level).map(([, field]) => field), parentKey]
}
const idColumns = ['id', parentKey]

/** A to-many relation's id, selected as `id`: as text where the field declares its ids plain strings (text-columns.ts). */
function idOf (context: LoadContext, { relation }: RelationField, relatedKey: string): AliasedExpression<unknown, 'id'> {
  const id: AliasableExpression<unknown> = idsReadAsText(relation.owner, relation.field)
    ? context.dialect.asText(relatedKey)
    : sql.ref(relatedKey)
  return id.as('id')
}

/**
 * Whether the statement of a relation binds its parent keys before the
 * scope's values (statement templates need the order): a relation with
 * `limit` on a dialect whose statement of each parent's first rows does.
 */
export function bindsKeysFirst (context: LoadContext, field: RelationField): boolean {
  return limitOf(context, field) !== undefined && context.dialect.firstRowsBindKeysFirst
}

/** A to-many field's rows per parent: the request's `limit[path]` if it asks one, else the relation's `limit`. */
export function limitOf (context: LoadContext, field: RelationField): number | undefined {
  return context.listed(field)?.limit ?? field.relation.keys.limit
}

/** The most rows a relation's statement reads (its `limit`), or undefined for a kind whose statement needs no bound. */
export function rowBoundOf (context: LoadContext, relation: RelationEdge): number | undefined {
  return statements[relation.link.kind].bounded ? context.budget.rowBound : undefined
}

/** Whether a relation field is loaded by a statement of its own: ids its owner's row holds are not, nor a function's rows. */
export function hasStatement (field: RelationField): boolean {
  const kind = statements[field.relation.link.kind]
  return kind.rows !== undefined && (field.kind === 'expanded' || kind.ids !== undefined)
}

/**
 * A to-many relation's order within one parent: the planned field's orderBy
 * column if any (the relation's, unless the request may not see that field),
 * then the related key, ascending.
 */
function relationOrder (dialect: ExpandDialect, { relation, orderBy }: RelationField, relatedKey: string): RelationOrder[] {
  if (orderBy === undefined) return [[relatedKey, 'asc']]
  return [...orderByKeys(dialect, relation.target, orderBy), [relatedKey, 'asc']]
}

/**
 * The statements a plan runs after its root one, in order, compiled with one
 * placeholder key each: what `explain` shows.
 */
export function plannedStatements (context: LoadContext, level: LevelPlan, path = ''): PlannedStatement[] {
  const planned: PlannedStatement[] = []
  const aggregates: AggregateField[] = []
  for (const field of level.fields) {
    const at = path === '' ? field.name : `${path}.${field.name}`
    switch (field.kind) {
      case 'value':
      case 'computed':
        break
      case 'aggregate':
        aggregates.push(field.aggregate)
        break
      case 'id':
        if (!hasStatement(field)) break
        planned.push({ path: at, sql: context.dialect.compile(relationIdsQuery(context, field, [0], context.budget.rowBound)).sql })
        break
      case 'expanded': {
        // A relation resolved by a function is a call (see plannedCalls), the statements below it are listed.
        if (hasStatement(field)) {
          planned.push({ path: at, sql: context.dialect.compile(relationRowsQuery(context, field, [0], context.budget.rowBound)).sql })
        }
        planned.push(...plannedStatements(context, field.level, at))
        break
      }
      default:
        field satisfies never
    }
  }
  for (const [relation, group] of aggregatesByRelation(aggregates, (aggregate) => aggregate.relation)) {
    planned.push({
      path: path === '' ? relation.field : `${path}.${relation.field}`,
      sql: context.dialect.compile(aggregateStatement(context, relation, group, [0])).sql,
      aggregates: group.map(({ name }) => name),
    })
  }
  return planned
}

/** A statement `explain` shows: the relation path it loads, and for an aggregate statement the aggregates it reads. */
export interface PlannedStatement {
  readonly path: string
  readonly sql: string
  readonly aggregates?: readonly string[]
}
