import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, isExpanded, isIncluded, type ExpansionExplanation } from '../../plugin/index.js'
import { dialects, inOneWave, type TestDatabase } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources } from '../fixtures/tables.js'

// Route option defaultExpand: paths expanded when the request has no `expand`
// parameter at all; `expand=` (present, empty) asks for none.
interface Seen { expanded: string[]; included: boolean; explanation: ExpansionExplanation }

async function build (database: TestDatabase, seen: Seen[]): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet, { permitListExpands: ['owner.employer', 'toys'], defaultExpand: ['owner'] })
  app.get('/handler-pets', { expandable: { resource: Pet, list: true, permitListExpands: ['owner.employer', 'toys'], defaultExpand: ['owner.employer', 'toys'] } }, async (request) => {
    seen.push({
      expanded: ['owner', 'owner.employer', 'toys', 'sold_from'].filter((path) => isExpanded(request, path)),
      included: isIncluded(request, 'owner.hobbies'),
      explanation: app.expand.explain(request),
    })
    const rows = await app.expand.select(request).where('pets.id', '<=', 2).orderBy('pets.id').execute()
    return app.expand.load(request, rows)
  })
  app.get('/config-pets/:id', { config: { expandable: { resource: Pet, defaultExpand: ['sold_from'] } } }, async (request) => {
    const rows = await app.expand.select(request).where('pets.id', '=', Number((request.params as { id: string }).id)).execute()
    return (await app.expand.load(request, rows))[0]
  })
  await app.ready()
  return app
}

const fred = { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 }
const garfield = { id: 1, name: 'Garfield', species: 'cat', owner: 1, sold_from: 1, toys: [1, 2] }
const odie = { id: 2, name: 'Odie', species: 'dog', owner: 1, sold_from: 2, toys: [3] }

