import fc from 'fast-check'
import type { ExpansionPlan, LevelPlan } from '../../plugin/plan/plan.js'
import type { JsonSchema } from '../../plugin/graph/resource-graph.js'

// Random bodies for the gadget plans (fixtures/gadgets.ts), as the writers of test/compile/ are compared on them:
// data in every form the data check accepts, and (with `odd`) now and then values it does not.

export const oddValue = fc.oneof(
  fc.anything({ withBigInt: true, withDate: true, withNullPrototype: true, withBoxedValues: true, withSparseArray: true }),
  fc.constantFrom(undefined, null, Number.NaN, Infinity, -Infinity, -0, 1.5, '12', ' 7 ', '1e400', 'x', true, 0, 1, 2, [], {},
    new Date(Number.NaN), 2n ** 64n, -(2n ** 60n), 12n, { toJSON: () => 'replaced' })
)

/** A value of a field schema (as the resource declares it) in a form the check accepts. */
export function fitting (schema: JsonSchema): fc.Arbitrary<unknown> {
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
export function rowOf (level: LevelPlan, odd: boolean): fc.Arbitrary<Record<string, unknown>> {
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

export function payloadOf (plan: ExpansionPlan, odd: boolean): fc.Arbitrary<unknown> {
  const sometimesOdd = (value: fc.Arbitrary<unknown>) =>
    odd ? fc.oneof({ weight: 20, arbitrary: value }, { weight: 1, arbitrary: oddValue }) : value
  if (!plan.target.list) return sometimesOdd(rowOf(plan.root, odd))
  const list = fc.array(rowOf(plan.root, odd), { maxLength: 4 })
  if (plan.target.envelope === undefined) return list
  return fc.record({ data: sometimesOdd(list), next: fc.option(fc.string()) })
}

export type Outcome = { text: string } | { error: string, code: unknown }

export function outcome (write: (data: unknown) => string, data: unknown): Outcome {
  try {
    return { text: write(data) }
  } catch (error) {
    return { error: (error as Error).message, code: (error as { code?: unknown }).code }
  }
}
