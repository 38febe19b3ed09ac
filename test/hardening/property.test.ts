import fc from 'fast-check'
import t from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { createSerializer } from '../../plugin/index.js'
import { ExpandEngine } from '../../plugin/engine.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { resolveOptions } from '../../plugin/options.js'
import { rawFromInput } from '../../plugin/parse/query.js'
import type { ExpansionPlan } from '../../plugin/plan/plan.js'
import { Pet, resources } from '../fixtures/pets.js'
import { referenceAnswer, type ReferenceQuery } from './reference.js'
import {
  assertNoPollution,
  buildPetApp,
  documentedCodes,
  listPermits,
  propertyParameters,
  prototypeSnapshot,
  records,
  shapeByPlan,
  store,
  validatesAgainstPlan,
} from './support.js'

const prototypeBefore = prototypeSnapshot()

// Names that exist somewhere in the fixture, wildcards, names that mean something to JavaScript objects, and noise.
const knownNames = ['id', 'name', 'species', 'owner', 'sold_from', 'toys', 'hobbies', 'employer', 'public', 'address', 'secret']
const objectNames = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__']
const segment = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...knownNames) },
  { weight: 2, arbitrary: fc.constantFrom('*', '~all') },
  { weight: 2, arbitrary: fc.constantFrom(...objectNames) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', ' owner ', 'ówner', 'own\u0000er', '\u{1F436}', 'OWNER', 'owner\u200b') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) }
)
// Paths that exist in the graph, so that a fair share of queries are valid and their bodies get checked.
const validPath = fc.constantFrom(
  'owner', 'owner.employer', 'sold_from', 'toys', '*', '~all', '*.employer', 'owner.*', '*.*',
  'id', 'name', 'species', 'owner.name', 'owner.hobbies', 'owner.employer.name', 'owner.employer.public',
  'owner.id', 'toys.name', 'toys.id', 'sold_from.address', 'sold_from.name', 'owner.employer.*', 'toys.*'
)
const path = fc.oneof(
  { weight: 10, arbitrary: validPath },
  { weight: 1, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('.')) }
)
const value = fc.array(path, { maxLength: 3 }).map((paths) => paths.join(','))

