import { Type } from '@sinclair/typebox'
import t from 'tap'
import Fastify from 'fastify'
import expandPlugin, { createSerializer, defineResource, type AnyResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { openSeeded, Person, Pet, resources as tableResources } from '../fixtures/tables.js'
import { buildPetApp, documentedCodes } from './support.js'

// Bounded work is asserted by what a request does (serializers compiled, statements run), never by the
// time it takes: a loaded machine makes any time limit fail now and then. Times are `npm run bench`'s.
interface Outcome { status: number; code: string | undefined; length: number; compiles: number }

async function outcome (app: Awaited<ReturnType<typeof buildPetApp>>['app'], url: string): Promise<Outcome> {
  const before = app.expand.cacheStats().compiles
  const answer = await app.inject(url)
  const code = answer.statusCode === 400 ? (answer.json() as { code: string }).code : undefined
  return { status: answer.statusCode, code, length: answer.body.length, compiles: app.expand.cacheStats().compiles - before }
}

const padded = (value: string, length: number) => value + ','.repeat(length - value.length)

t.test('maxParamLength defaults to 2000 characters over all values of one parameter', async (t) => {
  const { app } = await buildPetApp()
  t.teardown(() => app.close())
  for (const name of ['expand', 'fields', 'omit']) {
    const value = name === 'expand' ? 'owner' : 'name'
    const atLimit = await outcome(app, `/pets/1?${name}=${padded(value, 2000)}`)
    t.equal(atLimit.status, 200, `${name}: 2000 characters are accepted`)
    const over = await outcome(app, `/pets/1?${name}=${padded(value, 2001)}`)
    t.same([over.status, over.code], [400, 'FST_EXPAND_MALFORMED'], `${name}: 2001 characters are malformed`)
    // The characters of all values count, whichever forms carry them; the joining commas do not.
    const repeated = await outcome(app, `/pets/1?${name}=${padded(value, 1000)}&${name}=${padded(value, 1001)}`)
    t.same([repeated.status, repeated.code], [400, 'FST_EXPAND_MALFORMED'], `${name}: counted over repeated values`)
    const mixed = await outcome(app, `/pets/1?${name}=${padded(value, 1001)}&${name}[]=${padded(value, 1000)}`)
    t.same([mixed.status, mixed.code], [400, 'FST_EXPAND_MALFORMED'], `${name}: counted over plain and bracketed values`)
    const many = await outcome(app, `/pets/1?${Array(201).fill(`${name}=${padded(value, 10)}`).join('&')}`)
    t.same([many.status, many.code], [400, 'FST_EXPAND_MALFORMED'], `${name}: counted over 201 values of 10`)
    const fits = await outcome(app, `/pets/1?${name}=${padded(value, 1000)}&${name}[]=${padded(value, 1000)}`)
    t.equal(fits.status, 200, `${name}: 1000 + 1000 fits`)
  }
  // Limits come before names: an over-long unknown name is malformed, not unknown.
  const unknown = await outcome(app, `/pets/1?expand=${'nope'.repeat(501)}`)
  t.same([unknown.status, unknown.code], [400, 'FST_EXPAND_MALFORMED'])
})

t.test('maxPaths defaults to 100 paths per parameter', async (t) => {
  const { app } = await buildPetApp()
  t.teardown(() => app.close())
  for (const [name, value] of [['expand', 'owner'], ['fields', 'id'], ['omit', 'name']]) {
    const hundred = await outcome(app, `/pets/1?${name}=${Array(100).fill(value).join(',')}`)
    t.equal(hundred.status, 200, `${name}: 100 paths`)
    const more = await outcome(app, `/pets/1?${name}=${Array(101).fill(value).join(',')}`)
    t.same([more.status, more.code], [400, 'FST_EXPAND_MALFORMED'], `${name}: 101 paths`)
    const repeated = await outcome(app, `/pets/1?${Array(101).fill(`${name}=${value}`).join('&')}`)
    t.same([repeated.status, repeated.code], [400, 'FST_EXPAND_MALFORMED'], `${name}: 101 repeated parameters`)
  }
  const emptyItems = await outcome(app, `/pets/1?expand=${','.repeat(1500)}owner`)
  t.equal(emptyItems.status, 200, 'empty items between commas are not paths')
})

// Twelve relations, each back to the same resource: every level can fan out twelvefold.
const relationNames = Array.from({ length: 12 }, (_, index) => `r${index}`)
const Hub: AnyResource = defineResource({
  name: 'Hub',
  schema: Type.Object(Object.fromEntries([['id', Type.Integer()], ...relationNames.map((name) => [name, Type.Integer()])])),
  fields: ['id', ...relationNames],
  expandable: Object.fromEntries(relationNames.map((name) => [name, (): AnyResource => Hub])),
})
const hubRecord = (id: number): Record<string, number> => Object.fromEntries([['id', id], ...relationNames.map((name) => [name, id])])

async function buildHubApp (options: { maxPaths?: number; maxDepth?: number } = {}) {
  const app = Fastify()
  await app.register(expandPlugin, { resources: [Hub], ...options })
  // Shapes by the plan, so any plan the planner accepts gets a body that matches it.
  app.get('/hubs/1', { expandable: { resource: Hub } }, async (request) => {
    const shape = (prefix: string): Record<string, unknown> => {
      const record: Record<string, unknown> = hubRecord(1)
      for (const name of relationNames) {
        if (request.expansion!.expandedPaths.has(prefix + name)) record[name] = shape(`${prefix}${name}.`)
      }
      return record
    }
    return shape('')
  })
  await app.ready()
  return app
}

t.test('maxPaths also bounds the relations one plan expands', async (t) => {
  const app = await buildHubApp()
  t.teardown(() => app.close())
  const one = await outcome(app, '/hubs/1?expand=*')
  t.equal(one.status, 200, '12 relations')
  // 1 + 12 + 8 * 12 = 109 levels: more than 100 expanded relations from 8 short paths.
  const wide = await outcome(app, `/hubs/1?expand=${relationNames.slice(0, 8).map((name) => `${name}.*`).join(',')}`)
  t.same([wide.status, wide.code], [400, 'FST_EXPAND_MALFORMED'])
  const fewer = await outcome(app, `/hubs/1?expand=${relationNames.slice(0, 7).map((name) => `${name}.*`).join(',')}`)
  t.equal(fewer.status, 200, '1 + 12 + 7 * 12 = 97 levels')
  // Paths that fields leave out are still validated, and count.
  const hidden = await outcome(app, `/hubs/1?fields=id&expand=${relationNames.slice(0, 8).map((name) => `${name}.*`).join(',')}`)
  t.same([hidden.status, hidden.code], [400, 'FST_EXPAND_MALFORMED'])
})

t.test('expand=*.*.*.*.* on cyclic graphs stays bounded in time: 200 or 400 FST_EXPAND_MALFORMED', async (t) => {
  const hubs = await buildHubApp()
  t.teardown(() => hubs.close())
  for (const url of ['/hubs/1?expand=*.*.*.*.*', '/hubs/1?expand=~all.~all.~all.~all.~all', '/hubs/1?expand=*.*.*.*.*,r1.*.*.*.*,*.r2.*.*.*']) {
    const answer = await outcome(hubs, url)
    t.same([answer.status, answer.code], [400, 'FST_EXPAND_MALFORMED'], `${url}: 12^5 levels are refused`)
    t.equal(answer.compiles, 0, `${url}: refused while planning, before any serializer is compiled`)
  }
  const tooDeep = await outcome(hubs, '/hubs/1?expand=*.*.*.*.*.*')
  t.same([tooDeep.status, tooDeep.code], [400, 'FST_EXPAND_TOO_DEEP'])

  const small = await buildHubApp({ maxPaths: 100_000 })
  t.teardown(() => small.close())
  const allowed = await outcome(small, '/hubs/1?expand=*.*.*')
  t.equal(allowed.status, 200, 'with a raised maxPaths, 1 + 12 + 144 + 1728 levels are served')
  t.equal(allowed.compiles, 1, 'by one serializer')

  const pets = await buildPetApp()
  t.teardown(() => pets.app.close())
  for (const url of ['/pets/1?expand=*.*.*.*.*', '/pets?expand=*.*.*.*.*', '/pets/1?expand=~all.*.~all.*.*&fields=*']) {
    const answer = await outcome(pets.app, url)
    t.equal(answer.status, 200, url)
    t.ok(answer.compiles <= 1, `${url}: one serializer at most`)
  }
})

t.test('expand=*.*.*.*.* through the database loader on the cyclic tables graph', async (t) => {
  const database = await openSeeded(t, dialects()[0])
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: tableResources })
  app.expand.routes('/pets', Pet)
  app.expand.routes('/people', Person)
  await app.ready()
  t.teardown(() => app.close())
  for (const url of ['/pets/1?expand=*.*.*.*.*', '/pets?expand=*.*.*.*.*', '/people?expand=*.*.*.*.*']) {
    database.reset()
    const answer = await outcome(app, url)
    t.equal(answer.status, 200, url)
    t.ok(answer.compiles <= 1, `${url}: one serializer at most`)
    t.ok(database.statements.length <= 2 + 100, `${url}: ${database.statements.length} statements, at most one per expanded relation`)
  }
})

