import SQLite from 'better-sqlite3'
import { CompiledQuery, Kysely, MysqlAdapter, MysqlDialect, PostgresDialect, SqliteDialect, sql, type DatabaseConnection } from 'kysely'
import { createPool } from 'mysql2'
import pg from 'pg'
import { cachePreparedStatements } from '../plugin/index.js'

/** The demo's tables, as Kysely sees them. */
export interface DemoTables {
  companies: { id: number; name: string; public: boolean | number; founded: number }
  people: { id: number; name: string; email: string; hobbies: string; employer_id: number | null; password_hash: string }
  pet_stores: { id: number; name: string; city: string }
  toys: { id: number; name: string; price_cents: number; maker_id: number }
  vets: { id: number; name: string; specialty: string }
  pets: { id: number; name: string; species: string; born_on: string; owner_id: number; sold_from_id: number | null }
  pet_toys: { pet_id: number; toy_id: number }
  visits: { id: number; visited_on: string; reason: string; pet_id: number; vet_id: number }
}

export type DemoDatabase = Kysely<DemoTables>

export interface DatabaseSettings {
  /** A PostgreSQL (`postgres://`) or MariaDB/MySQL (`mysql://`, `mariadb://`) connection string; when absent, SQLite is used. */
  databaseUrl?: string
  /** The SQLite file (default `demo.db`); `':memory:'` for a private in-memory database. */
  sqliteFile?: string
  /**
   * PostgreSQL: the `statement_timeout` each connection asks for, in milliseconds (default 2,000; 0: none);
   * MariaDB: `max_statement_time`, MySQL: `max_execution_time`, the same limit.
   * PgBouncer refuses it as a startup parameter: behind it, set it for the role or the database instead
   * (`alter role app set statement_timeout = '2s'`) and give 0 here.
   */
  statementTimeoutMs?: number
}

/** Which database a connection string names: MariaDB or MySQL by its scheme, PostgreSQL otherwise. */
export function databaseOf (databaseUrl: string | undefined): 'SQLite' | 'PostgreSQL' | 'MariaDB/MySQL' {
  if (databaseUrl === undefined || databaseUrl === '') return 'SQLite'
  return /^(mysql|mariadb):/.test(databaseUrl) ? 'MariaDB/MySQL' : 'PostgreSQL'
}

export function connect (settings: DatabaseSettings = {}): DemoDatabase {
  const database = databaseOf(settings.databaseUrl)
  if (database === 'MariaDB/MySQL') return connectMysql(settings.databaseUrl!, settings.statementTimeoutMs ?? 2000)
  if (database === 'PostgreSQL') {
    // A timestamp without time zone is UTC wall-clock time, whatever the process's TZ (docs/guarantees.md, dates and times).
    pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, (text) => new Date(`${text.replace(' ', 'T')}Z`))
    // statement_timeout: PostgreSQL cancels any statement running longer (a request answers 503), so one costly
    // request (a substring search over long texts) cannot hold a connection for long. See docs/operations.md, Statement timeouts.
    const timeout = settings.statementTimeoutMs ?? 2000
    const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 10, ...(timeout > 0 ? { statement_timeout: timeout } : {}) })
    // A broken connection is reported as 'error' (idle: on the pool; in use: on its client): without a
    // listener the process would exit. The query in flight is rejected and answered with a 503.
    pool.on('error', (error) => console.error(`database connection lost: ${error.message}`))
    pool.on('connect', (client) => client.on('error', (error) => console.error(`database connection lost: ${error.message}`)))
    return new Kysely<DemoTables>({ dialect: new PostgresDialect({ pool }) })
  }
  const file = settings.sqliteFile ?? 'demo.db'
  const sqlite = new SQLite(file)
  if (file !== ':memory:') sqlite.pragma('journal_mode = WAL')
  // Each SQL text prepared once, rows built by a compiled function: see docs/performance.md.
  return new Kysely<DemoTables>({ dialect: new SqliteDialect({ database: cachePreparedStatements(sqlite) }) })
}

/**
 * MariaDB or MySQL through mysql2's pool, set as docs/databases.md asks: date-times in UTC (the pool's and
 * the session's zone), DATE as its text, BIGINT beyond 2^53 as text. The demo's tables use the binary
 * collation (createTables), so text compares and sorts as on SQLite and PostgreSQL.
 */
function connectMysql (databaseUrl: string, timeoutMs: number): DemoDatabase {
  const url = new URL(databaseUrl)
  url.protocol = 'mysql:'
  // The text protocol: over prepareMysqlStatements the plugin's pages measured slower (docs/performance.md).
  const pool = createPool({ uri: url.href, connectionLimit: 10, supportBigNumbers: true, timezone: 'Z', dateStrings: true })
  pool.on('connection', (connection) => connection.on('error', (error) => console.error(`database connection lost: ${error.message}`)))
  const onCreateConnection = async (connection: DatabaseConnection): Promise<void> => {
    await connection.executeQuery(CompiledQuery.raw("set time_zone = '+00:00'"))
    if (timeoutMs === 0) return
    // MariaDB's max_statement_time (seconds) limits every statement; MySQL 8 has max_execution_time (milliseconds, SELECT only).
    try {
      await connection.executeQuery(CompiledQuery.raw(`set session max_statement_time = ${timeoutMs / 1000}`))
    } catch {
      await connection.executeQuery(CompiledQuery.raw(`set session max_execution_time = ${timeoutMs}`))
    }
  }
  return new Kysely<DemoTables>({ dialect: new MysqlDialect({ pool, onCreateConnection }) })
}

