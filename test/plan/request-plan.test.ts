import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyRequest, type RouteHandlerMethod } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { type ExpansionExplanation } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Animal, listResources, openListTables } from '../fixtures/list-tables.js'

/*
 * One plan per request: the expansion part and, on a generated list route,
 * the list part (filters, sort, cursor, page) are made together, once, from
 * the query object present when the request is planned (at the latest just
 * before the handler), and every later stage reads that plan only. A hook may
 * replace `request.query` before: the plan follows the object it leaves. A
 * handler that finds no plan answers a 500 with its own code, logged, never a
 * page planned from nothing.
 */

type Query = Record<string, unknown>

const options = { filter: { species: ['eq'], weight: ['gte'] }, sort: ['name', 'weight'] } as const
const ids = (body: { data: Array<{ id: number }> }) => body.data.map((row) => row.id)

for (const dialect of dialects()) {
  t.test(`the request's plan follows the query present when it is made, on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const seen: { hooks: number; explained: ExpansionExplanation[] } = { hooks: 0, explained: [] }
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: listResources })
    const withHooks = (prefix: string, ...hooks: Array<(request: FastifyRequest) => void>) => {
      app.expand.routes(prefix, Animal, {
        ...options,
        route: { preHandler: hooks.map((hook) => async (request: FastifyRequest) => { seen.hooks++; hook(request) }) },
      })
    }
    withHooks('/cats', (request) => { request.query = { 'filter[species]': 'cat', fields: 'id' } })
    withHooks('/everything', (request) => { request.query = { fields: 'id' } })
    withHooks('/planned-first',
      (request) => { seen.explained.push(app.expand.explain(request)) },
      (request) => { request.query = { ...(request.query as Query), 'filter[species]': 'dog' } })
    app.expand.routes('/feed', Animal, {
      ...options,
      pagination: 'cursor',
      pageSize: 2,
      route: { preHandler: async (request) => { seen.explained.push(app.expand.explain(request)) } },
    })
    await app.ready()
    t.teardown(() => app.close())
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json(), statements: database.statements.length }
    }

    t.test('a hook that replaces the query with one carrying a filter gets the filtered rows', async (t) => {
      const cats = await get('/cats?fields=id,name')
      t.equal(cats.status, 200)
      t.same(cats.body, { data: [{ id: 1 }, { id: 3 }], limit: 20, offset: 0, total: 2 }, 'filtered, with the fields of the new query')
    })

    t.test('a hook that replaces the query with one without filters gets every row', async (t) => {
      const everything = await get('/everything?filter[species]=cat&sort=-name&fields=id,name')
      t.equal(everything.status, 200)
      t.same(ids(everything.body), [1, 2, 3, 4, 5, 6], 'the filter and sort of the replaced query are gone: primary key order')
      t.equal(everything.body.total, 6)
    })

    t.test('a query replaced after the request was planned changes nothing', async (t) => {
      seen.explained.length = 0
      const cats = await get('/planned-first?filter[species]=cat&fields=id')
      t.same(cats.body, { data: [{ id: 1 }, { id: 3 }], limit: 20, offset: 0, total: 2 }, 'the filter present when explain planned it')
      t.same(seen.explained[0]?.list, {
        pagination: 'offset',
        filters: [{ path: 'species', operator: 'eq', value: 'cat' }],
        order: [{ field: 'id', descending: false }],
        limit: 20,
        offset: 0,
        indexes: ['animals (species)'],
      }, 'explain reports the list part of the same plan, and the indexes that serve it')
    })

    t.test('explain reports a cursor page without its values', async (t) => {
      seen.explained.length = 0
      const first = await get('/feed?sort=-weight&filter[weight][gte]=1&fields=id')
      t.same(ids(first.body), [2, 5])
      const second = await get(`/feed?sort=-weight&filter[weight][gte]=1&fields=id&limit=500&after=${encodeURIComponent(first.body.next as string)}`)
      t.same(second.body, { data: [{ id: 1 }, { id: 3 }], limit: 100, next: null, prev: second.body.prev })
      t.type(second.body.prev, 'string')
      const order = [{ field: 'weight', descending: true }, { field: 'id', descending: false }]
      const filters = [{ path: 'weight', operator: 'gte', value: 1 }]
      const indexes = ['animals (weight)', 'animals (weight, id)']
      t.same(seen.explained.map((explained) => explained.list), [
        { pagination: 'cursor', filters, order, limit: 2, after: false, before: false, indexes },
        { pagination: 'cursor', filters, order, limit: 100, after: true, before: false, indexes },
      ], 'limit clamped to maxPageSize; whether the page continues a cursor')
    })

    t.test('list errors of the form are a 400 before any preHandler; of the names, when the request is planned', async (t) => {
      seen.hooks = 0
      for (const url of ['/cats?filter[species]=cat&filter[species]=dog', '/cats?filter[species][eq][x]=cat', '/cats?limit=0', '/cats?sort=name&sort=weight']) {
        const response = await get(url)
        t.equal(response.status, 400, url)
        t.equal(response.statements, 0, `${url}: no statement`)
      }
      t.equal(seen.hooks, 0, 'no preHandler ran')
      const unknown = await get('/planned-first?filter[owner]=Jon')
      t.same(unknown.body, {
        statusCode: 400,
        code: 'FST_EXPAND_BAD_FILTER',
        error: 'Bad Request',
        message: "Cannot filter Animal by 'owner': filters are species, weight",
      })
      t.equal(seen.hooks, 1, 'the hook that planned it ran')
      t.equal(unknown.statements, 0)
    })
  })
}

/** A Fastify instance whose error log lines are kept. */
function loggedApp (t: Test): { app: FastifyInstance; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const app = Fastify({ logger: { level: 'error', stream } })
  t.teardown(() => app.close())
  return { app, lines }
}

t.test('a generated handler reached without its plan answers 500 FST_EXPAND_NO_PLAN and logs it', async (t) => {
  const database: TestDatabase = await openListTables(t, dialects()[0]!)
  const { app, lines } = loggedApp(t)
  // Registered before the plugin, this hook sees the generated handlers as written, before the plugin plans for them.
  const handlers = new Map<string, RouteHandlerMethod>()
  app.addHook('onRoute', (routeOptions) => {
    if (routeOptions.url.startsWith('/animals')) handlers.set(routeOptions.url, routeOptions.handler)
  })
  await app.register(expandPlugin, { db: database.db, resources: listResources })
  app.expand.routes('/animals', Animal, options)
  app.get('/bare-list', (request, reply) => handlers.get('/animals')!.call(app, request, reply))
  app.get('/bare-detail/:id', (request, reply) => handlers.get('/animals/:id')!.call(app, request, reply))
  // An expandable route that is not a generated list: its plan has no list part.
  app.get('/not-a-generated-list', { expandable: { resource: Animal, list: true } }, (request, reply) =>
    handlers.get('/animals')!.call(app, request, reply))
  await app.ready()

  t.equal((await app.inject('/animals?filter[species]=cat')).json().total, 2, 'the generated route itself is planned')
  const cases = [
    ['/bare-list?filter[species]=cat', 'GET /bare-list', 'a plan for its request'],
    ['/bare-detail/1', 'GET /bare-detail/:id', 'a plan for its request'],
    ['/not-a-generated-list?filter[species]=cat', 'GET /not-a-generated-list', "the list part of its request's plan"],
  ] as const
  for (const [url, route, missing] of cases) {
    lines.length = 0
    database.reset()
    const response = await app.inject(url)
    const message = `Route ${route} reached its handler without ${missing}: the route was not prepared as fastify-expand registered it ` +
      '(an onRoute hook may have changed its expandable option or its config)'
    t.same(response.json(), { statusCode: 500, code: 'FST_EXPAND_NO_PLAN', error: 'Internal Server Error', message }, url)
    t.equal(database.statements.length, 0, `${url}: no statement`)
    const logged = lines.find((line) => line.msg === message)
    t.ok(logged, `${url}: logged`)
    t.equal((logged?.err as { code?: string } | undefined)?.code, 'FST_EXPAND_NO_PLAN', `${url}: the log line has the code`)
  }
})
