import { MysqlAdapter, SqliteAdapter } from 'kysely'
import { executorOf } from '../executor.js'
import type { AnyKysely } from '../selection.js'
import type { DatabaseFailureKind, DriverError, ExpandDialect } from './dialect.js'
import { mysqlDialect } from './mysql.js'
import { postgresDialect } from './postgres.js'
import { sqliteDialect } from './sqlite.js'

export type {
  DatabaseFailureKind, ExpandDialect, FilterValue, LimitedRelation, OrderDirection, RelationOrder, RelationSource, Statement,
} from './dialect.js'
export { orderedBy, parentKey, rowNumberOver } from './dialect.js'
export { mysqlDialect } from './mysql.js'
export { postgresDialect } from './postgres.js'
export { sqliteDialect } from './sqlite.js'

/**
 * A Kysely instance whose executor this Kysely release hides: written to as
 * PostgreSQL (the standard forms: LIKE with ESCAPE, casts, `row_number()`),
 * and its statements run one after another, its connections unknown.
 */
const unseenDatabase: ExpandDialect = Object.freeze({
  ...postgresDialect, loadsConcurrently: false, loadsInOneWave: false, combinesStatements: false,
})

// A transaction or `withPlugin` copy is another Kysely instance over the same adapter: each is resolved once.
const resolved = new WeakMap<AnyKysely, ExpandDialect>()

/**
 * The dialect `db` is written to in: SQLite's for Kysely's SQLite adapter,
 * MariaDB/MySQL's for its MySQL adapter, PostgreSQL's for any other (Kysely's PostgreSQL adapter, or an adapter
 * whose database speaks as PostgreSQL does). Resolved once per Kysely instance.
 */
export function dialectOf (db: AnyKysely): ExpandDialect {
  let dialect = resolved.get(db)
  if (dialect === undefined) {
    const adapter = executorOf(db)?.adapter
    dialect = adapter === undefined
      ? unseenDatabase
      : adapter instanceof SqliteAdapter ? sqliteDialect : adapter instanceof MysqlAdapter ? mysqlDialect : postgresDialect
    resolved.set(db, dialect)
  }
  return dialect
}

/**
 * Resolves `db` to `dialect` from now on, in place of its adapter's: for
 * measuring one loading choice of a dialect against another over the same
 * database (benchmarks/suites/end-to-end.ts loads PostgreSQL level by level
 * beside one wave).
 */
export function resolveDialectAs (db: AnyKysely, dialect: ExpandDialect): void {
  resolved.set(db, dialect)
}

/** Network errors of a connection, as Node reports them for any driver. */
const connectionErrorCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
])

const knownDialects: readonly ExpandDialect[] = [sqliteDialect, postgresDialect, mysqlDialect]

/**
 * What a driver's error says for the client, read without knowing its
 * database (`databaseFailure` is given the error alone; the codes of the
 * dialects do not overlap): undefined when it is the statement's failure.
 */
export function databaseFailureKind (error: unknown): DatabaseFailureKind | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const driverError = error as DriverError
  if (typeof driverError.code === 'string' && connectionErrorCodes.has(driverError.code)) return 'unavailable'
  for (const dialect of knownDialects) {
    const kind = dialect.failureOf(driverError)
    if (kind !== undefined) return kind
  }
  return undefined
}

/** Whether a driver's error is its database refusing a statement for its text (`ExpandDialect.refusedForItsText`). */
export function refusedForItsText (error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  return knownDialects.some((dialect) => dialect.refusedForItsText(error as DriverError))
}
