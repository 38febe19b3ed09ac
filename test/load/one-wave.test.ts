import { tracingChannel } from 'node:diagnostics_channel'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { Kysely, PostgresDialect, sql, type SqlBool } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { keySubquery, nestedScope, waveStatement } from '../../plugin/sql/key-subqueries.js'
import { relationRowsQuery } from '../../plugin/sql/relation-statements.js'
import { postgresDialect, resolveDialectAs, sqliteDialect } from '../../plugin/sql/dialects/index.js'
import type { AnySelect } from '../../plugin/sql/selection.js'
import type { LoadMessage } from '../../plugin/trace/channels.js'
import { asWrittenOn, dialects, inOneWave, inWave, keySubqueryOf, pageAsSent, type TestDatabase } from '../fixtures/dialects.js'
import { Company, PetStore, Toy, openSeeded } from '../fixtures/tables.js'
import { compositeKeyResources, createCompositeKeys, Shipment } from '../fixtures/composite-keys.js'
import { DerivedPerson, derivedResources } from '../fixtures/derived.js'
import { openRelationTables } from '../fixtures/relation-lists.js'
import { schemas } from '../fixtures/pets.js'

// The pets tables with a scope on people and on pets, each read from a header: the scope of every level
// applies in the statements of the levels below it, inside their key subqueries.
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
    first_pet: ['Pet', { many: true, foreignKey: 'owner_id', fields: ['id', 'name', 'owner', 'toys'], limit: 1 }],
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

async function build (database: TestDatabase, maxObjects?: number, db = database.db): Promise<FastifyInstance> {
  const app = Fastify()
  const resources = [Company, Person, Pet, PetStore, Toy]
  await app.register(expandPlugin, { db, resources, ...(maxObjects === undefined ? {} : { maxObjects }) })
  app.expand.routes('/pets', Pet, {
    permitListExpands: ['owner.employer', 'toys', 'sold_from'],
    expandedLists: { toys: { sort: ['name'], maxLimit: 5, filter: { name: ['contains'] } } },
  })
  app.expand.routes('/people', Person, { permitListExpands: ['pets.toys', 'employer'], expandedLists: { pets: { sort: ['name'], maxLimit: 5 } } })
  app.expand.routes('/pet-pages', Pet, { pagination: 'cursor', sort: ['name'], permitListExpands: ['owner.employer', 'toys'] })
  await app.ready()
  return app
}

/** The statements started among `events`, in order: each as `kind path wave`. */
function sentStatements (events: Array<{ event: string; message: LoadMessage }>): string[] {
  return events.filter(({ event }) => event === 'start').map(({ message }) => `${message.kind} ${message.path} ${message.wave}`)
}

/** Every event of the load channel, in the order published. */
function recordLoads (): { events: Array<{ event: string; message: LoadMessage }>; stop: () => void } {
  const events: Array<{ event: string; message: LoadMessage }> = []
  const channel = tracingChannel<unknown, LoadMessage>('fastify-expand:load')
  const on = (event: string) => (message: LoadMessage) => { events.push({ event, message }) }
  const handlers = { start: on('start'), end: on('end'), asyncStart: on('asyncStart'), asyncEnd: on('asyncEnd'), error: on('error') }
  channel.subscribe(handlers)
  return { events, stop: () => channel.unsubscribe(handlers) }
}

