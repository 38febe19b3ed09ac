import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { buildApp, getJson } from '../helpers/app.js'
import { buildPetApp, defaults, petStore } from '../helpers/pet-world.js'

const { garfield, odie, jon, fred, acme, mcdonalds, petco, toys } = defaults

t.test('list: true serializes an array of the resource', async (t) => {
  const app = await buildPetApp()
  const reply = await getJson(app, '/pets')
  t.equal(reply.status, 200)
  t.equal(reply.contentType, 'application/json; charset=utf-8')
  t.equal(reply.text, JSON.stringify([garfield, odie]))
  const expanded = await getJson(app, '/pets?expand=owner.employer,toys')
  t.equal(expanded.text, JSON.stringify([
    { ...garfield, owner: { ...jon, employer: acme }, toys },
    { ...odie, owner: { ...fred, employer: mcdonalds }, toys: [] },
  ]))
  t.notMatch(expanded.text, /password|ssn|internal|secret/)
})

t.test("envelope: 'data' wraps the array; the envelope's other properties pass through", async (t) => {
  const app = await buildPetApp({}, { envelope: 'data' })
  t.equal((await getJson(app, '/pets')).text, JSON.stringify({ data: [garfield, odie], total: 2, next: null }))
  const expanded = await getJson(app, '/pets?expand=sold_from&fields=name,sold_from')
  t.same(expanded.body, { data: [{ name: 'Garfield', sold_from: null }, { name: 'Odie', sold_from: petco }], total: 2, next: null })
  t.notMatch(expanded.text, /password|address/)
})

t.test('permitListExpands: a listed path and its prefixes are permitted', async (t) => {
  const app = await buildPetApp({}, { permitListExpands: ['owner.employer'] })
  t.equal((await getJson(app, '/pets?expand=owner')).text, JSON.stringify([{ ...garfield, owner: jon }, { ...odie, owner: fred }]))
  t.equal((await getJson(app, '/pets?expand=owner.employer&fields=owner.employer.name')).text,
    JSON.stringify([{ owner: { employer: { name: 'Acme' } } }, { owner: { employer: { name: 'McDonalds' } } }]))
})

t.test('a path not permitted is rejected on the list, allowed on the detail route', async (t) => {
  const app = await buildPetApp({}, { permitListExpands: ['owner'] })
  for (const [query, path] of [['expand=sold_from', 'sold_from'], ['expand=owner.employer', 'owner.employer'], ['expand=owner,toys', 'toys']]) {
    const reply = await getJson(app, `/pets?${query}`)
    t.equal(reply.status, 400, query)
    t.same(reply.body, {
      statusCode: 400,
      code: 'FST_EXPAND_NOT_PERMITTED',
      error: 'Bad Request',
      message: `Cannot expand '${path}' on a list of Pet: permitted expansions are owner`,
    }, query)
  }
  t.equal((await getJson(app, '/pets/2?expand=sold_from')).text, JSON.stringify({ ...odie, sold_from: petco }))
  t.equal((await getJson(app, '/pets/2?expand=owner.employer')).text, JSON.stringify({ ...odie, owner: { ...fred, employer: mcdonalds } }))
})

t.test('expand=* on a list expands exactly the permitted paths', async (t) => {
  const app = await buildPetApp({}, { permitListExpands: ['owner', 'toys'] })
  t.equal((await getJson(app, '/pets?expand=*')).text, JSON.stringify([{ ...garfield, owner: jon, toys }, { ...odie, owner: fred, toys: [] }]))
  // below a permitted path, the wildcard skips what is not permitted
  t.equal((await getJson(app, '/pets?expand=owner.*')).text, JSON.stringify([{ ...garfield, owner: jon }, { ...odie, owner: fred }]))
  const detail = await getJson(app, '/pets/2?expand=*')
  t.equal(detail.text, JSON.stringify({ ...odie, owner: fred, sold_from: petco, toys: [] }), 'the detail route is not restricted')
})

t.test('a list route without permitListExpands permits every path', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets?expand=*&fields=id,sold_from,toys')).text,
    JSON.stringify([{ id: 1, sold_from: null, toys }, { id: 2, sold_from: petco, toys: [] }]))
  t.equal((await getJson(app, '/pets?expand=owner.employer&fields=owner.employer')).text,
    JSON.stringify([{ owner: { employer: acme } }, { owner: { employer: mcdonalds } }]))
})

t.test('an empty permitListExpands permits nothing', async (t) => {
  const app = await buildPetApp({}, { permitListExpands: [] })
  t.equal((await getJson(app, '/pets?expand=*')).text, JSON.stringify([garfield, odie]))
  const reply = await getJson(app, '/pets?expand=owner')
  t.equal(reply.status, 400)
  t.same(reply.body, { statusCode: 400, code: 'FST_EXPAND_NOT_PERMITTED', error: 'Bad Request', message: "Cannot expand 'owner' on a list of Pet: permitted expansions are none" })
})

t.test('permitListExpands on a detail route, where it would restrict nothing, is refused when the route is added', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(expandPlugin, { resources })
  t.throws(() => app.get('/pets/1', { expandable: { resource: 'Pet', permitListExpands: ['owner'] } }, async () => ({})), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: 'Route GET /pets/1: expandable.permitListExpands needs list: true (detail routes are never restricted by it)',
  })
})

t.test('config.expandable is accepted like the top-level option', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets', { config: { expandable: { resource: 'Pet', list: true, permitListExpands: ['owner'] } } },
      async (request) => petStore.shapeAll(request, 'Pet'))
    app.get('/pets/1', { config: { expandable: { resource: 'Pet' } } },
      async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', 1)!))
  })
  t.equal((await getJson(app, '/pets?expand=owner')).text, JSON.stringify([{ ...garfield, owner: jon }, { ...odie, owner: fred }]))
  t.equal((await getJson(app, '/pets?expand=toys')).status, 400)
  t.equal((await getJson(app, '/pets/1?expand=toys&fields=toys')).text, JSON.stringify({ toys }))
})

t.test('expandable: false and routes without the option are left alone', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/raw', { expandable: false }, async () => ({ password: 'kept', expand: 'n/a' }))
    app.get('/plain', async (request) => ({ expansion: request.expansion }))
  })
  t.equal((await getJson(app, '/raw?expand=nope')).text, '{"password":"kept","expand":"n/a"}')
  t.equal((await getJson(app, '/plain?expand=owner..x')).text, '{"expansion":null}')
})

t.test('route settings are checked at startup', async (t) => {
  const bad: [string, unknown][] = [
    ['unknown key', { resource: 'Pet', lsit: true }],
    ['envelope without list', { resource: 'Pet', envelope: 'data' }],
    ['list not a boolean', { resource: 'Pet', list: 'yes' }],
    ['resource missing', {}],
    ['permitListExpands not an array', { resource: 'Pet', list: true, permitListExpands: 'owner' }],
  ]
  for (const [label, setting] of bad) {
    const app = Fastify()
    await app.register(expandPlugin, { resources })
    t.throws(() => app.get('/x', { expandable: setting as never }, async () => ({})), { code: 'FST_EXPAND_INVALID_OPTION' }, label)
  }
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  t.throws(() => app.get('/x', { expandable: { resource: 'Pet', list: true, permitListExpands: ['owner.nope'] } }, async () => []),
    { message: /owner\.nope/ }, 'a permitted path must exist')
})
