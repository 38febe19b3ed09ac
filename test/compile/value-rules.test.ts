import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../plugin/index.js'
import { compileCheckedProjection } from '../../plugin/compile/checked-projection.js'
import { compileDataCheck } from '../../plugin/compile/data-check.js'
import { genericWriter } from '../../plugin/compile/generic-writer.js'
import {
  chooseMechanism, compileWriter, mechanisms, runtimeChoices, runtimeTier, runtimeTierOf, type RuntimeTier, type SerializerMechanism,
} from '../../plugin/compile/mechanisms.js'
import { responseSchema } from '../../plugin/compile/response-schema.js'
import { compileSerializer } from '../../plugin/compile/serializer-cache.js'
import {
  acceptedBy, leftToGeneratedCode, valueRules, writtenBy, type ValueFormat,
} from '../../plugin/compile/value-rules.js'
import { ExpandEngine } from '../../plugin/engine.js'
import { resolveOptions } from '../../plugin/options.js'
import type { ExpansionPlan } from '../../plugin/plan/plan.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import type { JsonSchema } from '../../plugin/graph/resource-graph.js'

/*
 * One rule per value (plugin/compile/value-rules.ts): the same edge values
 * go through every mechanism (fast-json-stringify's generated code, the
 * projection, the checked projection, the generic writer), each after the
 * data check as the serializer cache runs it, and each must answer with the
 * same status and the same bytes; the expected answers are pinned here as
 * the README states them ("Guarantees": accepted representations).
 */

const Reading = defineResource({
  name: 'Reading',
  schema: Type.Object({
    id: Type.Integer(),
    count: Type.Integer(),
    amount: Type.Number(),
    flag: Type.Boolean(),
    day: Type.String({ format: 'date' }),
    at: Type.String({ format: 'date-time' }),
    clock: Type.String({ format: 'time' }),
    label: Type.String(),
    level: Type.Union([Type.Integer(), Type.Null()]),
  }),
  fields: ['id', 'count', 'amount', 'flag', 'day', 'at', 'clock', 'label', 'level'],
})

const engine = new ExpandEngine(new ResourceGraph([Reading]), resolveOptions({}))
const onePlan = engine.planFor(engine.target(Reading, {}, 'one reading'), {})
const listPlan = engine.planFor(engine.target(Reading, { list: true, envelope: 'items' }, 'readings'), {})

const row = {
  id: 1, count: 2, amount: 2.5, flag: true, day: '2021-02-03', at: '2021-01-01T00:00:00.000Z', clock: '10:00:00', label: 'x', level: null,
}
const rowText = '{"id":1,"count":2,"amount":2.5,"flag":true,"day":"2021-02-03","at":"2021-01-01T00:00:00.000Z","clock":"10:00:00","label":"x","level":null}'

type Answer = { status: 200, body: string } | { status: number | 'threw', code: unknown, message: string }

function answer (write: (data: unknown) => string, data: unknown): Answer {
  try {
    return { status: 200, body: write(data) }
  } catch (error) {
    const { statusCode, code, message } = error as { statusCode?: number, code?: unknown, message: string }
    return { status: statusCode ?? 'threw', code, message }
  }
}

/** Every mechanism of a plan, each after the data check, as the serializer cache runs them. */
function writers (plan: ExpansionPlan): Record<string, (data: unknown) => string> {
  const check = compileDataCheck(plan)
  const projection = compileWriter(responseSchema(plan), 'projection')
  const checked = compileSerializer(plan, 'projection')
  const generated = compileSerializer(plan, 'fast-json-stringify')
  if (projection.mechanism !== 'projection' || checked.projection !== compileCheckedProjection(plan)?.source || generated.mechanism !== 'fast-json-stringify') {
    throw new Error(`${plan.key}: a mechanism does not cover the plan`)
  }
  return {
    'fast-json-stringify': generated.stringify,
    projection: (data) => {
      check(data)
      return projection.stringify(data)
    },
    'checked projection': checked.stringify,
    'generic writer': genericWriter(plan, () => generated.stringify)!,
  }
}