for (const dialect of dialects()) {
  t.test(`one wave on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const recorder = recordLoads()
    t.teardown(recorder.stop)
    const oneWave = inOneWave(dialect)
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
    const written = (statements: string[]) => statements.map((statement) => asWrittenOn(dialect, statement))
    const get = async (url: string, headers: Record<string, string> = {}) => {
      recorder.events.length = 0
      database.reset()
      const response = await app.inject({ url, headers })
      return {
        status: response.statusCode,
        body: response.json(),
        statements: [...database.statements],
        parameters: [...database.parameters],
        events: [...recorder.events],
      }
    }
    const rowsOf = (events: Array<{ event: string; message: LoadMessage }>, path: string) =>
      events.find(({ event, message }) => event === 'asyncEnd' && message.path === path)?.message.rowCount

    t.test('the page\'s round trips: every relation statement sent before any statement answers', async (t) => {
      const { status, body, events } = await get('/pets?limit=3&expand=owner.employer,toys')
      t.equal(status, 200)
      t.same(body.data.map((pet: { owner: { employer: { id: number } | null } }) => pet.owner.employer?.id ?? null), [1, 1, 2])
      const started = sentStatements(events)
      const firstAnswer = events.findIndex(({ event }) => event === 'asyncEnd')
      const sentBefore = sentStatements(events.slice(0, firstAnswer))
      if (oneWave) {
        t.same(sentBefore.sort(), ['page  0', 'rows owner 0', 'rows owner.employer 0', 'rows toys 0'],
          'one wave: the page (reading its count) and every relation of the plan')
        t.same(started.sort(), ['page  0', 'rows owner 0', 'rows owner.employer 0', 'rows toys 0'], 'nothing after')
        t.ok(events.filter(({ message }) => message.kind === 'rows').every(({ message }) => message.keyCount === undefined), 'no keys of their own')
      } else if (dialect.name === 'mariadb') {
        t.same(sentBefore, ['page  0'], 'MariaDB: level by level, each level once its parents are read (plugin/sql/dialects/mysql.ts)')
        t.same(started.sort(), ['count  0', 'page  0', 'rows owner 1', 'rows owner.employer 2', 'rows toys 1'])
        const countAnswered = events.findIndex(({ event, message }) => event === 'asyncEnd' && message.kind === 'count')
        const sentBeforeCount = sentStatements(events.slice(0, countAnswered))
        // The level below may start too, if owner answers first.
        t.same(sentBeforeCount.filter((sent) => !sent.endsWith(' 2')).sort(), ['count  0', 'page  0', 'rows owner 1', 'rows toys 1'],
          'the full page\'s count in the round trip of the first level')
      } else {
        t.same(sentBefore, ['page  0'], 'SQLite: one statement after another, each level once its parents are read')
        t.same(started, ['page  0', 'count  0', 'rows owner 1', 'rows owner.employer 2', 'rows toys 1'])
      }
    })

    t.test('the count: read by the page\'s own statement in one wave, else sent only where the page cannot tell the total', async (t) => {
      const counts = (events: Array<{ event: string; message: LoadMessage }>) =>
        events.filter(({ event, message }) => event === 'start' && message.kind === 'count').length
      const pageReadsCount = (events: Array<{ event: string; message: LoadMessage }>) =>
        events.some(({ event, message }) => event === 'start' && message.kind === 'page' && message.sql.includes('"__expand_total"'))
      const short = await get('/pets?limit=10&fields=id')
      t.same(short.body, { data: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }], limit: 10, offset: 0, total: 4 })
      t.equal(counts(short.events), 0, 'the page tells it')
      t.equal(pageReadsCount(short.events), oneWave, oneWave ? 'read by the page, its answer dropped' : 'not read')
      const past = await get('/pets?limit=2&offset=10&fields=id')
      t.same(past.body, { data: [], limit: 2, offset: 10, total: 4 }, 'past the end: the count tells it')
      t.equal(counts(past.events), 1, 'a page with no row to carry the count: a COUNT of its own')
      const full = await get('/pets?limit=2&offset=1&fields=id')
      t.same(full.body, { data: [{ id: 2 }, { id: 3 }], limit: 2, offset: 1, total: 4 })
      const answered = full.events.filter(({ event }) => event === 'asyncEnd').map(({ message }) => message.kind)
      t.same(answered.sort(), oneWave ? ['page'] : ['count', 'page'], oneWave ? 'the page\'s rows carry the count' : 'the count after the full page')
    })

    t.test('a cursor page, both ways: its relations keyed by the page without the row it reads past its limit', async (t) => {
      const url = '/pet-pages?limit=2&sort=name&expand=owner.employer,toys&fields=name,owner.name,owner.employer.name,toys.name'
      const waves = (events: Array<{ event: string; message: LoadMessage }>) => {
        const firstAnswer = events.findIndex(({ event }) => event === 'asyncEnd')
        return {
          started: sentStatements(events).sort(),
          sentBefore: events.slice(0, firstAnswer).filter(({ event }) => event === 'start').length,
        }
      }
      const expectWaves = (t: Test, events: Array<{ event: string; message: LoadMessage }>) => {
        const { started, sentBefore } = waves(events)
        if (oneWave) {
          t.same(started, ['page  0', 'rows owner 0', 'rows owner.employer 0', 'rows toys 0'], 'one wave')
          t.equal(sentBefore, 4, 'every statement sent before any answered')
        } else {
          t.same(started, ['page  0', 'rows owner 1', 'rows owner.employer 2', 'rows toys 1'], 'level by level')
          t.equal(sentBefore, 1)
        }
      }
      const first = await get(url)
      t.equal(first.status, 200)
      t.same(first.body.data, [
        { name: 'Garfield', owner: { name: 'Fred', employer: { name: 'McDonalds' } }, toys: [{ name: 'ball' }, { name: 'string' }] },
        { name: 'Nemo', owner: { name: 'Sally', employer: { name: 'Acme' } }, toys: [] },
      ])
      t.equal(first.body.prev, null)
      expectWaves(t, first.events)
      // Odie, the row read past the limit, has a toy: its statement reads Garfield's two only (in one statement with the
      // page, a relation's rows alone: no row for a parent key without one, Nemo's).
      t.equal(rowsOf(first.events, 'toys'), 2, 'no toy of the row past the limit')
      if (oneWave) {
        const page = first.statements.find((statement) => statement.startsWith('select "pets"."id"'))!
        const toys = first.statements.find((statement) => statement.includes('"pet_toys"'))!
        // The pets' scope (nothing hidden: '') first, then the limit.
        t.ok(page.endsWith(' order by "pets"."name" asc, "pets"."id" asc limit $2'), 'the page reads past its limit')
        t.same(first.parameters[first.statements.indexOf(page)], ['', 3])
        t.ok(toys.includes(' order by "pets"."name" asc, "pets"."id" asc limit $2) as "__expand_key_rows"'), 'the toys\' keys: the page to its limit')
        t.same(first.parameters[first.statements.indexOf(toys)], ['', 2])
      }

      const next = await get(`${url}&after=${encodeURIComponent(first.body.next)}`)
      t.same(next.body.data, [
        { name: 'Odie', owner: { name: 'Fred', employer: { name: 'McDonalds' } }, toys: [{ name: 'bone' }] },
        { name: 'Rex', owner: { name: 'Bob', employer: null }, toys: [{ name: 'ball' }] },
      ])
      t.equal(next.body.next, null)
      expectWaves(t, next.events)

      const before = await get(`${url}&before=${encodeURIComponent(next.body.prev)}`)
      t.same(before.body.data, first.body.data, 'the page before, in the same order')
      t.equal(before.body.prev, null)
      expectWaves(t, before.events)
      // Read backwards: the row past the limit is Garfield's predecessor, none; the page's relations are Garfield's and Nemo's.
      t.equal(rowsOf(before.events, 'toys'), 2)
    })

    t.test('the scope of every level in the subqueries of the levels below: a hidden parent brings no child', async (t) => {
      // Fred (pets 1 and 2) hidden: the pets of Sally and Bob only.
      const people = await get('/people?expand=pets&fields=id,pets.name', { 'x-hidden-person': 'Fred' })
      t.same(people.body.data, [{ id: 2, pets: [{ name: 'Nemo' }] }, { id: 3, pets: [] }, { id: 4, pets: [{ name: 'Rex' }] }])
      t.equal(rowsOf(people.events, 'pets'), 2, 'the pets of visible people only are read')
      const page = `select "people"."id" as "id" from "people" where "people"."name" <> ${p(1)} order by "people"."id" limit ${p(2)} offset ${p(3)}`
      const pets = (at: number, keys: string) => 'select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."owner_id" as "__expand_parent" from "pets" ' +
        `where "pets"."species" <> ${p(at)} and "pets"."owner_id" in (${keys}) order by "pets"."owner_id", "pets"."id" limit 16384`
      const peopleAt = (at: number) => `select "people"."id" as "id" from "people" where "people"."name" <> ${p(at)} order by "people"."id" limit ${p(at + 1)} offset ${p(at + 2)}`
      t.same(people.statements.filter((statement) => statement.includes('__expand_parent')), written([
        oneWave ? inWave(dialect, pets(1, keySubqueryOf(peopleAt(2), '"people"."id"'))) : pets(1, [p(2), p(3), p(4), p(5)].join(', ')),
      ]), oneWave ? 'the people\'s scope in the keys\' subquery, its values before the pets\' own' : 'the visible people\'s keys')
      const counted = pageAsSent(dialect, page, `select count(*) as "total" from "people" where "people"."name" <> ${p(1)}`)
      t.equal(people.statements.filter((statement) => statement === asWrittenOn(dialect, counted)).length, 1,
        'the page under the scope (in one wave, reading its count under the scope too)')

      // Dogs hidden: Odie's and Rex's toys are not read, at depth 2.
      const deep = await get('/people?expand=pets.toys&fields=id,pets.toys', { 'x-hidden-species': 'dog' })
      t.same(deep.body.data, [
        { id: 1, pets: [{ toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }] }] },
        { id: 2, pets: [{ toys: [] }] },
        { id: 3, pets: [] },
        { id: 4, pets: [] },
      ])
      t.equal(rowsOf(deep.events, 'pets.toys'), 2, 'the toys of visible pets only are read')
    })

    t.test('a relation reading each parent\'s first rows, and the relations below it: keyed by its first rows alone', async (t) => {
      const alone = await get('/people/1?expand=first_pet&fields=id,first_pet.id,first_pet.name')
      t.same(alone.body, { id: 1, first_pet: [{ id: 1, name: 'Garfield' }] })
      const relation = alone.events.find(({ event, message }) => event === 'start' && message.path === 'first_pet')!.message
      t.same({ wave: relation.wave, keyCount: relation.keyCount }, oneWave ? { wave: 0, keyCount: undefined } : { wave: 1, keyCount: 1 },
        oneWave ? 'keyed by a subquery of the person\'s statement, sent with it' : 'keyed by its parent\'s key, in the wave after it')
      t.equal(alone.statements.length, 2)
      // Fred's first pet is Garfield (toys 1 and 2); his second, Odie, has the bone: its toys are never read.
      const below = await get('/people/1?expand=first_pet')
      t.same(below.body.first_pet, [{ id: 1, name: 'Garfield', owner: 1, toys: [1, 2] }])
      const started = sentStatements(below.events)
      t.same(started, oneWave ? ['one  0', 'rows first_pet 0', 'ids first_pet.toys 0'] : ['one  0', 'rows first_pet 1', 'ids first_pet.toys 2'])
      t.equal(rowsOf(below.events, 'first_pet.toys'), 2, 'the first pet\'s toys alone')
      if (oneWave) {
        const toys = below.statements.find((statement) => statement.includes('"pet_toys"'))!
        t.ok(toys.startsWith('with "__expand_wave_keys" as (select distinct "__expand_key_rows"."id" as "key" from (select "__expand_numbered"."id" as "id", '),
          'the toys keyed by the first pets\' statement, by the name it selects their key under')
      }
      // A to-one relation below it: keyed by the column its rows name after the relation.
      const owners = await get('/people/1?expand=first_pet.owner&fields=id,first_pet.name,first_pet.owner.name')
      t.same(owners.body, { id: 1, first_pet: [{ name: 'Garfield', owner: { name: 'Fred' } }] })
      const sent = sentStatements(owners.events)
      t.same(sent, oneWave ? ['one  0', 'rows first_pet 0', 'rows first_pet.owner 0'] : ['one  0', 'rows first_pet 1', 'rows first_pet.owner 2'])
      if (oneWave) {
        const people = owners.statements.find((statement) => statement.startsWith('with "__expand_wave_keys" as (select distinct "__expand_key_rows"."owner" as "key"'))
        t.ok(people?.includes(' left join (select "people"."id" as "id", cast("people"."name" as text) as "name", '), 'the owners keyed by the first pets\' `owner`')
      }
    })

    t.test('a failed root statement answers once the statements sent with it have answered', async (t) => {
      // 2^31: past an int4 key (PostgreSQL refuses it, the others find no row): 404 everywhere.
      const { status, events } = await get('/pets/2147483648?expand=owner.employer,toys')
      t.equal(status, 404)
      const starts = events.filter(({ event }) => event === 'start').length
      const answers = events.filter(({ event }) => event === 'asyncEnd').length
      t.equal(starts, oneWave ? 4 : 1)
      t.equal(answers, starts, 'every statement sent had answered before the response')
    })
  })

  if (dialect.name === 'postgres') {
    t.test('PostgreSQL resolved level by level (resolveDialectAs, as the benchmarks compare them): the same body, a level per round trip', async (t) => {
      const database = await openSeeded(t, dialect)
      // Another Kysely instance over the same connections (and the same statement log): resolved on its own.
      const levelDb = database.db.withPlugin({ transformQuery: ({ node }) => node, transformResult: async ({ result }) => result })
      resolveDialectAs(levelDb, Object.freeze({ ...postgresDialect, loadsInOneWave: false }))
      const [oneWave, levels] = [await build(database), await build(database, undefined, levelDb)]
      t.teardown(() => Promise.all([oneWave.close(), levels.close()]))
      const recorder = recordLoads()
      t.teardown(recorder.stop)
      const url = '/pets?limit=3&expand=owner.employer,toys'
      const expected = (await oneWave.inject(url)).body
      recorder.events.length = 0
      const response = await levels.inject(url)
      t.equal(response.body, expected)
      const started = sentStatements(recorder.events)
      t.same(started, ['page  0', 'count  0', 'rows owner 1', 'rows toys 1', 'rows owner.employer 2'], 'the count once the page has answered; each level after its parents')
      const countAnswered = recorder.events.findIndex(({ event, message }) => event === 'asyncEnd' && message.kind === 'count')
      // The level below may start too, if owner answers first.
      t.same(recorder.events.slice(0, countAnswered).filter(({ event, message }) => event === 'start' && message.wave < 2).map(({ message }) => message.path || message.kind),
        ['page', 'count', 'owner', 'toys'], 'the count read with the first level')
    })
  }

  t.test(`the object budget in one wave on ${dialect.name}: the same answers as one level at a time`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database, 6)
    t.teardown(() => app.close())
    database.reset()
    t.equal((await app.inject('/pets?expand=owner&fields=id,owner')).statusCode, 200)
    const tooLarge = await app.inject('/pets?expand=owner.employer&fields=id,owner')
    t.equal(tooLarge.statusCode, 400)
    t.equal(tooLarge.json().code, 'FST_EXPAND_TOO_LARGE')
    t.equal((await app.inject('/pets?expand=owner')).statusCode, 400, '4 toy ids + 4 owners = 8')
    t.equal((await app.inject('/pets?limit=3&expand=owner.employer&fields=id,owner')).statusCode, 200, '3 owners + 3 employers = 6')
    t.equal((await app.inject('/pets?limit=3&expand=owner.employer')).statusCode, 400, 'and the 3 toy ids of pets 1 to 3: 9')
    // Every to-many statement reads one row past what the budget has left at most, rounded up to a power of two:
    // in one wave, sent before anything is loaded, 7 → 8 on each; one level at a time, less below a level that charged some.
    const bounded = database.statements.filter((statement) => statement.includes('__expand_parent'))
    t.ok(bounded.length > 0)
    if (inOneWave(dialect)) t.ok(bounded.every((statement) => statement.includes(' limit 8)')), 'limit 8 on each')
    else t.ok(bounded.every((statement) => / limit [1248]$/.test(statement)), 'limit 8 at most')
  })
}

t.test('key subqueries: the parent statement as a derived table, and the scope values of each level in order', async (t) => {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) })
  t.teardown(() => db.destroy())
  const parent = db.selectFrom('pets').select(['pets.id as id', 'pets.owner_id as owner']).where('pets.species', '=', 'cat').orderBy('pets.id').limit(3)
  const keys = keySubquery(db, parent, ['pets.owner_id'])
  t.equal(keys.compile().sql,
    'select distinct "__expand_key_rows"."key" from (select "pets"."owner_id" as "key" from "pets" where "pets"."species" = $1 order by "pets"."id" limit $2) as "__expand_key_rows"')
  const people = (keys: AnySelect) => db.selectFrom('people').select(['people.id as id', 'people.id as __expand_wave_join'])
    .where('people.name', '<>', 'Fred').where('people.id', 'in', keys)
  const compiled = waveStatement(db, keys, 1, people).compile()
  t.equal(compiled.sql,
    'with "__expand_wave_keys" as (select distinct "__expand_key_rows"."key" from (select "pets"."owner_id" as "key" from "pets" ' +
    'where "pets"."species" = $1 order by "pets"."id" limit $2) as "__expand_key_rows") ' +
    'select "__expand_wave_rows"."id", "__expand_wave_rows"."__expand_wave_join", "__expand_wave_keys"."key" as "__expand_wave_key" from "__expand_wave_keys" ' +
    'left join (select "people"."id" as "id", "people"."id" as "__expand_wave_join" from "people" where "people"."name" <> $3 ' +
    'and "people"."id" in (select "__expand_wave_keys"."key" from "__expand_wave_keys")) as "__expand_wave_rows" ' +
    'on "__expand_wave_rows"."__expand_wave_join" = "__expand_wave_keys"."key"',
    'the keys read once, first; every key joined to its rows, or to none')
  t.same(compiled.parameters, ['cat', 3, 'Fred'], 'the parents\' values, then the statement\'s own scope\'s')
  const numbered = (keys: AnySelect) => people(keys).select('people.id as __expand_wave_row')
  t.equal(waveStatement(db, keys, 1, numbered).compile().sql, compiled.sql
    .replace('"people"."id" as "__expand_wave_join"', '"people"."id" as "__expand_wave_join", "people"."id" as "__expand_wave_row"') +
    ' order by "__expand_wave_rows"."__expand_wave_row"',
  'rows that say their place in the order (a to-many relation\'s): in it, the place itself not selected')
  // A composite key: each part under its own name, joined part by part, each part of the key said.
  const lines = db.selectFrom('shipments').select(['shipments.id as id', 'shipments.order_id as line.0', 'shipments.line_no as line.1'])
    .where('shipments.carrier', '=', 'Post')
  const lineKeys = keySubquery(db, lines, ['shipments.order_id', 'shipments.line_no'])
  t.equal(lineKeys.compile().sql,
    'select distinct "__expand_key_rows"."key.0" as "key.0", "__expand_key_rows"."key.1" as "key.1" from (select "shipments"."order_id" as "key.0", ' +
    '"shipments"."line_no" as "key.1" from "shipments" where "shipments"."carrier" = $1) as "__expand_key_rows"')
  const orderLines = (keys: AnySelect) => db.selectFrom('order_lines')
    .select(['order_lines.product as product', 'order_lines.order_id as __expand_wave_join.0', 'order_lines.line_no as __expand_wave_join.1'])
    .where(sql<SqlBool>`("order_lines"."order_id", "order_lines"."line_no") in ${keys}`)
  t.equal(waveStatement(db, lineKeys, 2, orderLines).compile().sql,
    `with "__expand_wave_keys" as (${lineKeys.compile().sql}) ` +
    'select "__expand_wave_rows"."product", "__expand_wave_rows"."__expand_wave_join.0" as "__expand_wave_join.0", ' +
    '"__expand_wave_rows"."__expand_wave_join.1" as "__expand_wave_join.1", ' +
    '"__expand_wave_keys"."key.0" as "__expand_wave_key.0", "__expand_wave_keys"."key.1" as "__expand_wave_key.1" from "__expand_wave_keys" ' +
    'left join (select "order_lines"."product" as "product", "order_lines"."order_id" as "__expand_wave_join.0", ' +
    '"order_lines"."line_no" as "__expand_wave_join.1" from "order_lines" where ("order_lines"."order_id", "order_lines"."line_no") in ' +
    '(select "__expand_wave_keys"."key.0" as "key.0", "__expand_wave_keys"."key.1" as "key.1" from "__expand_wave_keys")) as "__expand_wave_rows" ' +
    'on "__expand_wave_rows"."__expand_wave_join.0" = "__expand_wave_keys"."key.0" and "__expand_wave_rows"."__expand_wave_join.1" = "__expand_wave_keys"."key.1"',
    'a composite key: its parts, each under its own name, matched part by part')
  t.equal(nestedScope(undefined, undefined), undefined)
  t.same(nestedScope({ key: 'a', values: [1] }, undefined), { key: 'a>', values: [1] })
  t.same(nestedScope(undefined, { key: 'b', values: [2] }), { key: '>b', values: [2] })
  t.same(nestedScope({ key: 'a', values: [1] }, { key: 'b', values: [2, 3] }), { key: 'a>b', values: [1, 2, 3] })
  t.same(nestedScope({ key: null, values: [1] }, { key: 'b', values: [2] }), { key: null, values: [1, 2] }, 'a scope without a shape: built per request')
  t.same(nestedScope({ key: 'a', values: [] }, { key: null, values: [] }), { key: null, values: [] })
})

t.test('a relation with limit keyed by a subquery: its numbered rows say their key and place on PostgreSQL; never on SQLite', async (t) => {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) })
  t.teardown(() => db.destroy())
  const relation = new ResourceGraph([Company, Person, Pet, PetStore, Toy]).node(Person).relations.get('first_pet')!
  const field = { kind: 'expanded', name: 'first_pet', relation, level: { node: relation.target, fields: [] }, orderBy: undefined } as const
  const context = { db, dialect: postgresDialect, listed: () => undefined, scope: () => undefined }
  const keys = db.selectFrom('people').select('people.id')
  t.equal(relationRowsQuery(context as never, field as never, keys, 8).compile().sql,
    'select "__expand_numbered"."id" as "id", "__expand_numbered"."__expand_parent" as "__expand_parent", ' +
    '"__expand_numbered"."__expand_wave_join" as "__expand_wave_join", "__expand_numbered"."__expand_wave_row" as "__expand_wave_row" ' +
    'from (select "pets"."id" as "id", "pets"."owner_id" as "__expand_parent", "pets"."owner_id" as "__expand_wave_join", ' +
    'row_number() over(order by "pets"."owner_id", "pets"."id") as "__expand_wave_row", ' +
    'row_number() over(partition by "pets"."owner_id" order by "pets"."id") as "__expand_row" ' +
    'from "pets" where "pets"."owner_id" = any(array(select "people"."id" from "people"))) as "__expand_numbered" ' +
    'where "__expand_numbered"."__expand_row" <= 1 order by "__expand_numbered"."__expand_parent", "__expand_numbered"."__expand_row" limit 8')
  t.throws(() => relationRowsQuery({ ...context, dialect: sqliteDialect } as never, field as never, keys, 8),
    new TypeError('SQLite reads each parent\'s first rows for a list of keys, never a subquery'))
})

/**
 * A pool whose statements of one wave wait until the page's statement (the
 * statement `page` matches) has answered and `between` has run: the page
 * read before a write, its relations' statements after it, as when a write
 * lands between them.
 */
function writeBetween (pool: pg.Pool, between: () => Promise<void>, page = / order by "pets"\."id" limit \$\d+ offset \$\d+$/): pg.Pool {
  let pageAnswered!: () => void
  const answered = new Promise<void>((resolve) => { pageAnswered = resolve })
  const connect = async () => {
    const client = await pool.connect()
    return {
      async query (text: string, values?: unknown[]) {
        if (text.startsWith('with "__expand_wave_keys"')) await answered
        const result = await client.query(text, values)
        if (text.startsWith('select') && page.test(text)) {
          await between()
          pageAnswered()
        }
        return result
      },
      release: (error?: Error | boolean) => client.release(error),
    }
  }
  return { connect, end: async () => await pool.end() } as unknown as pg.Pool
}

/**
 * `url` answered by the app `build` makes on `database`, then by one whose
 * pool (`writeBetween`) runs `between` once `page` (the route's statement)
 * has answered and before the statements of its wave run: both answers, the
 * plain app (for a request after the write), and each statement the second sent.
 */
/** PostgreSQL, its wave's statements each sent alone (sql/combined-statements.ts sends them as one where it can). */
const sentOneByOne = Object.freeze({ ...postgresDialect, combinesStatements: false })

async function acrossAWrite (
  t: Test, database: TestDatabase, build: (db: Kysely<any>) => Promise<FastifyInstance>, url: string,
  between: () => Promise<unknown>, page?: RegExp
) {
  const plain = await build(database.db)
  t.teardown(() => plain.close())
  const before = await plain.inject(url)
  t.equal(before.statusCode, 200)
  const [{ schema }] = (await database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('schema')).execute()) as [{ schema: string }]
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, options: `-c search_path=${schema}` })
  const sent: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: writeBetween(pool, async () => { await between() }, page) }),
    log: (event) => { if (event.level === 'query') sent.push({ sql: event.query.sql, parameters: event.query.parameters }) },
  })
  // Statements sent one by one, as where one of them cannot go out in one statement with the others: one statement reads one snapshot.
  resolveDialectAs(db, sentOneByOne)
  const gated = await build(db)
  t.teardown(async () => { await gated.close(); await db.destroy() })
  const during = await gated.inject(url)
  t.equal(during.statusCode, 200)
  return { plain, before, during, sent }
}

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  t.test(`below an expanded list on ${dialect.name}: each sort and limit keys the statements under it by its own rows`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const base = '/people?limit=2&expand=pets.toys&fields=id,pets.name,pets.toys.name'
    const ask = async (query: string) => {
      database.reset()
      // Scope values that differ from each other and from the page's: each statement's template is kept from its first run.
      const response = await app.inject({ url: `${base}${query}`, headers: { 'x-hidden-person': 'Nobody', 'x-hidden-species': 'dragon' } })
      t.equal(response.statusCode, 200, query)
      const toys = database.statements.filter((statement) => statement.startsWith('with "__expand_wave_keys"') && statement.includes('"pet_toys"'))
      return { body: response.json().data, statements: database.statements.length, toys }
    }
    // The same plan each time: the toys' statement is keyed by the pets' statement as each request writes it.
    const whole = await ask('')
    for (const [query, kept] of [['&limit[pets]=1', '<= 1 '], ['&sort[pets]=-name&limit[pets]=1', '<= 1 '], ['&sort[pets]=-name', undefined], ['', undefined]] as const) {
      const { body, statements, toys } = await ask(query)
      t.equal(statements, whole.statements, `${query}: the page, the pets and their toys in one wave, no toy read again by key`)
      t.equal(toys.length, 1)
      if (kept === undefined) t.notMatch(toys[0]!, /"__expand_row" <=/, `${query}: the toys of every pet`)
      else t.match(toys[0]!, `"__expand_numbered"."__expand_row" ${kept}`, `${query}: the toys of each person's first pet alone`)
      if (query === '') t.same(body, whole.body)
    }
    // The other way round, on an app of its own: a limited list first, then the whole one.
    const fresh = await build(database)
    t.teardown(() => fresh.close())
    for (const query of ['&limit[pets]=1', '']) {
      database.reset()
      await fresh.inject({ url: `${base}${query}`, headers: { 'x-hidden-person': 'Nobody', 'x-hidden-species': 'dragon' } })
      t.equal(database.statements.length, whole.statements, `${query}: no toy read again by key`)
    }
  })

  t.test(`a write between the page and its relations' statements on ${dialect.name}: each parent placed is answered for`, async (t) => {
    const database = await openSeeded(t, dialect)
    const url = '/pets?limit=1&expand=owner.employer,toys'
    // Pet 0 (Bob's, no toys) comes first in the table once written: the relations' subqueries read it as the page.
    const insertPetZero = async () =>
      await database.db.insertInto('pets').values({ id: 0, name: 'Zero', species: 'cat', owner_id: 4, sold_from_id: null }).execute()
    const buildPets = async (db: Kysely<any>) => await build(database, undefined, db)
    const { plain, before, during, sent } = await acrossAWrite(t, database, buildPets, url, insertPetZero)
    t.same(during.json().data, before.json().data, 'Garfield, with Fred, his employer and both toys: as before the write')
    t.same(during.json().data[0].toys.map((toy: { name: string }) => toy.name), ['ball', 'string'])
    const waves = sent.filter(({ sql }) => sql.startsWith('with '))
    t.equal(waves.length, 3, 'owner, owner.employer and toys sent with the page')
    const byKey = sent.filter(({ sql }) => !sql.startsWith('with ') && / in \(\$\d+\)/.test(sql)).map(({ sql, parameters }) => [sql.split(' from ')[1]!.split(' ')[0], parameters])
    t.same(byKey.sort(), [['"companies"', [1]], ['"people"', ['', 1]], ['"toys"', [1]]].sort(),
      'Fred (not Bob), his employer, and Garfield\'s toys read by key after the wave: their parents were not the wave\'s')
    t.equal(sent.length, 1 + 3 + 3, 'the page (reading its count), the wave, and the three relations read again')
    const after = await plain.inject(url)
    t.equal(after.json().data[0].name, 'Zero', 'the write is there for the next request')
  })
}

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  t.test(`a write between the page and its relations' statements over a composite key on ${dialect.name}: answered for part by part`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createCompositeKeys(database.db, 'postgres')
    const buildShipments = async (db: Kysely<any>) => {
      const app = Fastify()
      await app.register(expandPlugin, { db, resources: compositeKeyResources })
      app.expand.routes('/shipments', Shipment)
      await app.ready()
      return app
    }
    // Shipment 0 (of line 2,1) comes first once written: the relations' subqueries read it as the page.
    const { before, during, sent } = await acrossAWrite(t, database, buildShipments, '/shipments?limit=1&expand=line', async () =>
      await database.db.insertInto('shipments').values({ id: 0, carrier: 'Zero', order_id: 2, line_no: 1 }).execute(),
    / order by "shipments"\."id" limit \$\d+ offset \$\d+$/)
    t.same(before.json().data, [
      { id: 1, carrier: 'Post', line: { orderId: 1, lineNo: 2, product: 'Ink', quantity: 1, shipments: [1, 3] } },
    ])
    t.same(during.json().data, before.json().data, 'shipment 1 with line 1,2 and its shipments: as before the write')
    t.equal(sent.filter(({ sql }) => sql.startsWith('with ')).length, 2, 'line and line.shipments sent with the page')
    const byKey = sent.filter(({ sql }) => !sql.startsWith('with ') && !sql.includes(' offset '))
    t.same(byKey.map(({ sql, parameters }) => [sql.split(' from ')[1]!.split(' ')[0], parameters]), [['"order_lines"', [1, 2]], ['"shipments"', [1, 2]]],
      'line 1,2 (not 2,1) and its shipments read by key after the wave: their parents were not the wave\'s')
    t.ok(byKey.every(({ sql }) => sql.includes('"order_id" = $1 and ') && sql.includes('"line_no" = $2')), 'each matched part by part')
    t.equal(sent.length, 1 + 2 + 2, 'the page (reading its count), the wave, and the two relations read again')
  })

  t.test(`a write between the page and its expanded list's statement on ${dialect.name}: each parent's first rows, sorted and filtered`, async (t) => {
    const database = await openSeeded(t, dialect)
    const url = '/pets?limit=1&expand=toys&fields=id,toys&sort[toys]=-name&limit[toys]=1&where[toys.name][contains]=i'
    const buildPets = async (db: Kysely<any>) => await build(database, undefined, db)
    // Pet 0 (no toys) comes first once written: the toys' subquery reads it as the page.
    const { before, during, sent } = await acrossAWrite(t, database, buildPets, url, async () =>
      await database.db.insertInto('pets').values({ id: 0, name: 'Zero', species: 'cat', owner_id: 4, sold_from_id: null }).execute())
    t.same(before.json().data, [{ id: 1, toys: [{ id: 2, name: 'string' }] }], 'Garfield\'s toys with an i, by name descending, the first')
    t.same(during.json().data, before.json().data, 'as before the write')
    const waves = sent.filter(({ sql }) => sql.startsWith('with "__expand_wave_keys"'))
    t.equal(waves.length, 1, 'the toys sent with the page')
    t.match(waves[0]!.sql, / over\(partition by "pet_toys"\."pet_id" order by "toys"\."name" desc, "pet_toys"\."toy_id"\) as "__expand_row" /)
    t.same(waves[0]!.parameters, ['', 1, 0, '%i%'], 'the page\'s scope, limit and offset, then the list\'s condition')
    const byKey = sent.filter(({ sql }) => !sql.startsWith('with "__expand_wave_keys"') && !sql.includes(' offset '))
    t.same(byKey.map(({ parameters }) => parameters), [['%i%', 1]], 'Garfield\'s toys read by key after the wave, with the list\'s condition')
    t.match(byKey[0]!.sql, / order by "toys"\."name" desc, "pet_toys"\."toy_id"\) as "__expand_row" /)
    t.equal(sent.length, 1 + 1 + 1, 'the page (reading its count), the wave, and the toys again')
  })

  t.test(`a write between the page and its aggregates' statement on ${dialect.name}: each parent counted`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const buildPeople = async (db: Kysely<any>) => {
      const app = Fastify()
      await app.register(expandPlugin, { db, resources: derivedResources })
      app.expand.routes('/people', DerivedPerson)
      await app.ready()
      return app
    }
    // Person 0 (no pets) comes first once written: the aggregates' subquery reads it as the page.
    const { before, during, sent } = await acrossAWrite(t, database, buildPeople, '/people?limit=1&fields=id,pet_count', async () =>
      await database.db.insertInto('people').values({ id: 0, name: 'Zero', born: null, employer_id: null, manager_id: null }).execute(),
    / order by "people"\."id" limit \$\d+ offset \$\d+$/)
    t.same(before.json().data, [{ id: 1, pet_count: 2 }])
    t.same(during.json().data, before.json().data, 'Ana and her two pets: as before the write')
    t.equal(sent.filter(({ sql }) => sql.startsWith('with ')).length, 1, 'the count of pets sent with the page')
    const byKey = sent.filter(({ sql }) => !sql.startsWith('with ') && !sql.includes(' offset '))
    t.same(byKey.map(({ sql, parameters }) => [/ from ("\w+")/.exec(sql)![1], parameters.at(-1)]), [['"pets"', 1]],
      'Ana\'s pets counted by key after the wave: the wave counted for Zero, not her')
    t.equal(sent.length, 1 + 1 + 1, 'the page (reading its count), the wave, and the count again')
  })

  t.test(`a page that fails with a relation's statement in flight on ${dialect.name}: answered once that statement has answered`, async (t) => {
    const database = await openSeeded(t, dialect)
    const [{ schema }] = (await database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('schema')).execute()) as [{ schema: string }]
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, options: `-c search_path=${schema}` })
    const answered: string[] = []
    // The page is cancelled as a statement_timeout cancels it; the owners' statement of its wave answers a moment later.
    const failingPage = {
      async connect () {
        const client = await pool.connect()
        return {
          async query (text: string, values?: unknown[]) {
            if (/ offset \$\d+$/.test(text)) {
              answered.push('page')
              throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })
            }
            await new Promise((resolve) => setTimeout(resolve, 50))
            const result = await client.query(text, values)
            answered.push(text.startsWith('with "__expand_wave_keys"') ? 'relation' : 'other')
            return result
          },
          release: (error?: Error | boolean) => client.release(error),
        }
      },
      end: async () => await pool.end(),
    } as unknown as pg.Pool
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: failingPage }) })
    resolveDialectAs(db, sentOneByOne)
    const app = await build({ ...database, db })
    t.teardown(async () => { await app.close(); await db.destroy() })
    const response = await app.inject('/pets?expand=owner&fields=id,owner')
    answered.push('response')
    t.equal(response.statusCode, 503)
    t.notMatch(response.body, /canceling/, 'no driver text')
    t.same(answered, ['page', 'relation', 'response'], 'the owners\' statement sent with the page, answered before the response')
  })
}

