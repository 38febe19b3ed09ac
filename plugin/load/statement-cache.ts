import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { LruMap } from 'toad-cache'
import { InvalidOptionError } from '../errors.js'

export interface StatementCacheOptions {
  /** Prepared statements kept, least recently used evicted first (default 500). */
  maxStatements?: number
}

/** The part of a better-sqlite3 statement used here, beyond what Kysely needs. */
interface BetterSqliteStatement extends SqliteStatement {
  raw(toggle?: boolean): this
  pluck(toggle?: boolean): this
  get(...parameters: unknown[]): unknown
  columns(): Array<{ name: string }>
}

/**
 * Wraps a better-sqlite3 database for Kysely's `SqliteDialect`, for
 * statements that run again and again, as the loader's do:
 *
 * - each SQL text is prepared once (Kysely's SQLite driver prepares every
 *   statement it runs, 10-20 µs each);
 * - result rows are read as arrays and turned into objects by a function
 *   compiled for the statement's columns, which is about 25% faster than
 *   better-sqlite3 building each object itself, and gives every row of a
 *   statement the same shape.
 *
 * Rows are the same objects, with the same keys in the same order, also
 * after the schema changes under a cached statement (a column added, dropped
 * or renamed, by this connection or another). One difference, on purpose: a
 * column named `__proto__` is an own property, where better-sqlite3 would
 * try to set the row's prototype with it. A database that is not
 * better-sqlite3 keeps the driver's own rows.
 *
 * ```ts
 * new Kysely({ dialect: new SqliteDialect({ database: cachePreparedStatements(new SQLite('app.db')) }) })
 * ```
 */
export function cachePreparedStatements (database: SqliteDatabase, options: StatementCacheOptions = {}): SqliteDatabase {
  const maxStatements = options.maxStatements ?? 500
  if (!Number.isInteger(maxStatements) || maxStatements < 1) {
    throw new InvalidOptionError(`maxStatements must be a positive integer, got ${String(options.maxStatements)}`)
  }
  const statements = new LruMap<SqliteStatement>(maxStatements)
  const schemaVersion = schemaVersionReader(database)
  return {
    close: () => database.close(),
    prepare (sql) {
      let statement = statements.get(sql)
      if (statement === undefined) {
        statement = shareable(database, sql, schemaVersion)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}

/** better-sqlite3's cheapest way to tell that the schema changed (about 0.1 µs); undefined for other drivers. */
function schemaVersionReader (database: SqliteDatabase): (() => unknown) | undefined {
  const statement = database.prepare('pragma schema_version')
  if (!isBetterSqlite(statement)) return undefined
  statement.pluck(true)
  return () => statement.get()
}

/**
 * A statement that can be handed to several callers: `all` and `run` finish
 * before they return, but an iterator keeps its statement busy until it is
 * done, so each iteration gets a statement of its own.
 */
function shareable (database: SqliteDatabase, sql: string, schemaVersion: (() => unknown) | undefined): SqliteStatement {
  const statement = database.prepare(sql)
  const all = statement.reader && schemaVersion !== undefined && isBetterSqlite(statement)
    ? arrayRowReader(statement, schemaVersion)
    : (parameters: readonly unknown[]) => statement.all(parameters)
  return {
    reader: statement.reader,
    all,
    run: (parameters) => statement.run(parameters),
    iterate: (parameters) => database.prepare(sql).iterate(parameters),
  }
}

/** Reads rows as arrays and builds the objects with a function compiled for the statement's columns. */
function arrayRowReader (statement: BetterSqliteStatement, schemaVersion: () => unknown): (parameters: readonly unknown[]) => unknown[] {
  let version = schemaVersion()
  let rowsOf = rowBuilderOf(statement)
  statement.raw(true)
  return (parameters) => {
    const rows = statement.all(parameters) as unknown[][]
    // Read after the rows: if the schema changed, SQLite prepared the statement again
    // before running it, and its columns now are those of these rows.
    const current = schemaVersion()
    if (current !== version) {
      version = current
      rowsOf = rowBuilderOf(statement)
    }
    return rowsOf(rows)
  }
}

function isBetterSqlite (statement: SqliteStatement): statement is BetterSqliteStatement {
  const candidate = statement as Partial<BetterSqliteStatement>
  return ['raw', 'pluck', 'get', 'columns'].every((method) => typeof candidate[method as keyof BetterSqliteStatement] === 'function')
}

function rowBuilderOf (statement: BetterSqliteStatement): RowBuilder {
  return compileRowBuilder(statement.columns().map((column) => column.name))
}

type RowBuilder = (rows: unknown[][]) => Array<Record<string, unknown>>

/**
 * A function turning array rows into objects with one literal, as
 * better-sqlite3 would: a repeated column name keeps its first position and
 * its last value.
 */
function compileRowBuilder (names: readonly string[]): RowBuilder {
  const lastIndex = new Map<string, number>()
  names.forEach((name, index) => lastIndex.set(name, index))
  // Plain keys give the literal a fixed shape; `"__proto__": value` would set the
  // prototype, so that name alone is a computed key (an own property).
  const properties = [...lastIndex].map(([name, index]) => `${name === '__proto__' ? '["__proto__"]' : JSON.stringify(name)}: row[${index}]`).join(', ')
  // eslint-disable-next-line no-new-func
  return new Function('rows', `
    const objects = new Array(rows.length)
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]
      objects[index] = { ${properties} }
    }
    return objects
  `) as RowBuilder
}
