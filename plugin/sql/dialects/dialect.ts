import {
  sql, type AliasableExpression, type Compilable, type CompiledQuery, type Expression, type ExpressionBuilder, type KyselyPlugin,
  type RawBuilder, type SqlBool,
} from 'kysely'
import type { ValueType } from '../../routes/list-declarations.js'
import type { AnyKysely, AnySelect } from '../selection.js'

/**
 * Everything the plugin writes or reads differently on one database. The
 * statement builders (relation-statements.ts, list-statements.ts) and the
 * loader ask the dialect of their Kysely instance (`dialectOf`, resolved once
 * per instance) and name no database themselves; each dialect's file holds
 * its whole list of differences, and test/sql/dialects.test.ts asserts the SQL
 * each one writes and runs it.
 */
export interface ExpandDialect {
  readonly name: 'sqlite' | 'postgres' | 'mysql'
  /**
   * The database as OpenTelemetry's semantic conventions name it
   * (`db.system.name`), which the load channel publishes with each statement
   * (trace/channels.ts); MariaDB's statements are MySQL's dialect's.
   */
  readonly systemName: 'sqlite' | 'postgresql' | 'mysql'
  /**
   * Whether the relations of one level may load at the same time (outside a
   * transaction, which has one connection): on a pool of connections, yes; on
   * a single connection that runs statements one after another, overlapping
   * them would only reorder them.
   */
  readonly loadsConcurrently: boolean
  /**
   * Whether a request's relation statements are all sent with its root
   * statement, each taking its keys from a subquery of its parent's statement
   * instead of from its parent's rows (load/one-wave.ts): one round trip where
   * a plan of depth N takes N + 1. Only where the statements also run
   * concurrently (`loadsConcurrently`).
   */
  readonly loadsInOneWave: boolean
  /**
   * Whether the statements of one wave go out as one statement, each a
   * subquery whose rows come back as one JSON text (sql/combined-statements.ts):
   * one message and one row in place of a statement's each. Only where the
   * request loads in one wave (`loadsInOneWave`).
   */
  readonly combinesStatements: boolean

  /** `contains` on `column`, ignoring case: the condition, and the one value it binds (the text, or a pattern made of it). */
  contains(column: string, text: string): { readonly condition: Expression<SqlBool>; readonly value: unknown }
  /** A filtered column as compared with its filter's values (a date-time by its instant, say). */
  filterColumn(type: ValueType, column: string): Expression<unknown>
  /**
   * A filter value as the statement binds it: the expression written, and the
   * cast it carries (undefined: none), when the database would not read the
   * bare parameter as a type that holds it.
   */
  filterValue(type: ValueType, item: unknown): FilterValue
  /**
   * `column` read as its text: a field or key declared a string
   * (`Type.String()`) on a column that may hold integers, so that no driver
   * hands it over as a JavaScript number (rounded past 2^53) and each of its
   * values reads as its exact decimal text, the same text a filter or cursor
   * binds back.
   */
  asText(column: string): AliasableExpression<string>
  /** A sort key selected for a cursor, in the form the database compares it in (and reads back exactly). */
  cursorKey(eb: ExpressionBuilder<any, any>, type: ValueType, column: string): AliasableExpression<unknown>
  /** Rows whose sort keys, all in one direction, come after `values`: a row value comparison, and the values it binds. */
  rowComparison(columns: readonly string[], operator: '<' | '>', values: readonly unknown[]): RowComparison
  /** `query` ordered by `column`, with its NULLs written first or last explicitly (the databases' defaults differ). */
  orderBy<Q extends AnySelect>(query: Q, column: string, direction: OrderDirection, nulls: 'first' | 'last'): Q
  /**
   * The keys of a relation's order (its `orderBy`) by `column`, which may
   * hold NULL: its NULLs after every value ascending and before every value
   * descending, as a list's sort places them (`orderBy`) on every database.
   */
  nullableOrder(column: string, direction: OrderDirection): RelationOrder[]
  /**
   * The correlated `select 1` of a filter through a relation (an EXISTS), written so that the database runs it per
   * outer row, reading the related rows by the index on the column it correlates on.
   */
  correlatedSubquery<Q extends AnySelect>(query: Q): Q
  /** `query` returning `bound` rows at most: a literal of the statement's text, so that it binds no parameter. */
  limit<Q extends AnySelect>(query: Q, bound: number): Q
  /**
   * `column` among the keys that `keys` selects: a one-wave statement's subquery of its parents' statement
   * (sql/key-subqueries.ts), written so that the database looks the keys up by the column's index.
   */
  amongKeys(column: string, keys: AnySelect): Expression<SqlBool>