/** The names starting with `__expand` on any object of `value`, with where they are. */
function statementColumns (value: unknown, at = 'payload'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => statementColumns(item, `${at}[${index}]`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([name, item]) =>
    name.startsWith('__expand') ? [`${at}.${name}`] : statementColumns(item, `${at}.${name}`))
}

/** The generated routes of the tests below: pages, details, cursor pages, relations with `limit`, expanded lists. */
function generatedRoutes (app: FastifyInstance): void {
  app.expand.routes('/pets', Pet, {
    permitListExpands: ['owner.employer', 'toys', 'sold_from'], expandedLists: { toys: { sort: ['name'], maxLimit: 5 } },
  })
  app.expand.routes('/people', Person, {
    permitListExpands: ['pets.toys', 'employer', 'first_pet'], expandedLists: { pets: { sort: ['name'], maxLimit: 5 } },
  })
  app.expand.routes('/pet-pages', Pet, { pagination: 'cursor', sort: ['name'], permitListExpands: ['owner.employer', 'toys'] })
}

const generatedRouteUrls = [
  '/pets?expand=owner.employer,toys,sold_from',
  '/pets?limit=2&offset=1&expand=owner.employer,toys',
  '/pets/1?expand=owner.employer,toys,sold_from',
  '/pets?expand=toys,owner&sort[toys]=-name&limit[toys]=2',
  '/people?expand=pets.toys,employer,first_pet',
  '/people?expand=pets.toys,employer&sort[pets]=name&limit[pets]=1',
  '/people/1?expand=pets.toys,first_pet',
  '/pet-pages?limit=2&expand=owner.employer,toys',
]

