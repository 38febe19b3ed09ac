import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { dialects, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { Pet, Person, openSeeded, resources } from '../fixtures/tables.js'
import { buildApp, getJson, type JsonReply } from '../helpers/app.js'
import { propertyParameters } from './support.js'
import {
  InvalidData,
  candidatesFor,
  clientId,
  clientNumber,
  databaseErrorBody,
  show,
  driverWords,
  isPlainDecimal,
  itemQuery,
  itemQueryString,
  itemRecord,
  itemResources,
  buildData,
  meaningOf,
  referenceBody,
  referencePets,
  referencePlan,
  replaceAt,
  slotsOf,
  sqlState,
  type NumberMeaning,
  type RouteKind,
} from './trust-support.js'

/*
 * What the plugin may trust, and what it must not: numbers a client writes
 * (A), data a handler returns (B), and errors a database driver raises (C).
 * FC_SEED replays a seed that a failure printed, FC_RUNS changes the runs.
 */

type Answer = JsonReply

const errorKeys = '["statusCode","code","error","message"]'

/** Fastify's error shape with this status and code (any code when `code` is undefined). */
function errorShapeProblem (answer: Answer, status: number, error: string, code?: string): string | undefined {
  const body = answer.body as Record<string, unknown> | undefined
  if (body === undefined || typeof body !== 'object' || body === null) return `not a JSON object: ${answer.text}`
  if (JSON.stringify(Object.keys(body)) !== errorKeys) return `keys are not ${errorKeys}: ${answer.text}`
  if (body.statusCode !== status || body.error !== error || typeof body.message !== 'string' || typeof body.code !== 'string') return `not Fastify's error shape: ${answer.text}`
  if (code !== undefined && body.code !== code) return `code ${String(body.code)} instead of ${code}: ${answer.text}`
  return undefined
}

// The pets tables of test/fixtures/tables.ts, with some more pets so that pages differ.
const extraPets = 20
const petRows = referencePets(extraPets)
const petsById = new Map(petRows.map((pet) => [pet.id as number, pet]))
const pageSize = 5
const maxPageSize = 10
const expandPaths = ['owner', 'owner.employer', 'owner.pets', 'owner.employer.ceo', 'sold_from', 'toys', '*', 'owner.*']

/**
 * A database of the dialect with the fixture tables, and an app over it:
 * `app.expand.routes('/pets', Pet)` and `/people`, and hand-written routes
 * that read pets with Kysely and fill them with `app.expand.load`.
 */
async function buildTablesApp (t: Test, dialect: Dialect): Promise<{ app: FastifyInstance; database: TestDatabase }> {
  const database = await openSeeded(t, dialect, extraPets)
  const { db } = database
  const petColumns = ['id', 'name', 'species', 'owner_id as owner', 'sold_from_id as sold_from'] as const
  const app = await buildApp({ db, resources }, (app) => {
    app.expand.routes('/pets', Pet, { pageSize, maxPageSize })
    app.expand.routes('/people', Person)
    app.get('/handwritten', { expandable: { resource: Pet, list: true } }, async (request) => {
      const rows = await db.selectFrom('pets').select([...petColumns]).orderBy('id').execute()
      return app.expand.load(request, rows)
    })
    app.get<{ Params: { id: string } }>('/handwritten/:id', { expandable: { resource: Pet } }, async (request, reply) => {
      const rows = await db.selectFrom('pets').select([...petColumns]).where('id', '=', Number(request.params.id)).execute()
      if (rows.length === 0) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: 'no such pet' })
      const [row] = await app.expand.load(request, rows)
      return row
    })
  })
  t.teardown(() => app.close())
  return { app, database }
}

// ---------------------------------------------------------------- A

type NumbersRequest =
  | { route: 'detail'; id: string }
  | { route: 'list'; limit?: string; offset?: string }
  | { route: 'handwritten'; expand?: string[]; limit?: string; offset?: string }

