import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import {
  asWrittenOn, dialects, inComparableOrder, inOneWave, inWave, keySubqueryOf, pageAsSent, type Dialect, type TestDatabase,
} from '../fixtures/dialects.js'
import { openRelationTables } from '../fixtures/relation-lists.js'
import { DerivedPerson, derivedResources } from '../fixtures/derived.js'
import { Type } from '@sinclair/typebox'

// Counts, aggregates and computed fields (docs/derived.md): exact bodies, SQL and statement counts on every
// dialect, over the rows of relation-lists.ts, whose deleted pet and secret tag no aggregate may count.

let explained: { statements: Array<{ path: string; aggregates?: readonly string[] }>; included: string[] } | undefined

async function build (t: Test, database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: derivedResources })
  app.expand.routes('/people', DerivedPerson, {
    filter: { pet_count: ['eq', 'gte'], cat_count: ['gte'], last_pet: ['eq', 'null'], shout: ['eq', 'contains'] },
    sort: ['name', 'pet_count', 'last_pet', 'pet_id_avg', 'shout'],
  })
  app.expand.routes('/feed', DerivedPerson, { sort: ['pet_count', 'last_pet'], pagination: 'cursor', pageSize: 2 })
  app.get('/explained', { expandable: { resource: DerivedPerson } }, async (request) => {
    explained = app.expand.explain(request)
    return []
  })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

interface Answer { status: number; body: any; statements: string[] }

async function get (app: FastifyInstance, database: TestDatabase, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  database.reset()
  const response = await app.inject({ method: 'GET', url, headers })
  return { status: response.statusCode, body: response.json(), statements: [...database.statements] }
}

const plain = (statement: string) => statement.replace(/\$\d+/g, '?')
const keys = (count: number) => Array.from({ length: count }, () => '?').join(', ')
/** A relation's or aggregate's statement as sent: keyed by its parents' statement in one wave (`inWave`), else as written. */
const sent = (dialect: Dialect, statement: string) => (inOneWave(dialect) ? inWave(dialect, statement) : statement)

/** The types counts and sums are cast to, as each dialect writes them (plugin/sql/dialects: `numberCasts`). */
const numberCasts = {
  sqlite: { integer: 'integer', double: 'double precision' },
  'sqlite with cached statements': { integer: 'integer', double: 'double precision' },
  postgres: { integer: 'integer', double: 'double precision' },
  mariadb: { integer: 'signed', double: 'double' },
} as const satisfies Record<Dialect['name'], { integer: string; double: string }>

/** An average, the sum over the count, as each dialect writes it: PostgreSQL's quotient that rounds to 0 written apart. */
const averageOf = (dialect: Dialect, sum: string, count: string): string => dialect.name !== 'postgres'
  ? `${sum} / ${count}`
  : `case when abs(${sum}) >= ${count} * cast('1e-300' as double precision) then ${sum} / ${count} ` +
    `when abs(${sum}) * 2 <= ${count} * cast('4.9406564584124654e-324' as double precision) then ${sum} * 0 else ${sum} / ${count} end`

/** An ascending order with nulls last, as each dialect writes it: SQLite and MariaDB have no NULLS LAST. */
const nullsLastAscending = {
  sqlite: (column: string) => `${column} is null asc, ${column} asc`,
  'sqlite with cached statements': (column: string) => `${column} is null asc, ${column} asc`,
  postgres: (column: string) => `${column} asc nulls last`,
  mariadb: (column: string) => `${column} is null asc, ${column} asc`,
} satisfies Record<Dialect['name'], (column: string) => string>

/** The pets' aggregates of the people whose keys `keys` writes: bound (`?, ?`), or a key subquery (`keySubqueryOf`). */
const petAggregates = (dialect: Dialect, keys: string) => {
  const { integer, double } = numberCasts[dialect.name]
  return `select "pets"."owner_id" as "__expand_parent", cast(count(*) as ${integer}) as "pet_count", ` +
    `cast(count(case when "pets"."species" = ? then 1 end) as ${integer}) as "cat_count", max("pets"."name") as "last_pet", ` +
    `cast(sum("pets"."id") as ${double}) as "pet_id_sum", ${averageOf(dialect, `cast(sum("pets"."id") as ${double})`, 'count("pets"."id")')} as "pet_id_avg" ` +
    `from "pets" where "pets"."deleted" = ? and "pets"."owner_id" in (${keys}) group by "pets"."owner_id"`
}

