import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely'
import { isDateFormat, type ValueType } from '../../routes/list-declarations.js'
import type { AnySelect } from '../selection.js'
import {
  compiledAsWritten,
  literalLimit,
  parentKey,
  rowNumberOver,
  rowValueComparison,
  standardNumberCasts,
  type DriverError,
  type ExpandDialect,
  type LimitedRelation,
  type WideNumberCast,
} from './dialect.js'

/**
 * `sum / count` as IEEE division gives it. PostgreSQL refuses a quotient of
 * doubles that rounds to 0 from a dividend that is not 0 ("value out of
 * range: underflow"), where IEEE division (SQLite, MariaDB, JavaScript)
 * gives 0: `5e-324 / 2`. Such a quotient is written `sum * 0` (0, its sign
 * kept), which PostgreSQL does not refuse: the quotient rounds to 0 where
 * |sum| is at most half the smallest double times `count`, compared as
 * `|sum| * 2 <= count * 5e-324`, exact in doubles for any count below 2^53.
 * Above 1e-300 times `count` the quotient is never 0 (and |sum| * 2 could
 * overflow): divided at once. A NULL sum is NULL through the last branch.
 */
function guardedQuotient (sum: Expression<unknown>, count: Expression<unknown>): RawBuilder<unknown> {
  const double = (text: string) => sql`cast(${sql.lit(text)} as double precision)`
  const quotient = sql`${sum} / ${count}`
  const large = sql`abs(${sum}) >= ${count} * ${double('1e-300')}`
  const roundsToZero = sql`abs(${sum}) * 2 <= ${count} * ${double('4.9406564584124654e-324')}`
  return sql`case when ${large} then ${quotient} when ${roundsToZero} then ${sum} * 0 else ${quotient} end`
}

/**
 * PostgreSQL (Kysely's PostgreSQL adapter, and any adapter but SQLite's and MySQL's: see
 * `dialectOf`): a pool of connections, typed columns and parameters.
 */
