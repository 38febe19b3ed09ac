import { Type } from '@sinclair/typebox'
import fc from 'fast-check'
import { errorCodes as fastifyErrorCodes } from 'fastify'
import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import * as errorsModule from '../../plugin/errors.js'
import * as publicExports from '../../plugin/index.js'
import {
  accessErrorCodes,
  DatabaseError,
  defineResource,
  InvalidDataError,
  InvalidDefinitionError,
  InvalidOptionError,
  listErrorCodes,
  loadingErrorCodes,
  MalformedError,
  NotFoundError,
  NotPermittedError,
  RecursiveError,
  requestErrorCodes,
  serverErrorCodes,
  TooDeepError,
  TooLargeError,
  unavailableErrorCodes,
  UnknownFieldError,
} from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { buildApp, getJson, MemoryStore } from '../helpers/app.js'
import { buildPetApp, defaults } from '../helpers/pet-world.js'

const { garfield, jon, acme } = defaults

const badRequest = (code: string, message: string) => ({ statusCode: 400, code, error: 'Bad Request', message })

t.test('each request error code with its exact body', async (t) => {
  const app = await buildPetApp({ maxDepth: 2, maxPaths: 3, maxParamLength: 40 }, { permitListExpands: ['owner'] })
  const cases: [string, object][] = [
    ['/pets/1?expand=foo', badRequest('FST_EXPAND_UNKNOWN_FIELD', "Cannot expand 'foo' on Pet: expandable fields are owner, sold_from, toys")],
    ['/pets/1?expand=owner.foo', badRequest('FST_EXPAND_UNKNOWN_FIELD', "Cannot expand 'owner.foo' on Person: expandable fields are employer")],
    ['/pets/1?expand=name', badRequest('FST_EXPAND_UNKNOWN_FIELD', "Cannot expand 'name' on Pet: expandable fields are owner, sold_from, toys")],
    ['/pets/1?expand=sold_from.x', badRequest('FST_EXPAND_UNKNOWN_FIELD', "Cannot expand 'sold_from.x' on PetStore: it has no expandable fields")],
    ['/pets/1?fields=nope', badRequest('FST_EXPAND_UNKNOWN_FIELD', "Unknown field 'nope' in 'fields': Pet has id, name, species, owner, sold_from, toys")],
    ['/pets/1?expand=owner&omit=owner.nope', badRequest('FST_EXPAND_UNKNOWN_FIELD', "Unknown field 'owner.nope' in 'omit': Person has id, name, hobbies, employer")],
    ['/pets?expand=toys', badRequest('FST_EXPAND_NOT_PERMITTED', "Cannot expand 'toys' on a list of Pet: permitted expansions are owner")],
    ['/pets/1?expand=owner.employer.x', badRequest('FST_EXPAND_TOO_DEEP', "Cannot expand 'owner.employer.x': the maximum expansion depth is 2")],
    ['/pets/1?expand=owner..employer', badRequest('FST_EXPAND_MALFORMED', "'expand' has an empty segment in 'owner..employer'")],
    ['/pets/1?fields=.name', badRequest('FST_EXPAND_MALFORMED', "'fields' has an empty segment in '.name'")],
    ['/pets/1?omit=owner.', badRequest('FST_EXPAND_MALFORMED', "'omit' has an empty segment in 'owner.'")],
    [`/pets/1?expand=${'x'.repeat(41)}`, badRequest('FST_EXPAND_MALFORMED', "'expand' is 41 characters long; the limit is 40")],
    ['/pets/1?fields=a,b,c,d', badRequest('FST_EXPAND_MALFORMED', "'fields' names more than 3 paths")],
  ]
  for (const [url, body] of cases) {
    const reply = await getJson(app, url)
    t.equal(reply.status, 400, url)
    t.equal(reply.contentType, 'application/json; charset=utf-8', url)
    t.same(reply.body, body, url)
    t.equal(reply.text, JSON.stringify(body), `${url}: exactly the four keys`)
  }
})

