// Opens the database `fastify-expand pull` reads, through Kysely and the
// dialect's driver. The drivers are optional peers of the package: each is
// imported only when its dialect is asked for.

import { fileURLToPath } from 'node:url'
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely'
import type { DatabaseModel } from './model.js'
import { introspectMysql } from './mysql.js'
import { introspectPostgres } from './postgres.js'
import { introspectSqlite } from './sqlite.js'

/** A mistake of the command line or its environment: printed as one line, never with a stack. */
export class PullError extends Error {}

/** Where to read: a SQLite file, or a server's URL. */
export type DatabaseLocation =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | { readonly dialect: 'postgres'; readonly url: string }
  | { readonly dialect: 'mysql'; readonly url: string }

/** `file:path.db`, `file:///abs/path.db`, a bare path, `postgres://`, `postgresql://`, `mysql://` or `mariadb://`. */
export function databaseLocation (text: string): DatabaseLocation {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase()
  if (scheme === undefined || /^[A-Za-z]:[\\/]/.test(text)) return { dialect: 'sqlite', path: text }
  if (scheme === 'file') {
    try {
      return { dialect: 'sqlite', path: text.startsWith('file://') ? fileURLToPath(text) : decodeURIComponent(text.slice('file:'.length)) }
    } catch {
      throw new PullError(`'${text}' is not a file URL`)
    }
  }
  const valid = URL.canParse(text)
  if (valid && (scheme === 'postgres' || scheme === 'postgresql')) return { dialect: 'postgres', url: text }
  if (valid && (scheme === 'mysql' || scheme === 'mariadb')) return { dialect: 'mysql', url: `mysql:${text.slice(scheme.length + 1)}` }
  throw new PullError(`'${redacted(text)}' is not a database URL: give file:path.db (or a path), postgres://… or mysql://… (mariadb://…)`)
}

/** A URL as a message shows it: without its password. */
export function redacted (text: string): string {
  return text.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/, '$1:***@')
}

const drivers = { sqlite: 'better-sqlite3', postgres: 'pg', mysql: 'mysql2' } satisfies Record<DatabaseLocation['dialect'], string>

/** The dialect's driver, imported by `load`; a missing one is a PullError naming the package to install. */
export async function importDriver<T> (dialect: DatabaseLocation['dialect'], load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new PullError(`reading this database needs the driver ${drivers[dialect]}: install it beside fastify-expand`)
    }
    throw error
  }
}

async function open (location: DatabaseLocation): Promise<Kysely<any>> {
  switch (location.dialect) {
    case 'sqlite': {
      const { default: SQLite } = await importDriver('sqlite', () => import('better-sqlite3'))
      try {
        // Read only, and never created: a mistyped path is an error, not a new empty database.
        return new Kysely({ dialect: new SqliteDialect({ database: new SQLite(location.path, { readonly: true, fileMustExist: true }) }) })
      } catch (error) {
        throw new PullError(`cannot open the SQLite database ${location.path}: ${(error as Error).message}`)
      }
    }
    case 'postgres': {
      const { default: pg } = await importDriver('postgres', () => import('pg'))
      return new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 1 }) }) })
    }
    case 'mysql': {
      const { createPool } = await importDriver('mysql', () => import('mysql2'))
      return new Kysely({ dialect: new MysqlDialect({ pool: createPool({ uri: location.url, connectionLimit: 1 }) }) })
    }
  }
}

const introspect = {
  sqlite: introspectSqlite,
  postgres: introspectPostgres,
  mysql: introspectMysql,
} satisfies Record<DatabaseLocation['dialect'], (db: Kysely<any>) => Promise<DatabaseModel>>

/** The model of the database at `location`; a connection or catalog failure is a PullError with the driver's message. */
export async function readDatabase (location: DatabaseLocation): Promise<DatabaseModel> {
  const db = await open(location)
  try {
    return await introspect[location.dialect](db)
  } catch (error) {
    throw new PullError(`cannot read the database: ${(error as Error).message.split('\n')[0]}`)
  } finally {
    await db.destroy().catch(() => {})
  }
}
