import { tracingChannel } from 'node:diagnostics_channel'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { Kysely, PostgresDialect, type Kysely as AnyKysely } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { postgresDialect, resolveDialectAs } from '../../plugin/sql/dialects/index.js'
import type { LoadMessage } from '../../plugin/trace/channels.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Company, PetStore, Toy, openSeeded } from '../fixtures/tables.js'
import { schemas } from '../fixtures/pets.js'

// A request's relation statements sent as one (plugin/sql/relations-statement.ts, `relationsInOneStatement`):
// the same bodies as one wave of statements, in every case the plan allows, with a scope on two levels.
const hidden = (request: FastifyRequest, header: string) => String(request.headers[header] ?? '')

const Person = defineResource({
  name: 'Person',
  namespace: 'people',
  table: 'people',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    employer: Type.Union([Type.Integer(), Type.Null()]),
    pets: Type.Array(Type.Integer()),
    first_pet: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'employer'],
  expandable: {
    employer: ['Company', { column: 'employer_id' }],
    pets: ['Pet', { many: true, foreignKey: 'owner_id', fields: ['id', 'name', 'toys'] }],
    first_pet: ['Pet', { many: true, foreignKey: 'owner_id', fields: ['id', 'name'], limit: 1 }],
  },
  scope: (eb, request) => eb('people.name', '<>', hidden(request, 'x-hidden-person')),
})

const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: schemas.Pet,
  fields: ['id', 'name', 'species', 'owner', 'sold_from', 'toys'],
  columns: { owner: 'owner_id', sold_from: 'sold_from_id' },
  expandable: {
    owner: 'people.Person',
    sold_from: ['PetStore', { fields: ['id', 'name'] }],
    toys: ['Toy', { many: true, omit: ['secret'], through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
  },
  scope: (eb, request) => eb('pets.species', '<>', hidden(request, 'x-hidden-species')),
})

async function build (db: AnyKysely<any>, maxObjects?: number): Promise<FastifyInstance> {
  const app = Fastify()
  const resources = [Company, Person, Pet, PetStore, Toy]
  await app.register(expandPlugin, { db, resources, ...(maxObjects === undefined ? {} : { maxObjects }) })
  app.expand.routes('/pets', Pet, { permitListExpands: ['owner.employer', 'toys', 'sold_from'] })
  app.expand.routes('/people', Person, { permitListExpands: ['pets.toys', 'employer', 'first_pet'] })
  await app.ready()
  return app
}

/**
 * A Kysely instance without plugins (so that statements are kept as templates) over connections of its own to
 * the test's schema, its relations in one statement; `pool` wraps the connections. Its statements go to `sent`.
 */
async function inOneStatement (
  t: Test, database: TestDatabase, pool: (pool: pg.Pool) => pg.Pool = (pool) => pool
): Promise<{ db: AnyKysely<any>; sent: Array<{ sql: string; parameters: readonly unknown[] }> }> {
  const [{ schema }] = (await database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('schema')).execute()) as [{ schema: string }]
  const connections = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, options: `-c search_path=${schema}` })
  const sent: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: pool(connections) }),
    log: (event) => { if (event.level === 'query') sent.push({ sql: event.query.sql, parameters: event.query.parameters }) },
  })
  t.teardown(() => db.destroy())
  resolveDialectAs(db, Object.freeze({ ...postgresDialect, relationsInOneStatement: true }))
  return { db, sent }
}

function recordStarts (): { started: string[]; stop: () => void } {
  const started: string[] = []
  const channel = tracingChannel<unknown, LoadMessage>('fastify-expand:load')
  const none = () => {}
  const handlers = { start: (message: LoadMessage) => { started.push(`${message.kind} ${message.path} ${message.wave}`) }, end: none, asyncStart: none, asyncEnd: none, error: none }
  channel.subscribe(handlers)
  return { started, stop: () => channel.unsubscribe(handlers) }
}

