import fc from 'fast-check'
import t from 'tap'
import { ExpandEngine } from '../../plugin/engine.js'
import { resolveOptions } from '../../plugin/options.js'
import type { Visibility } from '../../plugin/plan/plan.js'
import { planExpansion } from '../../plugin/plan/planner.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { Pet, resources } from '../fixtures/pets.js'

// A hit compares a request's raw parameters with the last request's of the same route before joining them
// into a cache key: whatever the order of requests, each must get the plan it would get alone.
/** A plan's key, or the message of the error planning raised (a name that is not a relation, say). */
function outcome (plan: () => string): string {
  try {
    return plan()
  } catch (error) {
    return `error: ${(error as Error).message}`
  }
}

for (const onInvalidExpand of ['error', 'ignore'] as const) {
  t.test(`each request gets its own plan, whatever came before it on any route (onInvalidExpand: '${onInvalidExpand}')`, async (t) => {
    const options = resolveOptions({ onInvalidExpand })
    const engine = new ExpandEngine(new ResourceGraph(resources), options)
    const targets = [
      engine.target(Pet, { list: true }, 'pets'),
      engine.target(Pet, { list: true, defaultExpand: ['owner'] }, 'pets with a default'),
      engine.target(Pet, {}, 'one pet'),
    ]
    const seeingAll: Visibility = { key: '', visible: () => undefined }
    const seeingLess: Visibility = { key: '0:id,name;', visible: (node) => node.name === 'Pet' ? new Set(['id', 'name', 'owner']) : undefined }
    // With NUL, the character that separates the parts of the plan cache's key (`%00` in a query string decodes to it):
    // 'owner\u0000name,owner' as expand and 'name,owner' as fields with '\u0000' as omit join to the same text.
    const text = fc.constantFrom('', 'owner', 'toys', 'owner,toys', 'id,name', 'name', 'name,owner', '\u0000', 'owner\u0000name,owner')
    const request = fc.record({
      target: fc.nat({ max: targets.length - 1 }),
      expand: text,
      fields: text,
      omit: text,
      expandAbsent: fc.boolean(),
      visibility: fc.constantFrom(seeingAll, seeingLess),
    })
    let repeated = 0
    fc.assert(fc.property(fc.array(request, { minLength: 1, maxLength: 12 }), (requests) => {
      let previous: string | undefined
      for (const { target, expand, fields, omit, expandAbsent, visibility } of requests) {
        const raw = { expand: expandAbsent ? '' : expand, fields, omit, expandAbsent }
        const expected = outcome(() => planExpansion(targets[target]!, raw, options, visibility).key)
        // New string objects, as a request's parser gives them.
        const fresh = { ...raw, expand: `?${raw.expand}`.slice(1), fields: `?${fields}`.slice(1), omit: `?${omit}`.slice(1) }
        const actual = outcome(() => engine.planForRaw(targets[target]!, fresh, visibility).key)
        if (actual !== expected) throw new Error(`${JSON.stringify(raw)} on ${target}: ${actual}, expected ${expected}`)
        if (previous === expected) repeated++
        previous = expected
      }
    }), { numRuns: 1_000 })
    t.ok(repeated > 100, `${repeated} requests repeated the plan of the one before`)
  })
}

t.test('raw values holding the key\'s separator do not share a plan', async (t) => {
  const options = resolveOptions({ onInvalidExpand: 'ignore' })
  const engine = new ExpandEngine(new ResourceGraph(resources), options)
  const pet = engine.target(Pet, {}, 'one pet')
  const seeingAll: Visibility = { key: '', visible: () => undefined }
  const withNul = engine.planForRaw(pet, { expand: 'owner\u0000name,owner', fields: '', omit: '' }, seeingAll)
  const plain = engine.planForRaw(pet, { expand: 'owner', fields: 'name,owner', omit: '\u0000' }, seeingAll)
  t.not(plain.key, withNul.key)
  t.equal(plain.key, planExpansion(pet, { expand: 'owner', fields: 'name,owner', omit: '\u0000' }, options, seeingAll).key)
})
