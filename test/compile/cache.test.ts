import t, { type Test } from 'tap'
import { resources } from '../fixtures/pets.js'
import { buildApp, getJson } from '../helpers/app.js'
import { buildPetApp, petStore } from '../helpers/pet-world.js'

const requireOk = async (t: Test, app: Awaited<ReturnType<typeof buildPetApp>>, url: string) => {
  const reply = await getJson(app, url)
  t.equal(reply.status, 200, url)
  return reply
}

t.test('a fresh app has an empty cache', async (t) => {
  const app = await buildPetApp()
  t.same(app.expand.cacheStats(), { size: 0, hits: 0, misses: 0, compiles: 0 })
})

t.test('equivalent queries compile once', async (t) => {
  const groups = [
    ['expand=owner,toys', 'expand=toys&expand=owner', 'expand[]=toys,owner', 'expand=toys,owner,toys', 'expand=owner,toys,'],
    ['', 'fields=*', 'fields=~all', 'expand=', 'omit=owner.hobbies', 'fields=*&omit=owner.name'],
    ['fields=name', 'fields=name&expand=owner', 'expand=toys&fields=name', 'fields=name,name'],
    ['expand=*', 'expand=owner,sold_from,toys'],
  ]
  for (const group of groups) {
    const app = await buildPetApp()
    const bodies = new Set<string>()
    for (const query of group) bodies.add((await requireOk(t, app, `/pets/1?${query}`)).text)
    t.equal(bodies.size, 1, `${group[0]}: one body`)
    t.same(app.expand.cacheStats(), { size: 1, hits: group.length - 1, misses: 1, compiles: 1 }, group.join(' | '))
  }
})

t.test('different combinations compile separately, and each only once', async (t) => {
  const app = await buildPetApp()
  const queries = ['', 'expand=owner', 'expand=owner.employer', 'fields=name', 'omit=name']
  for (const query of queries) await requireOk(t, app, `/pets/1?${query}`)
  t.same(app.expand.cacheStats(), { size: 5, hits: 0, misses: 5, compiles: 5 })
  for (const query of queries) await requireOk(t, app, `/pets/1?${query}`)
  t.same(app.expand.cacheStats(), { size: 5, hits: 5, misses: 5, compiles: 5 })
  await requireOk(t, app, '/pets')
  t.same(app.expand.cacheStats(), { size: 6, hits: 5, misses: 6, compiles: 6 }, 'a list of the resource is another combination')
})

t.test('two routes serving the same combination share its serializer', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    for (const url of ['/a/:id', '/b/:id']) {
      app.get<{ Params: { id: string } }>(url, { expandable: { resource: 'Pet' } }, async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', request.params.id)!))
    }
  })
  await getJson(app, '/a/1?expand=owner')
  await getJson(app, '/b/2?expand=owner')
  t.same(app.expand.cacheStats(), { size: 1, hits: 1, misses: 1, compiles: 1 })
})

t.test('rejected requests and non-2xx replies compile nothing', async (t) => {
  const app = await buildPetApp()
  for (const query of ['expand=nope', 'fields=nope', 'expand=owner..x']) t.equal((await getJson(app, `/pets/1?${query}`)).status, 400)
  t.equal((await getJson(app, '/pets/99?expand=owner')).status, 404)
  t.same(app.expand.cacheStats(), { size: 0, hits: 0, misses: 0, compiles: 0 })
})

t.test('cacheSize bounds the cache; evicted combinations compile again', async (t) => {
  const app = await buildPetApp({ cacheSize: 2 })
  await requireOk(t, app, '/pets/1?expand=owner')
  await requireOk(t, app, '/pets/1?expand=toys')
  t.same(app.expand.cacheStats(), { size: 2, hits: 0, misses: 2, compiles: 2 })
  await requireOk(t, app, '/pets/1?expand=owner')
  t.same(app.expand.cacheStats(), { size: 2, hits: 1, misses: 2, compiles: 2 }, 'owner is now the most recent')
  await requireOk(t, app, '/pets/1?expand=sold_from')
  t.same(app.expand.cacheStats(), { size: 2, hits: 1, misses: 3, compiles: 3 }, 'toys, the least recent, evicted')
  await requireOk(t, app, '/pets/1?expand=owner')
  t.same(app.expand.cacheStats(), { size: 2, hits: 2, misses: 3, compiles: 3 }, 'owner kept')
  const reply = await requireOk(t, app, '/pets/1?expand=toys')
  t.same(app.expand.cacheStats(), { size: 2, hits: 2, misses: 4, compiles: 4 }, 'toys compiled again')
  t.same((reply.body as { toys: unknown }).toys, [{ id: 1, name: 'paper ball' }, { id: 2, name: 'string' }], 'and still right')
})