// A resource that refers to itself, for depth and recursion.
const defineCategory = (maxDepth?: number) => defineResource({
  name: 'Category',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), parent: Type.Integer(), sibling: Type.Integer() }),
  fields: ['id', 'name', 'parent'],
  expandable: { parent: 'Category', sibling: 'Category' },
  ...(maxDepth === undefined ? {} : { maxDepth }),
})
const Category = defineCategory()
const categoryStore = new MemoryStore(
  { Category: { 1: { id: 1, name: 'a', parent: 1, sibling: 1 } } },
  { Category: { parent: { type: 'Category' }, sibling: { type: 'Category' } } }
)
const categoryApp = (pluginOptions: object = {}, resource = Category) => buildApp({ resources: [resource], ...pluginOptions }, (app) => {
  app.get('/c', { expandable: { resource } }, async (request) => categoryStore.shape(request, 'Category', categoryStore.get('Category', 1)!))
})

t.test('recursion: allowed by default, FST_EXPAND_RECURSIVE with allowRecursive: false', async (t) => {
  const allowed = await categoryApp()
  t.equal((await getJson(allowed, '/c?expand=parent.parent&fields=parent.parent.name')).text, '{"parent":{"parent":{"name":"a"}}}')

  const app = await categoryApp({ allowRecursive: false })
  const reply = await getJson(app, '/c?expand=parent.parent')
  t.same(reply.body, badRequest('FST_EXPAND_RECURSIVE', "Cannot expand 'parent.parent': 'parent' repeats in the path and recursive expansion is disabled"))
  t.equal((await getJson(app, '/c?expand=parent.sibling&fields=parent.sibling.id')).text, '{"parent":{"sibling":{"id":1}}}', 'a self-referring resource under other names is not recursion')
  t.equal((await getJson(app, '/c?expand=sibling.parent.sibling')).status, 400)
  // a wildcard skips the repeated name instead of failing
  t.equal((await getJson(app, '/c?expand=parent.*&fields=parent.parent,parent.sibling')).text, '{"parent":{"parent":1,"sibling":{"id":1,"name":"a","parent":1}}}')
})

t.test('maxDepth: plugin default 5, plugin option, per-resource override', async (t) => {
  const deep = (n: number) => Array.from({ length: n }, () => 'parent').join('.')
  const byDefault = await categoryApp()
  t.equal((await getJson(byDefault, `/c?expand=${deep(5)}`)).status, 200)
  t.same((await getJson(byDefault, `/c?expand=${deep(6)}`)).body,
    badRequest('FST_EXPAND_TOO_DEEP', `Cannot expand '${deep(6)}': the maximum expansion depth is 5`))

  const plugin = await categoryApp({ maxDepth: 1 })
  t.equal((await getJson(plugin, '/c?expand=parent')).status, 200)
  t.match((await getJson(plugin, '/c?expand=parent.parent')).body, { code: 'FST_EXPAND_TOO_DEEP' })

  const Shallow = defineCategory(2)
  const perResource = await categoryApp({ maxDepth: 4 }, Shallow)
  t.equal((await getJson(perResource, '/c?expand=parent.parent')).status, 200)
  t.same((await getJson(perResource, '/c?expand=parent.parent.parent')).body,
    badRequest('FST_EXPAND_TOO_DEEP', "Cannot expand 'parent.parent.parent': the maximum expansion depth is 2"))
  const Deeper = defineCategory(3)
  const raised = await categoryApp({ maxDepth: 1 }, Deeper)
  t.equal((await getJson(raised, '/c?expand=parent.parent.parent')).status, 200, 'a resource may allow more than the plugin')
})

t.test("onInvalidExpand: 'ignore' drops only the invalid tail", async (t) => {
  const app = await buildPetApp({ onInvalidExpand: 'ignore' }, { permitListExpands: ['owner'] })
  t.equal((await getJson(app, '/pets/1?expand=nope')).text, JSON.stringify(garfield))
  t.equal((await getJson(app, '/pets/1?expand=owner.nope')).text, JSON.stringify({ ...garfield, owner: jon }))
  t.equal((await getJson(app, '/pets/1?expand=nope,owner.employer')).text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme } }))
  const list = await getJson(app, '/pets?expand=owner,toys,sold_from&fields=id,owner.name,toys')
  t.equal(list.text, JSON.stringify([{ id: 1, owner: { name: 'Jon' }, toys: [1, 2] }, { id: 2, owner: { name: 'Fred' }, toys: [] }]), 'not-permitted paths dropped')
})

