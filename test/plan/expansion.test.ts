import t from 'tap'
import { createSerializer, type Expansion } from '../../plugin/index.js'
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
  t.equal(serializer.expansion, serializer.plan, 'plan is the same object, kept for earlier code')
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
      request.expansion = { key: 'forged', expandedPaths: new Set(), includedPaths: new Set(['id']) }
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
    message: 'request.expansion was replaced: it holds what the plugin set for the request, and only that',
  })
})