export const postgresDialect: ExpandDialect = {
  name: 'postgres',
  systemName: 'postgresql',
  // On a pool, statements beyond its free connections wait for one, as any other query does.
  loadsConcurrently: true,
  // A server a network away: each level's round trip saved outweighs its parents' statements repeated as subqueries.
  loadsInOneWave: true,
  // The wave's statements as one: the server and the driver work per statement and per row, less on one row of texts.
  combinesStatements: true,

  /**
   * `lower(column) like lower(?) escape '\'`, the text between wildcards with
   * its own `%`, `_` and `\` escaped: a trigram index on `lower(column)`
   * serves it.
   */
  contains: (column, text) => {
    const pattern = `%${text.replace(/[\\%_]/g, '\\$&')}%`
    return { condition: sql<SqlBool>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`, value: pattern }
  },

  filterColumn: (_type, column) => sql.ref(column),
  filterValue: (type, item) => {
    const cast = wideNumberCast(type, item)
    return { item, cast, expression: cast === undefined ? sql`${item}` : sql`cast(${item} as ${sql.raw(cast)})` }
  },

  /**
   * pg hands over int8 as its text already, but int2 and int4 as numbers:
   * the cast makes every integer column's key the same text.
   */
  asText: (column) => sql<string>`cast(${sql.ref(column)} as text)`,
  /**
   * A `date` or `date-time` key is read as text: the value the database
   * compares, whatever the column's type. pg would read a `timestamp` or
   * `date` as a Date in the process's time zone, whose UTC text the database
   * then reads back as another wall-clock time (rows repeated or skipped
   * outside UTC); the text cast back to the column's type is the key itself,
   * to the microsecond.
   */
  cursorKey: (eb, type, column) => isDateFormat(type) ? eb.cast(eb.ref(column), 'text') : eb.ref(column),
  rowComparison: rowValueComparison,

  orderBy: <Q extends AnySelect>(query: Q, column: string, direction: 'asc' | 'desc', nulls: 'first' | 'last') =>
    query.orderBy(column, (item) => {
      const ordered = direction === 'desc' ? item.desc() : item.asc()
      return nulls === 'first' ? ordered.nullsFirst() : ordered.nullsLast()
    }) as Q,
  correlatedSubquery: (query) => query,
  // NULL is larger than every value by default: after every value ascending, before every value descending.
  nullableOrder: (column, direction) => [[column, direction]],
  limit: literalLimit,
  /**
   * `column = any(array(keys))`: the keys read first (an InitPlan), then the
   * column's index scanned for them. Written `in (keys)`, the planner joined
   * the subquery to the whole table by hash (a sequential scan of the join
   * table on the benchmark's page, its toys statement 3.2 ms against 1.9).
   */
  amongKeys: (column, keys) => sql<SqlBool>`${sql.ref(column)} = any(array${keys})`,

  firstRowsPerParent: rowNumberedFirstRows,
  firstRowsBindKeysFirst: false,

  numberCasts: standardNumberCasts,
  quotient: guardedQuotient,
  compile: compiledAsWritten,

  failureOf: (error: DriverError) => {
    const { code, message } = error
    if (typeof code === 'string') {
      if (unavailableStates.test(code)) return 'unavailable'
      if (dataExceptions.test(code)) return 'unstorable value'
    }
    return typeof message === 'string' && connectionLost.test(message) ? 'unavailable' : undefined
  },
  refusedForItsText: ({ code }: DriverError) => typeof code === 'string' && textRefusals.test(code),
}

const int4 = { min: -2147483648, max: 2147483647 }
/** The largest finite PostgreSQL `real`. */
const realMax = 3.4028234663852886e38

/**
 * The type a number is bound with where PostgreSQL would not read its
 * untyped parameter as one that holds it: none for every value the column's
 * type holds, `bigint` for an integer outside int4 (an int2/int4 column
 * compares with it through the integer operators its index serves),
 * `numeric` for a number that is an integer outside int4 or beyond real's range.
 */
function wideNumberCast (type: ValueType, item: unknown): WideNumberCast | undefined {
  if (typeof item !== 'number') return undefined
  const outsideInt4 = Number.isInteger(item) && (item < int4.min || item > int4.max)
  if (type.kind === 'integer') return outsideInt4 ? 'bigint' : undefined
  return outsideInt4 || Math.abs(item) > realMax ? 'numeric' : undefined
}

/**
 * SQLSTATEs of an unreachable or unavailable server: class 08 (connection
 * exception), 57P01-57P03 (shutting down, crashed, cannot connect now), 53300
 * (too many connections), 57014 (a statement cancelled, as the connection's
 * `statement_timeout` does: the server declined to spend more on it now); and
 * of a transaction rolled back so that it may be tried again: 40001 (a
 * serialization failure: a concurrent update under repeatable read or
 * serializable, a hot standby cancelling a read that conflicts with the WAL it
 * replays, a distributed engine's retryable transaction) and 40P01 (a deadlock).
 */
const unavailableStates = /^(08...|57P0[123]|53300|57014|40001|40P01)$/
/**
 * Class 22, data exceptions: a value its column's type cannot hold (an int4
 * key asked for 2147483648, a uuid key asked for 'abc').
 */
const dataExceptions = /^22[0-9A-Z]{3}$/
/**
 * Classes 42 (a syntax error or a rule of access: an operator for two types
 * it lacks, a name it does not know, a privilege), 54 (a limit of its own)
 * and 0A (a feature it lacks): a statement refused for its text, as it would
 * be again, where a data exception (22) may be one request's values alone.
 */
const textRefusals = /^(42|54|0A)[0-9A-Z]{3}$/
/** pg's errors of a connection that ends mid-query or a pool that times out, which carry only their message. */
const connectionLost = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated unexpectedly)/

/** The subquery numbering each parent's rows, and the column holding the numbers. */
const numberedRows = '__expand_numbered'
const rowNumber = '__expand_row'

/**
 * Still one statement: the rows are numbered per parent in the relation's
 * order by `row_number()` in a subquery, which keeps the request's scope, so
 * a row out of scope takes no place, and the outer statement keeps the first
 * `limit` of each parent, parent key first. The limit is a literal
 * (defineResource checked it is a positive integer): the statement's
 * parameters stay the scope's values and the keys. MariaDB and MySQL
 * (window functions since 10.2 and 8.0) run the same statement.
 */
export function rowNumberedFirstRows ({ db, source, order, limit, bound, tagged, addedColumns }: LimitedRelation): AnySelect {
  const numbered = tagged().select(rowNumberOver(order, source.parentColumn).as(rowNumber))
  const firstRows = db.selectFrom(numbered.as(numberedRows))
    .select([...source.columns, ...addedColumns].map((column) => sql.id(numberedRows, column).as(column)))
    .where(sql.id(numberedRows, rowNumber), '<=', sql.lit(limit))
    .orderBy(sql.id(numberedRows, parentKey))
    .orderBy(sql.id(numberedRows, rowNumber)) as AnySelect
  return literalLimit(firstRows, bound)
}
