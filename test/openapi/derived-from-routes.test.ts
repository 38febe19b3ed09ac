import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifySchema, type RouteOptions } from 'fastify'
import { test, type Test } from 'tap'
import expandPlugin, { expandOpenApi } from '../../plugin/index.js'
import { listBodySchema } from '../../plugin/compile/response-schema.js'
import { generatedRouteOf } from '../../plugin/routes/generated-route.js'
import { dialects } from '../fixtures/dialects.js'
import { Animal, listResources, openListTables } from '../fixtures/list-tables.js'

/*
 * The document is derived from the routes, not described beside them: a
 * generated list route's parameters are the very schema objects the route
 * validates with, its page is what the route answers, and a route is found
 * from its own options wherever it was registered (a child plugin, a prefix).
 */

type Json = Record<string, any>

const filter = { species: ['eq', 'in'], born: ['gte'], 'keeper.name': ['contains'] } as const

/** An app with the generated routes in a child plugin under a prefix, and every route's options as @fastify/swagger sees them. */
async function appWithRoutes (t: Test) {
  const [sqlite] = dialects()
  const database = await openListTables(t, sqlite!)
  const app = Fastify()
  const options = { db: database.db, resources: listResources }
  const documentation = expandOpenApi(options)
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: documentation.transform })
  const seen: RouteOptions[] = []
  app.addHook('onRoute', (route) => { seen.push(route) })
  await app.register(expandPlugin, options)
  const registered = new Map<string, FastifySchema>()
  const record = (request: { routeOptions: { url?: string; schema?: FastifySchema } }) => {
    registered.set(request.routeOptions.url!, request.routeOptions.schema!)
  }
  await app.register(async (child: FastifyInstance) => {
    child.expand.routes('/animals', Animal, { filter, sort: ['born', 'name'], route: { onRequest: async (request) => { record(request) } } })
    child.expand.routes('/feed', Animal, { filter, sort: ['born'], pagination: 'cursor', route: { onRequest: async (request) => { record(request) } } })
    // An application's own routes, in the child plugin: the route option and `config.expandable`.
    child.get('/kept', { expandable: { resource: 'Animal', list: true, envelope: 'items' } }, async () => ({ items: [] }))
    child.get('/kept/:id', { config: { expandable: { resource: Animal } } }, async () => ({ id: 1, name: 'Rex' }))
  }, { prefix: '/shelter' })
  await app.ready()
  t.teardown(() => app.close())
  const route = (url: string) => {
    const found = seen.find((candidate) => candidate.url === url && candidate.method === 'GET')
    if (found === undefined) throw new Error(`no route ${url}`)
    return found
  }
  return { app, documentation, route, registered }
}

