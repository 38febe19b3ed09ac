// Relations resolved by a function (the `load` relation option), loaded with
// the relations read from the database on every dialect: one call per path
// with the distinct keys, the rows checked and bounded as a statement's are,
// the levels below loaded as usual, and the function's failures answered with
// fixed codes, never its own words.
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import http from 'node:http'
import type net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import expandPlugin, { defineResource, UnavailableError, type AnyResource, type RelationLoad } from '../../plugin/index.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { servingIndexes } from '../../plugin/sql/list-statements.js'
import { relationIdsQuery, relationRowsQuery } from '../../plugin/sql/relation-statements.js'
import { asWrittenOn, dialects, inComparableOrder, inOneWave, pageAsSent, type TestDatabase } from '../fixtures/dialects.js'
import { Person, createTables, openSeeded, resources, seed } from '../fixtures/tables.js'

/** How the functions answer: switched per test. */
let mode: 'rows' | 'throw' | 'reject' | 'unavailable' | 'unavailable later' | 'wrong type' | 'not a map' | 'string keys' | 'not rows' | 'array row' | 'nothing' = 'rows'
/** Every call of each function: its keys. */
const calls: { stores: unknown[][]; visits: unknown[][]; clinics: unknown[][] } = { stores: [], visits: [], clinics: [] }

const storeRows = new Map<unknown, Record<string, unknown>>([
  [1, { id: 1, name: 'Pet Place', rating: 4.5, manager: 2, internal: 'margin 40%' }],
  [7, { id: 7, name: 'Never asked', rating: 1, manager: 1, internal: 'x' }],
])

const loadStores: RelationLoad = async (keys) => {
  calls.stores.push([...keys])
  await sleep(1)
  switch (mode) {
    case 'throw': throw new Error('secret backend detail: password=hunter2')
    case 'reject': return await Promise.reject(new TypeError('upstream said 42'))
    case 'unavailable': throw new UnavailableError({ cause: new Error('the store service is down') })
    case 'unavailable later':
      throw Object.assign(new UnavailableError({ cause: new Error('maintenance') }), { headers: { 'retry-after': '30' } })
    case 'not rows': return new Map([[1, 'Pet Place']]) as never
    case 'array row': return new Map([[1, [storeRows.get(1)!]]])
    case 'nothing': return undefined as never
    case 'wrong type': return new Map([[1, { id: 1, name: 'Pet Place', rating: 'high', manager: 2, internal: '' }]])
    case 'not a map': return { 1: storeRows.get(1) } as never
    case 'string keys': return new Map([...storeRows].map(([key, row]) => [String(key), row]))
    default: return storeRows
  }
}

const loadVisits: RelationLoad = async (keys) => {
  calls.visits.push([...keys])
  if (mode === 'not rows') return new Map<unknown, unknown>([[1, { id: 10 }], [4, [{ id: 12 }, 12]]]) as never
  return new Map<unknown, Array<Record<string, unknown>>>([
    [1, [{ id: 10, date: '2024-01-02', clinic: 1 }, { id: 11, date: '2024-03-04', clinic: 2 }]],
    [4, [{ id: 12, date: '2024-05-06', clinic: 1 }]],
  ])
}

const loadClinics: RelationLoad = async (keys) => {
  calls.clinics.push([...keys])
  return new Map([[1, { id: 1, name: 'North' }]])
}

const Clinic = defineResource({
  name: 'Clinic',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
})

const Visit = defineResource({
  name: 'Visit',
  schema: Type.Object({ id: Type.Integer(), date: Type.String(), clinic: Type.Union([Type.Integer(), Type.Null()]) }),
  fields: ['id', 'date', 'clinic'],
  expandable: { clinic: [Clinic, { load: loadClinics }] },
})

/** A store's card from another service: no table; its manager is a person of the database. */
const StoreInfo = defineResource({
  name: 'StoreInfo',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), rating: Type.Number(), manager: Type.Integer(), internal: Type.String() }),
  fields: ['id', 'name', 'rating', 'manager', 'internal'],
  expandable: { manager: Person },
  fieldsFor: (request) => (request.headers['x-role'] === 'guest' ? ['id', 'name', 'rating', 'manager'] : undefined),
})

const PetCard = defineResource({
  name: 'PetCard',
  table: 'pets',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    store: Type.Union([Type.Integer(), Type.Null()]),
    visits: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'store', 'visits'],
  expandable: {
    store: [StoreInfo, { column: 'sold_from_id', load: loadStores }],
    visits: [Visit, { many: true, load: loadVisits }],
  },
})

