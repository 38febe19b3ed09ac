import fc from 'fast-check'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { resolveOptions } from '../../plugin/options.js'
import { readAnyQuery, readExpansionQuery, toPathTree, withPaths, type PathNode } from '../../plugin/parse/query.js'
import { resources } from '../fixtures/pets.js'
import { getJson } from '../helpers/app.js'
import { buildPetApp, defaults, petStore } from '../helpers/pet-world.js'

const { garfield, jon, acme, toys } = defaults
const ownerAndToys = JSON.stringify({ ...garfield, owner: jon, toys })

t.test('comma lists, repeated and bracketed parameters mean the same', async (t) => {
  const app = await buildPetApp()
  for (const query of ['expand=owner,toys', 'expand=owner&expand=toys', 'expand[]=owner&expand[]=toys', 'expand=owner&expand[]=toys', 'expand=toys,owner', 'expand=owner,toys,owner']) {
    const reply = await getJson(app, `/pets/1?${query}`)
    t.equal(reply.status, 200, query)
    t.equal(reply.text, ownerAndToys, query)
  }
  t.equal((await getJson(app, '/pets/1?fields=id&fields=name')).text, '{"id":1,"name":"Garfield"}')
  t.equal((await getJson(app, '/pets/1?fields[]=id&fields[]=name')).text, '{"id":1,"name":"Garfield"}')
  t.equal((await getJson(app, '/pets/1?omit[]=id&omit=species,toys&omit=owner')).text, '{"name":"Garfield","sold_from":null}')
})

t.test('percent-encoded separators are separators', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?expand=owner%2Ctoys')).text, ownerAndToys)
  t.equal((await getJson(app, '/pets/1?expand%5B%5D=owner&expand%5B%5D=toys')).text, ownerAndToys)
  t.equal((await getJson(app, '/pets/1?expand=owner%2Eemployer&fields=owner%2Eemployer')).text, JSON.stringify({ owner: { employer: acme } }))
})

t.test('dot paths name nested levels; a path implies its prefixes', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?expand=owner.employer')).text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme } }))
  t.equal((await getJson(app, '/pets/1?expand=owner,owner.employer')).text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme } }))
})

t.test('empty items are ignored; empty segments are malformed', async (t) => {
  const app = await buildPetApp()
  for (const query of ['expand=owner,', 'expand=,owner', 'expand=owner,,', 'expand=owner&expand=', 'expand[]=&expand=owner']) {
    t.equal((await getJson(app, `/pets/1?${query}`)).text, JSON.stringify({ ...garfield, owner: jon }), query)
  }
  for (const query of ['expand=', 'expand=,', 'fields=', 'omit=,,', 'expand']) {
    t.equal((await getJson(app, `/pets/1?${query}`)).text, JSON.stringify(garfield), query)
  }
  for (const query of ['expand=owner..employer', 'expand=.owner', 'expand=owner.', 'expand=.', 'fields=a..b', 'omit=owner..x', 'expand=owner,toys..x']) {
    const reply = await getJson(app, `/pets/1?${query}`)
    t.equal(reply.status, 400, query)
    t.match(reply.body, { code: 'FST_EXPAND_MALFORMED' }, query)
  }
})

t.test('renamed parameters', async (t) => {
  const app = await buildPetApp({ expandParam: 'include', fieldsParam: 'only', omitParam: 'exclude' })
  t.equal((await getJson(app, '/pets/1?include=owner,toys')).text, ownerAndToys)
  t.equal((await getJson(app, '/pets/1?include[]=owner&include[]=toys')).text, ownerAndToys)
  t.equal((await getJson(app, '/pets/1?include=owner&only=name,owner.name')).text, '{"name":"Garfield","owner":{"name":"Jon"}}')
  t.equal((await getJson(app, '/pets/1?exclude=id,owner,toys,sold_from')).text, '{"name":"Garfield","species":"cat"}')
  // the default names are then ordinary query parameters
  t.equal((await getJson(app, '/pets/1?expand=nope&fields=nope&omit=nope')).text, JSON.stringify(garfield))
  const reply = await getJson(app, '/pets/1?include=nope')
  t.same(reply.body, { statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message: "Cannot expand 'nope' on Pet: expandable fields are owner, sold_from, toys" })
  t.match((await getJson(app, '/pets/1?only=nope')).body, { code: 'FST_EXPAND_UNKNOWN_FIELD', message: /'only'/ }, 'messages name the renamed parameter')
})

t.test('wildcards * and ~all expand every expandable field at their level', async (t) => {
  const app = await buildPetApp()
  const all = JSON.stringify({ ...garfield, owner: jon, sold_from: null, toys })
  t.equal((await getJson(app, '/pets/1?expand=*')).text, all)
  t.equal((await getJson(app, '/pets/1?expand=~all')).text, all)
  t.equal((await getJson(app, '/pets/1?expand=owner.*')).text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme } }))
  t.equal((await getJson(app, '/pets/1?expand=*.*')).text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme }, sold_from: null, toys }))
  t.equal((await getJson(app, '/pets/1?expand=*,owner.employer')).text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme }, sold_from: null, toys }))
})

