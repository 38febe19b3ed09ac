import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin from '../../../plugin/index.js'
import { dialects, type TestDatabase } from '../../fixtures/dialects.js'
import { Animal, listResources, openListTables } from '../../fixtures/list-tables.js'

// Attack: a list's filters, sort and cursor went from the validator to the
// handler in a map keyed by the `request.query` object. A preHandler that
// replaced `request.query` with a copy made `?filter[species]=cat` answer
// every row (the handler found nothing for the new object: "no filters"),
// and one that added or changed a filter was ignored.
//
// What must hold: the list route reads its filters, sort and cursor from the
// query the handler sees. A copy keeps them, a filter a hook adds or changes is
// applied, and a query a hook leaves unreadable fails the request (a 400 for a
// filter or a page size that does not parse, a 500 for a query that is not an
// object), never an unfiltered page.

type Query = Record<string, unknown>

async function build (t: Test, database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: listResources })
  const options = { filter: { species: ['eq'], weight: ['gte'] }, sort: ['name', 'weight'] } as const
  const withHook = (prefix: string, hook: (request: FastifyRequest) => void, pagination: 'offset' | 'cursor' = 'offset') => {
    app.expand.routes(prefix, Animal, { ...options, pagination, ...(pagination === 'cursor' ? { pageSize: 2 } : {}), route: { preHandler: async (request) => { hook(request) } } })
  }
  app.expand.routes('/plain', Animal, options)
  withHook('/copied', (request) => { request.query = { ...(request.query as Query) } })
  withHook('/narrowed', (request) => { request.query = { ...(request.query as Query), 'filter[weight][gte]': '4' } })
  withHook('/changed', (request) => { (request.query as Query)['filter[species]'] = 'dog' })
  withHook('/unreadable', (request) => { request.query = { ...(request.query as Query), 'filter[owner]': 'Jon' } })
  withHook('/repeated', (request) => { request.query = { ...(request.query as Query), 'filter[species]': ['cat', 'dog'] } })
  withHook('/unlimited', (request) => { request.query = { ...(request.query as Query), limit: 'all' } })
  withHook('/emptied', (request) => { request.query = undefined })
  withHook('/nulled', (request) => { request.query = null })
  withHook('/copied-feed', (request) => { request.query = { ...(request.query as Query) } }, 'cursor')
  await app.ready()
  t.teardown(() => app.close())
  return app
}

for (const dialect of dialects()) {
  t.test(`hooks that replace or change a list's query, on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database)
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json(), statements: database.statements.length }
    }
    const page = (...rows: Array<[number, string]>) =>
      ({ data: rows.map(([id, name]) => ({ id, name })), limit: 20, offset: 0, total: rows.length })

    t.test('a copy of the query keeps its filters and sort', async (t) => {
      const cats = page([3, 'Julia'], [1, 'Juno'])
      t.same((await get('/plain?filter[species]=cat&sort=name&fields=id,name')).body, cats)
      const copied = await get('/copied?filter[species]=cat&sort=name&fields=id,name')
      t.same(copied.body, cats, 'the same rows as without the hook')
      t.equal(copied.statements, 1, 'the page alone: shorter than its limit, it tells its total')
    })

    t.test('a filter a hook adds to the copy, or changes in place, is applied', async (t) => {
      t.same((await get('/narrowed?filter[species]=cat&fields=id,name')).body, page([1, 'Juno']))
      t.same((await get('/changed?filter[species]=cat&fields=id,name')).body, page([2, 'Rex'], [5, 'Ajax']))
    })

    t.test('a query a hook leaves unreadable fails the request', async (t) => {
      const unknown = await get('/unreadable?filter[species]=cat')
      t.same(unknown.body, {
        statusCode: 400,
        code: 'FST_EXPAND_BAD_FILTER',
        error: 'Bad Request',
        message: "Cannot filter Animal by 'owner': filters are species, weight",
      })
      t.equal(unknown.statements, 0)
      t.same((await get('/repeated?filter[species]=cat')).body, {
        statusCode: 400,
        code: 'FST_EXPAND_BAD_FILTER',
        error: 'Bad Request',
        message: "'filter[species]' must be given once, as a string",
      })
      t.same((await get('/unlimited?filter[species]=cat')).body, {
        statusCode: 400,
        code: 'FST_ERR_VALIDATION',
        error: 'Bad Request',
        message: 'querystring/limit must be an integer from 1 to 9007199254740991',
      }, 'a page size a hook wrote is read as the validator reads one')
      const emptied = await get('/emptied?filter[species]=cat')
      t.same(emptied.body, {
        statusCode: 500,
        code: 'FST_EXPAND_INVALID_OPTION',
        error: 'Internal Server Error',
        message: 'The query of a list route is not an object: a hook replaced request.query with undefined',
      })
      t.equal(emptied.statements, 0)
      t.equal((await get('/nulled?filter[species]=cat')).body.message, 'The query of a list route is not an object: a hook replaced request.query with null')
    })

    t.test('a copy keeps the sort and the cursor of a cursor page', async (t) => {
      const first = await get('/copied-feed?sort=weight&fields=id,weight')
      t.same(first.body.data, [{ id: 6, weight: 0.1 }, { id: 4, weight: 0.3 }])
      const second = await get(`/copied-feed?sort=weight&fields=id,weight&after=${encodeURIComponent(first.body.next as string)}`)
      t.same(second.body.data, [{ id: 3, weight: 3.2 }, { id: 1, weight: 4.5 }])
    })
  })
}