const Keeper = defineResource({
  name: 'Keeper',
  table: 'people',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), cards: Type.Array(Type.Integer()) }),
  fields: ['id', 'name'],
  expandable: { cards: [(): AnyResource => PetCard, { many: true, foreignKey: 'owner_id' }] },
})

async function build (database: TestDatabase, maxObjects?: number): Promise<FastifyInstance> {
  const app = Fastify()
  const limits = maxObjects === undefined ? {} : { maxObjects }
  await app.register(expandPlugin, { db: database.db, resources: [...resources, PetCard, Keeper], ...limits })
  app.expand.routes('/cards', PetCard)
  app.expand.routes('/keepers', Keeper)
  app.get('/handler-cards', { expandable: { resource: PetCard, list: true } }, async (request) => {
    const rows = await database.db.selectFrom('pets').select(['id', 'name', 'sold_from_id']).where('id', '<=', 2).orderBy('id').execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

function resetCalls (): void {
  mode = 'rows'
  calls.stores.length = 0
  calls.visits.length = 0
  calls.clinics.length = 0
}

const garfieldVisits = [{ id: 10, date: '2024-01-02', clinic: 1 }, { id: 11, date: '2024-03-04', clinic: 2 }]
const petPlace = { id: 1, name: 'Pet Place', rating: 4.5, manager: 2, internal: 'margin 40%' }

for (const dialect of dialects()) {
  t.test(`relations resolved by a function on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
    const get = async (url: string, headers: Record<string, string> = {}) => {
      resetCalls()
      database.reset()
      const response = await app.inject({ url, headers })
      return { status: response.statusCode, body: response.json(), statements: [...database.statements] }
    }
    /** An expected statement, written with double-quoted identifiers, as the dialect quotes it. */
    const written = (statement: string) => asWrittenOn(dialect, statement)
    const root = written(`select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."sold_from_id" as "store" from "pets" order by "pets"."id" limit ${p(1)} offset ${p(2)}`)

    t.test('to-one and to-many on a list: one call per path with the distinct keys, missing keys null and []', async (t) => {
      const { status, body, statements } = await get('/cards?expand=store,visits')
      t.equal(status, 200)
      t.same(body, {
        data: [
          { id: 1, name: 'Garfield', store: petPlace, visits: garfieldVisits },
          { id: 2, name: 'Odie', store: null, visits: [] },
          { id: 3, name: 'Nemo', store: null, visits: [] },
          { id: 4, name: 'Rex', store: petPlace, visits: [{ id: 12, date: '2024-05-06', clinic: 1 }] },
        ],
        limit: 20,
        offset: 0,
        total: 4,
      })
      t.same(calls.stores, [[1, 2]], 'the non-null sold_from_id values, each once, as the rows hold them')
      t.same(calls.visits, [[1, 2, 3, 4]], "the parents' primary keys")
      t.same(statements, [pageAsSent(dialect, root, written('select count(*) as "total" from "pets"'))],
        'the functions run no statement (the short page reads its count in one wave)')
    })

    t.test('unexpanded: a to-one id is its column, no call; a to-many relation shows the ids of the rows its function returns', async (t) => {
      const { body, statements } = await get('/cards/1')
      t.same(body, { id: 1, name: 'Garfield', store: 1, visits: [10, 11] })
      t.same(calls.stores, [])
      t.same(calls.visits, [[1]])
      t.same(statements, [written(`select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."sold_from_id" as "store" from "pets" where "pets"."id" = ${p(1)}`)])
    })

    t.test('deeper expansions under a function relation load from the database, or call another function', async (t) => {
      const { body, statements } = await get('/cards/4?expand=store.manager,visits.clinic')
      t.same(body, {
        id: 4,
        name: 'Rex',
        store: { id: 1, name: 'Pet Place', rating: 4.5, manager: { id: 2, name: 'Sally', hobbies: 'hiking', employer: 2 }, internal: 'margin 40%' },
        visits: [{ id: 12, date: '2024-05-06', clinic: { id: 1, name: 'North' } }],
      })
      t.same(calls, { stores: [[1]], visits: [[4]], clinics: [[1]] })
      t.same(statements, [
        `select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."sold_from_id" as "store" from "pets" where "pets"."id" = ${p(1)}`,
        `select "people"."id" as "id", cast("people"."name" as text) as "name", cast("people"."hobbies" as text) as "hobbies", "people"."employer_id" as "employer" from "people" where "people"."id" in (${p(1)})`,
      ].map(written))
    })

    t.test('at depth: a function relation under a to-many database relation is called once for the whole level', async (t) => {
      const { body, statements } = await get('/keepers?expand=cards.store,cards.visits.clinic&fields=id,cards')
      t.same(body.data, [
        { id: 1, cards: [{ id: 1, name: 'Garfield', store: petPlace, visits: [{ ...garfieldVisits[0], clinic: { id: 1, name: 'North' } }, { ...garfieldVisits[1], clinic: null }] }, { id: 2, name: 'Odie', store: null, visits: [] }] },
        { id: 2, cards: [{ id: 3, name: 'Nemo', store: null, visits: [] }] },
        { id: 3, cards: [] },
        { id: 4, cards: [{ id: 4, name: 'Rex', store: petPlace, visits: [{ id: 12, date: '2024-05-06', clinic: { id: 1, name: 'North' } }] }] },
      ])
      t.same(calls, { stores: [[1, 2]], visits: [[1, 2, 3, 4]], clinics: [[1, 2]] })
      t.equal(statements.length, 2, 'the keepers (a page shorter than its limit tells its total: in one wave, it reads its count), their cards')
      t.equal(statements.filter((statement) => statement.startsWith('with "__expand_wave_keys"')).length, inOneWave(dialect) ? 1 : 0,
        'in one wave, the cards are sent with the keepers\' page, keyed by it: the functions below them are called with the rows it read')
    })

    t.test('app.expand.load fills function relations of the rows a handler gives', async (t) => {
      const { body, statements } = await get('/handler-cards?expand=store&fields=id,store')
      t.same(body, [{ id: 1, store: petPlace }, { id: 2, store: null }])
      t.same(calls.stores, [[1, 2]])
      // The handler's own statement, as Kysely writes it: only the plugin's statements write SQLite's placeholders `+?`.
      const handlers = written(`select "id", "name", "sold_from_id" from "pets" where "id" <= ${p(1)} order by "id"`).replace('+?', '?')
      t.same(inComparableOrder(dialect, statements), [handlers])
    })

    t.test("the Map may key a row by any form of the key: '1' is 1", async (t) => {
      resetCalls()
      mode = 'string keys'
      const response = await app.inject('/cards/1?expand=store&fields=store')
      t.same(response.json(), { store: petPlace })
    })

    t.test('fieldsFor applies to the rows a function returns', async (t) => {
      const guest = await get('/cards/1?expand=store&fields=store', { 'x-role': 'guest' })
      t.same(guest.body, { store: { id: 1, name: 'Pet Place', rating: 4.5, manager: 2 } })
      const asked = await get('/cards/1?expand=store&fields=store.internal', { 'x-role': 'guest' })
      t.equal(asked.status, 403)
      t.equal(asked.body.code, 'FST_EXPAND_FORBIDDEN')
      t.same(asked.statements, [], 'refused before anything runs')
      t.same(calls.stores, [])
    })

    t.test('a row of the wrong type is the data check\'s 500', async (t) => {
      resetCalls()
      mode = 'wrong type'
      const response = await app.inject('/cards/1?expand=store&fields=store')
      t.equal(response.statusCode, 500)
      t.match(response.json(), { code: 'FST_EXPAND_INVALID_DATA', message: /store\.rating/ })
    })

    t.test('an answer that is not a Map, or values that are not rows, is invalid data', async (t) => {
      resetCalls()
      mode = 'not a map'
      const response = await app.inject('/cards/1?expand=store&fields=store')
      t.equal(response.statusCode, 500)
      t.same(response.json(), {
        statusCode: 500,
        code: 'FST_EXPAND_INVALID_DATA',
        error: 'Internal Server Error',
        message: 'The load function of PetCard.store returned an object, expected a Map from key to row',
      })
    })

    for (const failing of ['throw', 'reject'] as const) {
      t.test(`a function that ${failing}s is a 500 with a fixed message, its error the logged cause`, async (t) => {
        resetCalls()
        mode = failing
        const response = await app.inject('/cards?expand=store')
        t.equal(response.statusCode, 500)
        t.equal(response.body, '{"statusCode":500,"code":"FST_EXPAND_RELATION_LOAD_FAILED","error":"Internal Server Error","message":"A relation resolved by a function could not be loaded"}')
        t.same(calls.stores.length, 1)
      })
    }

    t.test('a function that throws UnavailableError is a 503 with Retry-After', async (t) => {
      resetCalls()
      mode = 'unavailable'
      const response = await app.inject('/cards/1?expand=store')
      t.equal(response.statusCode, 503)
      t.equal(response.headers['retry-after'], '1')
      t.equal(response.body, '{"statusCode":503,"code":"FST_EXPAND_UNAVAILABLE","error":"Service Unavailable","message":"Service Unavailable"}')
    })

    t.test('explain lists each function relation as a call, its keys once called', async (t) => {
      let before: ReturnType<typeof app.expand.explain> | undefined
      let after: ReturnType<typeof app.expand.explain> | undefined
      const explained = Fastify()
      await explained.register(expandPlugin, { db: database.db, resources: [...resources, PetCard] })
      explained.get('/explain', { expandable: { resource: PetCard, list: true } }, async (request) => {
        before = explained.expand.explain(request)
        const rows = await database.db.selectFrom('pets').select(['id', 'name', 'sold_from_id']).orderBy('id').execute()
        await explained.expand.load(request, rows)
        after = explained.expand.explain(request)
        return rows
      })
      t.teardown(() => explained.close())
      resetCalls()
      t.equal((await explained.inject('/explain?expand=store.manager,visits.clinic&fields=id,store,visits')).statusCode, 200)
      t.same(before!.statements, [
        { path: '', sql: written('select "pets"."id" as "id", "pets"."sold_from_id" as "store" from "pets"') },
        { path: 'store.manager', sql: written(`select "people"."id" as "id", cast("people"."name" as text) as "name", cast("people"."hobbies" as text) as "hobbies", "people"."employer_id" as "employer" from "people" where "people"."id" in (${p(1)})`) },
      ])
      t.same(before!.calls, [
        { path: 'store', kind: 'function', relation: 'PetCard.store' },
        { path: 'visits', kind: 'function', relation: 'PetCard.visits' },
        { path: 'visits.clinic', kind: 'function', relation: 'Visit.clinic' },
      ])
      t.same(after!.calls, [
        { path: 'store', kind: 'function', relation: 'PetCard.store', keys: 2 },
        { path: 'visits', kind: 'function', relation: 'PetCard.visits', keys: 4 },
        { path: 'visits.clinic', kind: 'function', relation: 'Visit.clinic', keys: 2 },
      ])
    })

    t.test('rows a function returns count against maxObjects', async (t) => {
      const small = await build(database, 2)
      t.teardown(() => small.close())
      resetCalls()
      const fits = await small.inject('/cards/1?expand=visits&fields=visits')
      t.same(fits.json(), { visits: garfieldVisits })
      const over = await small.inject('/cards?expand=visits&fields=visits')
      t.equal(over.statusCode, 400)
      t.same(over.json(), {
        statusCode: 400,
        code: 'FST_EXPAND_TOO_LARGE',
        error: 'Bad Request',
        message: 'The expanded relations would hold more than 2 objects: expand fewer relations or ask for a smaller page',
      })
      const shared = await small.inject('/cards?expand=store&fields=store')
      t.equal(shared.statusCode, 200, 'one store written for two pets: two objects')
      const below = await small.inject('/cards?expand=store.manager&fields=store')
      t.equal(below.statusCode, 400, 'its manager is written under each of them: four')
      t.equal(below.json().code, 'FST_EXPAND_TOO_LARGE')
    })

    t.test('values that are not rows are invalid data, named by the relation and the kind of value', async (t) => {
      resetCalls()
      mode = 'not rows'
      const one = await app.inject('/cards/1?expand=store&fields=store')
      t.same(one.json().message, 'The load function of PetCard.store gave a string for a key, expected a row (an object) or null')
      mode = 'array row'
      const array = await app.inject('/cards/1?expand=store&fields=store')
      t.same(array.json().message, 'The load function of PetCard.store gave an array for a key, expected a row (an object) or null')
      mode = 'nothing'
      const nothing = await app.inject('/cards/1?expand=store&fields=store')
      t.same(nothing.json().message, 'The load function of PetCard.store returned undefined, expected a Map from key to row')
      mode = 'not rows'
      const many = await app.inject('/cards/1?expand=visits&fields=visits')
      t.same(many.json().message, 'The load function of PetCard.visits gave an object for a key, expected an array of rows (objects)')
      const holding = await app.inject('/cards/4?fields=visits')
      t.same(holding.json().message, 'The load function of PetCard.visits gave an array holding a non-object for a key, expected an array of rows (objects)')
      t.equal(holding.json().code, 'FST_EXPAND_INVALID_DATA')
    })

    t.test('no keys, no call: a to-one relation whose column is null everywhere', async (t) => {
      const { body } = await get('/cards/3?expand=store&fields=id,store')
      t.same(body, { id: 3, store: null })
      t.same(calls.stores, [])
    })

    t.test("an UnavailableError's own Retry-After is kept", async (t) => {
      resetCalls()
      mode = 'unavailable later'
      const response = await app.inject('/cards/1?expand=store')
      t.equal(response.statusCode, 503)
      t.equal(response.headers['retry-after'], '30')
    })

    t.test("the function's rows are copied: loading never writes into them", async (t) => {
      await get('/cards/1?expand=store.manager&fields=store')
      t.same(storeRows.get(1), petPlace)
    })
  })
}

t.test('the signal is aborted when the client goes away, and the request ends as aborted', async (t) => {
  const database = await dialects()[0].open()
  t.teardown(() => database.close())
  await createTables(database.db)
  await seed(database.db)
  let seen: AbortSignal | undefined
  let called!: () => void
  const callMade = new Promise<void>((resolve) => { called = resolve })
  const waiting: RelationLoad = async (_keys, { signal }) => {
    seen = signal
    called()
    // A service that honours the signal: it stops when the client has gone.
    await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
    return new Map()
  }
  const Slow = defineResource({
    name: 'Slow',
    table: 'pets',
    schema: Type.Object({ id: Type.Integer(), store: Type.Union([Type.Integer(), Type.Null()]) }),
    fields: ['id', 'store'],
    expandable: { store: [StoreInfo, { column: 'sold_from_id', load: waiting }] },
  })
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...resources, Slow] })
  app.expand.routes('/slow', Slow)
  let failed!: (error: unknown) => void
  const failure = new Promise<unknown>((resolve) => { failed = resolve })
  app.addHook('onError', async (_request, _reply, error) => { failed(error) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as net.AddressInfo
  const request = http.get({ host: '127.0.0.1', port, path: '/slow/1?expand=store' })
  request.on('error', () => {})
  await callMade
  t.equal(seen!.aborted, false, 'not aborted while the client waits')
  request.destroy()
  t.match(await failure, { code: 'FST_EXPAND_REQUEST_ABORTED' })
  t.equal(seen!.aborted, true)
})

t.test('rows a handler gives without their primary key cannot be keys of a to-many function relation', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...resources, PetCard] })
  app.get('/keyless', { expandable: { resource: PetCard, list: true } }, async (request) => app.expand.load(request, [{ name: 'Nobody' }]))
  t.teardown(() => app.close())
  resetCalls()
  const response = await app.inject('/keyless?expand=visits&fields=visits')
  t.equal(response.statusCode, 500)
  t.same(response.json().message, "PetCard rows given to load lack their primary key 'id', which to-many relations are loaded by")
  t.same(calls.visits, [])
})

t.test('a request without a socket still loads: its signal is never aborted', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...resources, PetCard] })
  app.get('/detached', { expandable: { resource: PetCard } }, async (request) => {
    Object.defineProperty(request.raw, 'socket', { value: null })
    const [row] = await app.expand.load(request, [{ id: 1, name: 'Garfield', sold_from_id: 1 }])
    return row
  })
  t.teardown(() => app.close())
  resetCalls()
  const response = await app.inject('/detached?expand=store&fields=store')
  t.same(response.json(), { store: petPlace })
})

t.test('a list filter or sort never reaches a statement through a function relation: its indexes would not exist', async (t) => {
  const relation = new ResourceGraph([...resources, PetCard]).node(PetCard).relations.get('visits')!
  const filters = [{ filter: { hops: [relation] }, operator: 'eq' }]
  t.throws(() => servingIndexes(relation.owner, { filters, sort: [], keys: [] } as never),
    new TypeError('a list cannot filter or sort through a relation resolved by a function'))
})

t.test('a relation resolved by a function has no statement to ask for', async (t) => {
  const relation = new ResourceGraph([...resources, PetCard]).node(PetCard).relations.get('visits')!
  const field = { kind: 'expanded', name: 'visits', relation, level: { node: relation.target, fields: [] }, orderBy: undefined } as const
  t.throws(() => relationRowsQuery(undefined as never, field, [1], 1), new TypeError('a relation resolved by a function runs no statement'))
  t.throws(() => relationIdsQuery(undefined as never, field, [1], 1), new TypeError('a relation resolved by a function runs no statement'))
})