t.test("onInvalidExpand: 'ignore' still errors on depth, recursion and malformed input", async (t) => {
  const app = await buildPetApp({ onInvalidExpand: 'ignore', maxDepth: 1 })
  t.match((await getJson(app, '/pets/1?expand=owner.employer')).body, { statusCode: 400, code: 'FST_EXPAND_TOO_DEEP' })
  t.match((await getJson(app, '/pets/1?expand=nope.nope')).body, { statusCode: 400, code: 'FST_EXPAND_TOO_DEEP' })
  t.match((await getJson(app, '/pets/1?expand=owner..x')).body, { statusCode: 400, code: 'FST_EXPAND_MALFORMED' })
  t.match((await getJson(app, `/pets/1?expand=${'a,'.repeat(1001)}`)).body, { statusCode: 400, code: 'FST_EXPAND_MALFORMED' })
  const recursive = await categoryApp({ onInvalidExpand: 'ignore', allowRecursive: false })
  t.match((await getJson(recursive, '/c?expand=parent.parent')).body, { statusCode: 400, code: 'FST_EXPAND_RECURSIVE' })
})

t.test('limits are checked before names', async (t) => {
  const app = await buildPetApp()
  const long = await getJson(app, `/pets/1?expand=${'x'.repeat(2001)}`)
  t.same(long.body, badRequest('FST_EXPAND_MALFORMED', "'expand' is 2001 characters long; the limit is 2000"))
  t.match((await getJson(app, `/pets/1?expand=owner&expand=${'x'.repeat(1996)}`)).body,
    { code: 'FST_EXPAND_MALFORMED' }, 'the limit counts all values of one parameter: 5 + 1996 characters')
  t.match((await getJson(app, `/pets/1?expand=owner&expand[]=${'x'.repeat(1996)}`)).body, { code: 'FST_EXPAND_MALFORMED' }, 'bracketed values count too')
  t.match((await getJson(app, `/pets/1?expand=${'x'.repeat(2000)}`)).body, { code: 'FST_EXPAND_UNKNOWN_FIELD' }, '2,000 characters are within the limit')
  const many = Array.from({ length: 101 }, (_, i) => `nope${i}`).join(',')
  t.same((await getJson(app, `/pets/1?expand=${many}`)).body, badRequest('FST_EXPAND_MALFORMED', "'expand' names more than 100 paths"))
  t.match((await getJson(app, '/pets/1?expand=a.b.c.d.e.f')).body, { code: 'FST_EXPAND_TOO_DEEP' }, 'depth before unknown names')
  t.match((await getJson(app, '/pets/1?expand=nope,owner..x')).body, { code: 'FST_EXPAND_MALFORMED' }, 'malformed before unknown names')
  // fields and omit have the same limits
  t.match((await getJson(app, `/pets/1?fields=${'x'.repeat(2001)}`)).body, { code: 'FST_EXPAND_MALFORMED' })
  t.match((await getJson(app, `/pets/1?omit=${'x'.repeat(2001)}`)).body, { code: 'FST_EXPAND_MALFORMED' })
})

t.test('maxParamLength counts the characters of the values, not the separators joining repeated parameters', async (t) => {
  const app = await buildPetApp()
  // 5 + 1995 = 2000 characters of values: within the limit, so the unknown name is what is wrong
  t.match((await getJson(app, `/pets/1?expand=owner&expand=${'x'.repeat(1995)}`)).body, { code: 'FST_EXPAND_UNKNOWN_FIELD' })
})

t.test("onInvalidExpand: 'ignore' also drops unknown fields/omit names", async (t) => {
  const app = await buildPetApp({ onInvalidExpand: 'ignore' })
  t.equal((await getJson(app, '/pets/1?fields=nope,name&omit=nope')).text, '{"name":"Garfield"}')
  t.equal((await getJson(app, '/pets/1?expand=owner&fields=owner.nope,owner.name')).text, '{"owner":{"name":"Jon"}}')
})

t.test('maxPaths also bounds the relations one plan expands', async (t) => {
  const app = await categoryApp({ maxPaths: 3 })
  t.equal((await getJson(app, '/c?expand=parent.parent')).status, 200)
  t.match((await getJson(app, '/c?expand=parent.parent.parent.parent')).body, { statusCode: 400, code: 'FST_EXPAND_MALFORMED' })
})