/** One parameter as the client sends it: absent, once, repeated, bracketed, or both forms mixed. */
interface SentParam { plain: string[]; bracketed: string[] }
const sentParam: fc.Arbitrary<SentParam> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<SentParam>({ plain: [], bracketed: [] }) },
  { weight: 4, arbitrary: value.map((one) => ({ plain: [one], bracketed: [] })) },
  { weight: 2, arbitrary: fc.record({ plain: fc.array(value, { minLength: 2, maxLength: 4 }), bracketed: fc.constant<string[]>([]) }) },
  { weight: 1, arbitrary: fc.record({ plain: fc.constant<string[]>([]), bracketed: fc.array(value, { minLength: 1, maxLength: 3 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      plain: fc.array(value, { minLength: 1, maxLength: 2 }),
      bracketed: fc.array(value, { minLength: 1, maxLength: 2 }),
    }),
  }
)
const sentQuery = fc.record({ expand: sentParam, fields: sentParam, omit: sentParam })

function queryString (query: Record<string, SentParam>): string {
  const pairs: string[] = []
  for (const [name, sent] of Object.entries(query)) {
    for (const one of sent.plain) pairs.push(`${name}=${encodeURIComponent(one)}`)
    for (const one of sent.bracketed) pairs.push(`${name}[]=${encodeURIComponent(one)}`)
  }
  return pairs.join('&')
}

const values = (sent: SentParam) => [...sent.plain, ...sent.bracketed]

interface Answer { statusCode: number; body: string }

/** A 400 is Fastify's error shape with a documented code and nothing else. */
function checkBadRequest (answer: Answer, allowed: ReadonlySet<string>, label: string): string | undefined {
  const body = JSON.parse(answer.body) as Record<string, unknown>
  if (!allowed.has(body.code as string)) return `${label}: code ${String(body.code)} is not one of ${[...allowed].join(', ')}`
  if (JSON.stringify(Object.keys(body)) !== '["statusCode","code","error","message"]' || body.statusCode !== 400 ||
    body.error !== 'Bad Request' || typeof body.message !== 'string') {
    return `${label}: not Fastify's error shape: ${answer.body}`
  }
  return undefined
}

/** A 200 is one JSON document that validates against its plan's schema and is exactly the plan's shaping of the records. */
function checkOk (answer: Answer, plan: ExpansionPlan | null, list: boolean, label: string): string | undefined {
  if (plan === null) return `${label}: no plan reached the handler`
  const body: unknown = JSON.parse(answer.body)
  const validation = validatesAgainstPlan(plan, body)
  if (!validation.valid) return `${label}: body does not validate against its schema: ${validation.errors}`
  const data = list ? Object.values(records.Pet) : records.Pet[1]
  const shaped = shapeByPlan(plan, data)
  if (!isDeepStrictEqual(body, shaped)) return `${label}: body ${answer.body} differs from the plan's shaping ${JSON.stringify(shaped)}`
  return undefined
}

t.test('structured queries through app.inject answer exactly what the reference reading of the documentation predicts', async (t) => {
  const { app, lastPlan } = await buildPetApp()
  t.teardown(() => app.close())
  let answered200 = 0
  let answered400 = 0
  await fc.assert(fc.asyncProperty(sentQuery, fc.boolean(), async (query, list) => {
    const url = `${list ? '/pets' : '/pets/1'}?${queryString(query)}`
    const reference: ReferenceQuery = { expand: values(query.expand), fields: values(query.fields), omit: values(query.omit) }
    const expected = referenceAnswer(list, reference)
    const answer = await app.inject(url)
    if (expected.status === 400) {
      answered400++
      if (answer.statusCode !== 400) throw new Error(`${url}: expected 400 ${[...expected.codes].join('|')}, got ${answer.statusCode} ${answer.body}`)
      const problem = checkBadRequest(answer, expected.codes, url)
      if (problem !== undefined) throw new Error(problem)
      return
    }
    answered200++
    if (answer.statusCode !== 200) throw new Error(`${url}: expected 200, got ${answer.statusCode} ${answer.body}`)
    if (answer.headers['content-type'] !== 'application/json; charset=utf-8') throw new Error(`${url}: content type ${String(answer.headers['content-type'])}`)
    const body: unknown = JSON.parse(answer.body)
    if (!isDeepStrictEqual(body, expected.body)) throw new Error(`${url}: body ${answer.body} differs from the reference ${JSON.stringify(expected.body)}`)
    const problem = checkOk(answer, lastPlan(), list, url)
    if (problem !== undefined) throw new Error(problem)
  }), propertyParameters(300))
  t.ok(answered200 > 20 && answered400 > 20, `both outcomes are exercised (${answered200} answered 200, ${answered400} answered 400)`)
  assertNoPollution(t, prototypeBefore)
})

// Raw query strings: whatever the characters, percent escapes or separators.
const rawChunk = fc.oneof(
  fc.constantFrom('expand', 'fields', 'omit', 'expand[]', 'fields[]', 'expand[0]', 'expand[__proto__]', '__proto__', 'constructor', 'prototype'),
  fc.constantFrom('=', '&', ',', '.', '..', '[]', '%', '%2', '%E0%A4%A', '%00', '%2C', '%2E', '+', ';', '#', '?', '*', '~all'),
  fc.constantFrom(...knownNames, ...objectNames),
  fc.string({ unit: 'binary', maxLength: 8 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 8 })
)
const rawQuery = fc.array(rawChunk, { maxLength: 24 }).map((chunks) => chunks.join(''))

t.test('arbitrary raw query strings: a valid 200 or a documented 400, never anything else', async (t) => {
  const { app, lastPlan } = await buildPetApp()
  t.teardown(() => app.close())
  await fc.assert(fc.asyncProperty(rawQuery, fc.boolean(), async (raw, list) => {
    const url = `${list ? '/pets' : '/pets/1'}?${raw}`
    let answer: Answer
    try {
      answer = await app.inject(url)
    } catch {
      return // light-my-request refused the URL itself: nothing reached the server
    }
    if (answer.statusCode === 400) {
      const problem = checkBadRequest(answer, documentedCodes, url)
      if (problem !== undefined) throw new Error(problem)
      return
    }
    if (answer.statusCode !== 200) throw new Error(`${url}: ${answer.statusCode} ${answer.body}`)
    const problem = checkOk(answer, lastPlan(), list, url)
    if (problem !== undefined) throw new Error(problem)
  }), propertyParameters(300))
  assertNoPollution(t, prototypeBefore)
})

t.test('thousands of repeated parameters and very long values: bounded, and over the limits a 400 FST_EXPAND_MALFORMED', async (t) => {
  const { app } = await buildPetApp()
  t.teardown(() => app.close())
  const cases: [string, number, string?][] = [
    [Array.from({ length: 5000 }, () => 'expand=owner').join('&'), 400, 'FST_EXPAND_MALFORMED'],
    // Empty values add no characters: the limit counts values, not the commas joining them.
    [Array.from({ length: 3000 }, () => 'expand=').join('&'), 200],
    [Array.from({ length: 3000 }, () => 'expand[]=toys').join('&'), 400, 'FST_EXPAND_MALFORMED'],
    [Array.from({ length: 101 }, () => 'fields=id').join('&'), 400, 'FST_EXPAND_MALFORMED'],
    [Array.from({ length: 100 }, () => 'fields=id').join('&'), 200],
    [Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? 'expand=owner' : 'expand[]=owner')).join('&'), 200],
    [`expand=${'owner,'.repeat(399)}owner`, 400, 'FST_EXPAND_MALFORMED'],
    [`expand=${','.repeat(2000)}`, 200],
    [`expand=${','.repeat(2001)}`, 400, 'FST_EXPAND_MALFORMED'],
    // The limit counts UTF-16 code units: 1000 emoji are exactly 2000.
    [`omit=${'\u{1F436}'.repeat(1000)}`, 400, 'FST_EXPAND_UNKNOWN_FIELD'],
    [`omit=${'\u{1F436}'.repeat(1001)}`, 400, 'FST_EXPAND_MALFORMED'],
    [`omit=${'x'.repeat(100_000)}`, 400, 'FST_EXPAND_MALFORMED'],
  ]
  // Bounded by what is done (no serializer for a refused request), not by a time a loaded machine may exceed.
  for (const [query, status, code] of cases) {
    const compiled = app.expand.cacheStats().compiles
    const answer = await app.inject(`/pets/1?${query}`)
    const label = `${query.slice(0, 40)}... (${query.length} characters)`
    t.equal(answer.statusCode, status, label)
    if (code !== undefined) t.equal(answer.json().code, code, label)
    t.ok(app.expand.cacheStats().compiles - compiled <= (status === 200 ? 1 : 0), `${label}: ${status === 200 ? 'one serializer at most' : 'refused before any serializer is compiled'}`)
  }
})

