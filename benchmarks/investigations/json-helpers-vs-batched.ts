// Why the loader is batched: one 100-row page of pets with expand=owner.employer,toys,
// loaded by the batched loader through a route, against one statement built with
// Kysely's JSON helpers. Run: npx tsx benchmarks/investigations/json-helpers-vs-batched.ts
// (with DATABASE_URL set, PostgreSQL too), on the test suite's dialects. Figures quoted in README.md, "Loading".
import Fastify from 'fastify'
import { ParseJSONResultsPlugin, type Kysely } from 'kysely'
import { jsonArrayFrom as sqliteArray, jsonObjectFrom as sqliteObject } from 'kysely/helpers/sqlite'
import { jsonArrayFrom as pgArray, jsonObjectFrom as pgObject } from 'kysely/helpers/postgres'
import expandPlugin from '../../plugin/index.js'
import { dialects } from '../../test/fixtures/dialects.js'
import { createTables, resources, seed, Pet } from '../../test/fixtures/tables.js'

async function run (name: string, db: Kysely<any>, helpers: any) {
  await createTables(db); await seed(db, 2000)
  const app = Fastify()
  await app.register(expandPlugin, { db, resources })
  app.expand.routes('/pets', Pet)
  await app.ready()
  const url = '/pets?limit=100&expand=owner.employer,toys'
  // The JSON statement's plugin on its own instance: on the plugin's, any Kysely plugin turns statement reuse off.
  const jsonDb = db.withPlugin(new ParseJSONResultsPlugin())
  const json = (h: any) => jsonDb.selectFrom('pets').select((eb: any) => [
    'pets.id', 'pets.name', 'pets.species', 'pets.sold_from_id as sold_from',
    h.object(eb.selectFrom('people').select((eb2: any) => ['people.id', 'people.name', 'people.hobbies',
      h.object(eb2.selectFrom('companies').select(['companies.id', 'companies.name', 'companies.public'])
        .whereRef('companies.id', '=', 'people.employer_id')).as('employer')])
      .whereRef('people.id', '=', 'pets.owner_id')).as('owner'),
    h.array(eb.selectFrom('toys').innerJoin('pet_toys', 'pet_toys.toy_id', 'toys.id').select(['toys.id', 'toys.name'])
      .whereRef('pet_toys.pet_id', '=', 'pets.id').orderBy('toys.id')).as('toys'),
  ]).orderBy('pets.id').limit(100).execute()
  for (let i = 0; i < 50; i++) { await app.inject(url); await json(helpers) }
  const N = 300
  let t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) await app.inject(url)
  const batched = Number(process.hrtime.bigint() - t0) / N / 1e6
  t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) JSON.stringify(await json(helpers))
  const single = Number(process.hrtime.bigint() - t0) / N / 1e6
  console.log(name, 'batched route (load+serialize+inject) ms', batched.toFixed(3),
    '| one JSON statement (query+stringify only) ms', single.toFixed(3))
  await app.close()
}
for (const dialect of dialects()) {
  const database = await dialect.open()
  const helpers = dialect.name === 'postgres' ? { object: pgObject, array: pgArray } : { object: sqliteObject, array: sqliteArray }
  await run(dialect.name, database.db, helpers)
  await database.close()
}