t.test("a non-2xx reply keeps Fastify's error body", async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/thrown', { expandable: { resource: 'Pet' } }, async () => {
      throw Object.assign(new Error('no such pet'), { statusCode: 404 })
    })
    app.get('/sent', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.code(409).send({ reason: 'locked', password: 'visible: not a resource' }))
    app.get('/crash', { expandable: { resource: 'Pet' } }, async () => { throw new Error('boom') })
  })
  const thrown = await getJson(app, '/thrown?expand=owner')
  t.equal(thrown.status, 404)
  t.equal(thrown.text, '{"statusCode":404,"error":"Not Found","message":"no such pet"}')
  const sent = await getJson(app, '/sent?expand=owner')
  t.equal(sent.status, 409)
  t.equal(sent.text, '{"reason":"locked","password":"visible: not a resource"}')
  const crash = await getJson(app, '/crash')
  t.equal(crash.status, 500)
  t.equal(crash.text, '{"statusCode":500,"error":"Internal Server Error","message":"boom"}')
  t.equal((await getJson(app, '/thrown?expand=nope')).status, 400, 'the expansion is checked before the handler runs')
})

t.test('the error classes carry the codes of the table', async (t) => {
  const classes = [
    [UnknownFieldError, 'FST_EXPAND_UNKNOWN_FIELD', 400],
    [NotPermittedError, 'FST_EXPAND_NOT_PERMITTED', 400],
    [TooDeepError, 'FST_EXPAND_TOO_DEEP', 400],
    [RecursiveError, 'FST_EXPAND_RECURSIVE', 400],
    [MalformedError, 'FST_EXPAND_MALFORMED', 400],
    [TooLargeError, 'FST_EXPAND_TOO_LARGE', 400],
    [NotFoundError, 'FST_EXPAND_NOT_FOUND', 404],
    [InvalidDataError, 'FST_EXPAND_INVALID_DATA', 500],
    [InvalidDefinitionError, 'FST_EXPAND_INVALID_DEFINITION', 500],
    [InvalidOptionError, 'FST_EXPAND_INVALID_OPTION', 500],
  ] as const
  for (const [ErrorClass, code, statusCode] of classes) {
    const error = new ErrorClass('why')
    t.equal(error.code, code)
    t.equal(error.statusCode, statusCode)
    t.equal(error.message, 'why')
  }
  const cause = new Error('driver says no')
  const database = new DatabaseError({ cause })
  t.same({ code: database.code, statusCode: database.statusCode, message: database.message, cause: database.cause },
    { code: 'FST_EXPAND_DATABASE_ERROR', statusCode: 500, message: 'Internal Server Error', cause }, 'a fixed message; the driver error is the cause')
  t.same([...requestErrorCodes].sort(), ['FST_EXPAND_MALFORMED', 'FST_EXPAND_NOT_PERMITTED', 'FST_EXPAND_RECURSIVE', 'FST_EXPAND_TOO_DEEP', 'FST_EXPAND_UNKNOWN_FIELD'])
  t.same([...loadingErrorCodes], ['FST_EXPAND_TOO_LARGE'])
  t.same([...serverErrorCodes].sort(), ['FST_EXPAND_DATABASE_ERROR', 'FST_EXPAND_INVALID_DATA', 'FST_EXPAND_NO_PLAN', 'FST_EXPAND_RELATION_LOAD_FAILED'])
})

/** Every error class plugin/errors.ts exports, by code: its export name and status. */
function exportedErrors (): Map<string, { name: string; statusCode: number }> {
  const found = new Map<string, { name: string; statusCode: number }>()
  for (const [name, value] of Object.entries(errorsModule)) {
    if (typeof value !== 'function') continue
    const error = new (value as new (message: string) => { code: string; statusCode: number })('why')
    found.set(error.code, { name, statusCode: error.statusCode })
  }
  return found
}

/** The rows of docs/errors.md's error table: code and status cell. */
function errorTable (): Map<string, string> {
  const page = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
  const rows = new Map<string, string>()
  for (const line of page.split('\n')) {
    const match = /^\| `(FST_[A-Z_]+)` \| ([^|]+) \|/.exec(line)
    if (match === null) continue
    if (rows.has(match[1])) throw new Error(`${match[1]} appears twice in docs/errors.md's error table`)
    rows.set(match[1], match[2].trim())
  }
  return rows
}

