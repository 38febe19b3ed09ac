import Fastify, { type FastifyInstance, type FastifySchema, type RouteShorthandOptions } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { petStore } from '../helpers/pet-world.js'

// An expandable route's 2xx body is written by the compiled serializer of each
// request, so a 2xx (or default) response schema would be silently ignored:
// refused at ready(). A querystring schema is the user's to validate their own
// parameters; it must neither drop the expansion parameters (Fastify's Ajv
// removes properties that additionalProperties: false does not allow) nor be
// changed in place.

const petSchema = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } }

/**
 * How ready() fails with the route declared in a plugin context (as routes
 * usually are): an error of its onRoute hooks then rejects ready().
 */
async function readyFailure (t: Test, options: RouteShorthandOptions): Promise<{ code?: string; message?: string } | undefined> {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.register(async (routes) => {
    routes.get('/pets/:id', options, async () => petStore.get('Pet', 1))
  })
  t.teardown(() => app.close().catch(() => {}))
  try {
    await app.ready()
  } catch (error) {
    return error as { code?: string; message?: string }
  }
  return undefined
}

t.test('a 2xx or default response schema on an expandable route fails ready()', async (t) => {
  const cases: Array<[string, RouteShorthandOptions]> = [
    ['200', { expandable: { resource: 'Pet' }, schema: { response: { 200: petSchema } } }],
    ['201', { expandable: { resource: 'Pet' }, schema: { response: { 201: petSchema } } }],
    ["'2xx'", { expandable: { resource: 'Pet' }, schema: { response: { '2xx': petSchema } } }],
    ['default', { expandable: { resource: 'Pet' }, schema: { response: { default: petSchema } } }],
    ['200 beside a 404', { expandable: { resource: 'Pet' }, schema: { response: { 404: petSchema, 200: petSchema } } }],
    ['200 with config.expandable', { config: { expandable: { resource: 'Pet' } }, schema: { response: { 200: petSchema } } }],
  ]
  for (const [name, options] of cases) {
    const failure = await readyFailure(t, options)
    t.equal(failure?.code, 'FST_EXPAND_INVALID_OPTION', `${name}: code`)
    t.ok(failure?.message?.includes('GET /pets/:id'), `${name}: the message names the route: ${failure?.message}`)
    t.ok(failure?.message?.includes('schema.response'), `${name}: the message names schema.response: ${failure?.message}`)
  }
})

t.test('a 4xx response schema is allowed and applies to 4xx replies', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.get<{ Params: { id: string } }>('/pets/:id', {
    expandable: { resource: 'Pet' },
    schema: { response: { 404: { type: 'object', properties: { message: { type: 'string' } } } } },
  }, async (request, reply) => {
    const pet = petStore.get('Pet', request.params.id)
    if (pet === undefined) return reply.code(404).send({ message: 'no such pet', internal: 'dropped by the 404 schema' })
    return petStore.shape(request, 'Pet', pet)
  })
  t.teardown(() => app.close())
  await app.ready()
  const found = await app.inject('/pets/1?fields=id,name')
  t.same({ status: found.statusCode, body: found.body }, { status: 200, body: '{"id":1,"name":"Garfield"}' })
  const missing = await app.inject('/pets/9')
  t.same({ status: missing.statusCode, body: missing.body }, { status: 404, body: '{"message":"no such pet"}' })
})

const querystring = {
  type: 'object',
  properties: { q: { type: 'string', maxLength: 5 } },
  additionalProperties: false,
}

async function buildValidated (schema: FastifySchema): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.get<{ Params: { id: string } }>('/pets/:id', { expandable: { resource: 'Pet' }, schema }, async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', request.params.id)!))
  app.get('/pets', { expandable: { resource: 'Pet', list: true }, schema }, async (request) => petStore.shapeAll(request, 'Pet'))
  await app.ready()
  return app
}

const jon = { id: 8, name: 'Jon', hobbies: 'lasagna' }
const garfield = { id: 1, name: 'Garfield', species: 'cat', owner: 8, sold_from: null, toys: [1, 2] }
const toys = [{ id: 1, name: 'paper ball' }, { id: 2, name: 'string' }]

t.test('a querystring schema with additionalProperties: false keeps the expansion parameters', async (t) => {
  const schema = { querystring }
  const before = JSON.parse(JSON.stringify(schema))
  const app = await buildValidated(schema)
  t.teardown(() => app.close())
  const get = async (url: string) => {
    const response = await app.inject(url)
    return { status: response.statusCode, body: response.json() }
  }

  t.same(await get('/pets/1'), { status: 200, body: garfield })
  t.same(await get('/pets/1?expand=owner'), { status: 200, body: { ...garfield, owner: jon } })
  t.same(await get('/pets/1?expand=owner&expand=toys'), { status: 200, body: { ...garfield, owner: jon, toys } })
  t.same(await get('/pets/1?expand=owner,toys&q=abc'), { status: 200, body: { ...garfield, owner: jon, toys } }, 'beside a declared parameter')
  t.same(await get('/pets/1?expand[]=owner'), { status: 200, body: { ...garfield, owner: jon } })
  t.same(await get('/pets/1?expand[]=owner&expand[]=toys'), { status: 200, body: { ...garfield, owner: jon, toys } })
  t.same(await get('/pets/1?fields=id,owner&omit=owner.hobbies&expand=owner'), { status: 200, body: { id: 1, owner: { id: 8, name: 'Jon' } } })
  t.same(await get('/pets/1?omit=species,toys'), { status: 200, body: { id: 1, name: 'Garfield', owner: 8, sold_from: null } })
  t.same(await get('/pets/1?fields[]=id&fields[]=name'), { status: 200, body: { id: 1, name: 'Garfield' } })
  t.same(await get('/pets?fields=id,owner&expand=owner'), { status: 200, body: [{ id: 1, owner: jon }, { id: 2, owner: { id: 7, name: 'Fred', hobbies: 'sailing' } }] })
  t.same(await get('/pets/1?expand=nope'), {
    status: 400,
    body: { statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message: "Cannot expand 'nope' on Pet: expandable fields are owner, sold_from, toys" },
  }, 'the expansion is still validated')

  t.same(await get('/pets/1?q=toolong&expand=owner'), {
    status: 400,
    body: { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message: 'querystring/q must NOT have more than 5 characters' },
  }, 'the declared parameter is still validated as declared')
  t.same(await get('/pets?q=toolong'), {
    status: 400,
    body: { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message: 'querystring/q must NOT have more than 5 characters' },
  })

  t.same(JSON.parse(JSON.stringify(schema)), before, "the user's schema object is not changed")
})

t.test('a querystring schema that requires its own parameter', async (t) => {
  const schema = { querystring: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } }
  const before = JSON.parse(JSON.stringify(schema))
  const app = await buildValidated(schema)
  t.teardown(() => app.close())
  const ok = await app.inject('/pets/1?q=x&expand=owner&fields=owner')
  t.same({ status: ok.statusCode, body: ok.json() }, { status: 200, body: { owner: jon } })
  const missing = await app.inject('/pets/1?expand=owner')
  t.same({ status: missing.statusCode, body: missing.json() }, {
    status: 400,
    body: { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message: "querystring must have required property 'q'" },
  })
  t.same(JSON.parse(JSON.stringify(schema)), before, "the user's schema object is not changed")
})
