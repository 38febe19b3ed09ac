// Why the loader is batched: one 100-row page of pets with expand=owner.employer,toys,
// loaded by the batched loader through a route, against one statement built with
// Kysely's JSON helpers. Run: npx tsx benchmarks/investigations/json-helpers-vs-batched.ts
// (with DATABASE_URL set, PostgreSQL too). Figures quoted in README.md, "Loading".
import Fastify from 'fastify'
import { Kysely, SqliteDialect, PostgresDialect, ParseJSONResultsPlugin, sql } from 'kysely'
import { jsonArrayFrom as sqliteArray, jsonObjectFrom as sqliteObject } from 'kysely/helpers/sqlite'
import { jsonArrayFrom as pgArray, jsonObjectFrom as pgObject } from 'kysely/helpers/postgres'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import expandPlugin from '../../plugin/index.js'
import { createTables, resources, seed, Pet } from '../../test/fixtures/tables.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run (name: string, db: Kysely<any>, helpers: any) {
  await createTables(db); await seed(db, 2000)
  const app = Fastify()
  await app.register(expandPlugin, { db, resources })
  app.expand.routes('/pets', Pet)
  await app.ready()
  const url = '/pets?limit=100&expand=owner.employer,toys'
  const json = (h: any) => db.selectFrom('pets').select((eb: any) => [
    'pets.id', 'pets.name', 'pets.species', 'pets.sold_from_id as sold_from',
    h.object(eb.selectFrom('people').select((eb2: any) => ['people.id', 'people.name', 'people.hobbies',
      h.object(eb2.selectFrom('companies').select(['companies.id', 'companies.name', 'companies.public']).whereRef('companies.id', '=', 'people.employer_id')).as('employer')])
      .whereRef('people.id', '=', 'pets.owner_id')).as('owner'),
    h.array(eb.selectFrom('toys').innerJoin('pet_toys', 'pet_toys.toy_id', 'toys.id').select(['toys.id', 'toys.name']).whereRef('pet_toys.pet_id', '=', 'pets.id').orderBy('toys.id')).as('toys'),
  ]).orderBy('pets.id').limit(100).execute()
  for (let i = 0; i < 50; i++) { await app.inject(url); await json(helpers) }
  const N = 300
  let t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) await app.inject(url)
  const batched = Number(process.hrtime.bigint() - t0) / N / 1e6
  t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) JSON.stringify(await json(helpers))
  const single = Number(process.hrtime.bigint() - t0) / N / 1e6
  console.log(name, 'batched route (load+serialize+inject) ms', batched.toFixed(3), '| one JSON statement (query+stringify only) ms', single.toFixed(3))
  await app.close()
}
await run('sqlite', new Kysely({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }), plugins: [new ParseJSONResultsPlugin()] }), { object: sqliteObject, array: sqliteArray })
if (process.env.DATABASE_URL) {
  const admin = new pg.Pool({ connectionString: process.env.DATABASE_URL })
  await admin.query('drop schema if exists json_vs_batched cascade; create schema json_vs_batched')
  await admin.end()
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const pdb = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, options: '-c search_path=json_vs_batched' }) }) })
  await run('postgres', pdb, { object: pgObject, array: pgArray })
  await sql.raw('drop schema json_vs_batched cascade').execute(pdb)
  await pdb.destroy()
}