const numbersRequest: fc.Arbitrary<NumbersRequest> = fc.oneof(
  fc.record({ route: fc.constant('detail' as const), id: clientId }),
  fc.record({
    route: fc.constant('list' as const),
    limit: fc.option(clientNumber, { nil: undefined }),
    offset: fc.option(clientNumber, { nil: undefined }),
  }, { requiredKeys: ['route'] }),
  fc.record({
    route: fc.constant('handwritten' as const),
    expand: fc.option(fc.subarray(expandPaths, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    limit: fc.option(clientNumber, { nil: undefined }),
    offset: fc.option(clientNumber, { nil: undefined }),
  }, { requiredKeys: ['route'] })
)

function numbersUrl (request: NumbersRequest): string {
  if (request.route === 'detail') return `/pets/${encodeURIComponent(request.id)}`
  const pairs: string[] = []
  if (request.route === 'handwritten' && request.expand !== undefined) pairs.push(`expand=${encodeURIComponent(request.expand.join(','))}`)
  if (request.limit !== undefined) pairs.push(`limit=${encodeURIComponent(request.limit)}`)
  if (request.offset !== undefined) pairs.push(`offset=${encodeURIComponent(request.offset)}`)
  return `${request.route === 'list' ? '/pets' : '/handwritten'}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`
}

/** What one dialect's answer must be, alone; undefined when it is right. */
function numbersProblem (request: NumbersRequest, answer: Answer): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}: ${answer.text}`
  if (request.route === 'handwritten') {
    // The route reads no numbers: limit and offset are just other query parameters.
    if (answer.status !== 200) return `status ${answer.status} on a route that reads no numbers: ${answer.text}`
    if (request.expand === undefined && !isDeepStrictEqual(answer.body, petRows)) return `body ${answer.text} differs from the fixture's pets`
    return undefined
  }
  if (request.route === 'detail') {
    const value = Number(request.id)
    const integral = request.id.trim() !== '' && Number.isInteger(value)
    if (answer.status === 200) {
      const row = Number.isSafeInteger(value) ? petsById.get(value) : undefined
      if (row === undefined) return `200 for id '${request.id}', which names no row: ${answer.text}`
      if (!isDeepStrictEqual(answer.body, row)) return `body ${answer.text} is not pet ${value}: ${JSON.stringify(row)}`
      return undefined
    }
    if (isPlainDecimal(request.id) && Number.isSafeInteger(value) && petsById.has(value)) return `status ${answer.status} for the existing id ${request.id}: ${answer.text}`
    if (answer.status === 404) return errorShapeProblem(answer, 404, 'Not Found', 'FST_EXPAND_NOT_FOUND')
    if (answer.status === 400) return errorShapeProblem(answer, 400, 'Bad Request', 'FST_ERR_VALIDATION')
    if (!integral) return `status ${answer.status} for id '${request.id}', which is no integer (400 expected): ${answer.text}`
    return `status ${answer.status}: ${answer.text}`
  }
  const limit: NumberMeaning = request.limit === undefined ? { kind: 'valid', value: pageSize } : meaningOf(request.limit, 1)
  const offset: NumberMeaning = request.offset === undefined ? { kind: 'valid', value: 0 } : meaningOf(request.offset, 0)
  if (answer.status === 400) {
    if (limit.kind === 'valid' && offset.kind === 'valid') return `400 for limit ${String(request.limit)} and offset ${String(request.offset)}, both plain integers in range: ${answer.text}`
    return errorShapeProblem(answer, 400, 'Bad Request')
  }
  if (answer.status !== 200) return `status ${answer.status}: ${answer.text}`
  if (limit.kind === 'invalid') return `200 for limit '${String(request.limit)}' (400 expected): ${answer.text}`
  if (offset.kind === 'invalid') return `200 for offset '${String(request.offset)}' (400 expected): ${answer.text}`
  const expectedLimit = Math.min(limit.value, maxPageSize)
  const expected = {
    data: petRows.slice(offset.value, offset.value + expectedLimit),
    limit: expectedLimit,
    offset: offset.value,
    total: petRows.length,
  }
  if (!isDeepStrictEqual(answer.body, expected)) return `body ${answer.text} differs from the reference ${JSON.stringify(expected)}`
  return undefined
}

