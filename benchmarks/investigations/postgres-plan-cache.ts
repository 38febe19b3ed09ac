// What PostgreSQL spends on the page's combined statement (plugin/sql/combined-statements.ts) by how it plans it:
// the statement of `GET /pets?limit=100&offset=0&expand=owner.employer,toys`, captured from the route once its types
// are learnt, with the keys declared integers (the suite's resources) and declared strings (`Type.String()` over the
// same integer columns: read as their text, docs/databases.md, "Wide keys"). Each runs named through pg, one after
// another, the two alternating in rounds, under `plan_cache_mode = auto` (PostgreSQL's default: it plans the statement
// again on every execution while it judges its generic plan costlier than a custom one) and `force_generic_plan`;
// medians of PostgreSQL's CPU per execution (/proc of its processes, Linux).
// Run: DATABASE_URL=postgres://... npx tsx benchmarks/investigations/postgres-plan-cache.ts [pets]
// Figures quoted in benchmarks/profile-notes.md, "Keys declared strings, and PostgreSQL's plan cache".
import { Type } from '@sinclair/typebox'
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely'
import { defineResource, type AnyResource } from '../../plugin/index.js'
import { buildApp } from '../../test/helpers/app.js'
import { createPetsDatabase, defaultSize, petResources } from '../domain/pets-db.js'
import { copyPetsToPostgres, postgresUrl } from '../domain/pets-pg.js'
import { postgresCpuMs } from '../domain/postgres-cpu.js'

if (postgresUrl === undefined) throw new Error('set DATABASE_URL')
const size = { ...defaultSize, pets: Number(process.argv[2] ?? defaultSize.pets) }
const pets = await copyPetsToPostgres(createPetsDatabase(size), postgresUrl)

// The suite's resources with every key declared a string.
const key = Type.String()
const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: Type.Object({ id: key, name: Type.String(), public: Type.Boolean() }),
  fields: ['name', 'public'],
})
const Person = defineResource({
  name: 'Person',
  table: 'people',
  schema: Type.Object({ id: key, name: Type.String(), hobbies: Type.String(), employer: key }),
  fields: ['id', 'name', 'hobbies'],
  expandable: { employer: [Company, { column: 'employer_id' }] },
})
const PetStore = defineResource({
  name: 'PetStore',
  table: 'pet_stores',
  schema: Type.Object({ id: key, name: Type.String(), address: Type.String() }),
  fields: ['id', 'name', 'address'],
})
const Toy = defineResource({
  name: 'Toy',
  table: 'toys',
  schema: Type.Object({ id: key, name: Type.String(), secret: Type.String() }),
  fields: ['id', 'name', 'secret'],
})
const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: Type.Object({
    id: key, name: Type.String(), species: Type.String(), owner: key, sold_from: Type.Union([key, Type.Null()]), toys: Type.Array(key),
  }),
  fields: ['id', 'name', 'species', 'owner', 'sold_from', 'toys'],
  expandable: {
    owner: [Person, { column: 'owner_id' }],
    sold_from: [PetStore, { column: 'sold_from_id', fields: ['id', 'name'] }],
    toys: [Toy, { many: true, omit: ['secret'], through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
  },
})

/** The page's statement as the route sends it once its columns' types are learnt (its third request). */
async function pageStatement (resources: AnyResource[]): Promise<CompiledQuery<unknown>> {
  let sent: CompiledQuery<unknown> | undefined
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: pets.pool }), log: (event) => { sent = event.query } })
  const app = await buildApp({ db, resources }, (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: 100 }))
  for (let request = 0; request < 3; request++) await app.inject('/pets?limit=100&offset=0&expand=owner.employer,toys')
  await app.close()
  if (sent === undefined || !sent.sql.startsWith('with "__expand_source_0"')) throw new Error(`expected one statement: ${sent?.sql}`)
  return sent
}
const statements = {
  'keys declared integers': await pageStatement(petResources),
  'keys declared strings': await pageStatement([Company, Person, PetStore, Toy, Pet]),
}

const client = await pets.pool.connect()
const perRound = 200
for (const mode of ['auto', 'force_custom_plan', 'force_generic_plan']) {
  await client.query(`set plan_cache_mode = ${mode}`)
  const cpu = new Map<string, number[]>()
  for (let round = 0; round < 7; round++) {
    for (const [name, { sql, parameters }] of Object.entries(statements)) {
      const before = postgresCpuMs()
      for (let index = 0; index < perRound; index++) {
        await client.query({ name: `${mode} ${name}`, text: sql, values: parameters as unknown[] })
      }
      cpu.set(name, [...(cpu.get(name) ?? []), (postgresCpuMs() - before) * 1000 / perRound])
    }
  }
  for (const [name, values] of cpu) {
    const median = values.sort((a, b) => a - b)[values.length >> 1]!
    console.log(`${mode.padEnd(18)} ${name.padEnd(24)} ${median.toFixed(0).padStart(5)} µs of PostgreSQL's CPU (median of 7 rounds of ${perRound})`)
  }
}
client.release()
await pets.close()
