import type Database from 'better-sqlite3'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { namePreparedStatements } from '../../plugin/index.js'

/** The benchmarks' PostgreSQL, when DATABASE_URL names one (as for the test suite); undefined: the PostgreSQL cases are skipped. */
export const postgresUrl = process.env.DATABASE_URL === '' ? undefined : process.env.DATABASE_URL

/** Connections of the pool every PostgreSQL contender reads through (pg's default). */
export const poolSize = 10

/** The pets tables in a PostgreSQL schema of their own, and a pool reading them. */
export interface PetsPostgres {
  pool: pg.Pool
  /** A Kysely instance over `pool`, without plugins, as the README configures one. */
  db: Kysely<any>
  /** A Kysely instance over a pool of its own (as large) through `namePreparedStatements`. */
  namedDb: Kysely<any>
  /** Drops the schema and closes the pool. */
  close(): Promise<void>
}

const schemaSql = `
  CREATE TABLE companies (id integer PRIMARY KEY, name text NOT NULL, public boolean NOT NULL);
  CREATE TABLE people (id integer PRIMARY KEY, name text NOT NULL, hobbies text NOT NULL, employer_id integer NOT NULL REFERENCES companies(id), email text NOT NULL);
  CREATE TABLE pet_stores (id integer PRIMARY KEY, name text NOT NULL, address text NOT NULL);
  CREATE TABLE toys (id integer PRIMARY KEY, name text NOT NULL, secret text NOT NULL);
  CREATE TABLE pets (id integer PRIMARY KEY, name text NOT NULL, species text NOT NULL,
    owner_id integer NOT NULL REFERENCES people(id), sold_from_id integer REFERENCES pet_stores(id));
  CREATE TABLE pet_toys (pet_id integer NOT NULL REFERENCES pets(id), toy_id integer NOT NULL REFERENCES toys(id), PRIMARY KEY (pet_id, toy_id));
  CREATE INDEX people_employer ON people(employer_id);
  CREATE INDEX pets_owner ON pets(owner_id);
  CREATE INDEX pet_toys_toy ON pet_toys(toy_id, pet_id);
`

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
    await admin.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}; ${schemaSql}`)
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
  return {
    pool,
    db,
    namedDb,
    async close () {
      await db.destroy()
      await namedDb.destroy()
      const dropper = new pg.Client({ connectionString: url })
      await dropper.connect()
      await dropper.query(`DROP SCHEMA ${schema} CASCADE`)
      await dropper.end()
    },
  }
}
