import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Person, Pet, openSeeded, resources } from '../fixtures/tables.js'

// app.expand.routes called on a child context must register its two routes on
// that child: under the child's prefix, behind the child's hooks, and nowhere else.

async function requireAdmin (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.headers['x-admin'] !== 'yes') await reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'admins only' })
}

const admin = { 'x-admin': 'yes' }
const denied = { statusCode: 401, error: 'Unauthorized', message: 'admins only' }
const notFound = (url: string) => ({ statusCode: 404, error: 'Not Found', message: `Route GET:${url} not found` })

const garfield = { id: 1, name: 'Garfield', species: 'cat', owner: 1, sold_from: 1, toys: [1, 2] }
const petsPage = {
  data: [
    garfield,
    { id: 2, name: 'Odie', species: 'dog', owner: 1, sold_from: 2, toys: [3] },
    { id: 3, name: 'Nemo', species: 'fish', owner: 2, sold_from: null, toys: [] },
    { id: 4, name: 'Rex', species: 'dog', owner: 4, sold_from: 1, toys: [1] },
  ],
  limit: 20,
  offset: 0,
  total: 4,
}

async function get (app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url, headers })
  return { status: response.statusCode, body: response.json() }
}

async function build (t: Test, database: TestDatabase, addContexts: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  addContexts(app)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`routes() inside a child context on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)

    t.test('both routes live under the child prefix and run its hooks', async (t) => {
      const app = await build(t, database, (app) => {
        app.register(async (adminContext) => {
          adminContext.addHook('onRequest', requireAdmin)
          adminContext.expand.routes('/pets', Pet)
        }, { prefix: '/admin' })
      })
      t.same(await get(app, '/admin/pets', admin), { status: 200, body: petsPage })
      t.same(await get(app, '/admin/pets/1', admin), { status: 200, body: garfield })
      t.same(await get(app, '/admin/pets/1?expand=owner&fields=id,owner', admin), {
        status: 200,
        body: { id: 1, owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 } },
      })
      t.same(await get(app, '/admin/pets'), { status: 401, body: denied }, "the child's onRequest hook guards the list")
      t.same(await get(app, '/admin/pets/1'), { status: 401, body: denied }, "the child's onRequest hook guards the detail")
      t.same(await get(app, '/pets', admin), { status: 404, body: notFound('/pets') }, 'nothing on the root')
      t.same(await get(app, '/pets/1', admin), { status: 404, body: notFound('/pets/1') }, 'nothing on the root')
    })

    t.test('two sibling contexts each register their own routes, even with the same prefix', async (t) => {
      const app = await build(t, database, (app) => {
        app.register(async (adminContext) => {
          adminContext.addHook('onRequest', requireAdmin)
          adminContext.expand.routes('/pets', Pet)
        }, { prefix: '/admin' })
        app.register(async (publicContext) => {
          publicContext.expand.routes('/pets', Pet)
          publicContext.expand.routes('/people', Person)
        }, { prefix: '/public' })
      })
      t.same(await get(app, '/public/pets/1'), { status: 200, body: garfield }, "the sibling's hook does not apply")
      t.same(await get(app, '/public/pets'), { status: 200, body: petsPage })
      t.same(await get(app, '/public/people/3'), { status: 200, body: { id: 3, name: 'Ann', hobbies: 'chess', employer: null } })
      t.same(await get(app, '/admin/pets/1'), { status: 401, body: denied })
      t.same(await get(app, '/admin/pets/1', admin), { status: 200, body: garfield })
      t.same(await get(app, '/admin/people/3', admin), { status: 404, body: notFound('/admin/people/3') }, 'people only in the public context')
      t.same(await get(app, '/people/3'), { status: 404, body: notFound('/people/3') })
    })
  })
}

t.test('a second instance in a context the first one encloses: a startup error saying so; in a sibling context: its own', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(expandPlugin, { resources })
  app.register(async (child) => {
    await child.register(expandPlugin, { resources, expandParam: 'include' })
  })
  await t.rejects(async () => await app.ready(), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: 'fastify-expand is already registered in this context or one enclosing it (its routes there are the enclosing ' +
      "instance's): register a second instance in a sibling context",
  })

  const siblings = Fastify()
  t.teardown(() => siblings.close())
  for (const [prefix, expandParam] of [['/a', 'expand'], ['/b', 'include']] as const) {
    siblings.register(async (child) => {
      await child.register(expandPlugin, { resources, expandParam })
      child.get('/pets/:id', { expandable: { resource: Pet } }, async () => ({ id: 1, name: 'Garfield', owner: { id: 1, name: 'Fred' } }))
    }, { prefix })
  }
  await siblings.ready()
  t.equal((await siblings.inject('/a/pets/1?expand=owner&fields=owner.name')).body, '{"owner":{"name":"Fred"}}')
  t.equal((await siblings.inject('/b/pets/1?include=owner&fields=owner.name')).body, '{"owner":{"name":"Fred"}}')
})