const requests: Array<{ url: string; headers?: Record<string, string> }> = [
  { url: '/pets?expand=owner.employer,toys,sold_from' },
  { url: '/pets?limit=2&offset=1&expand=owner.employer,toys' },
  { url: '/pets?limit=2&offset=10&expand=owner' },
  { url: '/pets?expand=owner&fields=id,owner,toys' },
  { url: '/pets?expand=owner.employer&omit=toys' },
  { url: '/pets?expand=toys&fields=id,toys.name' },
  { url: '/pets?expand=owner.employer,toys', headers: { 'x-hidden-person': 'Fred' } },
  { url: '/pets?expand=owner.employer,toys', headers: { 'x-hidden-species': 'cat', 'x-hidden-person': 'Bob' } },
  { url: '/pets?expand=owner.employer,toys', headers: { 'x-hidden-species': 'dog' } },
  { url: '/pets?filter[species]=cat&sort=-name&expand=owner.employer,toys' },
  { url: '/pets/1?expand=owner.employer,toys' },
  { url: '/pets/3?expand=owner.employer,toys', headers: { 'x-hidden-person': 'Sally' } },
  { url: '/pets/2147483648?expand=owner.employer,toys' },
  { url: '/people?expand=pets.toys,employer' },
  { url: '/people?expand=pets.toys', headers: { 'x-hidden-species': 'dog' } },
  { url: '/people?expand=pets', headers: { 'x-hidden-person': 'Fred' } },
  { url: '/people/1?expand=first_pet,employer' },
  { url: '/people?fields=id,pets' },
]

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  t.test(`relations in one statement on ${dialect.name}: the bodies of one wave`, async (t) => {
    const database = await openSeeded(t, dialect)
    const { db, sent } = await inOneStatement(t, database)
    const [wave, one] = [await build(database.db), await build(db)]
    t.teardown(() => Promise.all([wave.close(), one.close()]))
    // Twice over: the second time from the statements kept as templates, the scopes' values bound in order.
    for (const round of [1, 2]) {
      for (const { url, headers } of requests) {
        const expected = await wave.inject({ url, headers })
        const response = await one.inject({ url, headers })
        t.same({ status: response.statusCode, body: response.body }, { status: expected.statusCode, body: expected.body }, `${url} ${JSON.stringify(headers ?? {})} (${round})`)
      }
    }
    t.ok(sent.filter(({ sql }) => sql.startsWith('with "__expand_part_0"')).length >= requests.length, 'the relations of each request in one statement')
  })

  t.test(`relations in one statement on ${dialect.name}: the page, its count and one statement`, async (t) => {
    const database = await openSeeded(t, dialect)
    const { db, sent } = await inOneStatement(t, database)
    const app = await build(db)
    t.teardown(() => app.close())
    const recorder = recordStarts()
    t.teardown(recorder.stop)
    const response = await app.inject('/pets?limit=3&expand=owner.employer,toys')
    t.equal(response.statusCode, 200)
    t.same(recorder.started.sort(), ['count  0', 'page  0', 'rows owner,owner.employer,toys 0'], 'one statement for the three relations, in the wave of the page')
    t.equal(sent.length, 3)

    sent.length = 0
    t.equal((await app.inject('/pets?limit=2&expand=owner&fields=id,owner')).statusCode, 200)
    const relations = sent.find(({ sql }) => sql.startsWith('with '))
    t.equal(relations?.sql,
      'with "__expand_part_0" as (select "pets"."id" as "id", "pets"."owner_id" as "owner", "pets"."owner_id" as "__expand_key_1" ' +
        'from "pets" where "pets"."species" <> $1 order by "pets"."id" limit $2 offset $3), ' +
      '"__expand_part_1" as (select "people"."id" as "id", cast("people"."name" as text) as "name", "people"."employer_id" as "employer", ' +
        '"people"."id" as "__expand_wave_join" from "people" where "people"."name" <> $4 and "people"."id" in ' +
        '(select "__expand_part_0"."__expand_key_1" from "__expand_part_0")) ' +
      'select 0 as "__expand_part", "__expand_part_0"."__expand_key_1" as "__expand_c0", "__expand_part_1"."id" as "__expand_c1", ' +
        '"__expand_part_1"."name" as "__expand_c2", "__expand_part_1"."employer" as "__expand_c3" ' +
        'from "__expand_part_0", "__expand_part_1" where false ' +
      'union all select 0 as "__expand_part", "__expand_part_0"."__expand_key_1" as "__expand_c0", null as "__expand_c1", null as "__expand_c2", null as "__expand_c3" from "__expand_part_0" ' +
      'union all select 1 as "__expand_part", null as "__expand_c0", "__expand_part_1"."id" as "__expand_c1", "__expand_part_1"."name" as "__expand_c2", "__expand_part_1"."employer" as "__expand_c3" from "__expand_part_1"',
      'each relation a common table expression keyed by its parent\'s; a first branch that reads no row gives each column its type')
    t.same(relations?.parameters, ['', 2, 0, ''], 'the page\'s scope and values, then the people\'s scope')
  })

  t.test(`relations in one statement on ${dialect.name}: the object budget answers as in one wave`, async (t) => {
    const database = await openSeeded(t, dialect)
    const [wave, one] = [await build(database.db, 6), await build((await inOneStatement(t, database)).db, 6)]
    t.teardown(() => Promise.all([wave.close(), one.close()]))
    for (const url of ['/pets?expand=owner&fields=id,owner', '/pets?expand=owner.employer&fields=id,owner', '/pets?expand=owner',
      '/pets?limit=3&expand=owner.employer&fields=id,owner', '/pets?limit=3&expand=owner.employer']) {
      const [expected, response] = [await wave.inject(url), await one.inject(url)]
      t.same({ status: response.statusCode, body: response.body }, { status: expected.statusCode, body: expected.body }, url)
    }
    t.equal((await one.inject('/pets?expand=owner.employer&fields=id,owner')).json().code, 'FST_EXPAND_TOO_LARGE')
  })

  t.test(`relations in one statement on ${dialect.name}: a write between the page and the relations' statement`, async (t) => {
    const database = await openSeeded(t, dialect)
    const plain = await build(database.db)
    t.teardown(() => plain.close())
    const url = '/pets?limit=1&expand=owner.employer,toys'
    const before = await plain.inject(url)
    // The relations' statement waits until the page has answered and pet 0 (Bob's, no toys) is written: it reads pet 0 as the page.
    let pageAnswered!: () => void
    const answered = new Promise<void>((resolve) => { pageAnswered = resolve })
    const gated = (pool: pg.Pool) => ({
      async connect () {
        const client = await pool.connect()
        return {
          async query (text: string, values?: unknown[]) {
            if (text.startsWith('with "__expand_part_0"')) await answered
            const result = await client.query(text, values)
            if (/ order by "pets"\."id" limit \$\d+ offset \$\d+$/.test(text) && !text.startsWith('with ')) {
              await database.db.insertInto('pets').values({ id: 0, name: 'Zero', species: 'cat', owner_id: 4, sold_from_id: null }).execute()
              pageAnswered()
            }
            return result
          },
          release: (error?: Error | boolean) => client.release(error),
        }
      },
      end: async () => await pool.end(),
    }) as unknown as pg.Pool
    const { db, sent: statements } = await inOneStatement(t, database, gated)
    const app = await build(db)
    t.teardown(() => app.close())
    const during = await app.inject(url)
    t.equal(during.statusCode, 200)
    t.same(during.json().data, before.json().data, 'Garfield, with Fred, his employer and both toys: as before the write')
    const byKey = statements.map(({ sql }) => sql).filter((statement) => !statement.startsWith('with ') && / in \(\$\d+\)/.test(statement)).map((statement) => statement.split(' from ')[1]!.split(' ')[0])
    t.same(byKey.sort(), ['"companies"', '"people"', '"toys"'], 'Fred, his employer and Garfield\'s toys read by key: their parents were not the statement\'s')
    t.equal(statements.length, 2 + 1 + 3)
  })
}