for (const dialect of dialects()) {
  t.test(`a generated route's rows hold no column of its statements, at any depth, on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const payloads: unknown[] = []
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: [Company, Person, Pet, PetStore, Toy] })
    app.register(async (routes) => {
      routes.addHook('preSerialization', async (_request: FastifyRequest, _reply: unknown, payload: unknown) => {
        payloads.push(payload)
        return payload
      })
      generatedRoutes(routes)
    })
    await app.ready()
    t.teardown(() => app.close())
    for (const url of generatedRouteUrls) {
      payloads.length = 0
      const reply = await app.inject({ url })
      t.equal(reply.statusCode, 200, url)
      t.equal(payloads.length, 1, url)
      t.same(statementColumns(payloads[0]), [], url)
      t.ok(JSON.stringify(payloads[0]).includes('"name"'), `${url}: rows were seen`)
    }
  })
}

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  t.test(`the wave as one statement on ${dialect.name}: one statement a request, the same bytes as its statements sent each alone`, async (t) => {
    const database = await openSeeded(t, dialect)
    const [{ schema }] = (await database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('schema')).execute()) as [{ schema: string }]
    const alone: string[] = []
    const oneByOne = new Kysely<any>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, options: `-c search_path=${schema}` }) }),
      log: (event) => { if (event.level === 'query') alone.push(event.query.sql) },
    })
    resolveDialectAs(oneByOne, sentOneByOne)
    const appOver = async (db: Kysely<any>) => {
      const app = Fastify()
      await app.register(expandPlugin, { db, resources: [Company, Person, Pet, PetStore, Toy] })
      generatedRoutes(app)
      await app.ready()
      t.teardown(() => app.close())
      return app
    }
    const combined = await appOver(database.db)
    const separate = await appOver(oneByOne)
    t.teardown(() => oneByOne.destroy())
    const headers = { 'x-hidden-person': 'Nobody', 'x-hidden-species': 'dragon' }
    for (const url of ['/pets?limit=100&expand=owner.employer,toys', ...generatedRouteUrls]) {
      for (const time of ['first', 'second']) {
        alone.length = 0
        const expected = await separate.inject({ url, headers })
        t.equal(expected.statusCode, 200, url)
        database.reset()
        const reply = await combined.inject({ url, headers })
        // A cursor is sealed with a key of each plugin instance's (and a nonce of its own): the rest, byte for byte.
        const unsealed = (body: string) => body.replace(/"(next|prev)":"[^"]+"/g, '"$1":"(cursor)"')
        t.equal(unsealed(reply.body), unsealed(expected.body), `${url} (${time} time): the same bytes`)
        t.equal(database.sent.length, 1, `${url} (${time} time): one statement`)
        t.same([...database.statements].sort(), [...alone].sort(), `${url}: the statements sent alone, its parts`)
      }
    }
  })
}

/**
 * A part of a combined statement (plugin/sql/combined-statements.ts) read
 * from `from`, every column as its text (its types not learnt yet).
 */
function combinedPart (index: number, names: readonly string[], from: string): string {
  const column = (name: string) => `"__expand_part"."${name}"`
  return `(select cast(json_build_array(json_agg(json_build_array(${names.map((name) => `cast(${column(name)} as text)`).join(', ')})), ` +
    `json_build_array(${names.map((name) => `min(pg_typeof(${column(name)})::oid)::int4`).join(', ')})) as text) ` +
    `from ${from} as "__expand_part") as "__expand_part_${index}"`
}

/** What a statement sent runs, with its parameters: `db.executeQuery` is what the plugin sends its statements through. */
function recordSent (database: TestDatabase): Array<{ sql: string; parameters: readonly unknown[] }> {
  const sent: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const execute = database.db.executeQuery.bind(database.db)
  database.db.executeQuery = (async (query: Parameters<typeof execute>[0]) => {
    const { sql, parameters } = 'sql' in query ? query : query.compile()
    sent.push({ sql, parameters })
    return await execute(query)
  }) as typeof database.db.executeQuery
  return sent
}

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  t.test(`the wave as one statement on ${dialect.name}: each relation reads its keys from its parents' rows, a common table expression`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const sent = recordSent(database)
    const headers = { 'x-hidden-person': 'Nobody', 'x-hidden-species': 'dragon' }
    const reply = await app.inject({ url: '/pets?limit=2&expand=owner.employer,toys&fields=name,owner.name,owner.employer.name,toys.name', headers })
    t.equal(reply.statusCode, 200)
    t.same(reply.json().data, [
      { name: 'Garfield', owner: { name: 'Fred', employer: { name: 'McDonalds' } }, toys: [{ name: 'ball' }, { name: 'string' }] },
      { name: 'Odie', owner: { name: 'Fred', employer: { name: 'McDonalds' } }, toys: [{ name: 'bone' }] },
    ])
    const keys = (source: number, name: string) => `any(array(select distinct "__expand_source_${source}"."${name}" as "key" from "__expand_source_${source}"))`
    // The page's rows first (its statement without the count), then each relation's rows under its scope, keyed by its
    // parents' rows by name; each relation's part of the answer is its source, read once: no join of the keys, no column
    // saying which key a row answers for (in one snapshot, every parent placed is a row of its parents' source).
    const sources = [
      'select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."owner_id" as "owner" from "pets" ' +
        'where "pets"."species" <> $1 order by "pets"."id" limit $2 offset $3',
      'select "people"."id" as "id", cast("people"."name" as text) as "name", "people"."employer_id" as "employer" from "people" ' +
        `where "people"."name" <> $4 and "people"."id" = ${keys(0, 'owner')}`,
      `select "companies"."id" as "id", cast("companies"."name" as text) as "name" from "companies" where "companies"."id" = ${keys(1, 'employer')}`,
      'select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" ' +
        'from "toys" inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" ' +
        `where "pet_toys"."pet_id" = ${keys(0, 'id')} order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384`,
    ]
    const page = 'select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."owner_id" as "owner", ' +
      '(select count(*) as "total" from "pets" where "pets"."species" <> $5) as "__expand_total" from "pets" ' +
      'where "pets"."species" <> $6 order by "pets"."id" limit $7 offset $8'
    const expected = `with ${sources.map((source, index) => `"__expand_source_${index}" as (${source})`).join(', ')} select ` + [
      combinedPart(0, ['id', 'name', 'owner', '__expand_total'], `(${page})`),
      combinedPart(1, ['id', 'name', 'employer'], '"__expand_source_1"'),
      combinedPart(2, ['id', 'name'], '"__expand_source_2"'),
      combinedPart(3, ['id', 'name', '__expand_parent'], '"__expand_source_3"'),
    ].join(', ') + ', '
    t.equal(sent.length, 1, 'one statement')
    t.equal(sent[0]!.sql.slice(0, expected.length), expected, 'the sources, then each part')
    t.match(sent[0]!.sql.slice(expected.length), /^cast\('true' as bool\) as "__expand_probe_16", /, 'then the driver\'s probes')
    t.same(sent[0]!.parameters, ['dragon', 2, 0, 'Nobody', 'dragon', 'dragon', 2, 0], 'each source\'s values, then the page\'s')
  })

  t.test(`a statement of the request sent apart on ${dialect.name}: the others as sent alone, each saying the keys it answered for`, async (t) => {
    const database = await openSeeded(t, dialect)
    // A date is not read back from a combined statement (plugin/sql/combined-rows.ts's knownTypes): the page's
    // statement goes alone once that is learnt, and the rows its relations' statements read keys from could be of
    // another moment than the page's. They join their parents' keys, as statements sent alone do, and a parent placed
    // that one did not answer for is read by its key.
    const Born = defineResource({
      name: 'Born',
      table: 'people',
      schema: Type.Object({ id: Type.Integer(), born: Type.Union([Type.String({ format: 'date' }), Type.Null()]), pets: Type.Array(Type.Integer()) }),
      fields: ['id', 'born'],
      expandable: { pets: ['Pet', { many: true, foreignKey: 'owner_id', fields: ['id', 'name', 'toys'] }] },
    })
    await sql`alter table people add column born date`.execute(database.db)
    await sql`update people set born = '2001-02-03' where id = 1`.execute(database.db)
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: [Born, Company, Person, Pet, PetStore, Toy] })
    app.expand.routes('/born', Born)
    await app.ready()
    t.teardown(() => app.close())
    const sent = recordSent(database)
    const url = '/born?limit=2&expand=pets.toys&fields=id,born,pets.name,pets.toys.name'
    const first = await app.inject(url)
    t.equal(first.statusCode, 200)
    t.same(first.json().data, [
      { id: 1, born: '2001-02-03', pets: [{ name: 'Garfield', toys: [{ name: 'ball' }, { name: 'string' }] }, { name: 'Odie', toys: [{ name: 'bone' }] }] },
      { id: 2, born: null, pets: [{ name: 'Nemo', toys: [] }] },
    ])
    t.equal(sent.length, 4, 'sent as one, its page\'s date read otherwise: each statement again alone')
    sent.length = 0
    const second = await app.inject(url)
    t.equal(second.body, first.body)
    const kind = (text: string) => text.startsWith('select "people"."id"')
      ? 'page'
      : text.startsWith('with "__expand_source_') ? 'with sources' : text.startsWith('select (select cast(') ? 'combined' : text
    t.same(sent.map(({ sql }) => kind(sql)), ['page', 'combined'], 'the page alone; its relations\' statements as one, without sources')
    t.ok(sent[1]!.sql.includes('"__expand_wave_keys"."key" as "__expand_wave_key"'), 'each saying the keys it answered for')
  })
}