const everyPerson = [
  { id: 1, name: 'Ana', pet_count: 2, cat_count: 1, last_pet: 'Rex', pet_id_sum: 3, pet_id_avg: 1.5, report_count: 2, youngest_report: '1985-05-05', shout: 'ANA' },
  { id: 2, name: 'Bea', pet_count: 1, cat_count: 0, last_pet: 'Goldie', pet_id_sum: 4, pet_id_avg: 4, report_count: 1, youngest_report: '1990-01-01', shout: 'BEA' },
  { id: 3, name: 'Caio', pet_count: 1, cat_count: 0, last_pet: 'Bolt', pet_id_sum: 5, pet_id_avg: 5, report_count: 1, youngest_report: null, shout: 'CAIO' },
  { id: 4, name: 'Dora', pet_count: 0, cat_count: 0, last_pet: null, pet_id_sum: null, pet_id_avg: null, report_count: 0, youngest_report: null, shout: 'DORA' },
  { id: 5, name: 'Edu', pet_count: 1, cat_count: 1, last_pet: 'Tom', pet_id_sum: 6, pet_id_avg: 6, report_count: 0, youngest_report: null, shout: 'EDU' },
]
const allDerived = 'pet_count,cat_count,last_pet,pet_id_sum,pet_id_avg,report_count,youngest_report,shout'