/** A value of one parameter as a custom query-string parser (qs, JSON) may hand it over. */
const parsedValue = fc.oneof(
  { weight: 4, arbitrary: value },
  { weight: 2, arbitrary: fc.array(value, { maxLength: 3 }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom({ __proto__: { polluted: true } }, { polluted: 'yes' }, [['owner']], [1, 2], { 0: 'owner', length: 1 }) }
)
const parsedKey = fc.constantFrom('expand', 'fields', 'omit', 'expand[]', 'omit[]', '__proto__', 'constructor', 'prototype', 'expand.__proto__')
const parsedEntries = fc.uniqueArray(fc.tuple(parsedKey, parsedValue), { maxLength: 5, selector: ([key]) => key })

const isPathList = (input: unknown) => typeof input === 'string' || (Array.isArray(input) && input.every((item) => typeof item === 'string'))

/**
 * What the reference predicts for parameters given as parsed values: any
 * value that is neither a string nor an array of strings is malformed.
 */
function expectationFor (list: boolean, entries: ReadonlyArray<readonly [string, unknown]>) {
  const given = new Map(entries)
  const param = (name: string): string[] | null => {
    const parts: string[] = []
    for (const key of [name, `${name}[]`]) {
      if (!given.has(key)) continue
      const input = given.get(key)
      if (!isPathList(input)) return null
      parts.push(...(Array.isArray(input) ? input as string[] : [input as string]))
    }
    return parts
  }
  const expand = param('expand')
  const fields = param('fields')
  const omit = param('omit')
  if (expand === null || fields === null || omit === null) return { status: 400 as const, codes: new Set(['FST_EXPAND_MALFORMED']) }
  return referenceAnswer(list, { expand, fields, omit })
}

t.test('non-string values from a custom query-string parser: a documented 400 or the exact body', async (t) => {
  // The parser hands over whatever JSON the client sent, `__proto__` keys included as own properties.
  const { app, lastPlan } = await buildPetApp({}, {
    routerOptions: { querystringParser: (text: string) => (text === '' ? {} : JSON.parse(decodeURIComponent(text))) },
  })
  t.teardown(() => app.close())
  const outcomes = { 200: 0, 400: 0 }
  await fc.assert(fc.asyncProperty(parsedEntries, fc.boolean(), async (entries, list) => {
    // Written by hand so that a `__proto__` key stays an own property after JSON.parse.
    const json = `{${entries.map(([key, input]) => `${JSON.stringify(key)}:${JSON.stringify(input)}`).join(',')}}`
    const url = `${list ? '/pets' : '/pets/1'}?${encodeURIComponent(json)}`
    const expected = expectationFor(list, entries)
    outcomes[expected.status]++
    const answer = await app.inject(url)
    if (({} as Record<string, unknown>).polluted !== undefined) throw new Error(`${json}: Object.prototype was polluted`)
    if (expected.status === 400) {
      if (answer.statusCode !== 400) throw new Error(`${json}: expected 400 ${[...expected.codes].join('|')}, got ${answer.statusCode} ${answer.body}`)
      const problem = checkBadRequest(answer, expected.codes, json)
      if (problem !== undefined) throw new Error(problem)
      return
    }
    if (answer.statusCode !== 200) throw new Error(`${json}: expected 200, got ${answer.statusCode} ${answer.body}`)
    if (!isDeepStrictEqual(JSON.parse(answer.body), expected.body)) throw new Error(`${json}: body ${answer.body} differs from the reference ${JSON.stringify(expected.body)}`)
    const problem = checkOk(answer, lastPlan(), list, json)
    if (problem !== undefined) throw new Error(problem)
  }), propertyParameters(200))
  t.ok(outcomes[200] > 10 && outcomes[400] > 10, `both outcomes are exercised (${outcomes[200]} answered 200, ${outcomes[400]} answered 400)`)
  assertNoPollution(t, prototypeBefore)
})

const serializerInput = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: value },
  { weight: 2, arbitrary: fc.array(value, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }
)

