import type Database from 'better-sqlite3'
import { CompiledQuery, Kysely, MysqlDialect } from 'kysely'
import { createPool, type Pool } from 'mysql2'
import { createConnection } from 'mysql2/promise'
import { prepareMysqlStatements } from '../../plugin/index.js'
import { indexStatements, tableStatements } from '../../test/fixtures/tables.js'
import { poolSize } from './pets-pg.js'

/** The benchmarks' MariaDB (or MySQL), when MARIADB_URL names one (as for the test suite); undefined: the MariaDB case is skipped. */
export const mariadbUrl = process.env.MARIADB_URL === '' ? undefined : process.env.MARIADB_URL

/** The pets tables in a MariaDB database of their own, and a pool reading them. */
export interface PetsMariadb {
  /** A mysql2 pool of `poolSize` connections (as large as the PostgreSQL contenders'), set as the tests set theirs. */
  pool: Pool
  /** A Kysely instance over `pool` (MysqlDialect), without plugins, as the README configures one. */
  db: Kysely<any>
  /** A Kysely instance over a pool of its own (as large) through `prepareMysqlStatements`. */
  preparedDb: Kysely<any>
  /** Closes the pool and drops the database. */
  close(): Promise<void>
}

/**
 * The tests' pets tables and the benchmark's indexes (test/fixtures/tables.ts,
 * as the SQLite database has them), compiled for MySQL.
 */
function schemaStatements (): string[] {
  const builder = new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool({}) }) })
  return [...tableStatements(builder), ...indexStatements(builder)].map((statement) => statement.compile().sql)
}

const tables = ['companies', 'people', 'pet_stores', 'toys', 'pets', 'pet_toys'] as const

/**
 * The rows of the SQLite pets database copied into a new database of the
 * server at `url` (the same data, so the bodies are byte-identical), its
 * collation utf8mb4_nopad_bin (text compares and orders by its bytes, as on
 * SQLite and PostgreSQL's C collation), its tables analysed.
 */
export async function copyPetsToMariadb (database: Database.Database, url: string): Promise<PetsMariadb> {
  const target = new URL(url)
  const name = `fx_bench_${process.pid}_${Date.now()}`
  const admin = await createConnection(target.href)
  try {
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`)
    await admin.query(`USE \`${name}\``)
    for (const statement of schemaStatements()) await admin.query(statement)
    for (const table of tables) {
      // Booleans stay 1 and 0: MariaDB's BOOLEAN is a TINYINT(1).
      const rows = database.prepare(`SELECT * FROM ${table}`).raw(true).all() as unknown[][]
      const columns = database.prepare(`SELECT * FROM ${table} LIMIT 0`).columns().map((column) => column.name)
      for (let start = 0; start < rows.length; start += 1_000) {
        await admin.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ?`, [rows.slice(start, start + 1_000)])
      }
    }
    await admin.query(`ANALYZE TABLE ${tables.join(', ')}`)
  } finally {
    await admin.end()
  }
  target.pathname = `/${name}`
  const newPool = () => createPool({
    uri: target.href,
    connectionLimit: poolSize,
    supportBigNumbers: true,
    timezone: 'Z',
    dateStrings: true,
  })
  const over = (pool: Pool) => new Kysely<any>({
    dialect: new MysqlDialect({
      pool,
      onCreateConnection: async (connection) => { await connection.executeQuery(CompiledQuery.raw("SET time_zone = '+00:00'")) },
    }),
  })
  const pool = newPool()
  const db = over(pool)
  const preparedDb = over(prepareMysqlStatements(newPool()))
  return {
    pool,
    db,
    preparedDb,
    async close () {
      // Kysely's destroy ends the pool.
      await db.destroy()
      await preparedDb.destroy()
      const dropper = await createConnection(url)
      await dropper.query(`DROP DATABASE \`${name}\``)
      await dropper.end()
    },
  }
}