t.test('custom wildcards, and wildcards: null disables them', async (t) => {
  const custom = await buildPetApp({ wildcards: ['all'] })
  t.equal((await getJson(custom, '/pets/1?expand=all&fields=owner')).text, JSON.stringify({ owner: jon }))
  t.match((await getJson(custom, '/pets/1?expand=*')).body, { statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD' })

  const none = await buildPetApp({ wildcards: null })
  const reply = await getJson(none, '/pets/1?expand=*')
  t.same(reply.body, { statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message: "Cannot expand '*' on Pet: expandable fields are owner, sold_from, toys" })
  t.match((await getJson(none, '/pets/1?expand=~all')).body, { code: 'FST_EXPAND_UNKNOWN_FIELD' })
  t.match((await getJson(none, '/pets/1?fields=*')).body, { code: 'FST_EXPAND_UNKNOWN_FIELD' })
})

t.test('a parameter that is not a string or a list of strings is malformed', async (t) => {
  const app = Fastify({ routerOptions: { querystringParser: () => ({ expand: { owner: 'employer' } }) } })
  await app.register(expandPlugin, { resources })
  app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', 1)!))
  const reply = await getJson(app, '/pets/1?expand[owner]=employer')
  t.equal(reply.status, 400)
  t.match(reply.body, { code: 'FST_EXPAND_MALFORMED' })
})

t.test('withPaths adds paths to a copy: the tree it was given stays as it was', async (t) => {
  const asJson = (tree: PathNode) =>
    JSON.stringify(tree, (_key, value: unknown) => value instanceof Map ? Object.fromEntries(value) : value)
  const shared = toPathTree([['a', 'b']])
  const before = asJson(shared)
  const merged = withPaths(shared, [['a', 'c'], ['a']])
  t.equal(asJson(shared), before, 'the input is unchanged')
  t.same([...merged.children.get('a')!.children.keys()], ['b', 'c'])
  t.equal(merged.children.get('a')!.leaf, true)
  t.equal(shared.children.get('a')!.leaf, false)
})

t.test('an absent expand parameter is told apart from an empty one (a route\'s defaultExpand applies only to the first)', async (t) => {
  const options = resolveOptions({ expandParam: 'include' })
  const read = (query: unknown) => readExpansionQuery(query, options)
  t.same(read({}), { expand: '', fields: '', omit: '', expandAbsent: true })
  t.same(read(undefined), { expand: '', fields: '', omit: '', expandAbsent: true })
  t.same(read({ expand: 'owner', fields: 'id' }), { expand: '', fields: 'id', omit: '', expandAbsent: true }, "'expand' is not the renamed parameter")
  for (const query of [{ include: '' }, { 'include[]': '' }, { 'include[0]': '' }, { include: ['', ''] }]) {
    t.same(read(query), { expand: '', fields: '', omit: '', expandAbsent: false }, JSON.stringify(query))
  }
  t.same(read({ include: 'owner' }), { expand: 'owner', fields: '', omit: '', expandAbsent: false })
})

t.test('the one-pass reader of plain queries answers as the general reader does, errors included', async (t) => {
  const options = resolveOptions({ maxParamLength: 12 })
  const outcome = (read: () => unknown) => {
    try {
      return { value: read() }
    } catch (error) {
      return { code: (error as { code?: string }).code, message: (error as Error).message }
    }
  }
  const plainKey = fc.constantFrom('expand', 'fields', 'omit', 'limit', 'expandx')
  const key = fc.oneof(plainKey, fc.constantFrom('expand[]', 'expand[0]', 'fields[]', 'omit[1]', 'fields[x]', 'sort]'))
  const text = fc.oneof(fc.constantFrom('', 'owner', 'owner.employer', 'id,name', 'a-very-long-parameter'), fc.string({ maxLength: 14 }))
  const value = fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.integer(), fc.constant(null))
  const query = fc.oneof(fc.dictionary(plainKey, value, { maxKeys: 5 }), fc.dictionary(key, value, { maxKeys: 5 }), fc.constantFrom(undefined, null, 'expand=owner'))
  let plain = 0
  fc.assert(fc.property(query, (input) => {
    const expected = outcome(() => readAnyQuery(input, options))
    const actual = outcome(() => readExpansionQuery(input, options))
    if (JSON.stringify(expected) !== JSON.stringify(actual)) throw new Error(`${JSON.stringify(input)}: ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`)
    if (typeof input === 'object' && input !== null && Object.keys(input).every((name) => !name.endsWith(']'))) plain++
  }), { numRuns: 2_000 })
  t.ok(plain > 600, `${plain} of 2,000 queries had no bracketed key`)
})
