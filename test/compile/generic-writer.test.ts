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
import type { ExpansionPlan, LevelPlan } from '../../plugin/plan/plan.js'
import { ResourceGraph, type JsonSchema } from '../../plugin/resource-graph.js'
import { gadgetResources, Gadget } from '../fixtures/gadgets.js'

/*
 * The generic writer (what the serializer cache writes with past
 * maxCompilesPerSecond) must answer every body as the compiled serializer of
 * the same combination: the same bytes, or the same error (500
 * FST_EXPAND_INVALID_DATA, the same message). Compared on plans over every
 * kind of field, with data in every form the check accepts and values it
 * does not. (The generators are those of checked-projection.test.ts.)
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

const oddValue = fc.oneof(
  fc.anything({ withBigInt: true, withDate: true, withNullPrototype: true, withBoxedValues: true, withSparseArray: true }),
  fc.constantFrom(undefined, null, Number.NaN, Infinity, -Infinity, -0, 1.5, '12', ' 7 ', '1e400', 'x', true, 0, 1, 2, [], {},
    new Date(Number.NaN), 2n ** 64n, -(2n ** 60n), 12n, { toJSON: () => 'replaced' })
)

/** A value of a field schema (as the resource declares it) in a form the check accepts. */
function fitting (schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string]
  const members = types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null': return fc.constant(null)
      case 'string': return ['date-time', 'date'].includes(schema.format as string)
        ? fc.oneof(fc.string(), fc.date({ noInvalidDate: true }), fc.date({ noInvalidDate: true }).map((date) => date.toISOString()))
        : fc.oneof(fc.string(), fc.string({ unit: 'binary' }))
      case 'integer': return fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(-0, 2 ** 53, 1e21),
        fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), fc.maxSafeInteger().map(String))
      case 'number': return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.double({ noNaN: true, noDefaultInfinity: true }).map(String), fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n }))
      case 'boolean': return fc.oneof(fc.boolean(), fc.constantFrom(0, 1))
      case 'array': return fc.array(fitting(schema.items as JsonSchema), { maxLength: 3 })
      case 'object': return fc.record({ size: fc.integer() })
      default: throw new Error(`no values for ${type}`)
    }
  })
  return fc.oneof(...members)
}

/** A row of a level: each field fitting, or (with `odd`) now and then missing or anything. */
function rowOf (level: LevelPlan, odd: boolean): fc.Arbitrary<Record<string, unknown>> {
  const entries = level.fields.map((field) => {
    let value: fc.Arbitrary<unknown>
    if (field.kind === 'expanded') {
      const nested = rowOf(field.level, odd)
      value = field.relation.many ? fc.array(nested, { maxLength: 3 }) : fc.option(nested, { nil: null })
    } else {
      value = fitting(field.kind === 'value' || field.kind === 'id' ? level.node.fieldSchemas.get(field.name)! : {})
    }
    if (level.node.optionalFields.has(field.name)) value = fc.option(value, { nil: undefined })
    return fc.tuple(fc.constant(field.name), odd ? fc.oneof({ weight: 12, arbitrary: value }, { weight: 1, arbitrary: oddValue }) : value)
  })
  return fc.tuple(fc.tuple(...entries), fc.boolean()).map(([pairs, reversed]) => {
    const row: Record<string, unknown> = { undeclared: 'never written' }
    for (const [name, value] of reversed ? [...pairs].reverse() : pairs) if (value !== undefined) row[name] = value
    return row
  })
}

function payloadOf (plan: ExpansionPlan, odd: boolean): fc.Arbitrary<unknown> {
  const sometimesOdd = (value: fc.Arbitrary<unknown>) =>
    odd ? fc.oneof({ weight: 20, arbitrary: value }, { weight: 1, arbitrary: oddValue }) : value
  if (!plan.target.list) return sometimesOdd(rowOf(plan.root, odd))
  const list = fc.array(rowOf(plan.root, odd), { maxLength: 4 })
  if (plan.target.envelope === undefined) return list
  return fc.record({ data: sometimesOdd(list), next: fc.option(fc.string()) })
}

type Outcome = { text: string } | { error: string, code: unknown }

function outcome (write: (data: unknown) => string, data: unknown): Outcome {
  try {
    return { text: write(data) }
  } catch (error) {
    return { error: (error as Error).message, code: (error as { code?: unknown }).code }
  }
}

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
