import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import expandPlugin, { namePreparedStatements } from '../../../plugin/index.js'
import { asWrittenOn, dialects, type TestDatabase } from '../../fixtures/dialects.js'
import { buildPetApp } from '../../helpers/pet-world.js'
import { Animal, animals, listResources, openListTables, type AnimalRow } from '../../fixtures/list-tables.js'

// Attack: one client degrading the process for everyone by making it hold or
// build something new per request, with requests that each look harmless.
// What must hold:
// - `filter[x][in]` lists are padded like relation keys (the last value
//   repeated up to a power of two), so lists of any length up to 100 make at
//   most 8 statement texts per statement, with the same rows;
// - named prepared statements on PostgreSQL stay at most maxStatements on a
//   connection however many statement shapes a client makes, and a new shape
//   still gets a name (the least recently used is deallocated);
// - compiles stay within maxCompilesPerSecond however many `expand`/`fields`/
//   `omit` combinations a client sends: past it, a combination is written by
//   the generic writer with the bytes the compiled serializer writes, counted
//   as a miss without a compile.

const animalsMany: AnimalRow[] = Array.from({ length: 120 }, (_, index) => ({
  ...animals[index % animals.length]!, id: index + 1,
}))

async function listApp (t: Test, database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: listResources })
  app.expand.routes('/animals', Animal, { filter: { id: ['in'], species: ['in', 'eq'] }, pageSize: 200, maxPageSize: 200 })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/** PostgreSQL's numbered placeholders as SQLite's, to compare one expected text. */
const plain = (statement: string) => statement.replace(/\$\d+/g, '?')