test('a generated list route is documented with the schema objects it validates with', async (t) => {
  const { app, documentation, route, registered } = await appWithRoutes(t)
  for (const url of ['/shelter/animals', '/shelter/feed']) {
    const options = route(url)
    t.equal((await app.inject(url)).statusCode, 200)
    const served = (registered.get(url)!.querystring as Json).properties as Json
    const own = (options.schema!.querystring as Json).properties as Json
    const documented = documentation.transform({ schema: options.schema!, url, route: options, openapiObject: { openapi: '3.1.0' } })
    const properties = (documented.schema.querystring as Json).properties as Json
    const listParameters = Object.keys(own).filter((name) => /^(limit|offset|after|before|sort|filter\[.*)$/.test(name))
    t.same(listParameters.sort(), (url.endsWith('feed')
      ? ['after', 'before', 'filter[born][gte]', 'filter[keeper.name][contains]', 'filter[species]', 'filter[species][in]', 'limit', 'sort']
      : ['filter[born][gte]', 'filter[keeper.name][contains]', 'filter[species]', 'filter[species][in]', 'limit', 'offset', 'sort']), url)
    for (const name of listParameters) {
      t.equal(properties[name], own[name], `${url} ${name}: the route's own schema object`)
      t.same(served[name], own[name], `${url} ${name}: as Fastify registered it`)
    }

    // In the document @fastify/swagger writes: each parameter is the route's schema, its description beside it.
    const operation = (app.swagger() as Json).paths[url].get
    for (const name of listParameters) {
      const parameter = operation.parameters.find((candidate: Json) => candidate.in === 'query' && candidate.name === name)
      const { description, examples, ...schema } = served[name] as Json
      t.same(parameter.schema, schema, `${url} ${name}: the documented schema`)
      t.equal(parameter.description, description, `${url} ${name}: the documented description`)
      if (examples !== undefined) t.ok(parameter.examples ?? parameter.example, `${url} ${name}: the example is kept`)
    }
  }
})

test('a generated list route carries its description in its config: the declaration that serves it', async (t) => {
  const { app, route } = await appWithRoutes(t)
  const list = generatedRouteOf(route('/shelter/animals'))
  const feed = generatedRouteOf(route('/shelter/feed'))
  t.equal(list?.kind, 'list')
  t.ok(Object.isFrozen(list), 'frozen')
  t.equal(generatedRouteOf(route('/shelter/animals/:id'))?.kind, 'detail')
  t.equal(generatedRouteOf(route('/shelter/kept')), undefined, "an application's route carries none")
  if (list?.kind !== 'list' || feed?.kind !== 'list') throw new Error('list routes')
  t.same([...list.declaration.filters.keys()], ['species', 'born', 'keeper.name'])
  t.same([...list.declaration.sortFields.keys()], ['born', 'name'])
  t.same({ pageSize: list.pageSize, maxPageSize: list.maxPageSize, pagination: list.pagination, total: list.total },
    { pageSize: 20, maxPageSize: 100, pagination: 'offset', total: true })
  t.same({ pagination: feed.pagination, total: feed.total }, { pagination: 'cursor', total: false })

  // The documented page is the envelope writer's, with the route's own bounds, and exactly the body the route answers.
  const document = app.swagger() as Json
  const content = document.paths['/shelter/animals'].get.responses['200'].content['application/json']
  const { description, ...shape } = content.schema
  t.equal(description, 'A list of Animal')
  t.same(shape, listBodySchema({ $ref: '#/components/schemas/Animal' }, 'data', {
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Rows per page: the limit asked for (default 20), at most 100' },
      offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Rows skipped' },
      total: { type: 'integer', minimum: 0, description: 'Rows in the whole list' },
    },
    required: 'all',
    additionalProperties: false,
  }))
  const body = (await app.inject('/shelter/animals?limit=2')).json()
  t.same(Object.keys(body), shape.required, 'the route answers exactly the documented properties')
  const cursorPage = document.paths['/shelter/feed'].get.responses['200'].content['application/json'].schema
  t.same(cursorPage.required, Object.keys((await app.inject('/shelter/feed?limit=2')).json()))
})

test('routes in a child plugin are documented: application routes by their setting, generated ones by their config', async (t) => {
  const { app } = await appWithRoutes(t)
  const document = app.swagger() as Json
  const kept = document.paths['/shelter/kept'].get
  t.ok(kept.parameters.some((parameter: Json) => parameter.name === 'expand'), 'the expandable route option: expand documented')
  t.same(kept.responses['200'].content['application/json'].schema.required, ['items'], 'its own envelope')
  t.notOk(kept.responses['404'], 'no 404: only generated detail routes answer it')
  const keptOne = document.paths['/shelter/kept/{id}'].get
  t.ok(keptOne.parameters.some((parameter: Json) => parameter.name === 'fields'), 'config.expandable: fields documented')
  t.equal(keptOne.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Animal')
  t.ok(keptOne.responses['414'], 'a path parameter: 414')
  const detail = document.paths['/shelter/animals/{id}'].get
  t.same(detail.responses['404'].content['application/json'].schema.properties.code.enum, ['FST_EXPAND_NOT_FOUND'], 'the generated detail route under the prefix: its 404')
  t.same(detail.responses['500'].content['application/json'].schema.required, ['statusCode', 'code', 'error', 'message'], 'the generated route answers only its own 500 codes')
})
