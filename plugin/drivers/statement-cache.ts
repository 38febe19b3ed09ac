import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { LruMap } from 'toad-cache'
import { isPositiveInteger, unknownKey } from '../graph/checks.js'
import { InvalidOptionError, messages } from '../errors.js'

export interface StatementCacheOptions {
  /** Prepared statements kept, least recently used evicted first (default 256). */
  maxStatements?: number
  /** Longer SQL texts are prepared on every run, as without the cache (default 3,072 characters). */
  maxStatementLength?: number
}

/** The part of a better-sqlite3 statement used here, beyond what Kysely needs. */
interface BetterSqliteStatement extends SqliteStatement {
  raw(toggle?: boolean): this
  columns(): Array<{ name: string }>
}

/**
 * Wraps a better-sqlite3 database for Kysely's `SqliteDialect`, for
 * statements that run again and again, as the loader's do:
 *
 * - each SQL text is prepared once (Kysely's SQLite driver prepares every
 *   statement it runs, 10-20 µs each);
 * - the rows of a statement that names its columns (no `*`, so its column
 *   names cannot change with the schema) are read as arrays and turned into
 *   objects by a function compiled for those columns, about 25% faster than
 *   better-sqlite3 building each object, and every row gets the same shape.
 *
 * Rows are the objects better-sqlite3 gives, with the same keys in the same
 * order; a column named `__proto__` is always an own property. Memory is
 * bounded: a prepared statement costs SQLite about 165 bytes per parameter,
 * so at most `maxStatements` texts of at most `maxStatementLength`
 * characters are kept (by default about 32 MB at worst, a few MB in use).
 *
 * ```ts
 * new Kysely({ dialect: new SqliteDialect({ database: cachePreparedStatements(new SQLite('app.db')) }) })
 * ```
 */
export function cachePreparedStatements (database: SqliteDatabase, options: StatementCacheOptions = {}): SqliteDatabase {
  // 3,072 characters: a statement over 512 keys, each written `+?, ` (sql/dialects/sqlite-values.ts), and its other text.
  const { maxStatements, maxStatementLength } = statementLimits('cachePreparedStatements', options, 3_072)
  const statements = new LruMap<SqliteStatement>(maxStatements)
  return {
    close: () => database.close(),
    prepare (sql) {
      if (sql.length > maxStatementLength) return database.prepare(sql)
      let statement = statements.get(sql)
      if (statement === undefined) {
        statement = shareable(database, sql)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}

const limitKeys = new Set(['maxStatements', 'maxStatementLength'])

/**
 * The options of a statement wrapper (this one, `namePreparedStatements`), checked, with their defaults:
 * 256 statements, none longer than `longest` characters (2,048 unless told). `owner` names the wrapper in the errors.
 */
export function statementLimits (
  owner: string,
  options: { maxStatements?: number; maxStatementLength?: number },
  longest = 2_048
): { maxStatements: number; maxStatementLength: number } {
  const unknown = unknownKey(options, limitKeys)
  if (unknown !== undefined) throw new InvalidOptionError(messages.unknownStatementOption(owner, unknown))
  const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback
    if (!isPositiveInteger(value)) throw new InvalidOptionError(messages.statementOptionNotPositive(owner, name, String(value)))
    return value
  }
  return {
    maxStatements: positiveInteger('maxStatements', options.maxStatements, 256),
    maxStatementLength: positiveInteger('maxStatementLength', options.maxStatementLength, longest),
  }
}

/**
 * A statement that can be handed to several callers: `all` and `run` finish
 * before they return, but an iterator keeps its statement busy until it is
 * done, so each iteration gets a statement of its own.
 */
function shareable (database: SqliteDatabase, sql: string): SqliteStatement {
  const statement = database.prepare(sql)
  return {
    reader: statement.reader,
    all: statement.reader && !sql.includes('*') && isBetterSqlite(statement)
      ? arrayRowReader(statement)
      : (parameters) => statement.all(parameters),
    run: (parameters) => statement.run(parameters),
    iterate: (parameters) => database.prepare(sql).iterate(parameters),
  }
}

function arrayRowReader (statement: BetterSqliteStatement): (parameters: readonly unknown[]) => unknown[] {
  const rowsOf = compileRowBuilder(statement.columns().map((column) => column.name))
  statement.raw(true)
  return (parameters) => rowsOf(statement.all(parameters) as unknown[][])
}

function isBetterSqlite (statement: SqliteStatement): statement is BetterSqliteStatement {
  const candidate = statement as Partial<BetterSqliteStatement>
  return typeof candidate.raw === 'function' && typeof candidate.columns === 'function'
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
  const properties = [...lastIndex].map(([name, index]) => `${literalKey(name)}: row[${index}]`).join(', ')
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

/**
 * A property name as a key of a generated object literal. Plain keys give the
 * literal a fixed shape; `"__proto__": value` would set the prototype, so that
 * name alone is a computed key (an own property).
 */
export function literalKey (name: string): string {
  return name === '__proto__' ? '["__proto__"]' : JSON.stringify(name)
}
