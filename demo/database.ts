import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely'
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
  /** A PostgreSQL connection string; when absent, SQLite is used. */
  databaseUrl?: string
  /** The SQLite file (default `demo.db`); `':memory:'` for a private in-memory database. */
  sqliteFile?: string
  /**
   * PostgreSQL: the `statement_timeout` each connection asks for, in milliseconds (default 2,000; 0: none).
   * PgBouncer refuses it as a startup parameter: behind it, set it for the role or the database instead
   * (`alter role app set statement_timeout = '2s'`) and give 0 here.
   */
  statementTimeoutMs?: number
}

export function connect (settings: DatabaseSettings = {}): DemoDatabase {
  if (settings.databaseUrl !== undefined && settings.databaseUrl !== '') {
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
  const database = new SQLite(file)
  if (file !== ':memory:') database.pragma('journal_mode = WAL')
  // Each SQL text prepared once, rows built by a compiled function: see docs/performance.md.
  return new Kysely<DemoTables>({ dialect: new SqliteDialect({ database: cachePreparedStatements(database) }) })
}

/** Creates the tables when they do not exist, with the schema builder so both dialects get the same DDL. */
export async function createTables (db: DemoDatabase): Promise<void> {
  await db.schema.createTable('companies').ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('public', 'boolean', (column) => column.notNull())
    .addColumn('founded', 'integer', (column) => column.notNull())
    .execute()
  await db.schema.createTable('people').ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('hobbies', 'text', (column) => column.notNull())
    .addColumn('employer_id', 'integer', (column) => column.references('companies.id'))
    .addColumn('password_hash', 'text', (column) => column.notNull())
    .execute()
  await db.schema.createTable('pet_stores').ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('city', 'text', (column) => column.notNull())
    .execute()
  await db.schema.createTable('toys').ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('price_cents', 'integer', (column) => column.notNull())
    .addColumn('maker_id', 'integer', (column) => column.notNull().references('companies.id'))
    .execute()
  await db.schema.createTable('vets').ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('specialty', 'text', (column) => column.notNull())
    .execute()
  await db.schema.createTable('pets').ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('species', 'text', (column) => column.notNull())
    .addColumn('born_on', 'text', (column) => column.notNull())
    .addColumn('owner_id', 'integer', (column) => column.notNull().references('people.id'))
    .addColumn('sold_from_id', 'integer', (column) => column.references('pet_stores.id'))
    .execute()
  await db.schema.createTable('pet_toys').ifNotExists()
    .addColumn('pet_id', 'integer', (column) => column.notNull().references('pets.id'))
    .addColumn('toy_id', 'integer', (column) => column.notNull().references('toys.id'))
    .addPrimaryKeyConstraint('pet_toys_pkey', ['pet_id', 'toy_id'])
    .execute()
  await db.schema.createTable('visits').ifNotExists()
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
  for (const [name, table, column] of indexes) {
    await db.schema.createIndex(name).ifNotExists().on(table).column(column).execute()
  }
}

/** A cheap query proving the connection works, for `/health`. */
export async function ping (db: DemoDatabase): Promise<void> {
  await sql`select 1`.execute(db)
}