/** The README and every page of docs/: the documentation a user reads. */
function documentation (): string {
  const docs = new URL('../../docs/', import.meta.url)
  const pages = readdirSync(docs).filter((name) => name.endsWith('.md')).sort()
  return [new URL('../../README.md', import.meta.url), ...pages.map((name) => new URL(name, docs))]
    .map((file) => readFileSync(file, 'utf8')).join('\n')
}

/** Raised while starting (defineResource, register, ready); a 500 only when first met while serving. */
const startupCodes = new Set(['FST_EXPAND_INVALID_DEFINITION', 'FST_EXPAND_INVALID_OPTION'])

t.test("docs/errors.md's error table lists every code plugin/errors.ts exports, with its status, and no other code of the plugin", async (t) => {
  const exported = exportedErrors()
  const table = errorTable()
  t.ok(exported.size >= 11, `${exported.size} error classes exported`)
  for (const [code, { name, statusCode }] of exported) {
    t.ok(Object.hasOwn(publicExports, name), `${name} is exported from the package`)
    const status = table.get(code)
    if (status === undefined) {
      t.fail(`${code} (${name}) is in the table`)
      continue
    }
    if (startupCodes.has(code)) t.equal(status, `startup, ${statusCode}`, `${code}: raised at startup, a ${statusCode} when met while serving`)
    else t.equal(status, String(statusCode), `${code} documented as a ${statusCode}`)
  }
  for (const [code, status] of table) {
    if (code.startsWith('FST_EXPAND_')) {
      t.ok(exported.has(code), `${code} in the table is a code plugin/errors.ts exports`)
      continue
    }
    // Fastify's own codes, which expandable routes can answer too.
    const codes = fastifyErrorCodes as unknown as Record<string, (new (...args: string[]) => { statusCode: number }) | undefined>
    const FastifyError = codes[code]
    t.ok(FastifyError !== undefined, `${code} is one of Fastify's error codes`)
    if (FastifyError !== undefined) t.equal(status, String(new FastifyError('x').statusCode), `${code} documented with Fastify's status`)
  }
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  t.ok(readme.includes('](docs/errors.md)'), 'README.md links to the error table')
  t.ok(table.has('FST_ERR_VALIDATION'), "FST_ERR_VALIDATION: the generated routes' parameters")
  t.ok(table.has('FST_ERR_MAX_PARAM_LENGTH'), "FST_ERR_MAX_PARAM_LENGTH: a path parameter past Fastify's maxParamLength")
  for (const code of [...requestErrorCodes, ...loadingErrorCodes]) t.equal(table.get(code), '400', `${code} documented as a 400`)
  for (const code of serverErrorCodes) t.equal(table.get(code), '500', `${code} documented as a 500`)
})

t.test('every FST_EXPAND_ code the documentation names is a code plugin/errors.ts exports, and each is in the error table', async (t) => {
  const text = documentation()
  const exported = exportedErrors()
  const table = errorTable()
  const mentioned = new Set(text.match(/FST_EXPAND_[A-Z_]*[A-Z]/g))
  for (const code of mentioned) t.ok(exported.has(code), `${code}, named in the documentation, is exported`)
  for (const code of mentioned) t.ok(table.has(code), `${code}, named in the documentation, is in the error table`)
  for (const code of exported.keys()) t.ok(mentioned.has(code), `${code} is named in the documentation`)
  const lists = { requestErrorCodes, loadingErrorCodes, serverErrorCodes, accessErrorCodes, listErrorCodes, unavailableErrorCodes }
  for (const [name, codes] of Object.entries(lists)) {
    for (const code of codes) t.ok(exported.has(code), `${name}: ${code} is the code of an exported class`)
  }
  for (const code of accessErrorCodes) t.equal(table.get(code), '403', `${code} documented as a 403`)
  for (const code of listErrorCodes) t.equal(table.get(code), '400', `${code} documented as a 400`)
  for (const code of unavailableErrorCodes) t.equal(table.get(code), '503', `${code} documented as a 503`)
})