function runOn (dialect: Dialect): void {
  t.test(`derived fields on ${dialect.name}`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const app = await build(t, database)
    const ordered = (statements: string[]) => inComparableOrder(dialect, statements.map(plain))
    /** An expected statement, written with double-quoted identifiers, as the dialect quotes it. */
    const written = (statement: string) => asWrittenOn(dialect, statement)
    const { integer } = numberCasts[dialect.name]

    t.test('deferred: absent by default, each shown when named in expand; one grouped statement per relation path', async (t) => {
      const plainPage = await get(app, database, '/people?limit=2')
      t.same(plainPage.body.data, [{ id: 1, name: 'Ana' }, { id: 2, name: 'Bea' }])
      t.equal(plainPage.statements.length, inOneWave(dialect) ? 1 : 2,
        'the page and its count (read by the page in one wave): no aggregate statement')

      const all = await get(app, database, `/people?expand=${allDerived}`)
      t.same(all.body, { data: everyPerson, limit: 20, offset: 0, total: 5 })
      // Statements are logged as they answer: the page is told by its offset (in one wave, it reads its count, and
      // the aggregates' statements, sent with it, repeat it as their keys' subquery).
      const page = 'select "people"."id" as "id", cast("people"."name" as text) as "name", upper("people"."name") as "shout" ' +
        'from "people" order by "people"."id" limit ? offset ?'
      const isPage = (statement: string) => statement.startsWith('select') && statement.includes(' offset ')
      t.same(all.statements.map(plain).filter(isPage), [
        written(pageAsSent(dialect, page, 'select count(*) as "total" from "people"')),
      ], 'a computed field is read with its row')
      // Level by level keyed by the page's five keys (padded to 8); in one wave, by the page's statement.
      const people = inOneWave(dialect) ? keySubqueryOf(page, '"people"."id"') : keys(8)
      t.same(ordered(all.statements.filter((statement) => !isPage(statement))), ordered([
        sent(dialect, petAggregates(dialect, people)),
        sent(dialect, `select "people"."manager_id" as "__expand_parent", cast(count(*) as ${integer}) as "report_count", ` +
          `max("people"."born") as "youngest_report" from "people" where "people"."manager_id" in (${people}) group by "people"."manager_id"`),
      ].map(written)), 'the five aggregates over pets share one statement; those over reports another')
    })

    t.test('named in fields alone, at any depth, over to-many and many-to-many relations', async (t) => {
      const one = await get(app, database, '/people/2?fields=id,pet_count')
      t.same(one.body, { id: 2, pet_count: 1 }, "Bea's Garfield is deleted: outside the pet scope, not counted")
      t.equal(one.statements.length, 2)
      const deep = await get(app, database, '/people/5?fields=id,pets&expand=pets.toy_count,pets.tag_count,pets.first_tag,pets.label')
      t.same(deep.body, { id: 5, pets: [{ id: 6, name: 'Tom', species: 'cat', owner: 5, toy_count: 0, tag_count: 1, first_tag: 'calm', label: 'Tom the cat' }] },
        "Tom's vip tag is secret: one tag, and the first visible one")
      const person = 'select "people"."id" as "id" from "people" where "people"."id" = ?'
      // The computed field in the pets statement.
      const pets = (keys: string) => 'select "pets"."id" as "id", cast("pets"."name" as text) as "name", cast("pets"."species" as text) as "species", ' +
        '"pets"."owner_id" as "owner", concat("pets"."name", \' the \', "pets"."species") as "label", "pets"."owner_id" as "__expand_parent" ' +
        `from "pets" where "pets"."deleted" = ? and "pets"."owner_id" in (${keys}) order by "pets"."owner_id", "pets"."id" limit 16384`
      const petsKeyed = pets(inOneWave(dialect) ? keySubqueryOf(person, '"people"."id"') : '?')
      const petKeys = inOneWave(dialect) ? keySubqueryOf(petsKeyed, '"pets"."id"') : '?'
      // Logged as they answer: in one wave, the person's statement need not be first.
      t.same(ordered(deep.statements), ordered([
        person,
        sent(dialect, petsKeyed),
        sent(dialect, `select "toys"."pet_id" as "__expand_parent", cast(count(*) as ${integer}) as "toy_count" from "toys" ` +
          `where "toys"."pet_id" in (${petKeys}) group by "toys"."pet_id"`),
        sent(dialect, `select "pet_tags"."pet_id" as "__expand_parent", cast(count(*) as ${integer}) as "tag_count", min("tags"."name") as "first_tag" ` +
          'from "pet_tags" inner join "tags" on "tags"."id" = "pet_tags"."tag_id" where "tags"."secret" = ? ' +
          `and "pet_tags"."pet_id" in (${petKeys}) group by "pet_tags"."pet_id"`),
      ].map(written)), 'in one wave, the aggregates of the pets keyed by the pets\' statement, itself keyed by the person\'s')
      t.equal(deep.statements.length, 4, 'the person, the pets, and one statement per aggregated relation of the pets')
    })

    t.test('omit and fields leave them out; nothing below one', async (t) => {
      t.same((await get(app, database, '/people/1?expand=pet_count,shout&omit=pet_count')).body, { id: 1, name: 'Ana', shout: 'ANA' })
      const below = await get(app, database, '/people/1?expand=pet_count.x')
      t.same([below.status, below.body.code, below.body.message],
        [400, 'FST_EXPAND_UNKNOWN_FIELD', "'pet_count.x': 'pet_count' is an aggregate or computed value, with no fields below it"])
      t.equal((await get(app, database, '/people/1?fields=id,nope_count')).body.code, 'FST_EXPAND_UNKNOWN_FIELD')
    })

    t.test('fieldsFor: an aggregate over a field the caller may not see is hidden, at any level', async (t) => {
      const guest = { 'x-role': 'guest' }
      const hidden = await get(app, database, '/people/1?expand=youngest_report', guest)
      t.same([hidden.status, hidden.body.code], [403, 'FST_EXPAND_FORBIDDEN'], 'max over reports.born, which the guest may not see')
      t.same((await get(app, database, '/people/1?expand=cat_count,pet_count', guest)).body, { id: 1, name: 'Ana', pet_count: 2, cat_count: 1 },
        'a where on a hidden field still counts: the guest sees the count, never a species')
      t.equal((await get(app, database, '/people?sort=-last_pet', guest)).status, 200)
      t.equal((await get(app, database, '/people?filter[pet_count]=1', guest)).status, 200)
    })

    t.test('lists filter and sort by them: the table read through a subquery adding them', async (t) => {
      const sorted = await get(app, database, '/people?filter[pet_count][gte]=1&sort=-pet_count,last_pet&expand=pet_count&limit=2&offset=1')
      t.same(sorted.body, { data: [{ id: 3, name: 'Caio', pet_count: 1 }, { id: 2, name: 'Bea', pet_count: 1 }], limit: 2, offset: 1, total: 4 })
      const derived = '(select "people".*, coalesce("__expand_aggregate_0"."pet_count", 0) as "__expand_derived_pet_count", ' +
        '"__expand_aggregate_0"."last_pet" as "__expand_derived_last_pet" from "people" left join (select "pets"."owner_id" as "__expand_parent", ' +
        `cast(count(*) as ${integer}) as "pet_count", max("pets"."name") as "last_pet" from "pets" where "pets"."deleted" = ? group by "pets"."owner_id") ` +
        'as "__expand_aggregate_0" on "__expand_aggregate_0"."__expand_parent" = "people"."id") as "people"'
      const nullsLast = nullsLastAscending[dialect.name]('"people"."__expand_derived_last_pet"')
      // Statements are logged as they answer: in one wave the aggregate of the shown rows may answer before the page.
      const page = sorted.statements.map(plain).filter((statement) => statement.startsWith(written('select "people"."id"')))
      t.same(page, [written(`select "people"."id" as "id", cast("people"."name" as text) as "name" from ${derived} ` +
        `where "people"."__expand_derived_pet_count" >= ? order by "people"."__expand_derived_pet_count" desc, ${nullsLast}, "people"."id" asc limit ? offset ?`)])
      const countStart = written('select count(*) as "total" from (select "people".*, coalesce')
      // The count may answer after the aggregate, read with it where statements run at once.
      const count = sorted.statements.map(plain).find((statement) => statement.startsWith(written('select count(*)')))
      t.equal(count?.slice(0, countStart.length), countStart, 'the count reads the same subquery')
      t.equal(sorted.statements.length, 3, 'the page, its count, the aggregate of the shown rows')

      t.same((await get(app, database, '/people?sort=-last_pet&fields=id,last_pet')).body.data,
        [{ id: 4, last_pet: null }, { id: 5, last_pet: 'Tom' }, { id: 1, last_pet: 'Rex' }, { id: 2, last_pet: 'Goldie' }, { id: 3, last_pet: 'Bolt' }],
        'null over no rows sorts before every value descending')
      t.same((await get(app, database, '/people?sort=pet_id_avg,name&fields=id')).body.data.map((row: { id: number }) => row.id), [1, 2, 3, 5, 4])
      t.same((await get(app, database, '/people?filter[pet_count]=0&fields=id,pet_count')).body.data, [{ id: 4, pet_count: 0 }], 'a count with no rows is 0, and filters as 0')
      t.same((await get(app, database, '/people?filter[cat_count][gte]=1&fields=id')).body.data, [{ id: 1 }, { id: 5 }])
      t.same((await get(app, database, '/people?filter[last_pet][null]=true&fields=id')).body.data, [{ id: 4 }])
      const computed = await get(app, database, '/people?filter[shout][contains]=o&sort=-shout&fields=id,shout')
      t.same(computed.body.data, [{ id: 4, shout: 'DORA' }, { id: 3, shout: 'CAIO' }])
      t.match(plain(computed.statements[0]!), written('from (select "people".*, upper("people"."name") as "__expand_derived_shout" from "people") as "people"'))
    })

    t.test('cursor pages by an aggregate, forward and back, as the offset pages', async (t) => {
      const forward: number[][] = []
      let url = '/feed?sort=last_pet&fields=id'
      let page = await get(app, database, url)
      forward.push(page.body.data.map((row: { id: number }) => row.id))
      while (page.body.next !== null) {
        page = await get(app, database, `${url}&after=${page.body.next}`)
        forward.push(page.body.data.map((row: { id: number }) => row.id))
      }
      t.same(forward, [[3, 2], [1, 5], [4]], 'Bolt, Goldie, Rex, Tom, then no pet last')
      const back = await get(app, database, `${url}&before=${page.body.prev}`)
      t.same(back.body.data.map((row: { id: number }) => row.id), [1, 5])
      url = '/feed?sort=-pet_count&fields=id'
      const first = await get(app, database, url)
      t.same(first.body.data, [{ id: 1 }, { id: 2 }])
      t.same((await get(app, database, `${url}&after=${first.body.next}`)).body.data, [{ id: 3 }, { id: 5 }])
    })

    t.test('explain shows each aggregate statement with the aggregates it reads', async (t) => {
      await get(app, database, '/explained?expand=pet_count,cat_count,report_count,shout')
      t.same(explained!.statements.map((statement) => [statement.path, statement.aggregates]), [
        ['', undefined], ['pets', ['pet_count', 'cat_count']], ['reports', ['report_count']],
      ])
      t.same(explained!.included, ['id', 'name', 'pet_count', 'cat_count', 'report_count', 'shout'])
    })
  })
}

for (const dialect of dialects()) runOn(dialect)

t.test('a derived field listed in the resource\'s fields is shown by default', async (t) => {
  const database = await openRelationTables(t, dialects()[0]!)
  const Owner = defineResource({
    name: 'Owner',
    table: 'people',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), pets: Type.Array(Type.Integer()) }),
    fields: ['id', 'pet_count'],
    expandable: { pets: ['Pet', { many: true, foreignKey: 'owner_id' }] },
    aggregates: { pet_count: { count: 'pets' } },
  })
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...derivedResources, Owner] })
  app.expand.routes('/owners', Owner)
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/owners/1')).json(), { id: 1, pet_count: 2 })
  t.same((await app.inject('/owners/1?fields=id')).json(), { id: 1 })
})