for (const dialect of dialects()) {
  t.test(`defaultExpand on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const seen: Seen[] = []
    const app = await build(database, seen)
    t.teardown(() => app.close())
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      t.equal(response.statusCode, 200, url)
      return { body: response.json(), statements: [...database.statements] }
    }

    t.test('routes(): no expand parameter expands the defaults; expand= expands none; expand=x replaces them', async (t) => {
      const defaults = await get('/pets/1')
      t.same(defaults.body, { ...garfield, owner: fred })
      t.equal(defaults.statements.length, 3, 'root, owner, toy ids')
      const none = await get('/pets/1?expand=')
      t.same(none.body, garfield)
      t.equal(none.statements.length, 2, 'root, toy ids')
      t.same((await get('/pets/1?expand[]=')).body, garfield, 'expand[]= is an expand parameter too')
      t.same((await get('/pets/1?expand=sold_from')).body, { ...garfield, sold_from: { id: 1, name: 'Pet Place' } }, 'a given expand replaces the defaults')
      // The plan cache keeps the two apart, whichever came first.
      t.same((await get('/pets/1')).body, { ...garfield, owner: fred }, 'the defaults again, after expand=')
      t.same((await get('/pets/1?expand=')).body, garfield)
    })

    t.test('fields and omit apply to the default expansions', async (t) => {
      t.same((await get('/pets/1?fields=id,owner.name')).body, { id: 1, owner: { name: 'Fred' } })
      t.same((await get('/pets/1?omit=owner.hobbies,toys')).body, { id: 1, name: 'Garfield', species: 'cat', owner: { id: 1, name: 'Fred', employer: 1 }, sold_from: 1 })
      const left = await get('/pets/1?fields=id,name')
      t.same(left.body, { id: 1, name: 'Garfield' })
      t.equal(left.statements.length, 1, 'a default left out by fields costs no statement')
    })

    t.test('list route: the defaults on every row, in the same statement counts', async (t) => {
      const { body, statements } = await get('/pets?limit=2')
      t.same(body, { data: [{ ...garfield, owner: fred }, { ...odie, owner: fred }], limit: 2, offset: 0, total: 4 })
      t.equal(statements.length, inOneWave(dialect) ? 3 : 4, 'page, count (read by the page in one wave), owner, toy ids')
    })

    t.test('route option: isExpanded, isIncluded and explain see the defaults', async (t) => {
      seen.length = 0
      const { body, statements } = await get('/handler-pets')
      const toys = [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }]
      const fredAtMcDonalds = { ...fred, employer: { id: 1, name: 'McDonalds', public: true } }
      t.same(body, [{ ...garfield, owner: fredAtMcDonalds, toys }, { ...odie, owner: fredAtMcDonalds, toys: [{ id: 3, name: 'bone' }] }])
      t.equal(statements.length, 4, 'root, owner, owner.employer, toys')
      t.same(seen[0]?.expanded, ['owner', 'owner.employer', 'toys'])
      t.equal(seen[0]?.included, true)
      t.same(seen[0]?.explanation.expanded, ['owner', 'owner.employer', 'toys'])
      t.same(seen[0]?.explanation.statements.map((statement) => statement.path), ['', 'owner', 'owner.employer', 'toys'])
      await get('/handler-pets?expand=&omit=owner')
      t.same(seen[1]?.expanded, [])
      t.same(seen[1]?.explanation.expanded, [])
      t.equal(seen[1]?.included, false)
      t.not(seen[0]?.explanation.key, seen[1]?.explanation.key)
    })

    t.test('config.expandable takes defaultExpand too', async (t) => {
      t.same((await get('/config-pets/2')).body, { ...odie, sold_from: { id: 2, name: 'Zoo Shop' } })
      t.same((await get('/config-pets/2?expand=')).body, odie)
    })
  })
}

t.test('a default expansion the request may not see is left out, not refused', async (t) => {
  const Owner = defineResource({ name: 'Owner', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
  const Animal = defineResource({
    name: 'Animal',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.Integer() }),
    fields: ['id', 'name', 'owner'],
    expandable: { owner: Owner },
    fieldsFor: (request) => (request.headers['x-guest'] === undefined ? undefined : ['id', 'name']),
  })
  const app = Fastify()
  await app.register(expandPlugin, { resources: [Owner, Animal] })
  app.get('/animal', { expandable: { resource: Animal, defaultExpand: ['owner'] } }, async (request) =>
    ({ id: 1, name: 'Rex', owner: isExpanded(request, 'owner') ? { id: 7, name: 'Ann' } : 7 }))
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/animal')).json(), { id: 1, name: 'Rex', owner: { id: 7, name: 'Ann' } })
  const guest = await app.inject({ url: '/animal', headers: { 'x-guest': '1' } })
  t.equal(guest.statusCode, 200)
  t.same(guest.json(), { id: 1, name: 'Rex' })
  const asked = await app.inject({ url: '/animal?expand=owner', headers: { 'x-guest': '1' } })
  t.equal(asked.statusCode, 403, 'asked for by the client, the hidden relation is still forbidden')
})

t.test('defaultExpand is checked when the route is added', async (t) => {
  const added = async (setting: Record<string, unknown>, pluginOptions: Record<string, unknown> = {}) => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(expandPlugin, { resources, ...pluginOptions })
    return () => app.get('/pets', { expandable: { resource: Pet, ...setting } as never }, async () => [])
  }
  t.throws(await added({ defaultExpand: 'owner' }), { code: 'FST_EXPAND_INVALID_OPTION', message: 'Route GET /pets: expandable.defaultExpand must be an array of paths' })
  t.throws(await added({ defaultExpand: ['owner.nope'] }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "Route GET /pets: default expansions: 'owner.nope' names 'nope', which is not a relation of people.Person" })
  t.throws(await added({ defaultExpand: ['*'] }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "Route GET /pets: default expansions: '*' names '*', which is not a relation of Pet" })
  t.throws(await added({ list: true, permitListExpands: ['owner'], defaultExpand: ['owner', 'toys'] }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "Route GET /pets: default expansion 'toys' is not permitted by permitListExpands (owner)" })
  t.throws(await added({ defaultExpand: ['owner.employer'] }, { maxDepth: 1 }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "Route GET /pets: default expansion 'owner.employer': Cannot expand 'owner.employer': the maximum expansion depth is 1" })
  t.doesNotThrow(await added({ list: true, permitListExpands: ['owner.employer'], defaultExpand: ['owner'] }), 'a prefix of a permitted path is permitted')

  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(expandPlugin, { db: database.db, resources })
  t.throws(() => app.expand.routes('/pets', Pet, { permitListExpands: ['owner'], defaultExpand: ['toys'] }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "Route GET /pets: default expansion 'toys' is not permitted by permitListExpands (owner)" })
  t.throws(() => app.expand.routes('/people', 'people.Person', { defaultExpand: 'pets' as never }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: 'Route GET /people: expandable.defaultExpand must be an array of paths' })
})
