import type { FastifyRequest } from 'fastify'
import t from 'tap'
import { isExpanded, isIncluded } from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { buildApp, getJson } from '../helpers/app.js'
import { petStore } from '../helpers/pet-world.js'

const paths = ['owner', 'owner.employer', 'sold_from', 'toys', 'owner.name', 'owner.hobbies', 'owner.employer.name', 'name', 'id', 'toys.name', 'toys.secret', 'nope', 'owner.nope']

/** An app whose handlers record what isExpanded / isIncluded answered. */
async function recordingApp (pluginOptions: { onInvalidExpand?: 'ignore' } = {}, permitListExpands?: string[]) {
  let seen: { expanded: string[]; included: string[]; hasPlan: boolean } = { expanded: [], included: [], hasPlan: false }
  const record = (request: FastifyRequest) => {
    seen = {
      expanded: paths.filter((path) => isExpanded(request, path)),
      included: paths.filter((path) => isIncluded(request, path)),
      hasPlan: request.expansion !== null,
    }
  }
  const app = await buildApp({ resources, ...pluginOptions }, (app) => {
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => {
      record(request)
      return petStore.shape(request, 'Pet', petStore.get('Pet', 1)!)
    })
    app.get('/pets', { expandable: { resource: 'Pet', list: true, permitListExpands } }, async (request) => {
      record(request)
      return petStore.shapeAll(request, 'Pet')
    })
    app.get('/plain', async (request) => {
      record(request)
      return {}
    })
  })
  return async (url: string) => {
    const reply = await getJson(app, url)
    t.equal(reply.status, 200, url)
    return seen
  }
}

t.test('isExpanded and isIncluded answer from the validated plan', async (t) => {
  const ask = await recordingApp()
  t.same(await ask('/pets/1'), {
    hasPlan: true,
    expanded: [],
    included: ['owner', 'sold_from', 'toys', 'name', 'id'],
  })
  t.same(await ask('/pets/1?expand=owner.employer'), {
    hasPlan: true,
    expanded: ['owner', 'owner.employer'],
    included: ['owner', 'owner.employer', 'sold_from', 'toys', 'owner.name', 'owner.hobbies', 'owner.employer.name', 'name', 'id'],
  })
  t.same(await ask('/pets/1?expand=toys'), {
    hasPlan: true,
    expanded: ['toys'],
    included: ['owner', 'sold_from', 'toys', 'name', 'id', 'toys.name'],
  }, 'a field the relation option omits is not included')
})

t.test('wildcards are resolved', async (t) => {
  const ask = await recordingApp()
  t.same((await ask('/pets/1?expand=*')).expanded, ['owner', 'sold_from', 'toys'])
  t.same((await ask('/pets/1?expand=~all')).expanded, ['owner', 'sold_from', 'toys'])
  t.same((await ask('/pets/1?expand=owner.*')).expanded, ['owner', 'owner.employer'])
})

t.test('a field left out by fields/omit is neither included nor expanded', async (t) => {
  const ask = await recordingApp()
  t.same(await ask('/pets/1?expand=owner,toys&fields=name,toys'), { hasPlan: true, expanded: ['toys'], included: ['toys', 'name', 'toys.name'] })
  t.same(await ask('/pets/1?expand=owner&omit=owner'), { hasPlan: true, expanded: [], included: ['sold_from', 'toys', 'name', 'id'] })
  t.same(await ask('/pets/1?expand=owner.employer&omit=owner.employer,owner.name'), {
    hasPlan: true,
    expanded: ['owner'],
    included: ['owner', 'sold_from', 'toys', 'owner.hobbies', 'name', 'id'],
  })
  t.same((await ask('/pets/1?expand=owner&fields=owner.name')).included, ['owner', 'owner.name'])
})

t.test('on a list route, a path that is not permitted is not expanded', async (t) => {
  const ask = await recordingApp({}, ['owner'])
  t.same((await ask('/pets?expand=*')).expanded, ['owner'])
  t.same((await ask('/pets?expand=owner.*')).expanded, ['owner'])
  const askIgnoring = await recordingApp({ onInvalidExpand: 'ignore' }, ['owner'])
  t.same((await askIgnoring('/pets?expand=owner.employer,toys,nope')).expanded, ['owner'])
})

t.test("under onInvalidExpand: 'ignore', the dropped tail is not expanded", async (t) => {
  const ask = await recordingApp({ onInvalidExpand: 'ignore' })
  const seen = await ask('/pets/1?expand=owner.nope,nope')
  t.same(seen.expanded, ['owner'])
  t.notOk(seen.included.includes('nope') || seen.included.includes('owner.nope'))
})

t.test('request.expansion is null outside expandable routes, and the helpers answer false', async (t) => {
  const ask = await recordingApp()
  t.same(await ask('/plain?expand=owner&fields=name'), { hasPlan: false, expanded: [], included: [] })
  t.notOk(isExpanded({}, 'owner'))
  t.notOk(isIncluded({ expansion: null }, 'owner'))
})

t.test('request.expansion exposes the expanded and included paths', async (t) => {
  let expansion: FastifyRequest['expansion'] = null
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => {
      expansion = request.expansion
      return petStore.shape(request, 'Pet', petStore.get('Pet', 1)!)
    })
  })
  await getJson(app, '/pets/1?expand=owner&fields=id,owner.id')
  t.ok(expansion !== null)
  t.same([...expansion!.expandedPaths], ['owner'])
  t.same([...expansion!.includedPaths].sort(), ['id', 'owner', 'owner.id'])
})
