import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { asWrittenOn, dialects, inComparableOrder, inOneWave, inWave, keySubqueryOf, pageAsSent, type TestDatabase } from '../fixtures/dialects.js'
import { Company, Person, Pet, openSeeded, resources, handlerPetColumns } from '../fixtures/tables.js'

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet, { permitListExpands: ['owner.employer.ceo', 'toys', 'sold_from'], maxPageSize: 1000 })
  app.expand.routes('/people', Person)
  app.expand.routes('/companies', Company)
  app.get('/handler-pets', { expandable: { resource: Pet, list: true } }, async (request) => {
    const rows = await database.db.selectFrom('pets')
      .select(handlerPetColumns)
      .orderBy('id').limit(2).execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

/** The JSON body and the statements one request ran. */
async function get (app: FastifyInstance, database: TestDatabase, url: string) {
  database.reset()
  const response = await app.inject(url)
  return { status: response.statusCode, body: response.json(), statements: [...database.statements] }
}

const garfield = { id: 1, name: 'Garfield', species: 'cat', owner: 1, sold_from: 1, toys: [1, 2] }

// The select lists of the statements below: every declared field the plan needs, relations under their field names.
const petColumns = '"pets"."id" as "id", cast("pets"."name" as text) as "name", cast("pets"."species" as text) as "species", "pets"."owner_id" as "owner", "pets"."sold_from_id" as "sold_from"'
const personColumns = '"people"."id" as "id", cast("people"."name" as text) as "name", cast("people"."hobbies" as text) as "hobbies", "people"."employer_id" as "employer"'

for (const dialect of dialects()) {
  t.test(`loading on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    /** The placeholder of the index-th value: numbered on PostgreSQL, `?` on SQLite and MariaDB. */
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
    /** The expected statements, written with double-quoted identifiers, as the dialect quotes them. */
    const written = (statements: string[]) => statements.map((statement) => asWrittenOn(dialect, statement))
    const oneWave = inOneWave(dialect)
    /** What a relation's statement reads its keys from: its parent statement's `column` in one wave, else the keys bound. */
    const keyed = (parent: string, column: string, keys: string) => oneWave ? keySubqueryOf(parent, column) : keys
    /** A relation's statement as sent: in one wave, joined from the keys it answers for. */
    const wave = (statement: string) => oneWave ? inWave(dialect, statement) : statement
    const petById = `select ${petColumns} from "pets" where "pets"."id" = ${p(1)}`

    t.test('default detail: ids for relations, to-many ids in one statement', async (t) => {
      const { status, body, statements } = await get(app, database, '/pets/1')
      t.equal(status, 200)
      t.same(body, garfield)
      t.equal(statements.length, 2, 'root + toy ids')
      t.same(inComparableOrder(dialect, statements), inComparableOrder(dialect, written([
        petById,
        wave('select "pet_toys"."toy_id" as "id", "pet_toys"."pet_id" as "__expand_parent" from "pet_toys" ' +
          'inner join "toys" on "toys"."id" = "pet_toys"."toy_id" ' +
          `where "pet_toys"."pet_id" in (${keyed(petById, '"pets"."id"', p(1))}) order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384`),
      ])), 'many-to-many ids: the join table joined to the related table (its rows decide which ids exist), in the join column\'s order')
    })

    t.test('to-one, nested to-one, to-one with options and many-to-many', async (t) => {
      const { body, statements } = await get(app, database, '/pets/1?expand=owner.employer,toys,sold_from')
      t.same(body, {
        id: 1,
        name: 'Garfield',
        species: 'cat',
        owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: { id: 1, name: 'McDonalds', public: true } },
        sold_from: { id: 1, name: 'Pet Place' },
        toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }],
      })
      t.equal(statements.length, 5, 'root, owner, owner.employer, sold_from, toys')
      const owner = `select ${personColumns} from "people" where "people"."id" in (${keyed(petById, '"pets"."owner_id"', p(1))})`
      t.same(inComparableOrder(dialect, statements), inComparableOrder(dialect, written([
        petById,
        wave(owner),
        wave(`select "companies"."id" as "id", cast("companies"."name" as text) as "name", "companies"."public" as "public" from "companies" where "companies"."id" in (${keyed(owner, '"people"."employer_id"', p(1))})`),
        wave(`select "pet_stores"."id" as "id", cast("pet_stores"."name" as text) as "name" from "pet_stores" where "pet_stores"."id" in (${keyed(petById, '"pets"."sold_from_id"', p(1))})`),
        wave('select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" from "toys" ' +
          'inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" ' +
          `where "pet_toys"."pet_id" in (${keyed(petById, '"pets"."id"', p(1))}) order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384`),
      ])), oneWave
        ? 'each keyed by its parent\'s statement as a subquery: the owner\'s employer by the owner\'s, which holds the pet\'s'
        : 'to-one by key (options narrow the columns), nested to-one by the keys of the level above, many-to-many through the join table')
    })

    t.test('null key, empty to-many, missing related row', async (t) => {
      const nemo = await get(app, database, '/pets/3?expand=sold_from,toys')
      t.same(nemo.body, { id: 3, name: 'Nemo', species: 'fish', owner: 2, sold_from: null, toys: [] })
      if (oneWave) t.equal(nemo.statements.length, 3, 'every relation\'s statement sent with the row\'s, before its keys are known')
      else t.equal(nemo.statements.length, 2, 'no statement for a relation whose keys are all null')
      const rex = await get(app, database, '/pets/4?expand=owner.employer')
      t.same(rex.body, { id: 4, name: 'Rex', species: 'dog', owner: { id: 4, name: 'Bob', hobbies: 'golf', employer: null }, sold_from: 1, toys: [1] })
      const ann = await get(app, database, '/people/3?expand=pets,employer')
      t.same(ann.body, { id: 3, name: 'Ann', hobbies: 'chess', employer: null, pets: [] })
    })

    t.test('to-many through a foreign key, deferred until expanded', async (t) => {
      const plain = await get(app, database, '/people/1')
      t.same(plain.body, { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 })
      t.equal(plain.statements.length, 1)
      const expanded = await get(app, database, '/people/1?expand=pets')
      t.same(expanded.body, { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1, pets: [{ id: 1, name: 'Garfield' }, { id: 2, name: 'Odie' }] })
      t.equal(expanded.statements.length, 2)
      const person = `select ${personColumns} from "people" where "people"."id" = ${p(1)}`
      t.same(inComparableOrder(dialect, expanded.statements), inComparableOrder(dialect, written([
        person,
        wave('select "pets"."id" as "id", cast("pets"."name" as text) as "name", "pets"."owner_id" as "__expand_parent" from "pets" ' +
          `where "pets"."owner_id" in (${keyed(person, '"people"."id"', p(1))}) order by "pets"."owner_id", "pets"."id" limit 16384`),
      ])), 'to-many by the foreign key, only the fields of the relation\'s options')
    })

    t.test('a page: its keys once each in the relations\' statements, padded to a power of two', async (t) => {
      const { body, statements } = await get(app, database, '/pets?limit=3&expand=owner,toys&fields=id,owner,toys')
      t.same(body.data.map((pet: { id: number; owner: { id: number } }) => [pet.id, pet.owner.id]), [[1, 1], [2, 1], [3, 2]])
      const page = `select "pets"."id" as "id", "pets"."owner_id" as "owner" from "pets" order by "pets"."id" limit ${p(1)} offset ${p(2)}`
      const count = 'select count(*) as "total" from "pets"'
      t.same(inComparableOrder(dialect, statements), inComparableOrder(dialect, written([
        // A full page: its count read by its own statement in one wave, else after it.
        ...(oneWave ? [pageAsSent(dialect, page, count)] : [page, count]),
        wave(`select ${personColumns} from "people" where "people"."id" in (${keyed(page, '"pets"."owner_id"', `${p(1)}, ${p(2)}`)})`),
        wave('select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" from "toys" ' +
          'inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" ' +
          `where "pet_toys"."pet_id" in (${keyed(page, '"pets"."id"', `${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}`)}) order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384`),
      ])), oneWave ? 'keyed by the page\'s statement: its limit and offset bound again' : 'owners 1, 1, 2 asked for once each; three pets padded to four keys')
    })

    t.test('three levels, through a circular pair of lazy references', async (t) => {
      const { body, statements } = await get(app, database, '/pets/1?expand=owner.employer.ceo&fields=id,owner')
      t.same(body, {
        id: 1,
        owner: {
          id: 1,
          name: 'Fred',
          hobbies: 'sailing',
          employer: { id: 1, name: 'McDonalds', public: true, ceo: { id: 2, name: 'Sally', hobbies: 'hiking', employer: 2 } },
        },
      })
      t.equal(statements.length, 4, 'root, owner, employer, ceo; toys left out by fields cost nothing')
    })

    t.test('list: envelope, pagination, to-one nulls', async (t) => {
      const { body } = await get(app, database, '/companies?expand=ceo&fields=id,name,ceo.name')
      t.same(body, {
        data: [
          { id: 1, name: 'McDonalds', ceo: { name: 'Sally' } },
          { id: 2, name: 'Acme', ceo: { name: 'Fred' } },
          { id: 3, name: 'Initech', ceo: null },
        ],
        limit: 20,
        offset: 0,
        total: 3,
      })
      const page = await get(app, database, '/pets?limit=2&offset=1&fields=id,name')
      t.same(page.body, { data: [{ id: 2, name: 'Odie' }, { id: 3, name: 'Nemo' }], limit: 2, offset: 1, total: 4 })
      const clamped = await get(app, database, '/people?limit=5000&fields=id')
      t.same(clamped.body, { data: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }], limit: 100, offset: 0, total: 4 })
    })

    t.test('list restrictions apply to the resource routes', async (t) => {
      const { status, body } = await get(app, database, '/people?expand=pets')
      t.equal(status, 200, 'no permitListExpands: every path is permitted')
      t.same(body.data[0].pets, [{ id: 1, name: 'Garfield' }, { id: 2, name: 'Odie' }])
      const denied = await get(app, database, '/pets?expand=owner.pets')
      t.equal(denied.status, 400)
      t.equal(denied.body.code, 'FST_EXPAND_NOT_PERMITTED')
      t.equal(denied.statements.length, 0, 'rejected before any statement')
      const detail = await get(app, database, '/pets/1?expand=owner.pets&fields=owner')
      t.same(detail.body, { owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1, pets: [{ id: 1, name: 'Garfield' }, { id: 2, name: 'Odie' }] } })
    })

    t.test('sparse fieldsets prune the selected columns; undeclared columns are never read', async (t) => {
      const { statements } = await get(app, database, '/pets?fields=id,name')
      t.equal(statements.length, 1, 'the root alone: a page shorter than its limit tells its total (in one wave, it reads its count)')
      const root = statements.find((statement) => statement.includes(asWrittenOn(dialect, '"pets"."name"')))!
      const selected = [...root.slice(0, root.indexOf(' from ')).matchAll(new RegExp(asWrittenOn(dialect, '"pets"\\."(\\w+)"'), 'g'))].map((match) => match[1])
      t.same(selected, ['id', 'name'])
      const everything = await get(app, database, '/pets?expand=owner.employer.ceo,toys,sold_from&limit=4')
      for (const statement of everything.statements) {
        t.notMatch(statement, /password_hash|secret|\*(?!\))/, 'no undeclared or omitted column, no select *')
      }
    })

    t.test('detail errors: 404 in Fastify error shape, 400 for an id of the wrong type', async (t) => {
      const missing = await get(app, database, '/pets/999')
      t.equal(missing.status, 404)
      t.same(missing.body, { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'Pet 999 not found' })
      const wrongType = await get(app, database, '/pets/abc')
      t.equal(wrongType.status, 400)
      t.equal(wrongType.body.code, 'FST_ERR_VALIDATION')
      const badLimit = await get(app, database, '/pets?limit=0')
      t.equal(badLimit.status, 400)
      t.equal(badLimit.body.code, 'FST_ERR_VALIDATION')
    })

    t.test('app.expand.load fills rows a handler selected itself (relation ids under their column names)', async (t) => {
      const { body, statements } = await get(app, database, '/handler-pets?expand=owner,toys&fields=id,owner,toys')
      t.same(body, [
        { id: 1, owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 }, toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }] },
        { id: 2, owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 }, toys: [{ id: 3, name: 'bone' }] },
      ])
      t.equal(statements.length, 3, 'handler query, owner, toys')
    })
  })

  t.test(`statements per request do not grow with rows on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect, 496)
    const app = await build(database)
    t.teardown(() => app.close())

    const small = await get(app, database, '/pets?limit=5&expand=owner.employer,toys')
    const large = await get(app, database, '/pets?limit=500&expand=owner.employer,toys')
    t.equal(small.body.data.length, 5)
    t.equal(large.body.data.length, 500)
    // In one wave the page's statement reads its count.
    t.equal(small.statements.length, inOneWave(dialect) ? 4 : 5, 'root, count, owner, owner.employer, toys')
    t.equal(large.statements.length, small.statements.length)
    t.same(large.body.data[499], { id: 595, name: 'pet595', species: 'bird', owner: { id: 4, name: 'Bob', hobbies: 'golf', employer: null }, sold_from: null, toys: [{ id: 1, name: 'ball' }] })
    const ids = await get(app, database, '/pets?limit=500')
    t.equal(ids.statements.length, inOneWave(dialect) ? 2 : 3, 'root, count, toy ids')
    t.same(ids.body.data[4], { id: 100, name: 'pet100', species: 'cat', owner: 1, sold_from: null, toys: [1] })
  })

  t.test(`pages of 5 to 8 rows run the same SQL texts on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect, 96)
    const app = await build(database)
    t.teardown(() => app.close())

    const toysTexts = new Set<string>()
    const ids: number[] = []
    for (const [limit, offset] of [[5, 0], [6, 5], [7, 11], [8, 18]]) {
      const page = await get(app, database, `/pets?limit=${limit}&offset=${offset}&expand=owner.employer,toys`)
      t.equal(page.body.data.length, limit)
      ids.push(...page.body.data.map((pet: { id: number }) => pet.id))
      t.equal(page.statements.length, inOneWave(dialect) ? 4 : 5, 'the page, its count (read by the page in one wave) and three relations')
      // The toys' statement: keyed by a list of values, or in one wave by the page's statement.
      const toysKeys = asWrittenOn(dialect, inOneWave(dialect) ? '"pet_toys"."pet_id" = any(array(' : '"pet_toys"."pet_id" in')
      for (const statement of page.statements) if (statement.includes(toysKeys)) toysTexts.add(statement)
    }
    t.equal(new Set(ids).size, 26, 'consecutive pages, no pet twice')
    // The pets of each page are padded to 8 keys, the last repeated: one SQL text for all four pages.
    // In one wave, the toys are keyed by the page's statement: one text whatever the page.
    t.equal(toysTexts.size, 1, 'one text for the toys of 5, 6, 7 and 8 pets')
    if (inOneWave(dialect)) t.equal([...toysTexts][0]!.match(/\?|\$\d+/g)?.length, 2, 'with two placeholders: the page\'s limit and offset (the bound is a literal)')
    else t.equal([...toysTexts][0]!.match(/\?|\$\d+/g)?.length, 8, 'with eight placeholders: the keys (the bound is a literal)')
  })
}

t.test('maxObjects bounds the objects loading adds to a response, counting shared rows each time they are written', async (t) => {
  const database = await openSeeded(t, dialects()[0])
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources, maxObjects: 6 })
  app.expand.routes('/pets', Pet)
  app.expand.routes('/people', Person)
  await app.ready()
  t.teardown(() => app.close())

  // The page's own rows are not counted: 4 owners (Fred written twice); with their employers (3 non-null), 7.
  t.equal((await app.inject('/pets?expand=owner&fields=id,owner')).statusCode, 200)
  const tooLarge = await app.inject('/pets?expand=owner.employer&fields=id,owner')
  t.equal(tooLarge.statusCode, 400)
  t.same(tooLarge.json(), {
    statusCode: 400,
    code: 'FST_EXPAND_TOO_LARGE',
    error: 'Bad Request',
    message: 'The expanded relations would hold more than 6 objects: expand fewer relations or ask for a smaller page',
  })
  // Each id of an id array is one object, as an expanded row is: the pets' 4 toy ids and 4 owners, 8.
  t.equal((await app.inject('/pets?expand=owner')).statusCode, 400, '4 toy ids + 4 owners = 8')
  // Garfield's and Odie's owner Fred twice, and his 2 pets under each: 6; with Nemo, Sally and her pet: 8.
  t.equal((await app.inject('/pets?limit=2&expand=owner.pets&fields=id,owner')).statusCode, 200, '2 + 4 = 6')
  t.equal((await app.inject('/pets?limit=3&expand=owner.pets&fields=id,owner')).statusCode, 400, '3 + 5 = 8')
  t.equal((await app.inject('/people/1?expand=pets,employer')).statusCode, 200, '2 pets + 1 employer = 3')
  t.equal((await app.inject('/pets?limit=3&expand=owner.employer&fields=id,owner')).statusCode, 200, '3 owners + 3 employers = 6')
  t.equal((await app.inject('/pets?limit=3&expand=owner.employer')).statusCode, 400, 'and the 3 toy ids of pets 1 to 3: 9')
  // Many rows given, nothing expanded: only their toy ids are counted.
  t.equal((await app.inject('/pets?limit=100')).statusCode, 200, '4 toy ids')
})