t.test('createSerializer: invalid input throws a documented code when created; valid input writes the exact shape', async (t) => {
  const engine = new ExpandEngine(new ResourceGraph([...resources, Pet]), resolveOptions({}))
  const outcomes = { 200: 0, 400: 0 }
  await fc.assert(fc.property(serializerInput, serializerInput, serializerInput, fc.boolean(), (expand, fields, omit, list) => {
    const entries: [string, unknown][] = []
    if (expand !== undefined) entries.push(['expand', expand])
    if (fields !== undefined) entries.push(['fields', fields])
    if (omit !== undefined) entries.push(['omit', omit])
    const expected = expectationFor(list, entries)
    outcomes[expected.status]++
    const label = JSON.stringify({ expand, fields, omit, list })
    let serializer
    try {
      serializer = createSerializer(Pet, {
        expand: expand as string,
        fields: fields as string,
        omit: omit as string,
        list,
        permittedExpands: list ? listPermits : undefined,
        resources,
      })
    } catch (error) {
      const code = (error as { code?: string }).code
      if (expected.status !== 400) throw new Error(`${label}: threw ${String(code)} ${(error as Error).message}, expected a serializer`)
      if (!expected.codes.has(code as string)) throw new Error(`${label}: threw ${String(code)}, expected ${[...expected.codes].join('|')}`)
      return
    }
    if (expected.status === 400) throw new Error(`${label}: created a serializer, expected ${[...expected.codes].join('|')}`)
    const planned = { expansion: serializer.expansion }
    const data = list
      ? store.shapeAll(planned, 'Pet')
      : store.shape(planned, 'Pet', records.Pet[1])
    const text = serializer.stringify(data)
    const body: unknown = JSON.parse(text)
    if (!isDeepStrictEqual(body, expected.body)) throw new Error(`${label}: body ${text} differs from the reference ${JSON.stringify(expected.body)}`)
    if (!isDeepStrictEqual(serializer.shape(data), body)) throw new Error(`${label}: shape() differs from stringify()`)
    // The serializer's plan, planned again as createSerializer plans it: the same key, the same schema.
    const target = engine.target(Pet, { list, permittedExpands: list ? listPermits : undefined }, 'Serializer of Pet')
    const input = { expand: expand as string, fields: fields as string, omit: omit as string }
    const plan = engine.planForRaw(target, rawFromInput(input, engine.options))
    if (plan.key !== serializer.expansion.key) throw new Error(`${label}: planned again as ${plan.key}, the serializer's is ${serializer.expansion.key}`)
    const validation = validatesAgainstPlan(plan, body)
    if (!validation.valid) throw new Error(`${label}: ${validation.errors}`)
  }), propertyParameters(300))
  t.ok(outcomes[200] > 20 && outcomes[400] > 20, `both outcomes are exercised (${outcomes[200]} created, ${outcomes[400]} refused)`)
  assertNoPollution(t, prototypeBefore)
})