t.test('many distinct combinations never exceed cacheSize', async (t) => {
  const app = await buildPetApp({ cacheSize: 3 })
  const fields = ['id', 'name', 'species', 'owner', 'sold_from', 'toys']
  let requests = 0
  for (let mask = 1; mask < 1 << fields.length; mask += 5) {
    await requireOk(t, app, `/pets/1?fields=${fields.filter((_, index) => mask & (1 << index)).join(',')}`)
    requests++
    t.ok(app.expand.cacheStats().size <= 3)
  }
  t.same(app.expand.cacheStats(), { size: 3, hits: 0, misses: requests, compiles: requests })
})

t.test('maxCompilesPerSecond: past the bound a combination not held is written without compiling, counted as a miss', async (t) => {
  const { SerializerCache } = await import('../../plugin/compile/serializer-cache.js')
  const { ExpandEngine } = await import('../../plugin/engine.js')
  const { ResourceGraph } = await import('../../plugin/graph/resource-graph.js')
  const { resolveOptions } = await import('../../plugin/options.js')
  const { gadgetResources, Gadget } = await import('../fixtures/gadgets.js')
  const engine = new ExpandEngine(new ResourceGraph(gadgetResources), resolveOptions({}))
  const target = engine.target(Gadget, {}, 'a gadget')
  const plans = ['id', 'title', 'id,title', 'note', 'id,note'].map((fields) => engine.planFor(target, { fields }))
  let now = 0
  const cache = new SerializerCache(10, 2, () => now)
  const gadget = { id: 1, title: 'lamp', note: 'bright' }
  const bodies = plans.map((plan) => cache.get(plan)(gadget))
  t.same(bodies, ['{"id":1}', '{"title":"lamp"}', '{"id":1,"title":"lamp"}', '{"note":"bright"}', '{"id":1,"note":"bright"}'])
  t.same(cache.stats(), { size: 2, hits: 0, misses: 5, compiles: 2 }, 'a burst of 2, then three written by the generic writer')
  t.equal(cache.get(plans[0]!)(gadget), '{"id":1}')
  t.same(cache.stats(), { size: 2, hits: 1, misses: 5, compiles: 2 }, 'a held combination is a hit as before')
  now += 499
  cache.get(plans[2]!)(gadget)
  t.same(cache.stats(), { size: 2, hits: 1, misses: 6, compiles: 2 }, 'under a token after 499 ms')
  now += 2
  t.equal(cache.get(plans[2]!)(gadget), '{"id":1,"title":"lamp"}')
  t.same(cache.stats(), { size: 3, hits: 1, misses: 7, compiles: 3 }, 'one token after 500 ms at 2 a second: compiled')
  now += 60_000
  for (const plan of plans.slice(3)) cache.get(plan)
  cache.get(plans[1]!)
  t.same(cache.stats(), { size: 5, hits: 2, misses: 9, compiles: 5 }, 'the bucket holds 2 at most: a minute later, 2 compiles')
  t.throws(() => cache.get(engine.planFor(target, { fields: 'id,title,note' }))({ id: 1, title: 2 }),
    { code: 'FST_EXPAND_INVALID_DATA', message: "Data for Gadget does not fit the response: 'title' is an integer, expected a string" },
    'data that does not fit: the 500 of the compiled serializer')
  t.same(cache.stats(), { size: 5, hits: 2, misses: 10, compiles: 5 })
})
