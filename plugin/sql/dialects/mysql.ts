import { sql, type SqlBool } from 'kysely'
import { instantOf } from '../../graph/dates.js'
import { isDateFormat } from '../../routes/list-declarations.js'
import type { AnySelect } from '../selection.js'
import {
  compiledAsWritten,
  inKeySubquery,
  literalLimit,
  nullsAsLargest,
  orderByNullFlag,
  plainQuotient,
  rowValueComparison,
  type DriverError,
  type ExpandDialect,
} from './dialect.js'
import { rowNumberedFirstRows } from './postgres.js'

/**
 * MariaDB and MySQL (Kysely's MySQL adapter, over mysql2): a pool of
 * connections, identifiers in backticks, parameters interpolated by the
 * driver. Where it reads or orders differently from SQLite and PostgreSQL:
 * - text compares and orders by its column's collation: the default `_ci`
 *   collations make `=`, `<` and ORDER BY ignore case and accents ('e' =
 *   'É'), where SQLite and PostgreSQL's C collation compare bytes. The
 *   plugin compares as the column is declared (as it does on PostgreSQL, whose
 *   order is its column's collation too): a column declared with a binary
 *   NO PAD collation (MariaDB's `utf8mb4_nopad_bin`, MySQL 8's
 *   `utf8mb4_0900_bin`) orders and compares as the others do. (`utf8mb4_bin`
 *   pads: 'a' = 'a ', and 'a\t' sorts before 'a'.) Pages
 *   stay exact either way: the cursor's keys are compared in the same collation
 *   they were ordered in, and the primary key breaks the ties.
 * - `contains` ignores case only, never accents: see `contains`.
 * - a date-time has no offset in the database (DATETIME, or TIMESTAMP in the
 *   session's time zone, which should be UTC): see `filterValue`.
 * - NULL sorts first ascending, as on SQLite, and there is no NULLS FIRST/LAST.
 * - a row value comparison enters no index: see `rowComparison`.
 * - a correlated EXISTS becomes a semi-join that reads the whole related table: see `correlatedSubquery`.
 */
