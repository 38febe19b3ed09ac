import fc from 'fast-check'
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../plugin/index.js'
import { compileProjection } from '../../plugin/compile/projection.js'
import { responseSchema } from '../../plugin/compile/response-schema.js'
import { compileSerializer, type Stringify } from '../../plugin/compile/serializer-cache.js'
import { genericWriter } from '../../plugin/compile/generic-writer.js'
import { ExpandEngine } from '../../plugin/engine.js'
import { resolveOptions } from '../../plugin/options.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { gadgetResources, Gadget } from '../fixtures/gadgets.js'
import { outcome, payloadOf } from '../helpers/gadget-payloads.js'

/*
 * The generic writer (what the serializer cache writes with past
 * maxCompilesPerSecond) must answer every body as the compiled serializer of
 * the same combination: the same bytes, or the same error (500
 * FST_EXPAND_INVALID_DATA, the same message). Compared on plans over every
 * kind of field, with data in every form the check accepts and values it
 * does not. (The generators are in helpers/gadget-payloads.ts.)
 */

const engine = new ExpandEngine(new ResourceGraph(gadgetResources), resolveOptions({}))
const targets = [
  engine.target(Gadget, {}, 'one gadget'),
  engine.target(Gadget, { list: true }, 'gadgets'),
  engine.target(Gadget, { list: true, envelope: 'data' }, 'gadgets in an envelope'),
]
const queries = [
  {},
  { omit: 'specs' },
  { expand: 'maker', omit: 'specs' },
  { expand: 'maker,tags' },
  { expand: 'tags', fields: 'id,tags,note' },
  { expand: 'maker', fields: 'maker' },
  { fields: 'specs,id' },
]

t.test('the generic writer answers every body as the compiled serializer does', async (t) => {
  let written = 0
  let refused = 0
  let fallbacks = 0
  for (const target of targets) {
    for (const query of queries) {
      const plan = engine.planFor(target, query)
      const compiled = compileSerializer(plan).stringify
      const generic = genericWriter(plan, () => { fallbacks++; return compiled })
      t.equal(generic !== undefined, compileProjection(responseSchema(plan)) !== undefined, `${plan.key}: covered where the projection is`)
      if (generic === undefined) continue
      fc.assert(fc.property(fc.oneof(payloadOf(plan, false), payloadOf(plan, true)), (data) => {
        const expected = outcome(compiled, data)
        t.same(outcome(generic, data), expected, plan.key)
        if ('error' in expected) refused++
        else written++
      }), { numRuns: 60 })
    }
  }
  t.ok(written > 200 && refused > 50, `${written} bodies written, ${refused} refused (${fallbacks} left to the compiled serializer)`)
})

t.test('what the projection does not cover gets no generic writer; a body it cannot reproduce goes to the fallback', async (t) => {
  const plan = engine.planFor(targets[0]!, { fields: 'id,stock' })
  let asked = 0
  const compiled = compileSerializer(plan).stringify
  const generic = genericWriter(plan, () => { asked++; return compiled }) as Stringify
  t.equal(generic({ id: 1, stock: 2n ** 60n }), '{"id":1,"stock":1152921504606846976}')
  t.equal(asked, 1, 'a bigint past 2^53: written by the compiled serializer')
  t.equal(generic({ id: 1, stock: 2 }), '{"id":1,"stock":2}')
  t.equal(asked, 1)
  const Code = defineResource({
    name: 'Code',
    schema: Type.Object({ id: Type.Integer(), value: Type.Union([Type.String(), Type.Integer()]) }),
    fields: ['id', 'value'],
  })
  const codes = new ExpandEngine(new ResourceGraph([Code]), resolveOptions({}))
  const unionPlan = codes.planFor(codes.target(Code, {}, 'a code'), {})
  t.equal(genericWriter(unionPlan, () => compiled), undefined, 'a union in a field: only compiled code writes it')
  t.equal(genericWriter(codes.planFor(codes.target(Code, {}, 'a code'), { fields: 'id' }), () => compiled)!({ id: 3 }), '{"id":3}')
})