/** The TypeScript sources of plugin/, by path relative to it. */
function pluginSources (): Map<string, string> {
  const root = new URL('../../plugin/', import.meta.url)
  const names = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'))
  return new Map(names.map((name) => [name, readFileSync(new URL(name, root), 'utf8')]))
}

// Errors plugin/ raises that are not the plugin's: each with why.
const foreignErrors = new Map([
  // A validator's Error, which Fastify answers as its own FST_ERR_VALIDATION.
  ['parse/route-parameters.ts: Error', 2],
  ['parse/integers.ts: Error', 1],
  // Switch cases no relation reaches: to-one ids are read from the row, never queried; a relation resolved by a
  // function runs no statement (it is called: load/function-relations.ts), nor does a list filter or sort through one.
  ['sql/relation-statements.ts: TypeError', 2],
  // SQLite loads level by level (its dialect's `loadsInOneWave`): a relation with `limit` gets its keys as a list.
  ['sql/dialects/sqlite.ts: TypeError', 1],
  // A one-wave statement selects its relation statement's columns by the names they are selected under, which
  // every relation statement gives (sql/relation-statements.ts).
  ['sql/key-subqueries.ts: TypeError', 1],
  // A key of several columns where one is read: sql/composite-keys.ts writes the statements of relations over
  // a composite key (graph/composite-relations.ts's readsCompositeKey), which no other statement follows.
  ['sql/selection.ts: TypeError', 2],
  ['sql/list-statements.ts: TypeError', 1],
  // An aggregate over a to-one or function relation is refused when the graph is built (graph/resource-graph.ts).
  ['sql/aggregate-statements.ts: TypeError', 1],
  // Fastify's replies have a send method: the plugin's own send looks it up among the reply's prototypes.
  ['routes/reply-writer.ts: TypeError', 1],
  // The signal a relation of a concurrent load gets when another relation failed: caught there, never answered.
  ['load/batch-loader.ts: Error', 1],
])

t.test('every error plugin/ raises is declared in plugin/errors.ts', async (t) => {
  const declared = new Set(Object.keys(errorsModule).filter((name) => name.endsWith('Error')))
  const foreign = new Map<string, number>()
  for (const [file, source] of pluginSources()) {
    if (file === 'errors.ts') continue
    t.notMatch(source, /createError\(/, `${file} declares no error class of its own`)
    t.notMatch(source, /class \w+ extends \w*Error\b/, `${file} extends no Error`)
    for (const [, name] of source.matchAll(/new (\w*Error)\(/g)) {
      if (declared.has(name)) continue
      const key = `${file}: ${name}`
      foreign.set(key, (foreign.get(key) ?? 0) + 1)
    }
  }
  t.same(Object.fromEntries(foreign), Object.fromEntries(foreignErrors), 'only the listed errors are not from plugin/errors.ts')
})

t.test('every message template in plugin/errors.ts is used', async (t) => {
  const sources = [...pluginSources()].filter(([file]) => file !== 'errors.ts').map(([, source]) => source).join('\n')
  for (const name of Object.keys(errorsModule.messages)) t.match(sources, new RegExp(`messages\\.${name}\\b`), `messages.${name}`)
})

t.test('property: any combination of names and separators is a 200 or a 400, never a 500', async (t) => {
  const app = await buildPetApp({ maxDepth: 3 }, { permitListExpands: ['owner'] })
  const token = fc.constantFrom('owner', 'employer', 'sold_from', 'toys', 'name', 'id', 'nope', '*', '~all', '', 'hobbies', 'secret')
  const path = fc.array(token, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('.'))
  const value = fc.array(path, { maxLength: 4 }).map((paths) => paths.join(','))
  await fc.assert(fc.asyncProperty(value, value, value, fc.boolean(), async (expand, fields, omit, list) => {
    const url = `${list ? '/pets' : '/pets/1'}?expand=${encodeURIComponent(expand)}&fields=${encodeURIComponent(fields)}&omit=${encodeURIComponent(omit)}`
    const reply = await getJson(app, url)
    if (reply.status === 200) return reply.body !== undefined && !reply.text.includes('password')
    const body = reply.body as { code?: string }
    return reply.status === 400 && (requestErrorCodes as readonly string[]).includes(body.code ?? '')
  }), { numRuns: 300 })
  t.pass('no 500 in 300 runs')
})