const one = writers(onePlan)
const list = writers(listPlan)

const refused = (message: string): Answer => ({
  status: 500, code: 'FST_EXPAND_INVALID_DATA', message: `Data for Reading does not fit the response: ${message}`,
})
const written = (field: string, text: string): Answer => ({ status: 200, body: rowText.replace(new RegExp(`"${field}":[^,}]*`), `"${field}":${text}`) })

const localDay = new Date(2020, 0, 2, 12)
const pad = (value: number) => String(value).padStart(2, '0')
const localDayText = `"${localDay.getFullYear()}-${pad(localDay.getMonth() + 1)}-${pad(localDay.getDate())}"`
const localClockText = `"${pad(localDay.getHours())}:${pad(localDay.getMinutes())}:${pad(localDay.getSeconds())}"`

const cases: Array<[field: string, value: unknown, expected: Answer]> = [
  // A number past 2^53 - 1 may be another integer rounded (a driver's int8): refused, never written as if exact.
  ['count', 2 ** 53, refused("'count' is an integer past 2^53 - 1, which a number holds only rounded, expected an integer")],
  ['count', -(2 ** 53), refused("'count' is an integer past 2^53 - 1, which a number holds only rounded, expected an integer")],
  ['count', Number.MAX_SAFE_INTEGER, written('count', '9007199254740991')],
  ['count', 2n ** 53n, written('count', '9007199254740992')],
  ['count', 2n ** 64n, written('count', '18446744073709551616')],
  ['count', -(2n ** 60n), written('count', '-1152921504606846976')],
  ['count', 12n, written('count', '12')],
  ['count', 1.5, refused("'count' is a fraction, expected an integer")],
  ['count', '12', written('count', '12')],
  ['count', '012', refused("'count' is a string, expected an integer")],
  ['count', ' 7 ', refused("'count' is a string, expected an integer")],
  ['count', '9007199254740993', refused("'count' is a string, expected an integer")],
  ['count', Number.NaN, refused("'count' is a non-finite number, expected an integer")],
  ['count', Infinity, refused("'count' is a non-finite number, expected an integer")],
  ['count', -0, written('count', '0')],
  ['count', 1e21, refused("'count' is an integer past 2^53 - 1, which a number holds only rounded, expected an integer")],
  ['count', true, refused("'count' is a boolean, expected an integer")],
  ['count', null, refused("'count' is null, expected an integer")],
  ['count', undefined, refused("'count' is missing")],
  ['amount', Number.NaN, refused("'amount' is a non-finite number, expected a number")],
  ['amount', -Infinity, refused("'amount' is a non-finite number, expected a number")],
  ['amount', -0, written('amount', '0')],
  ['amount', 2 ** 53, written('amount', '9007199254740992')],
  ['amount', '9.90', written('amount', '9.9')],
  ['amount', '1e400', refused("'amount' is a string, expected a number")],
  ['amount', '.5', refused("'amount' is a string, expected a number")],
  ['amount', 5n, written('amount', '5')],
  ['amount', 2n ** 53n, refused("'amount' is a bigint, expected a number")],
  ['flag', 0, written('flag', 'false')],
  ['flag', 1, written('flag', 'true')],
  ['flag', 2, refused("'flag' is an integer, expected a boolean")],
  ['flag', 'true', refused("'flag' is a string, expected a boolean")],
  ['flag', undefined, refused("'flag' is missing")],
  ['day', localDay, written('day', localDayText)],
  ['day', new Date(Number.NaN), refused("'day' is a Date, expected a date (YYYY-MM-DD)")],
  ['day', '2021-02-30', refused("'day' is a string, expected a date (YYYY-MM-DD)")],
  ['day', 20210203, refused("'day' is an integer, expected a date (YYYY-MM-DD)")],
  ['at', new Date(0), written('at', '"1970-01-01T00:00:00.000Z"')],
  ['at', '2021-01-01 00:00:00', written('at', '"2021-01-01T00:00:00.000Z"')],
  ['at', '2021-01-01T01:00:00.1234+01:00', written('at', '"2021-01-01T00:00:00.123Z"')],
  ['at', new Date(Number.NaN), refused("'at' is a Date, expected a date-time")],
  ['at', 'not a date', refused("'at' is a string, expected a date-time")],
  ['at', 0, refused("'at' is an integer, expected a date-time")],
  ['clock', localDay, written('clock', localClockText)],
  ['clock', 'any text', written('clock', '"any text"')],
  ['clock', new Date(Number.NaN), refused("'clock' is a Date, expected a string")],
  ['label', 12, refused("'label' is an integer, expected a string")],
  ['label', 'a "quoted" \u2028 label', written('label', JSON.stringify('a "quoted" \u2028 label'))],
  ['level', '7', written('level', '7')],
  ['level', 7n, written('level', '7')],
  ['level', 7.5, refused("'level' is a fraction, expected an integer or null")],
  ['id', { toJSON: () => 1 }, refused("'id' is an object, expected an integer")],
]

