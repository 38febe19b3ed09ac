import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, namePreparedStatements, pipelineStatements } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Company, PetStore, Toy, openSeeded, resources } from '../fixtures/tables.js'
import { schemas } from '../fixtures/pets.js'

// pipelineStatements: on a pool of pipeline-mode clients (pg 8.23), each request's load sends all its
// statements to one connection, none waiting for the one before; what is answered does not change.

t.test('a pool whose clients do not run in pipeline mode is refused', async (t) => {
  const pool = new pg.Pool()
  t.teardown(() => pool.end())
  t.throws(() => pipelineStatements(pool), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: "pipelineStatements: the pool's clients must run in pipeline mode: new pg.Pool({ ..., pipeline: true }), pg 8.23 or later",
  })
})

const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: Type.Object({ ...schemas.Pet.properties, keeper: Type.Integer() }),
  fields: ['id', 'name', 'species', 'owner', 'sold_from', 'toys'],
  columns: { owner: 'owner_id', sold_from: 'sold_from_id' },
  expandable: {
    owner: 'people.Person',
    sold_from: ['PetStore', { fields: ['id', 'name'] }],
    toys: ['Toy', { many: true, omit: ['secret'], through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
    // A relation resolved by the application's function, which reads in a transaction of its own.
    keeper: ['people.Person', {
      load: async (keys, { request }) => {
        const db = (request.server as FastifyInstance & { testDb: Kysely<any> }).testDb
        const rows = await db.transaction().execute(async (trx) =>
          await trx.selectFrom('people').select(['id', 'name', 'employer_id as employer']).where('id', '=', 1).execute())
        return new Map(keys.map((key) => [key, rows[0] ?? null]))
      },
      column: 'owner_id',
    }],
  },
})

const Person = defineResource({
  name: 'Person',
  namespace: 'people',
  table: 'people',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), employer: Type.Union([Type.Integer(), Type.Null()]) }),
  fields: ['id', 'name', 'employer'],
  expandable: { employer: ['Company', { column: 'employer_id' }] },
})

async function build (db: Kysely<any>): Promise<FastifyInstance> {
  const app = Fastify()
  app.decorate('testDb', db)
  await app.register(expandPlugin, { db, resources: [Company, Person, Pet, PetStore, Toy] })
  app.expand.routes('/pets', Pet)
  app.get('/handler', { expandable: { resource: Pet, list: true } }, async (request) =>
    await app.expand.load(request, await db.selectFrom('pets').select(['id', 'name', 'species', 'owner_id as owner', 'sold_from_id as sold_from']).orderBy('id').execute()))
  await app.ready()
  return app
}

/**
 * A pool of pipeline-mode clients on the test's schema, counting the connections it hands out, and a Kysely
 * instance over it through pipelineStatements (and namePreparedStatements, when `named`).
 */
async function pipelinedDb (t: Test, database: TestDatabase, named: boolean) {
  const [{ schema }] = (await database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('schema')).execute()) as [{ schema: string }]
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, options: `-c search_path=${schema}`, pipeline: true } as pg.PoolConfig)
  const counted = { connections: 0, statements: [] as string[] }
  const connect = pool.connect.bind(pool)
  pool.connect = (async () => {
    counted.connections++
    const client = await connect()
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    client.query = ((...args: unknown[]) => {
      const first = args[0] as string | { text: string }
      counted.statements.push(typeof first === 'string' ? first : first.text)
      return query(...args)
    }) as typeof client.query
    return client
  }) as typeof pool.connect
  const wrapped = pipelineStatements(pool)
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: named ? namePreparedStatements(wrapped) : wrapped }) })
  t.teardown(() => db.destroy())
  return { db, counted }
}

const urls = [
  '/pets?expand=owner.employer,toys,sold_from',
  '/pets?limit=2&offset=1&expand=owner.employer,toys',
  '/pets?limit=2&offset=10&expand=owner',
  '/pets?expand=toys&fields=id,toys.name',
  '/pets/1?expand=owner.employer,toys',
  '/pets/99?expand=owner',
  '/pets/2147483648?expand=owner.employer,toys',
  '/pets?expand=keeper,owner&fields=id,keeper,owner',
  '/handler?expand=owner.employer,toys',
]

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  for (const named of [false, true]) {
    t.test(`pipelined statements on ${dialect.name}${named ? ' (namePreparedStatements outside)' : ''}`, async (t) => {
      const database = await openSeeded(t, dialect)
      const { db, counted } = await pipelinedDb(t, database, named)
      const [plain, pipelined] = [await build(database.db), await build(db)]
      t.teardown(() => Promise.all([plain.close(), pipelined.close()]))

      t.test('the bodies of a pool of its own', async (t) => {
        for (const round of [1, 2, 3]) {
          for (const url of urls) {
            const [expected, response] = [await plain.inject(url), await pipelined.inject(url)]
            t.same({ status: response.statusCode, body: response.body }, { status: expected.statusCode, body: expected.body }, `${url} (${round})`)
          }
        }
        const concurrent = await Promise.all(urls.map(async (url) => (await pipelined.inject(url)).body))
        const one = await Promise.all(urls.map(async (url) => (await plain.inject(url)).body))
        t.same(concurrent, one, 'requests at the same time, each on a connection of its own')
      })

      t.test('a request\'s statements on one connection', async (t) => {
        counted.connections = 0
        counted.statements.length = 0
        const response = await pipelined.inject('/pets?limit=2&expand=owner.employer,toys')
        t.equal(response.statusCode, 200)
        t.equal(counted.statements.length, 5, 'the page, its count and three relation statements')
        t.equal(counted.connections, 1, 'all on one connection')
        counted.connections = 0
        t.equal((await pipelined.inject('/handler?expand=owner.employer,toys')).statusCode, 200)
        // The handler's own statement runs outside the load (a connection of its own), the load's relations on one.
        t.equal(counted.connections, 2)
      })

      t.test('a relation\'s function opens its transaction on a connection of its own', async (t) => {
        counted.connections = 0
        counted.statements.length = 0
        const response = await pipelined.inject('/pets?limit=2&expand=keeper,owner&fields=id,keeper,owner')
        t.equal(response.statusCode, 200)
        t.same(response.json().data.map((pet: { keeper: { id: number } }) => pet.keeper.id), [1, 1])
        t.ok(counted.statements.includes('begin') && counted.statements.includes('commit'), 'the function\'s transaction')
        t.equal(counted.connections, 2, 'the load\'s connection, and the transaction\'s')
      })

      t.test('a statement that fails fails alone; the connection serves the next request', async (t) => {
        const failing = await pipelined.inject('/pets/2147483648?expand=owner.employer,toys')
        t.equal(failing.statusCode, 404, 'a key past int4: PostgreSQL refuses it, the route finds no row')
        const next = await pipelined.inject('/pets?limit=1&expand=owner')
        t.equal(next.statusCode, 200)
        t.equal(next.json().data[0].owner.name, 'Fred')
      })
    })
  }
}

t.test('the fixtures\' resources still load through a pipelined pool', { skip: dialects().every((dialect) => dialect.name !== 'postgres') }, async (t) => {
  const postgres = dialects().find((dialect) => dialect.name === 'postgres')!
  const database = await openSeeded(t, postgres)
  const { db } = await pipelinedDb(t, database, false)
  const app = Fastify()
  await app.register(expandPlugin, { db, resources })
  app.expand.routes('/people', 'Person')
  await app.ready()
  t.teardown(() => app.close())
  const response = await app.inject('/people?fields=id,name')
  t.equal(response.statusCode, 200)
  t.equal(response.json().total, 4)
})