  /** The statement of a relation with `limit`: each parent's first `limit` rows, `bound` rows at most in all. */
  firstRowsPerParent(relation: LimitedRelation): AnySelect
  /** Whether `firstRowsPerParent` binds the parent keys before the scope's values (statement templates need the order). */
  readonly firstRowsBindKeysFirst: boolean

  /** The type names an aggregate's value is cast to: a count to an integer, a sum or an average to a double. */
  readonly numberCasts: NumberCasts
  /**
   * A double `sum` divided by an integer `count` as IEEE division gives it
   * (an average): NULL where `sum` is NULL, 0 where the quotient rounds to 0.
   */
  quotient(sum: Expression<unknown>, count: Expression<unknown>): RawBuilder<unknown>

  /**
   * A statement compiled as it is sent: SQLite's with each bound value
   * written `+?` (sqlite-values.ts: planned once, for any values), the
   * others' as Kysely writes them. Every statement the plugin runs, and every
   * text `explain` shows, is compiled here.
   */
  compile(statement: Statement): CompiledQuery<unknown>

  /** What a driver's error of this database means for the client, if it says anything: see `DatabaseFailureKind`. */
  failureOf(error: DriverError): DatabaseFailureKind | undefined

  /**
   * Whether the database refused a statement for its text, as it would again,
   * rather than for the values it met: a combined statement so refused is
   * not sent again (sql/combined-statements.ts).
   */
  refusedForItsText(error: DriverError): boolean
}

/** A statement the plugin builds (a select, or a raw statement), which a dialect may compile with a plugin of its own. */
export type Statement = Compilable<unknown> & { withPlugin(plugin: KyselyPlugin): Compilable<unknown> }

/** The statement as Kysely compiles it: PostgreSQL's and MariaDB's. */
export const compiledAsWritten = (statement: Statement): CompiledQuery<unknown> => statement.compile()

/** A keyset condition on keys in one direction, and the values it binds, in the order it binds them. */
export interface RowComparison {
  readonly condition: Expression<SqlBool>
  readonly values: readonly unknown[]
}

/** The types an aggregate's number is cast to, by what it is. */
export type NumberCasts = Readonly<Record<'integer' | 'double', string>>

/** `cast(... as integer)` and `cast(... as double precision)`: the standard's names, which SQLite and PostgreSQL read. */
export const standardNumberCasts: NumberCasts = Object.freeze({ integer: 'integer', double: 'double precision' })

/** `sum / count`: the quotient SQLite and MariaDB compute, IEEE division of doubles. */
export function plainQuotient (sum: Expression<unknown>, count: Expression<unknown>): RawBuilder<unknown> {
  return sql`${sum} / ${count}`
}

/** The cast a number is bound with where the bare parameter would not hold it. */
export type WideNumberCast = 'bigint' | 'numeric'

export interface FilterValue {
  /** The value bound: the filter's value, or the form its database reads it in (MariaDB's date-time without offset). */
  readonly item: unknown
  readonly cast: WideNumberCast | undefined
  readonly expression: Expression<unknown>
}

export type OrderDirection = 'asc' | 'desc'

/**
 * What a driver's error tells: the database cannot be reached now (worth
 * retrying: a 503), or a value bound was one its column's type cannot hold
 * (the request's value, never a row: a 400 or a 404).
 */
export type DatabaseFailureKind = 'unavailable' | 'unstorable value'

/** The parts of a driver's error the dialects read. */
export interface DriverError {
  readonly code?: unknown
  /** The server's error number (mysql2), which tells MariaDB's own errors that mysql2 names no code for. */
  readonly errno?: unknown
  readonly message?: unknown
}

/** Column of loaded child rows holding the parent key they belong to; removed once they are grouped. */
export const parentKey = '__expand_parent'

/** A to-many relation's statement, in parts: the tables it reads, and what it selects. */
export interface RelationSource {
  /** The first table read, and the joins after it. */
  readonly table: string
  readonly join?: ((query: AnySelect) => AnySelect) | undefined
  /** The column holding each row's parent key, and the related row's key. */
  readonly parentColumn: string
  readonly relatedKey: string
  /** The columns selected besides the parent key. */
  readonly select: (query: AnySelect) => AnySelect
  /** The names of those columns, then `parentKey`: the statement's columns in order. */
  readonly columns: readonly string[]
}

