import t from 'tap'
import { createSerializer, isExpanded, type Expansion } from '../../plugin/index.js'
import { Pet, resources } from '../fixtures/pets.js'
import { buildApp } from '../helpers/app.js'
import { petStore } from '../helpers/pet-world.js'

/*
 * The public Expansion of a request and of a standalone serializer: its key
 * and paths agree with what explain() reports for the same request, and the
 * same combination has the same key on a route and in a serializer.
 */

t.test('request.expansion: key and paths, as explain reports them', async (t) => {
  let seen: { expansion: Expansion | null; explained: { key: string; expanded: string[]; included: string[] } } | undefined
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => {
      seen = { expansion: request.expansion, explained: app.expand.explain(request) }
      return petStore.shape(request, 'Pet', petStore.get('Pet', 1)!)
    })
  })
  t.teardown(() => app.close())
  const response = await app.inject('/pets/1?expand=owner&fields=id,owner.name')
  t.equal(response.statusCode, 200)
  const expansion = seen!.expansion!
  t.equal(expansion.key, seen!.explained.key)
  t.same([...expansion.expandedPaths], ['owner'])
  t.same([...expansion.expandedPaths], seen!.explained.expanded)
  t.same([...expansion.includedPaths].sort(), ['id', 'owner', 'owner.name'])
  t.same([...expansion.includedPaths], seen!.explained.included)

  const serializer = createSerializer(Pet, { expand: 'owner', fields: 'id,owner.name', resources })
  t.notOk('plan' in serializer, 'the expansion has one name: the earlier alias `plan` is gone')
  t.equal(serializer.expansion.key, expansion.key, 'the same combination has the same key on a route and in a serializer')
  t.same([...serializer.expansion.expandedPaths], ['owner'])
})

t.test('request.expansion holds its key and paths and nothing else: no resource graph reaches a log', async (t) => {
  let expansion: Expansion | null = null
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => {
      expansion = request.expansion
      return petStore.shape(request, 'Pet', petStore.get('Pet', 1)!)
    })
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/pets/1?expand=owner&fields=id,owner.name')).statusCode, 200)
  t.same(Object.keys(expansion!), ['key', 'expandedPaths', 'includedPaths'])
  t.ok(Object.isFrozen(expansion))
  t.equal(JSON.stringify(expansion), JSON.stringify({ key: expansion!.key, expandedPaths: {}, includedPaths: {} }))
})

t.test('a request.expansion replaced by the handler is refused, not trusted', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => {
      // Read-only in the types; JavaScript may still try.
      (request as { expansion: unknown }).expansion = { key: 'forged', expandedPaths: new Set(), includedPaths: new Set(['id']) }
      return { id: 1 }
    })
  })
  t.teardown(() => app.close())
  const response = await app.inject('/pets/1')
  t.equal(response.statusCode, 500)
  t.same(response.json(), {
    statusCode: 500,
    code: 'FST_EXPAND_INVALID_OPTION',
    error: 'Internal Server Error',
    message: 'request.expansion cannot be replaced: it holds what the plugin planned for the request, and only that',
  })
})

/*
 * When the request is planned: once, when first asked (a hook, the handler,
 * load/select/explain), at the latest before the handler; the preSerialization
 * hook plans a reply a hook sent before the handler ran.
 */
t.test('a request is planned when first asked, once, and its failure is thrown to every asker', async (t) => {
  const seen: string[] = []
  const app = await buildApp({ resources }, (app) => {
    // An application-wide hook runs before the route's own: it may ask too.
    app.addHook('preHandler', async (request) => {
      if (request.headers['x-ask'] === 'early') seen.push(`early: ${String(isExpanded(request, 'owner'))}`)
    })
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      preHandler: async (request) => {
        try {
          seen.push(`hook: ${String(isExpanded(request, 'owner'))}`)
        } catch (error) {
          seen.push(`hook: ${(error as Error).message}`)
          // Asked again, the same failure, not a second planning.
          seen.push(`again: ${String(Object.is(error, (() => { try { return request.expansion } catch (again) { return again } })()))}`)
          throw error
        }
      },
    }, async (request) => {
      seen.push(`handler: ${String(isExpanded(request, 'owner'))}`)
      return { id: 1, name: 'Garfield', owner: isExpanded(request, 'owner') ? { id: 8 } : 8 }
    })
    app.get('/other', async (request) => ({ expansion: request.expansion, expanded: isExpanded(request, 'owner') }))
  })
  t.teardown(() => app.close())
  t.same((await app.inject('/pets/1?expand=owner&fields=id,owner.id')).json(), { id: 1, owner: { id: 8 } })
  t.same(seen.splice(0), ['hook: true', 'handler: true'])
  await app.inject({ url: '/pets/1?expand=owner&fields=owner.id', headers: { 'x-ask': 'early' } })
  t.same(seen.splice(0), ['early: true', 'hook: true', 'handler: true'], 'an application-wide preHandler may ask')
  const refused = await app.inject('/pets/1?expand=nope')
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().code, 'FST_EXPAND_UNKNOWN_FIELD')
  t.same(seen.splice(0), [`hook: ${refused.json().message as string}`, 'again: true'], 'the handler does not run')
  t.same((await app.inject('/other?expand=owner')).json(), { expansion: null, expanded: false }, 'null on a route that is not expandable')
})

t.test("a hook's 2xx reply sent before the handler is written by the request's plan", async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      preHandler: async (_request, reply) => reply.send({ id: 1, name: 'Garfield', species: 'cat', secret: 'x', owner: 8, sold_from: null, toys: [] }),
    }, async () => { throw new Error('not reached') })
  })
  t.teardown(() => app.close())
  t.same((await app.inject('/pets/1?fields=id,name')).json(), { id: 1, name: 'Garfield' })
  const refused = await app.inject('/pets/1?fields=nope')
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().code, 'FST_EXPAND_UNKNOWN_FIELD')
})
