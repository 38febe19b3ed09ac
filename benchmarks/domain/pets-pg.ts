import type Database from 'better-sqlite3'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { namePreparedStatements } from '../../plugin/index.js'
import { postgresDialect, resolveDialectAs } from '../../plugin/sql/dialects/index.js'
import { indexStatements, tableStatements } from '../../test/fixtures/tables.js'

/** The benchmarks' PostgreSQL, when DATABASE_URL names one (as for the test suite); undefined: the PostgreSQL cases are skipped. */
export const postgresUrl = process.env.DATABASE_URL === '' ? undefined : process.env.DATABASE_URL

/** Connections of the pool every PostgreSQL contender reads through (pg's default). */
export const poolSize = 10

/** The pets tables in a PostgreSQL schema of their own, and a pool reading them. */
export interface PetsPostgres {
  /** The schema holding the copy (the pools' search_path). */
  schema: string
  pool: pg.Pool
  /** A Kysely instance over `pool`, without plugins, as the README configures one. */
  db: Kysely<any>
  /** A Kysely instance over a pool of its own (as large) through `namePreparedStatements`. */
  namedDb: Kysely<any>
  /** A Kysely instance over a pool of its own (as large) loading level by level (`levelByLevel`). */
  levelDb: Kysely<any>
  /** A pool and Kysely instances over the same schema through 127.0.0.1:`port` (a proxy in front of the database). */
  through(port: number): PetsPostgresThrough
  /** Drops the schema and closes the pool. */
  close(): Promise<void>
}

/** The copy read through another port: the plugin loading in one wave, as on PostgreSQL, and level by level. */
export interface PetsPostgresThrough {
  pool: pg.Pool
  /** A Kysely instance over `pool`: PostgreSQL's dialect, relations sent with the page (one wave). */
  db: Kysely<any>
  /** A Kysely instance over `pool` resolved to PostgreSQL's dialect with `loadsInOneWave: false`: each level once its parents are read. */
  levelDb: Kysely<any>
  close(): Promise<void>
}

/** A Kysely instance over `pool` loading level by level on PostgreSQL (plugin/sql/dialects/postgres.ts loads in one wave). */
export function levelByLevel (pool: pg.Pool): Kysely<any> {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  resolveDialectAs(db, Object.freeze({ ...postgresDialect, loadsInOneWave: false }))
  return db
}

/**
 * The tests' pets tables and the benchmark's indexes (test/fixtures/tables.ts,
 * as the SQLite database has them), compiled for PostgreSQL.
 */
function schemaSql (): string {
  const builder = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) })
  return [...tableStatements(builder), ...indexStatements(builder)].map((statement) => `${statement.compile().sql};`).join('\n')
}

const tables = ['companies', 'people', 'pet_stores', 'toys', 'pets', 'pet_toys'] as const

/**
 * The rows of the SQLite pets database copied into a new schema of the
 * PostgreSQL at `url` (the same data, so the bodies are byte-identical),
 * analysed so that the planner knows the tables' sizes.
 */
export async function copyPetsToPostgres (database: Database.Database, url: string): Promise<PetsPostgres> {
  const schema = `fx_bench_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}; ${schemaSql()}`)
    for (const table of tables) {
      const rows = database.prepare(`SELECT * FROM ${table}`).raw(true).all() as unknown[][]
      const columns = database.prepare(`SELECT * FROM ${table} LIMIT 0`).columns().map((column) => column.name)
      const booleans = new Set(table === 'companies' ? ['public'] : [])
      for (let start = 0; start < rows.length; start += 1_000) {
        const batch = rows.slice(start, start + 1_000)
        const values: unknown[] = []
        const tuples = batch.map((row) => `(${row.map((value, index) => {
          values.push(booleans.has(columns[index]!) ? value === 1 : value)
          return `$${values.length}`
        }).join(', ')})`)
        await admin.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, values)
      }
    }
    await admin.query('ANALYZE')
  } finally {
    await admin.end()
  }
  const newPool = () => new pg.Pool({ connectionString: url, max: poolSize, options: `-c search_path=${schema}` })
  const pool = newPool()
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  const namedDb = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(newPool()) }) })
  const levelDb = levelByLevel(newPool())
  return {
    schema,
    pool,
    db,
    namedDb,
    levelDb,
    through (port) {
      const address = new URL(url)
      address.hostname = '127.0.0.1'
      address.port = String(port)
      const pool = new pg.Pool({ connectionString: address.href, max: poolSize, options: `-c search_path=${schema}` })
      // Both Kysely instances hold nothing but the pool: ending it closes them.
      const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
      return { pool, db, levelDb: levelByLevel(pool), close: async () => await pool.end() }
    },
    async close () {
      await db.destroy()
      await namedDb.destroy()
      await levelDb.destroy()
      const dropper = new pg.Client({ connectionString: url })
      await dropper.connect()
      await dropper.query(`DROP SCHEMA ${schema} CASCADE`)
      await dropper.end()
    },
  }
}
