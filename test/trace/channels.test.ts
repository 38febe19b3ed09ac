import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { asWrittenOn, dialects, inOneWave, inWave, keySubqueryOf, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { Person, Pet, Toy, openSeeded, resources } from '../fixtures/tables.js'
import { publishedFailure } from '../../plugin/trace/channels.js'
import { recordEvents, type RecordedEvent } from './events.js'

/*
 * The tracing channels of docs/observability.md: for one request, the plan
 * (its route, whether the plan cache held it), each statement (its relation
 * path, SQL with placeholders, row count, keys and level) and the body's
 * length, in the order the request goes through them, on every dialect.
 */

/** What each combination's bodies are written by on this runtime, asked of an app of its own (so the caches stay cold). */
async function mechanismApp (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...resources, Visit, PetRecord] })
  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-mechanism', app.expand.explain(request).mechanism)
    return reply.code(204).send()
  }
  app.get('/pets', { expandable: { resource: Pet, list: true } }, answer)
  app.get('/pets/:id', { expandable: { resource: Pet } }, answer)
  app.get('/records/:id', { expandable: { resource: PetRecord } }, async (request, reply) => {
    reply.header('x-statements', JSON.stringify(app.expand.explain(request).statements))
    return reply.code(204).send()
  })
  return app
}

/** Visits from another service (a relation resolved by a function), each with its vet, a person of the database. */
const Visit = defineResource({
  name: 'Visit',
  schema: Type.Object({ id: Type.Integer(), vet: Type.Integer() }),
  fields: ['id', 'vet'],
  expandable: { vet: Person },
})

/** Pets with a count of their toys (an aggregate statement) and their visits. */
const PetRecord = defineResource({
  name: 'PetRecord',
  table: 'pets',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), toys: Type.Array(Type.Integer()), visits: Type.Array(Type.Integer()) }),
  fields: ['id', 'name', 'visits'],
  expandable: {
    toys: [Toy, { many: true, through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
    visits: [Visit, { many: true, load: async (petIds) => new Map(petIds.map((id) => [id, [{ id: 10, vet: 2 }, { id: 11, vet: 3 }]])) }],
  },
  aggregates: { toy_count: { count: 'toys' } },
})

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...resources, Visit, PetRecord] })
  app.expand.routes('/records', PetRecord)
  app.expand.routes('/pets', Pet, { permitListExpands: ['owner.employer', 'toys'], filter: { species: ['eq'] } })
  await app.ready()
  return app
}

type Shown = Pick<RecordedEvent, 'channel' | 'event' | 'message'>

/** The four events of a statement that returns `rowCount` rows. */
function statement (label: Record<string, unknown>, sql: string, rowCount: number): Shown[] {
  const before = { ...label, sql, rowCount: undefined }
  const after = { ...label, sql, rowCount }
  return [
    { channel: 'load', event: 'start', message: before },
    { channel: 'load', event: 'end', message: before },
    { channel: 'load', event: 'asyncStart', message: after },
    { channel: 'load', event: 'asyncEnd', message: after },
  ]
}

function plan (route: string, cached: boolean): Shown[] {
  return [
    { channel: 'plan', event: 'start', message: { route, method: 'GET', cached: undefined } },
    { channel: 'plan', event: 'end', message: { route, method: 'GET', cached } },
  ]
}

function serialize (mechanism: string, cached: boolean, bytes: number): Shown[] {
  return [
    { channel: 'serialize', event: 'start', message: { mechanism, cached, bytes: undefined } },
    { channel: 'serialize', event: 'end', message: { mechanism, cached, bytes } },
  ]
}

/**
 * Events as a test compares them: in the order they came where a load runs
 * its statements one after another (SQLite); where the relations of a level
 * run concurrently (PostgreSQL, MariaDB), stably sorted by stage, level and
 * path, so each statement's own events keep their order.
 */
function comparable (dialect: Dialect, events: readonly Shown[]): Shown[] {
  const shown = events.map(({ channel, event, message }) => ({ channel, event, message }))
  if (dialect.name !== 'postgres' && dialect.name !== 'mariadb') return shown
  const rank = (event: Shown) => [
    ['plan', 'load', 'serialize'].indexOf(event.channel), (event.message.wave as number | undefined) ?? 0, String(event.message.path ?? ''),
  ] as const
  return shown.sort((a, b) => {
    const [x, y] = [rank(a), rank(b)]
    return x[0] - y[0] || x[1] - y[1] || (x[2] < y[2] ? -1 : x[2] > y[2] ? 1 : 0)
  })
}

/** What the load channel publishes as each dialect's `system` (OpenTelemetry's `db.system.name`). */
const systemNames = {
  sqlite: 'sqlite', 'sqlite with cached statements': 'sqlite', postgres: 'postgresql', mariadb: 'mysql',
} as const satisfies Record<Dialect['name'], string>

const petColumns = '"pets"."id" as "id", cast("pets"."name" as text) as "name", cast("pets"."species" as text) as "species", "pets"."owner_id" as "owner", "pets"."sold_from_id" as "sold_from"'
const personColumns = '"people"."id" as "id", cast("people"."name" as text) as "name", cast("people"."hobbies" as text) as "hobbies", "people"."employer_id" as "employer"'

