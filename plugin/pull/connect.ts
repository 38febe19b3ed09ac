// Opens the database `fastify-expand pull` reads, through Kysely and the
// dialect's driver. The drivers are optional peers of the package: each is
// imported only when its dialect is asked for.

import { fileURLToPath } from 'node:url'
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely'
import type { DatabaseModel } from './model.js'
import { introspectMysql } from './mysql.js'
import { introspectPostgres } from './postgres.js'
import { introspectSqlite } from './sqlite.js'

/**
 * A mistake of the command line or its environment (a URL it does not read,
 * a driver not installed, a database it cannot open or reach): a value, not
 * an exception, printed as one line by cli.ts, never with a stack.
 */
export interface Mistake {
  readonly kind: 'mistake'
  readonly message: string
}

export function mistake (message: string): Mistake {
  return { kind: 'mistake', message }
}

export function isMistake (value: unknown): value is Mistake {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'mistake'
}

/** Where to read: a SQLite file, or a server's URL. */
export type DatabaseLocation =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | { readonly dialect: 'postgres'; readonly url: string }
  | { readonly dialect: 'mysql'; readonly url: string }

/** `file:path.db`, `file:///abs/path.db`, a bare path, `postgres://`, `postgresql://`, `mysql://` or `mariadb://`. */
export function databaseLocation (text: string): DatabaseLocation | Mistake {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase()
  if (scheme === undefined || /^[A-Za-z]:[\\/]/.test(text)) return { dialect: 'sqlite', path: text }
  if (scheme === 'file') {
    try {
      return { dialect: 'sqlite', path: text.startsWith('file://') ? fileURLToPath(text) : decodeURIComponent(text.slice('file:'.length)) }
    } catch {
      return mistake(`'${text}' is not a file URL`)
    }
  }
  const valid = URL.canParse(text)
  if (valid && (scheme === 'postgres' || scheme === 'postgresql')) return { dialect: 'postgres', url: text }
  if (valid && (scheme === 'mysql' || scheme === 'mariadb')) return { dialect: 'mysql', url: `mysql:${text.slice(scheme.length + 1)}` }
  return mistake(`'${redacted(text)}' is not a database URL: give file:path.db (or a path), postgres://… or mysql://… (mariadb://…)`)
}

/** A URL as a message shows it: without its password. */
export function redacted (text: string): string {
  return text.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/, '$1:***@')
}

const drivers = { sqlite: 'better-sqlite3', postgres: 'pg', mysql: 'mysql2' } satisfies Record<DatabaseLocation['dialect'], string>

/** The dialect's driver, imported by `load`; a missing one is a mistake naming the package to install. */
export async function importDriver<T> (dialect: DatabaseLocation['dialect'], load: () => Promise<T>): Promise<T | Mistake> {
  try {
    return await load()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      return mistake(`reading this database needs the driver ${drivers[dialect]}: install it beside fastify-expand`)
    }
    throw error
  }
}

async function open (location: DatabaseLocation): Promise<Kysely<any> | Mistake> {
  switch (location.dialect) {
    case 'sqlite': {
      const driver = await importDriver('sqlite', () => import('better-sqlite3'))
      if (isMistake(driver)) return driver
      const SQLite = driver.default
      try {
        // Read only, and never created: a mistyped path is an error, not a new empty database.
        return new Kysely({ dialect: new SqliteDialect({ database: new SQLite(location.path, { readonly: true, fileMustExist: true }) }) })
      } catch (error) {
        return mistake(`cannot open the SQLite database ${location.path}: ${(error as Error).message}`)
      }
    }
    case 'postgres': {
      const driver = await importDriver('postgres', () => import('pg'))
      if (isMistake(driver)) return driver
      const pg = driver.default
      return new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 1 }) }) })
    }
    case 'mysql': {
      const driver = await importDriver('mysql', () => import('mysql2'))
      if (isMistake(driver)) return driver
      const { createPool } = driver
      return new Kysely({ dialect: new MysqlDialect({ pool: createPool({ uri: location.url, connectionLimit: 1 }) }) })
    }
  }
}

const introspect = {
  sqlite: introspectSqlite,
  postgres: introspectPostgres,
  mysql: introspectMysql,
} satisfies Record<DatabaseLocation['dialect'], (db: Kysely<any>) => Promise<DatabaseModel>>

/** The model of the database at `location`; a connection or catalog failure is a mistake with the driver's message. */
export async function readDatabase (location: DatabaseLocation): Promise<DatabaseModel | Mistake> {
  const db = await open(location)
  if (isMistake(db)) return db
  try {
    return await introspect[location.dialect](db)
  } catch (error) {
    return mistake(`cannot read the database: ${(error as Error).message.split('\n')[0]}`)
  } finally {
    await db.destroy().catch(() => {})
  }
}
