import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin from '../../../plugin/index.js'
import { dialects, type TestDatabase } from '../../fixtures/dialects.js'
import { Animal, animals, listResources, openListTables, type AnimalRow } from '../../fixtures/list-tables.js'

// Attack: one client degrading the process for everyone by making it hold or
// build something new per request, with requests that each look harmless.
// What must hold:
// - `filter[x][in]` lists are padded like relation keys (the last value
//   repeated up to a power of two), so lists of any length up to 100 make at
//   most 8 statement texts per statement, with the same rows;
// - (further down) named prepared statements and compiled serializers stay
//   bounded however many shapes and combinations a client sends.

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
      const reply = await app.inject({ url: '/animals?fields=id&filter[id][in]=5,2,9&filter[species]=cat' })
      t.equal(reply.statusCode, 200)
      t.same(reply.json(), { data: [{ id: 9 }], limit: 200, offset: 0, total: 1 })
      const page = database.statements.findIndex((statement) => statement.includes('limit'))
      const count = 1 - page
      t.equal(plain(database.statements[page]!), 'select "animals"."id" as "id" from "animals" where "animals"."id" in (?, ?, ?, ?) and "animals"."species" = ? order by "animals"."id" asc limit ? offset ?')
      t.same(database.parameters[page], [5, 2, 9, 9, 'cat', 200, 0])
      t.equal(plain(database.statements[count]!), 'select count(*) as "total" from "animals" where "animals"."id" in (?, ?, ?, ?) and "animals"."species" = ?')
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

    t.test('600 lists of 1 to 100 values make 8 page texts and 8 count texts, each answer its own rows', async (t) => {
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
      t.equal(texts.size, 16, '8 buckets (1, 2, 4, ..., 128) of a page and of a count')
    })
  })
}