t.test('the same edge values answer the same status and bytes through every mechanism', async (t) => {
  for (const [field, value, expected] of cases) {
    const data = { ...row, [field]: value }
    const label = `${field}: ${describe(value)}`
    for (const [mechanism, write] of Object.entries(one)) t.same(answer(write, data), expected, `${label}, ${mechanism}`)
    // In a list in an envelope: the same answer, for item 0.
    const listExpected = 'body' in expected
      ? { status: 200, body: `{"items":[${expected.body}]}` }
      : { ...expected, message: expected.message.replace('Data for Reading', 'Data for Reading list item 0') }
    for (const [mechanism, write] of Object.entries(list)) t.same(answer(write, { items: [data] }), listExpected, `${label} in a list, ${mechanism}`)
  }
})

t.test('a payload of the wrong shape: the same refusal from every mechanism', async (t) => {
  const payloads: Array<[unknown, string]> = [
    [[row], "the payload is an array, expected an object holding 'items'"],
    [null, "the payload is null, expected an object holding 'items'"],
    [{ items: 3 }, "the list 'items' is an integer, expected an array"],
    [{}, "the list 'items' is missing, expected an array"],
  ]
  for (const [payload, message] of payloads) {
    for (const [mechanism, write] of Object.entries(list)) t.same(answer(write, payload), refused(message), `${describe(payload)}, ${mechanism}`)
  }
  for (const [mechanism, write] of Object.entries(one)) t.same(answer(write, [row]), refused('the item is an array, expected an object'), `an array for one item, ${mechanism}`)
})

t.test("the envelope's other properties: as JSON.stringify writes them alone, through every mechanism", async (t) => {
  const extras: Array<[unknown, Answer]> = [
    [new Date(0), { status: 200, body: `{"items":[${rowText}],"extra":"1970-01-01T00:00:00.000Z"}` }],
    [{ toJSON: (key: string) => `key ${key}` }, { status: 200, body: `{"items":[${rowText}],"extra":"key "}` }],
    [Number.NaN, { status: 200, body: `{"items":[${rowText}],"extra":null}` }],
    [undefined, { status: 200, body: `{"items":[${rowText}]}` }],
  ]
  for (const [extra, expected] of extras) {
    for (const [mechanism, write] of Object.entries(list)) t.same(answer(write, { items: [row], extra }), expected, `${String(extra)}, ${mechanism}`)
  }
  const bigint = Object.entries(list).map(([, write]) => answer(write, { items: [row], extra: 1n }))
  t.ok(bigint.every((got) => got.status === 'threw'), 'a bigint: JSON.stringify throws, in every mechanism')
  t.same(new Set(bigint.map((got) => JSON.stringify(got))).size, 1, 'with the same error')
})

