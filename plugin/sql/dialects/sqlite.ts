import { sql, type SqlBool } from 'kysely'
import type { ValueType } from '../../routes/list-declarations.js'
import type { AnySelect } from '../selection.js'
import {
  inKeySubquery,
  literalLimit,
  nullsAsLargest,
  orderByNullFlag,
  orderedBy,
  parentKey,
  plainQuotient,
  rowValueComparison,
  standardNumberCasts,
  type DriverError,
  type ExpandDialect,
  type LimitedRelation,
} from './dialect.js'
import { valuesPlannedOnce } from './sqlite-values.js'

/**
 * SQLite (Kysely's SQLite adapter): one connection, values of any type in
 * any column, date-times stored as text.
 */
export const sqliteDialect: ExpandDialect = {
  name: 'sqlite',
  systemName: 'sqlite',
  // Kysely's SQLite driver has one connection and runs its statements one after another.
  loadsConcurrently: false,
  // In process, a statement has no round trip to save: its parents' statements repeated as subqueries would only cost.
  loadsInOneWave: false,
  combinesStatements: false,

  /**
   * `instr(lower(column), lower(?)) > 0`, the text itself bound. SQLite has no
   * index for a substring: `instr` compares bytes at each position, where LIKE's
   * matcher backtracks character by character (1,000-character values over
   * 200 rows of 20,000 characters: about 0.2 s against 20 s).
   */
  contains: (column, text) => ({ condition: sql<SqlBool>`instr(lower(${sql.ref(column)}), lower(${text})) > 0`, value: text }),

  // A date-time column is compared by its instant: its text may be written with another offset or precision.
  filterColumn: (type, column) => byInstant(type) ? sql`julianday(${sql.ref(column)})` : sql.ref(column),
  // SQLite compares any value with any column: never a cast.
  filterValue: (type, item) => ({ item, cast: undefined, expression: byInstant(type) ? sql`julianday(${item})` : sql`${item}` }),

  // better-sqlite3 hands over an integer as a JavaScript number, rounded past 2^53; its text is exact.
  asText: (column) => sql<string>`cast(${sql.ref(column)} as text)`,
  // The stored text or number, as compared.
  cursorKey: (eb, _type, column) => eb.ref(column),
  rowComparison: rowValueComparison,

  // NULL sorts first in SQLite: `column is null` (0, then 1) places it explicitly.
  orderBy: orderByNullFlag,
  correlatedSubquery: (query) => query,
  nullableOrder: nullsAsLargest,
  limit: literalLimit,
  amongKeys: inKeySubquery,

  firstRowsPerParent,
  firstRowsBindKeysFirst: true,

  numberCasts: standardNumberCasts,
  quotient: plainQuotient,
  compile: (statement) => statement.withPlugin(valuesPlannedOnce).compile(),

  failureOf: (error: DriverError) => error.code === 'SQLITE_BUSY' || error.code === 'SQLITE_LOCKED' ? 'unavailable' : undefined,
  // Its statements are never combined (combinesStatements): nothing is learnt from a refusal.
  refusedForItsText: () => false,
}

function byInstant (type: ValueType): boolean {
  return type.format === 'date-time'
}

/** The distinct parent keys of a statement reading each parent's first rows, and its column. */
const parentKeys = '__expand_keys'
const parentKeyColumn = `${parentKeys}.key`

/**
 * For each parent key (a table of the distinct keys, read first: `cross
 * join` keeps SQLite from reordering it), the related rows whose key is
 * among the first `limit` of that parent, in the relation's order and under
 * the request's scope, found by a correlated subquery with LIMIT, which
 * SQLite runs once per parent: with an index on the parent column (and the
 * order's columns), each parent's rows are read from the index up to the
 * limit, where `row_number()` would number every child of every parent
 * first. The keys are the statement's first parameters, then the scope's
 * values (in the subquery), then the bound (`firstRowsBindKeysFirst`).
 */
function firstRowsPerParent ({ db, source, scope, keys, order, limit, bound }: LimitedRelation): AnySelect {
  const { table, join = (query: AnySelect) => query, parentColumn, relatedKey, select } = source
  const scoped = join(db.selectFrom(table) as AnySelect)
  const first = orderedBy((scope === undefined ? scoped : scoped.where(scope))
    .select(relatedKey)
    .where(parentColumn, '=', sql.ref(parentKeyColumn)), order)
  // SQLite loads level by level: its parent keys are always a list (load/one-wave.ts).
  if (!Array.isArray(keys)) throw new TypeError('SQLite reads each parent\'s first rows for a list of keys, never a subquery')
  const distinctKeys = sql`(select distinct "column1" as "key" from (values ${sql.join((keys as readonly unknown[]).map((key) => sql`(${key})`))}))`
  const rows = select(join(db.with(parentKeys, () => distinctKeys as never).selectFrom(parentKeys).crossJoin(table) as AnySelect))
    .select(sql.ref(parentKeyColumn).as(parentKey))
    .where(parentColumn, '=', sql.ref(parentKeyColumn))
    .where(relatedKey, 'in', literalLimit(first, limit))
    .orderBy(parentKeyColumn)
  return literalLimit(orderedBy(rows, order), bound)
}