/** Whether the database is MariaDB or MySQL, whose tables and indexes the demo writes a little differently. */
function isMysql (db: DemoDatabase): boolean {
  return db.getExecutor().adapter instanceof MysqlAdapter
}

/**
 * The collation comparing and ordering text by its bytes, trailing spaces included (NO PAD), as SQLite and
 * PostgreSQL's C collation do: MariaDB's `utf8mb4_nopad_bin`, MySQL 8's `utf8mb4_0900_bin` (`utf8mb4_bin`
 * pads, so 'a' = 'a ').
 */
async function binaryCollation (db: DemoDatabase): Promise<string> {
  const { rows } = await sql<{ version: string }>`select version() as version`.execute(db)
  return /mariadb/i.test(rows[0]?.version ?? '') ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin'
}

/** Creates the tables when they do not exist, with the schema builder so every dialect gets the same DDL. */
export async function createTables (db: DemoDatabase): Promise<void> {
  // MariaDB's and MySQL's default collations ignore case and accents: text compares and sorts by its bytes instead, as elsewhere.
  const collation = isMysql(db) ? await binaryCollation(db) : undefined
  const createTable = (name: keyof DemoTables) => {
    const table = db.schema.createTable(name).ifNotExists()
    return collation === undefined ? table : table.modifyEnd(sql`character set utf8mb4 collate ${sql.raw(collation)}`)
  }
  await createTable('companies')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('public', 'boolean', (column) => column.notNull())
    .addColumn('founded', 'integer', (column) => column.notNull())
    .execute()
  await createTable('people')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('hobbies', 'text', (column) => column.notNull())
    .addColumn('employer_id', 'integer', (column) => column.references('companies.id'))
    .addColumn('password_hash', 'text', (column) => column.notNull())
    .execute()
  await createTable('pet_stores')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('city', 'text', (column) => column.notNull())
    .execute()
  await createTable('toys')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('price_cents', 'integer', (column) => column.notNull())
    .addColumn('maker_id', 'integer', (column) => column.notNull().references('companies.id'))
    .execute()
  await createTable('vets')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('specialty', 'text', (column) => column.notNull())
    .execute()
  await createTable('pets')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('species', 'text', (column) => column.notNull())
    .addColumn('born_on', 'text', (column) => column.notNull())
    .addColumn('owner_id', 'integer', (column) => column.notNull().references('people.id'))
    .addColumn('sold_from_id', 'integer', (column) => column.references('pet_stores.id'))
    .execute()
  await createTable('pet_toys')
    .addColumn('pet_id', 'integer', (column) => column.notNull().references('pets.id'))
    .addColumn('toy_id', 'integer', (column) => column.notNull().references('toys.id'))
    .addPrimaryKeyConstraint('pet_toys_pkey', ['pet_id', 'toy_id'])
    .execute()
  await createTable('visits')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('visited_on', 'text', (column) => column.notNull())
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('pet_id', 'integer', (column) => column.notNull().references('pets.id'))
    .addColumn('vet_id', 'integer', (column) => column.notNull().references('vets.id'))
    .execute()
}

/** Indexes on the keys relations are loaded by; created after seeding, which is faster. */
export async function createIndexes (db: DemoDatabase): Promise<void> {
  const indexes: Array<[name: string, table: keyof DemoTables, column: string]> = [
    ['people_employer_id_idx', 'people', 'employer_id'],
    ['toys_maker_id_idx', 'toys', 'maker_id'],
    ['pets_owner_id_idx', 'pets', 'owner_id'],
    ['pets_sold_from_id_idx', 'pets', 'sold_from_id'],
    ['pet_toys_toy_id_idx', 'pet_toys', 'toy_id'],
    ['visits_pet_id_idx', 'visits', 'pet_id'],
    ['visits_vet_id_idx', 'visits', 'vet_id'],
  ]
  // MySQL has no CREATE INDEX IF NOT EXISTS (MariaDB has); the demo creates its indexes once, after seeding.
  const ifNotExists = !isMysql(db)
  for (const [name, table, column] of indexes) {
    const index = db.schema.createIndex(name)
    await (ifNotExists ? index.ifNotExists() : index).on(table).column(column).execute()
  }
}

/** A cheap query proving the connection works, for `/health`. */
export async function ping (db: DemoDatabase): Promise<void> {
  await sql`select 1`.execute(db)
}