t.test('A. numbers from clients: never a 5xx, the documented 200/400/404, and the same answer on every dialect', async (t) => {
  const apps: Array<{ name: string; app: FastifyInstance }> = []
  for (const dialect of dialects()) apps.push({ name: dialect.name, app: (await buildTablesApp(t, dialect)).app })
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(numbersRequest, async (request) => {
    const url = numbersUrl(request)
    const answers: Array<{ name: string; answer: Answer }> = []
    for (const { name, app } of apps) {
      const answer = await getJson(app, url)
      const problem = numbersProblem(request, answer)
      if (problem !== undefined) throw new Error(`${name} GET ${url}: ${problem}`)
      answers.push({ name, answer })
    }
    const [first, ...others] = answers
    for (const other of others) {
      if (other.answer.status !== first.answer.status) {
        throw new Error(`GET ${url}: ${first.name} answers ${first.answer.status} ${first.answer.text}, ${other.name} answers ${other.answer.status} ${other.answer.text}`)
      }
      if (first.answer.status === 200 && other.answer.text !== first.answer.text) {
        throw new Error(`GET ${url}: ${first.name} answers ${first.answer.text}, ${other.name} answers ${other.answer.text}`)
      }
    }
    statuses.set(first.answer.status, (statuses.get(first.answer.status) ?? 0) + 1)
  }), propertyParameters(200))
  t.ok((statuses.get(200) ?? 0) > 20 && (statuses.get(400) ?? 0) > 20, `200s and 400s are both exercised: ${JSON.stringify([...statuses])}`)
})

// ---------------------------------------------------------------- B

const routeOf: Record<RouteKind, string> = { detail: '/item', list: '/items', envelope: '/enveloped' }

t.test('B. handler data: a 200 with exactly the reference body when it fits the plan, FST_EXPAND_INVALID_DATA when it does not', async (t) => {
  let current: unknown
  const app = await buildApp({ resources: itemResources }, (app) => {
    app.get(routeOf.detail, { expandable: { resource: 'Item' } }, async () => current)
    app.get(routeOf.list, { expandable: { resource: 'Item', list: true } }, async () => current)
    app.get(routeOf.envelope, { expandable: { resource: 'Item', list: true, envelope: 'data' } }, async () => current)
  })
  t.teardown(() => app.close())
  let fits = 0
  let misfits = 0
  const input = fc.record({
    kind: fc.constantFrom<RouteKind>('detail', 'list', 'envelope'),
    query: itemQuery,
    items: fc.array(itemRecord, { minLength: 1, maxLength: 3 }),
    reversed: fc.boolean(),
    // Which value to replace and by what (taken modulo the choices there), or none.
    change: fc.option(fc.record({ slot: fc.nat(), candidate: fc.nat() }), { nil: undefined, freq: 3 }),
    secret: fc.integer({ min: 100, max: 999 }).map((n) => `SECRET-${n}`),
  })
  await fc.assert(fc.asyncProperty(input, async ({ kind, query, items, reversed, change, secret }) => {
    const plan = referencePlan(query)
    let data = buildData(kind, plan, items, reversed)
    let changed = 'nothing changed'
    if (change !== undefined) {
      const slots = slotsOf(kind, plan, data)
      const slot = slots[change.slot % slots.length]
      const candidates = candidatesFor(slot.type, secret)
      const value = candidates[change.candidate % candidates.length]
      changed = `${slot.type} at ${slot.key === undefined ? 'the root' : `key ${String(slot.key)}`} replaced by ${show(value)}`
      data = replaceAt(data, slot, value)
    }
    let expected: unknown
    let why = ''
    try {
      expected = referenceBody(kind, plan, data)
    } catch (error) {
      if (!(error instanceof InvalidData)) throw error
      why = error.message
    }
    const search = itemQueryString(query)
    const url = `${routeOf[kind]}${search === '' ? '' : `?${search}`}`
    current = data
    const answer = await getJson(app, url)
    const context = `GET ${url} (${changed}; data ${show(data)})`
    if (why === '') {
      fits++
      if (answer.status !== 200) throw new Error(`${context}: the data fits, but the answer is ${answer.status} ${answer.text}`)
      const body = answer.body as Record<string, unknown> | undefined
      if (body === undefined) throw new Error(`${context}: not JSON: ${answer.text}`)
      const reference = JSON.parse(JSON.stringify(expected)) as Record<string, unknown>
      // Key order counts inside the resource objects; an envelope's own properties may come in any order.
      const same = kind === 'envelope'
        ? isDeepStrictEqual(body, reference) && JSON.stringify(body.data) === JSON.stringify(reference.data)
        : JSON.stringify(body) === JSON.stringify(reference)
      if (!same) throw new Error(`${context}: body ${answer.text} differs from the reference ${JSON.stringify(reference)}`)
      return
    }
    misfits++
    if (answer.status !== 500) throw new Error(`${context}: the data does not fit (${why}), but the answer is ${answer.status} ${answer.text}`)
    const problem = errorShapeProblem(answer, 500, 'Internal Server Error', 'FST_EXPAND_INVALID_DATA')
    if (problem !== undefined) throw new Error(`${context}: ${problem}`)
    if (answer.text.includes('SECRET-')) throw new Error(`${context}: the 500 shows the value: ${answer.text}`)
  }), propertyParameters(300))
  t.ok(fits > 30 && misfits > 30, `both outcomes are exercised (${fits} fit, ${misfits} do not)`)
})