function describe (value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`
  if (value instanceof Date) return `Date(${value.getTime()})`
  if (typeof value === 'symbol' || typeof value === 'function') return typeof value
  // U+2028 would end a line of the test's report.
  return (JSON.stringify(value) ?? String(value)).replace(/\u2028/g, '\\u2028')
}

/** Values of every kind, for the rules alone. */
const values: unknown[] = [
  undefined, null, true, false, 0, 1, 2, -0, 1.5, 2 ** 53, 1e21, Number.NaN, Infinity, -Infinity, 12n, 2n ** 53n, -(2n ** 53n), 2n ** 64n,
  '', '12', '012', '-7', '9.90', '.5', '1e400', 'x', '2021-02-03', '2021-02-30', '2021-01-01 00:00:00', '2021-01-01T00:00:00Z', '10:00',
  new Date(0), localDay, new Date(Number.NaN), [], {}, { toJSON: () => 1 }, Symbol('s'), () => 1,
]

function schemaOf (format: ValueFormat): JsonSchema {
  switch (format) {
    case 'date':
    case 'date-time':
    case 'time':
      return { type: 'string', format }
    default:
      return { type: format }
  }
}

t.test('each rule writes only what it accepts, and what it writes is what the generated code writes', async (t) => {
  for (const format of Object.keys(valueRules) as ValueFormat[]) {
    const generated = mechanisms['fast-json-stringify'].compile({ type: 'object', properties: { value: schemaOf(format) }, required: ['value'] }).stringify
    for (const value of values) {
      let copy: unknown
      try {
        copy = writtenBy[format](value)
      } catch (error) {
        t.equal(error, leftToGeneratedCode, `${format}: left to the generated code`)
        continue
      }
      t.ok(acceptedBy[format](value), `${format}: written only when accepted (${describe(value)})`)
      t.equal(JSON.stringify({ value: copy }), generated({ value }), `${format}: ${describe(value)}`)
    }
  }
})

t.test('the generated code inlines the rules: a plain hot path', async (t) => {
  const checked = compileCheckedProjection(onePlan)!.source
  for (const format of ['integer', 'number', 'boolean', 'string', 'date', 'date-time'] as const) {
    t.ok(checked.includes(valueRules[format].writes), `${format}: its written form, inline`)
  }
  const check = compileDataCheck(onePlan).toString()
  t.match(check, /checkData/)
})

t.test('the mechanisms and the choice of each runtime are tables', async (t) => {
  const strings = { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } } }
  const numbers = { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'number' } } } } }
  const expected: Record<RuntimeTier, Array<[JsonSchema, boolean, SerializerMechanism]>> = {
    'json-fast-path': [[strings, true, 'projection'], [numbers, true, 'projection'], [strings.items, false, 'projection']],
    'native-escaping': [[strings, true, 'projection'], [numbers, true, 'fast-json-stringify'], [strings.items, false, 'projection']],
    'native-escaping-lists': [[strings, true, 'projection'], [numbers, true, 'fast-json-stringify'], [strings.items, false, 'fast-json-stringify']],
  }
  for (const [tier, choices] of Object.entries(expected) as Array<[RuntimeTier, typeof expected[RuntimeTier]]>) {
    for (const [schema, isList, mechanism] of choices) t.equal(runtimeChoices[tier].choose(schema, isList), mechanism, `${tier}: ${mechanism}`)
  }
  t.equal(runtimeTierOf('13.8.1'), 'json-fast-path')
  t.equal(runtimeTierOf('14.0.0'), 'json-fast-path')
  t.equal(runtimeTierOf('13.7.5'), 'native-escaping')
  t.equal(runtimeTierOf('12.4.254'), 'native-escaping')
  t.equal(runtimeTierOf('11.3.244'), 'native-escaping-lists')
  t.equal(runtimeTier, runtimeTierOf(process.versions.v8), 'this runtime')
  t.equal(chooseMechanism(strings, true), runtimeChoices[runtimeTier].choose(strings, true))
  t.equal(mechanisms.projection.compile({ type: 'object', properties: { a: { type: ['string', 'integer'] } } }), undefined, 'a type list: not covered by the projection')
  t.equal(mechanisms['fast-json-stringify'].compile(strings).mechanism, 'fast-json-stringify')
})