export const mysqlDialect: ExpandDialect = {
  name: 'mysql',
  systemName: 'mysql',
  // On a pool, statements beyond its free connections wait for one, as any other query does.
  loadsConcurrently: true,
  // Level by level: MariaDB 10.11 reads a one-wave statement's common table expression once per reference and joins
  // the relation's table without its index (a scan of pet_toys per statement), so the benchmark's page ran at 0.39x
  // the hand-written statement in one wave against 0.81x level by level.
  loadsInOneWave: false,
  combinesStatements: false,

  /**
   * `instr(cast(lower(column) as binary), cast(lower(?) as binary)) > 0`, the
   * text itself bound: both lowered in their own character set, then
   * compared as bytes, so a `_ci` collation's equal accents do not match
   * ('e' does not find 'é'), as on SQLite and PostgreSQL. No index serves a
   * substring here either; `instr` has no pattern, so `%`, `_` and `\` are
   * the text itself. The bytes of both sides agree where the column's
   * character set is the connection's (utf8mb4 for mysql2).
   */
  contains: (column, text) => ({
    condition: sql<SqlBool>`instr(cast(lower(${sql.ref(column)}) as binary), cast(lower(${text}) as binary)) > 0`,
    value: text,
  }),

  filterColumn: (_type, column) => sql.ref(column),
  /**
   * A date-time is bound as its instant's UTC wall-clock text, `YYYY-MM-DD
   * HH:MM:SS.mmm`: MariaDB reads no offset in a date-time text (it drops
   * `Z` or `+01:00` with a warning and keeps the wall-clock time), and its
   * DATETIME holds none. Numbers are never cast: the driver writes each as a
   * literal, which the database compares exactly, whatever the column's width.
   */
  filterValue: (type, item) => {
    const bound = type.format === 'date-time' ? utcWallClock(item) : item
    return { item: bound, cast: undefined, expression: sql`${bound}` }
  },

  /**
   * `cast(column as char)`: mysql2 hands over a BIGINT as a JavaScript
   * number, rounded past 2^53, unless its pool sets `supportBigNumbers`
   * (then text past 2^53 only) or `bigNumberStrings`; MySQL's CAST knows no
   * `text`.
   */
  asText: (column) => sql<string>`cast(${sql.ref(column)} as char)`,
  /**
   * A `date` or `date-time` key is read as text (`cast(column as char)`):
   * the value the database compares, to the microsecond, which mysql2
   * would otherwise read as a Date in the zone of its `timezone` option.
   */
  cursorKey: (eb, type, column) => isDateFormat(type) ? eb.cast(eb.ref(column), 'char') : eb.ref(column),
  /**
   * `(k1 >= ? and (k1, k2) > (?, ?))`, the first value bound twice: MariaDB's
   * range optimizer reads no row value comparison, so alone it scans the table
   * and sorts it (or reads an index on the sort columns from its start). The
   * bound on the first key, which the row comparison implies, is the range
   * such an index is entered at, then read in its order.
   */
  rowComparison: (columns, operator, values) => {
    const row = rowValueComparison(columns, operator, values)
    if (columns.length < 2) return row
    const lead = sql<SqlBool>`${sql.ref(columns[0]!)} ${sql.raw(operator)}= ${values[0]}`
    return { condition: sql<SqlBool>`(${lead} and ${row.condition})`, values: [values[0], ...row.values] }
  },

  // NULL sorts first ascending, last descending, and has no NULLS FIRST/LAST: `column is null` (0, then 1) places it, as on SQLite.
  orderBy: orderByNullFlag,
  nullableOrder: nullsAsLargest,
  /**
   * `... having 1`: MariaDB turns a correlated EXISTS into an IN (its
   * `exists_to_in`) and that into a semi-join, which materializes every
   * related row the filter matches, reading the whole related table for a
   * page of 20 rows (MySQL 8 makes a semi-join of it too). A subquery with
   * HAVING is converted by neither (MySQL's semi-join conditions exclude it):
   * it stays correlated, run per outer row through the index on the related
   * foreign key, as SQLite and PostgreSQL run it.
   */
  correlatedSubquery: <Q extends AnySelect>(query: Q) => query.having(sql<SqlBool>`1`) as Q,
  limit: literalLimit,
  amongKeys: inKeySubquery,

  // Window functions since MariaDB 10.2 and MySQL 8.0: the statement PostgreSQL runs.
  firstRowsPerParent: rowNumberedFirstRows,
  firstRowsBindKeysFirst: false,

  // MySQL's CAST knows neither `integer` nor `double precision` (MariaDB reads the first): `signed` and `double` on both.
  numberCasts: { integer: 'signed', double: 'double' },
  quotient: plainQuotient,
  compile: compiledAsWritten,

  failureOf: (error: DriverError) => {
    const { code, errno, message } = error
    if (typeof code === 'string') {
      if (unavailableCodes.has(code)) return 'unavailable'
      if (unstorableCodes.has(code)) return 'unstorable value'
    }
    // MariaDB's own numbers, which mysql2's (MySQL's) list of names leaves without a code.
    if (code === undefined && typeof errno === 'number' && unavailableMariadbErrors.has(errno)) return 'unavailable'
    return typeof message === 'string' && connectionClosed.test(message) ? 'unavailable' : undefined
  },
  // Its statements are never combined (combinesStatements): nothing is learnt from a refusal.
  refusedForItsText: () => false,
}

/** A date-time filter value (which always says its offset) as UTC wall-clock text; any other value as it is. */
function utcWallClock (item: unknown): unknown {
  if (typeof item !== 'string') return item
  const instant = instantOf(item)
  return instant === undefined ? item : new Date(instant).toISOString().slice(0, 23).replace('T', ' ')
}

/**
 * mysql2's codes of a server that cannot serve now: the connection lost or
 * refused by the pool or the server (too many connections, shutting down),
 * a lock waited for too long, a statement stopped by its time limit
 * (MySQL's `max_execution_time`) or killed.
 */
const unavailableCodes = new Set([
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR', 'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_SERVER_SHUTDOWN', 'ER_NORMAL_SHUTDOWN', 'ER_LOCK_WAIT_TIMEOUT', 'ER_QUERY_TIMEOUT', 'ER_QUERY_INTERRUPTED',
  'ER_CLIENT_INTERACTION_TIMEOUT', 'ER_OUT_OF_RESOURCES',
])
/**
 * MariaDB's errors mysql2 names no code for: 1969, ER_STATEMENT_TIMEOUT
 * (`max_statement_time` exceeded), 1927, ER_CONNECTION_KILLED.
 */
const unavailableMariadbErrors = new Set([1969, 1927])
/** mysql2's errors of a pool or connection already closed, which carry only their message. */
const connectionClosed = /^(Pool is closed\.|Can't add new command when connection is in closed state)/
/** A value its column's type cannot hold (strict mode turns these warnings into errors). */
const unstorableCodes = new Set([
  'ER_WARN_DATA_OUT_OF_RANGE', 'ER_DATA_OUT_OF_RANGE', 'ER_TRUNCATED_WRONG_VALUE', 'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD',
  'ER_DATA_TOO_LONG', 'ER_WRONG_VALUE',
])