t.test('maxDepth defaults to 5; a resource overrides it either way', async (t) => {
  const { app } = await buildPetApp()
  t.teardown(() => app.close())
  // Depth counts segments, wildcards included, even where the graph ends sooner.
  const five = await outcome(app, '/pets/1?expand=*.*.*.*.*')
  t.equal(five.status, 200)
  const six = await outcome(app, '/pets/1?expand=owner.employer.x.y.z.w')
  t.same([six.status, six.code], [400, 'FST_EXPAND_TOO_DEEP'], 'depth is checked before names')

  const Shallow = defineResource({ ...hubDefinition('Shallow'), maxDepth: 2 })
  const Deep = defineResource({ ...hubDefinition('Deep'), maxDepth: 7 })
  const app2 = Fastify()
  await app2.register(expandPlugin, { resources: [Shallow, Deep], maxDepth: 3, maxPaths: 1000 })
  app2.get('/shallow', { expandable: { resource: Shallow } }, async () => ({ id: 1, next: 1 }))
  app2.get('/deep', { expandable: { resource: Deep } }, async () => ({ id: 1, next: 1 }))
  await app2.ready()
  t.teardown(() => app2.close())
  const depth = (count: number) => Array(count).fill('next').join('.')
  t.same((await outcome(app2, `/shallow?expand=${depth(3)}`)).code, 'FST_EXPAND_TOO_DEEP', 'resource maxDepth 2 under a plugin maxDepth of 3')
  t.equal((await outcome(app2, `/deep?expand=${depth(7)}&fields=id`)).status, 200, 'resource maxDepth 7 over a plugin maxDepth of 3')
  t.same((await outcome(app2, `/deep?expand=${depth(8)}`)).code, 'FST_EXPAND_TOO_DEEP')

  t.throws(() => createSerializer(Shallow, { expand: depth(3) }), { code: 'FST_EXPAND_TOO_DEEP' }, 'createSerializer applies the same limit')
  t.throws(() => createSerializer(Shallow, { expand: padded('next', 2001) }), { code: 'FST_EXPAND_MALFORMED' })
  t.throws(() => createSerializer(Shallow, { expand: Array(101).fill('next') }), { code: 'FST_EXPAND_MALFORMED' })
})

