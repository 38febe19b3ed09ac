import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'

// Fastify ignores route options it does not know: an expandable route that no
// fastify-expand instance prepared (declared before the plugin, or in a context
// the plugin is not registered in) would serve the handler's raw data,
// unexpanded and unfiltered. ready() must refuse it instead.

const pet = { id: 1, name: 'Garfield', species: 'cat', owner: 8, sold_from: null, toys: [1, 2], password: 'hash1' }

/** ready() must reject with FST_EXPAND_INVALID_OPTION naming `route` ('METHOD /url'). */
async function rejectsNaming (t: Test, app: FastifyInstance, route: string): Promise<void> {
  t.teardown(() => app.close().catch(() => {}))
  let failure: { code?: string; message?: string } | undefined
  try {
    await app.ready()
  } catch (error) {
    failure = error as { code?: string; message?: string }
  }
  t.ok(failure, 'ready() rejects')
  t.equal(failure?.code, 'FST_EXPAND_INVALID_OPTION')
  t.ok(failure?.message?.includes(route), `the message names ${route}: ${failure?.message}`)
}

t.test('an expandable route declared on the root before the plugin', async (t) => {
  const app = Fastify()
  app.get('/posts/:id', { expandable: { resource: 'Pet' } }, async () => pet)
  await app.register(expandPlugin, { resources })
  await rejectsNaming(t, app, 'GET /posts/:id')
})

t.test('config.expandable on the root before the plugin', async (t) => {
  const app = Fastify()
  app.get('/posts/:id', { config: { expandable: { resource: 'Pet' } } }, async () => pet)
  await app.register(expandPlugin, { resources })
  await rejectsNaming(t, app, 'GET /posts/:id')
})

t.test('a list route declared before the plugin', async (t) => {
  const app = Fastify()
  app.get('/posts', { expandable: { resource: 'Pet', list: true } }, async () => [pet])
  await app.register(expandPlugin, { resources })
  await rejectsNaming(t, app, 'GET /posts')
})

t.test('in a sibling context registered before the plugin', async (t) => {
  const app = Fastify()
  app.register(async (child) => {
    child.get('/posts/:id', { expandable: { resource: 'Pet' } }, async () => pet)
  }, { prefix: '/v1' })
  await app.register(expandPlugin, { resources })
  await rejectsNaming(t, app, 'GET /v1/posts/:id')
})

t.test('config.expandable in a sibling context registered before the plugin', async (t) => {
  const app = Fastify()
  app.register(async (child) => {
    child.post('/posts/:id', { config: { expandable: { resource: 'Pet' } } }, async () => pet)
  })
  await app.register(expandPlugin, { resources })
  await rejectsNaming(t, app, 'POST /posts/:id')
})

t.test('in a sibling of the context the plugin is registered in', async (t) => {
  const app = Fastify()
  app.register(async (api) => {
    await api.register(expandPlugin, { resources })
    api.get('/pets/:id', { expandable: { resource: 'Pet' } }, async () => pet)
  })
  app.register(async (other) => {
    other.get('/posts/:id', { expandable: { resource: 'Pet' } }, async () => pet)
  })
  await rejectsNaming(t, app, 'GET /posts/:id')
})

t.test('routes without expandable, or with expandable: false, may come before the plugin', async (t) => {
  const app = Fastify()
  app.get('/plain', async () => ({ ok: true }))
  app.get('/opted-out', { expandable: false }, async () => ({ ok: true }))
  app.get('/opted-out-config', { config: { expandable: false } }, async () => ({ ok: true }))
  app.register(async (child) => {
    child.get('/child', { expandable: false }, async () => ({ ok: true }))
  })
  await app.register(expandPlugin, { resources })
  app.get('/pets/:id', { expandable: { resource: 'Pet' } }, async () => pet)
  t.teardown(() => app.close())
  await app.ready()
  for (const url of ['/plain', '/opted-out', '/opted-out-config', '/child']) {
    const response = await app.inject(url)
    t.same({ status: response.statusCode, body: response.json() }, { status: 200, body: { ok: true } }, url)
  }
  const expandable = await app.inject('/pets/1?fields=id,name')
  t.same({ status: expandable.statusCode, body: expandable.body }, { status: 200, body: '{"id":1,"name":"Garfield"}' }, 'the route declared after the plugin is prepared')
})

t.test('an expandable route in a child of the context the plugin is registered in is fine', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.register(async (child) => {
    child.get('/pets/:id', { expandable: { resource: 'Pet' } }, async () => pet)
  }, { prefix: '/v1' })
  t.teardown(() => app.close())
  await app.ready()
  const response = await app.inject('/v1/pets/1?fields=id,toys')
  t.same({ status: response.statusCode, body: response.body }, { status: 200, body: '{"id":1,"toys":[1,2]}' })
})
