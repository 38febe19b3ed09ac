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