/** One key of a relation's order within a parent: a column, or what a dialect orders a column's NULLs by (`nullableOrder`). */
export type RelationOrder = readonly [column: string | Expression<unknown>, direction: OrderDirection]

/** What `firstRowsPerParent` writes a statement from. */
export interface LimitedRelation {
  readonly db: AnyKysely
  readonly source: RelationSource
  /** The request's condition on the related table, if any. */
  readonly scope: Expression<SqlBool> | undefined
  /**
   * The parent keys: a list of values, or a subquery selecting them (a
   * statement of one wave, load/one-wave.ts), which `tagged` reads already.
   */
  readonly keys: readonly unknown[] | AnySelect
  /**
   * The columns `tagged` selects beyond the source's, which the statement
   * carries out of its numbered rows: its one-wave statement's
   * (sql/key-subqueries.ts's `withWaveColumns`), and the keys that the
   * relations below read as their columns hold them (`withNativeKeys`). None
   * for a list of keys.
   */
  readonly addedColumns: readonly string[]
  readonly order: readonly RelationOrder[]
  /** The relation's `limit`, per parent. */
  readonly limit: number
  /** The most rows the statement returns in all. */
  readonly bound: number
  /** The relation's rows of every parent: scoped, each tagged with its parent key, in no order and unbounded. */
  tagged(): AnySelect
}

/** `query` ordered by each key of `order` in turn. */
export function orderedBy<Q extends AnySelect> (query: Q, order: readonly RelationOrder[]): Q {
  let ordered = query
  for (const [column, direction] of order) ordered = (direction === 'desc' ? ordered.orderBy(column, 'desc') : ordered.orderBy(column)) as Q
  return ordered
}

/** `column is null`: 0 for a value, 1 for NULL, an order key that places the NULLs where the database has no NULLS FIRST/LAST. */
const isNull = (column: string): Expression<unknown> => sql`${sql.ref(column)} is null`

/** `query` ordered by `column` with its NULLs `first` or `last` (`isNull` first): SQLite's and MariaDB's `orderBy`. */
export function orderByNullFlag<Q extends AnySelect> (query: Q, column: string, direction: OrderDirection, nulls: 'first' | 'last'): Q {
  return query.orderBy(isNull(column), nulls === 'first' ? 'desc' : 'asc').orderBy(column, direction) as Q
}

/**
 * `column` in `direction`, its NULLs first in the same direction (`isNull`),
 * so that they come after every value ascending and before every value
 * descending: for a database whose NULL is smaller than every value (SQLite,
 * MariaDB), the order PostgreSQL gives by default.
 */
export function nullsAsLargest (column: string, direction: OrderDirection): RelationOrder[] {
  return [[isNull(column), direction], [column, direction]]
}

/**
 * `row_number() over([partition by <partition>] order by <order>)`, written
 * as Kysely writes a window: each row's place in `order`, within its
 * partition if any. The databases that load concurrently read it (window
 * functions since PostgreSQL 8.4, MariaDB 10.2, MySQL 8.0).
 */
export function rowNumberOver (order: readonly RelationOrder[], partition?: string): RawBuilder<number> {
  const terms = order.map(([column, direction]) => {
    const key = typeof column === 'string' ? sql.ref(column) : column
    return direction === 'desc' ? sql`${key} desc` : key
  })
  const partitioned = partition === undefined ? sql`` : sql`partition by ${sql.ref(partition)} `
  return sql<number>`row_number() over(${partitioned}order by ${sql.join(terms)})`
}

/** `(k1, k2) > (?, ?)`, each value bound once: the form every database reads. */
export function rowValueComparison (columns: readonly string[], operator: '<' | '>', values: readonly unknown[]): RowComparison {
  const left = sql.join(columns.map((column) => sql.ref(column)))
  return { condition: sql<SqlBool>`(${left}) ${sql.raw(operator)} (${sql.join(values.map((value) => sql`${value}`))})`, values }
}

/** `limit <bound>` as a literal. */
export function literalLimit<Q extends AnySelect> (query: Q, bound: number): Q {
  return query.limit(sql.lit(bound)) as Q
}

/** `column in (keys)`: the form SQLite and MariaDB are given (neither loads in one wave: see `loadsInOneWave`). */
export function inKeySubquery (column: string, keys: AnySelect): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} in ${keys}`
}