function hubDefinition (name: string) {
  const definition = {
    name,
    schema: Type.Object({ id: Type.Integer(), next: Type.Integer() }),
    fields: ['id', 'next'] as const,
    expandable: { next: name },
  }
  return definition as unknown as Parameters<typeof defineResource>[0]
}

t.test('over-limit input is always a 400 with a documented code, whatever the options', async (t) => {
  for (const options of [{}, { maxParamLength: 5, maxPaths: 1, maxDepth: 1 }, { onInvalidExpand: 'ignore' as const }]) {
    const { app } = await buildPetApp(options)
    t.teardown(() => app.close())
    for (const url of [
      `/pets/1?expand=${'x'.repeat(5000)}`,
      `/pets?expand=${Array(500).fill('owner').join(',')}`,
      '/pets/1?expand=owner.employer.owner.employer.owner.employer',
      '/pets/1?fields=..',
      '/pets/1?omit=.',
      `/pets?${Array(2000).fill('expand[]=toys').join('&')}`,
    ]) {
      const answer = await outcome(app, url)
      t.equal(answer.status, 400, `${JSON.stringify(options)} ${url.slice(0, 60)}`)
      t.ok(documentedCodes.has(answer.code ?? ''), `${answer.code}`)
    }
  }
})

t.test('to-many expansions through a cycle cannot make one response grow without bound', async (t) => {
  const database = await openSeeded(t, dialects()[0], 196)
  // The fixture's Person.pets keeps only `id, name` (no way back to the owner): these views of its tables close the cycle.
  const Owner: AnyResource = defineResource({
    name: 'Owner',
    table: 'people',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), pets: Type.Array(Type.Integer()) }),
    fields: ['id', 'name'],
    expandable: { pets: [(): AnyResource => OwnedPet, { many: true, foreignKey: 'owner_id' }] },
  })
  const OwnedPet: AnyResource = defineResource({
    name: 'OwnedPet',
    table: 'pets',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.Integer() }),
    fields: ['id', 'name', 'owner'],
    columns: { owner: 'owner_id' },
    expandable: { owner: Owner },
  })
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Owner] })
  app.expand.routes('/people', Owner)
  await app.ready()
  t.teardown(() => app.close())
  // About 200 rows in the database; person 1 owns about 50 pets, each owned by person 1 again.
  // Written, that is 1 + 50 + 50 + 2,500 + 2,500 + 125,000 objects: over the default maxObjects (10,000).
  const answer = await outcome(app, '/people/1?expand=pets.owner.pets.owner.pets')
  t.equal(answer.status, 400)
  t.equal(answer.code, 'FST_EXPAND_TOO_LARGE')
  t.ok(answer.length < 1_000, `a body of ${answer.length} bytes`)
  const shallower = await outcome(app, '/people/1?expand=pets.owner.pets')
  t.equal(shallower.status, 200, '1 + 50 + 50 + 2,500 objects are within the limit')
})