for (const dialect of dialects()) {
  t.test(`in lists are padded to a power of two on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect, animalsMany)
    const app = await listApp(t, database)

    t.test('three values bind as four, the last repeated; the rows are those of the three', async (t) => {
      database.reset()
      // A full page (limit=1), so that its COUNT runs too.
      const reply = await app.inject({ url: '/animals?fields=id&filter[id][in]=5,2,9&filter[species]=cat&limit=1' })
      t.equal(reply.statusCode, 200)
      t.same(reply.json(), { data: [{ id: 9 }], limit: 1, offset: 0, total: 1 })
      const page = database.statements.findIndex((statement) => statement.includes('limit'))
      const count = 1 - page
      t.equal(plain(database.statements[page]!), asWrittenOn(dialect, 'select "animals"."id" as "id" from "animals" where "animals"."id" in (?, ?, ?, ?) and "animals"."species" = ? order by "animals"."id" asc limit ? offset ?'))
      t.same(database.parameters[page], [5, 2, 9, 9, 'cat', 1, 0])
      t.equal(plain(database.statements[count]!), asWrittenOn(dialect, 'select count(*) as "total" from "animals" where "animals"."id" in (?, ?, ?, ?) and "animals"."species" = ?'))
      t.same(database.parameters[count], [5, 2, 9, 9, 'cat'])
    })

    t.test('a power of two is not padded; one value stays one', async (t) => {
      database.reset()
      const reply = await app.inject({ url: '/animals?fields=id&filter[species][in]=cat,dog' })
      t.equal(reply.statusCode, 200)
      t.equal(reply.json().total, 80)
      const page = database.statements.findIndex((statement) => statement.includes('limit'))
      t.same(database.parameters[page], ['cat', 'dog', 200, 0])
      database.reset()
      t.same((await app.inject({ url: '/animals?fields=id&filter[id][in]=7' })).json(), { data: [{ id: 7 }], limit: 200, offset: 0, total: 1 })
      t.same(database.parameters.find((parameters) => parameters.length === 3), [7, 200, 0])
    })

    t.test('600 lists of 1 to 100 values make 8 page texts, each answer its own rows', async (t) => {
      database.reset()
      for (let request = 0; request < 600; request++) {
        const length = (request * 37) % 100 + 1
        const ids = Array.from({ length }, (_, index) => (request + index * 7) % 120 + 1)
        const reply = await app.inject({ url: `/animals?fields=id&filter[id][in]=${ids.join(',')}` })
        const expected = [...new Set(ids)].sort((a, b) => a - b)
        if (reply.statusCode !== 200 || reply.json().total !== expected.length ||
          JSON.stringify(reply.json().data) !== JSON.stringify(expected.map((id) => ({ id })))) {
          t.fail(`request ${request}: ${reply.body}`)
          return
        }
      }
      const texts = new Set(database.statements)
      t.equal(texts.size, 8, '8 buckets (1, 2, 4, ..., 128) of the page (shorter than its limit, each tells its total: no count)')
    })
  })
}

const postgres = dialects().find((dialect) => dialect.name === 'postgres')

t.test('named statements stay bounded on a connection, whatever shapes a client sends', { skip: postgres === undefined ? 'PostgreSQL not configured' : false }, async (t) => {
  const database = await openListTables(t, postgres!, animalsMany)
  const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]!.schema
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1, options: `-c search_path=${schema}` })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(pool, { maxStatements: 8 }) }) })
  t.teardown(() => db.destroy())
  const app = await listApp(t, { ...database, db })
  let looks = 0
  const prepared = async () => (await sql.raw<{ n: number }>(`select count(*)::int as n from pg_prepared_statements /* ${looks++} */`).execute(db)).rows[0]!.n
  let most = 0
  const wrong: number[] = []
  // Shapes: in lists of every bucket, on two fields, with and without an eq filter and a page size; each sent twice.
  for (let request = 0; request < 600; request++) {
    const length = (request * 37) % 100 + 1
    const ids = Array.from({ length }, (_, index) => index + 1)
    const filters = [`filter[id][in]=${ids.join(',')}`]
    if (request % 3 === 0) filters.push('filter[species][in]=cat,dog,bird')
    if (request % 5 === 0) filters.push('filter[species][eq]=cat')
    const reply = await app.inject({ url: `/animals?fields=id&limit=${request % 7 + 1}&${filters.join('&')}` })
    if (reply.statusCode !== 200) wrong.push(request)
    if (request % 25 === 24) most = Math.max(most, await prepared())
  }
  t.same(wrong, [])
  t.ok(most > 1 && most <= 8, `at most 8 prepared statements on the connection (${most})`)
  t.equal((await app.inject({ url: '/animals?fields=id&filter[id][in]=1,2,3,4,5' })).statusCode, 200)
  t.ok(await prepared() <= 8)
})

t.test('compiles stay within maxCompilesPerSecond; every combination answers the compiled bytes', async (t) => {
  const rate = 5
  const bounded = await buildPetApp({ maxCompilesPerSecond: rate, cacheSize: 1000 })
  const reference = await buildPetApp({ maxCompilesPerSecond: 1_000_000 })
  t.teardown(() => Promise.all([bounded.close(), reference.close()]))
  const fields = ['id', 'name', 'species', 'owner', 'sold_from', 'toys']
  const expands = ['', 'owner', 'toys', 'owner,toys', 'owner.employer', 'sold_from,toys']
  const urls: string[] = []
  for (let mask = 1; mask < 1 << fields.length; mask++) {
    const chosen = fields.filter((_, index) => mask & (1 << index)).join(',')
    for (const expand of expands) urls.push(`?fields=${chosen}${expand === '' ? '' : `&expand=${expand}`}`)
  }
  const started = performance.now()
  const different: string[] = []
  for (const url of urls) {
    for (const path of ['/pets/1', '/pets']) {
      const [got, expected] = await Promise.all([bounded.inject({ url: path + url }), reference.inject({ url: path + url })])
      if (got.statusCode !== expected.statusCode || got.body !== expected.body) different.push(path + url)
    }
  }
  const seconds = (performance.now() - started) / 1000
  t.same(different, [], `${urls.length * 2} requests, each body byte for byte the compiled serializer's`)
  const stats = bounded.expand.cacheStats()
  const allowed = rate + Math.ceil(seconds * rate)
  t.ok(stats.compiles <= allowed, `${stats.compiles} compiles in ${seconds.toFixed(2)} s, at most ${allowed}`)
  const unbounded = reference.expand.cacheStats()
  t.equal(stats.hits + stats.misses, unbounded.hits + unbounded.misses, 'every body counted, as a hit or a miss')
  t.ok(stats.misses >= unbounded.misses, 'a combination written without a compile is not held: a miss each time until compiled')
  t.equal(stats.size, stats.compiles, 'what is compiled is held')
  t.ok(unbounded.compiles > 100, `the unbounded app compiled ${unbounded.compiles}`)
})