for (const dialect of dialects()) {
  t.test(`tracing channels on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const recorder = recordEvents()
    t.teardown(recorder.stop)
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : asWrittenOn(dialect, '?'))
    const written = (sql: string) => asWrittenOn(dialect, sql)
    const system = systemNames[dialect.name]
    const explaining = await mechanismApp(database)
    t.teardown(() => explaining.close())
    const mechanismOf = async (url: string) => String((await explaining.inject(url)).headers['x-mechanism'])
    const root = (kind: string) => ({ kind, path: '', system, wave: 0, keyCount: undefined })
    const oneWave = inOneWave(dialect)
    // In one wave, every relation's statement is sent with the root's (wave 0) and binds no keys of its own.
    const relation = (path: string, wave: number, keyCount: number) =>
      ({ kind: 'rows', path, system, wave: oneWave ? 0 : wave, keyCount: oneWave ? undefined : keyCount })
    /** What a relation's statement reads its keys from: its parent statement's `column` in one wave, else the keys bound. */
    const keyed = (parent: string, column: string, keys: string) => oneWave ? keySubqueryOf(parent, column) : keys
    /** A relation's statement as sent: in one wave, joined from the keys it answers for. */
    const wave = (statement: string) => oneWave ? inWave(dialect, statement) : statement
    const toys = (keys: string) => `select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" from "toys" inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" where "pet_toys"."pet_id" in (${keys}) order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384`

    t.test('a detail with a nested to-one and a many-to-many relation, then the same again from the caches', async (t) => {
      const url = '/pets/1?expand=owner.employer,toys'
      const mechanism = await mechanismOf(url)
      const pet = `select ${petColumns} from "pets" where "pets"."id" = ${p(1)}`
      const owner = `select ${personColumns} from "people" where "people"."id" in (${keyed(pet, '"pets"."owner_id"', p(1))})`
      for (const cached of [false, true]) {
        recorder.events.length = 0
        const response = await app.inject(url)
        t.equal(response.statusCode, 200)
        t.strictSame(comparable(dialect, recorder.events), comparable(dialect, [
          ...plan('/pets/:id', cached),
          ...statement(root('one'), written(pet), 1),
          ...statement(relation('owner', 1, 1), written(wave(owner)), 1),
          ...statement(relation('owner.employer', 2, 1),
            written(wave(`select "companies"."id" as "id", cast("companies"."name" as text) as "name", "companies"."public" as "public" from "companies" where "companies"."id" in (${keyed(owner, '"people"."employer_id"', p(1))})`)), 1),
          ...statement(relation('toys', 1, 1), written(wave(toys(keyed(pet, '"pets"."id"', p(1))))), 2),
          ...serialize(mechanism, cached, Buffer.byteLength(response.body)),
        ]), cached ? 'the plan and the serializer came from their caches' : 'planned and compiled for this request')
        // Each stage's events carry one message object, completed as the stage goes.
        const load = recorder.events.filter((event) => event.channel === 'load' && event.message.path === 'toys')
        t.equal(new Set(load.map((event) => event.original)).size, 1)
      }
    })

    t.test("every message of a request carries its request's token, another request's another, concurrent or not", async (t) => {
      recorder.events.length = 0
      await app.inject('/pets/1?expand=owner.employer,toys')
      // Combinations no other test here asks, so that theirs still plan and compile once.
      await Promise.all([app.inject('/pets?expand=toys&limit=2'), app.inject('/pets/2?expand=owner')])
      const requests = [...new Set(recorder.events.map((event) => event.request))]
      t.equal(requests.length, 3)
      const requestsOf = (channel: string) =>
        new Set(recorder.events.filter((event) => event.channel === channel).map((event) => event.request))
      t.strictSame(requestsOf('plan'), new Set(requests))
      t.strictSame(requestsOf('load'), new Set(requests), 'every statement: the request it loads for')
      t.strictSame(requestsOf('serialize'), new Set(requests))
      const tokens = new Set(recorder.events.map((event) => event.original.request))
      t.equal(tokens.size, 3)
      for (const token of tokens) t.strictSame(Object.getOwnPropertyNames(token), [], 'an empty object, never the request')
      const serialized = recorder.events.filter((event) => event.channel === 'serialize' && event.event === 'end')
      const statementsOf = (request: number | undefined) =>
        recorder.events.filter((event) => event.channel === 'load' && event.event === 'asyncEnd' && event.request === request)
          .map((event) => event.message.path).sort()
      t.strictSame(serialized.map((event) => statementsOf(event.request)).sort(), [
        // In one wave an unfiltered page reads its count in its own statement.
        oneWave ? ['', 'toys'] : ['', '', 'toys'],
        ['', 'owner', 'owner.employer', 'toys'],
        ['', 'owner', 'toys'],
      ].sort(), "each body's request: the statements of that request alone (the toys' ids, a to-many relation not expanded)")
    })

    t.test('a filtered list page with its count, then the same again', async (t) => {
      const url = '/pets?expand=owner,toys&filter[species]=dog&limit=1'
      const mechanism = await mechanismOf(url)
      const page = `select ${petColumns} from "pets" where "pets"."species" = ${p(1)} order by "pets"."id" asc limit ${p(2)} offset ${p(3)}`
      for (const cached of [false, true]) {
        recorder.events.length = 0
        const response = await app.inject(url)
        t.equal(response.statusCode, 200)
        t.strictSame(response.json().data.map((pet: { name: string }) => pet.name), ['Odie'])
        t.strictSame(comparable(dialect, recorder.events), comparable(dialect, [
          ...plan('/pets', cached),
          ...statement(root('page'), written(page), 1),
          ...statement(root('count'), written(`select count(*) as "total" from "pets" where "pets"."species" = ${p(1)}`), 1),
          ...statement(relation('owner', 1, 1), written(wave(`select ${personColumns} from "people" where "people"."id" in (${keyed(page, '"pets"."owner_id"', p(1))})`)), 1),
          ...statement(relation('toys', 1, 1), written(wave(toys(keyed(page, '"pets"."id"', p(1))))), 1),
          ...serialize(mechanism, cached, Buffer.byteLength(response.body)),
        ]))
      }
    })

    t.test("an aggregate's statement, and a relation resolved by a function: no event of its own, the statements below it with their paths", async (t) => {
      const url = '/records/1?expand=visits.vet&fields=id,toy_count,visits'
      const explained = (await explaining.inject(url)).headers['x-statements']
      const sql = new Map((JSON.parse(String(explained)) as Array<{ path: string; sql: string }>).map(({ path, sql }) => [path, sql]))
      t.strictSame([...sql.keys()], ['', 'visits.vet', 'toys'], 'explain lists the same statements')
      recorder.events.length = 0
      const response = await app.inject(url)
      t.equal(response.statusCode, 200)
      t.strictSame(response.json(), { id: 1, toy_count: 2, visits: [{ id: 10, vet: { id: 2, name: 'Sally', hobbies: 'hiking', employer: 2 } }, { id: 11, vet: { id: 3, name: 'Ann', hobbies: 'chess', employer: null } }] })
      const loads = recorder.events.filter((event) => event.channel === 'load' && event.event === 'asyncEnd').map(({ message }) => message)
      const asEvents = (messages: Array<Record<string, unknown>>) => messages.map((message) => ({ channel: 'load' as const, event: 'asyncEnd' as const, message }))
      // The function's call has no event; the vets' statement binds the two vets its answer names, level by level below
      // the call. The aggregate beside it goes in one wave with the record's statement, keyed by it.
      const record = sql.get('')! + written(` where "pets"."id" = ${p(1)}`)
      t.strictSame(comparable(dialect, asEvents(loads)), comparable(dialect, asEvents([
        { ...root('one'), sql: record, rowCount: 1 },
        { kind: 'rows', path: 'visits.vet', system, wave: 2, keyCount: 2, sql: sql.get('visits.vet')!.replace(`in (${p(1)})`, `in (${p(1)}, ${p(2)})`), rowCount: 2 },
        {
          kind: 'aggregates',
          path: 'toys',
          system,
          wave: oneWave ? 0 : 1,
          keyCount: oneWave ? undefined : 1,
          sql: wave(sql.get('toys')!.replace(`in (${p(1)})`, `in (${keyed(record, '"pets"."id"', p(1))})`)),
          rowCount: 1,
        },
      ])))
    })

    t.test('a plan refused: start, error and end, the error its code alone', async (t) => {
      recorder.events.length = 0
      const response = await app.inject('/pets?expand=nothing')
      t.equal(response.statusCode, 400)
      t.strictSame(recorder.events.map(({ channel, event }) => `${channel} ${event}`), ['plan start', 'plan error', 'plan end'])
      const error = recorder.events[1]!.message.error as { code: string; message: string }
      t.equal(error.code, 'FST_EXPAND_UNKNOWN_FIELD')
      t.equal(error.message, 'FST_EXPAND_UNKNOWN_FIELD', 'not the message, which quotes the request')
      t.equal(recorder.events[2]!.message.cached, undefined)
    })
  })
}

t.test("an error event's error: the plugin's code, or ERROR, never the error's words", async (t) => {
  const published = (error: unknown) => ({ ...publishedFailure(error) })
  t.strictSame(published(Object.assign(new Error('filter value 42 is out of range'), { code: 'FST_EXPAND_BAD_FILTER' })),
    { name: 'FastifyExpandFailure', code: 'FST_EXPAND_BAD_FILTER', message: 'FST_EXPAND_BAD_FILTER' })
  t.strictSame(published(Object.assign(new Error('duplicate key 42'), { code: '23505' })), { name: 'FastifyExpandFailure', code: 'ERROR', message: 'ERROR' })
  t.strictSame(published(null), { name: 'FastifyExpandFailure', code: 'ERROR', message: 'ERROR' })
  t.strictSame(published('a string'), { name: 'FastifyExpandFailure', code: 'ERROR', message: 'ERROR' })
  t.ok(Object.isFrozen(publishedFailure(undefined)))
})