// ---------------------------------------------------------------- C

const petTokens = new Set(['owner', 'owner.employer', 'sold_from', 'toys', '*'])
const personTokens = new Set(['employer', 'pets', 'employer.ceo', '*'])
const brokenRequest = fc.record({
  path: fc.constantFrom('/pets', '/pets/1', '/pets/3', '/pets/999', '/people', '/people/2', '/handwritten', '/handwritten/2'),
  expand: fc.option(fc.subarray(['owner', 'owner.employer', 'sold_from', 'toys', 'employer', 'pets', 'employer.ceo', '*', 'nope'], { minLength: 1, maxLength: 3 }), { nil: undefined }),
})

t.test('C. a failing statement: every 5xx is the bare FST_EXPAND_DATABASE_ERROR body, and no body shows the driver', async (t) => {
  for (const dialect of dialects()) {
    await t.test(dialect.name, async (t) => {
      const { app, database } = await buildTablesApp(t, dialect)
      const { db } = database
      // Warm every cache (plans, serializers, compiled statements) before the schema moves under them.
      for (const url of ['/pets?expand=owner.employer,sold_from,toys', '/pets/1?expand=*', '/people?expand=*', '/people/2', '/handwritten?expand=*', '/handwritten/2?expand=owner']) {
        const answer = await getJson(app, url)
        t.equal(answer.status, 200, `${url} works before the schema changes`)
      }
      await db.schema.alterTable('toys').renameTo('toys_moved').execute()
      await db.schema.alterTable('people').renameColumn('hobbies', 'hobbies_moved').execute()
      await db.schema.dropTable('pet_stores').execute()
      let failed = 0
      await fc.assert(fc.asyncProperty(brokenRequest, async ({ path, expand }) => {
        const url = expand === undefined ? path : `${path}?expand=${encodeURIComponent(expand.join(','))}`
        const answer = await getJson(app, url)
        for (const word of driverWords) {
          if (answer.text.toLowerCase().includes(word.toLowerCase())) throw new Error(`GET ${url}: ${answer.status} body names '${word}': ${answer.text}`)
        }
        if (answer.status >= 300 && sqlState.test(answer.text)) throw new Error(`GET ${url}: ${answer.status} body holds a SQLSTATE: ${answer.text}`)
        if (answer.status >= 500) {
          failed++
          if (answer.text !== databaseErrorBody) throw new Error(`GET ${url}: ${answer.status} ${answer.text}`)
          return
        }
        // A request that reads a moved table or column must fail, not answer without it.
        const person = path.startsWith('/people')
        const tokens = expand ?? []
        const valid = tokens.every((token) => (person ? personTokens : petTokens).has(token))
        // Pet 3 has no store (a null key: nothing to read), so sold_from alone reads nothing there.
        const touches = person || tokens.some((token) => token !== 'nope' && !(path === '/pets/3' && token === 'sold_from'))
        if (valid && touches && path !== '/pets/999') throw new Error(`GET ${url} reads a moved table or column, yet answers ${answer.status} ${answer.text}`)
      }), propertyParameters(100))
      t.ok(failed > 10, `${failed} requests failed`)
    })
  }
})
