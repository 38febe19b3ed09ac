import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { createSerializer, defineResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet as TablePet, openSeeded, resources as tableResources, handlerPetColumns } from '../fixtures/tables.js'

// Data a handler returns that does not fit the plan is a handler bug: the
// serializer must refuse it (500 FST_EXPAND_INVALID_DATA, naming the resource
// and the field path, never echoing the value) instead of coercing it into a
// plausible but wrong body (null -> "" or 0, 1.7 -> 1, "false" -> true).
// Values that are the same value in another driver's form are accepted.

const Author = defineResource({
  name: 'Author',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), active: Type.Boolean() }),
  fields: ['id', 'name', 'active'],
})

const Tag = defineResource({
  name: 'Tag',
  schema: Type.Object({ id: Type.Integer(), label: Type.String() }),
  fields: ['id', 'label'],
})

const Article = defineResource({
  name: 'Article',
  schema: Type.Object({
    id: Type.Integer(),
    title: Type.String(),
    views: Type.Integer(),
    published: Type.Boolean(),
    created: Type.String({ format: 'date-time' }),
    editor: Type.Union([Type.Integer(), Type.Null()]),
    author: Type.Integer(),
    tags: Type.Array(Type.Integer()),
    subtitle: Type.Optional(Type.String()),
  }),
  // The optional field last: where it sits in the body is checked on its own below.
  fields: ['id', 'title', 'views', 'published', 'created', 'editor', 'author', 'tags', 'subtitle'],
  expandable: { author: Author, tags: [Tag, { many: true }] },
})

const resources = [Article, Author, Tag]

const article = {
  id: 1,
  title: 'Hello',
  views: 10,
  published: true,
  created: '2024-01-02T03:04:05.000Z',
  editor: 3,
  author: 7,
  tags: [1, 2],
  subtitle: 'sub',
}
const ann = { id: 7, name: 'Ann', active: true }

function without<T extends object> (value: T, key: keyof T): Partial<T> {
  const copy = { ...value }
  delete copy[key]
  return copy
}

/** What each detail handler returns, by case name. */
const details: Record<string, unknown> = {
  'null in a string field': { ...article, title: null },
  'null in an integer field': { ...article, views: null },
  'a fraction in an integer field': { ...article, views: 1.7 },
  'the string "false" in a boolean field': { ...article, published: 'false' },
  'null for a to-many id array': { ...article, tags: null },
  'a detail handler returning null': null,
  'a missing required field': without(article, 'title'),
  'a nested field of the wrong type': { ...article, author: { id: 7, name: 918273, active: true } },
  'an expanded to-many given null': { ...article, tags: null },
  bigint: { ...article, views: 9007199254740993n },
  'decimal string': { ...article, views: '42' },
  'boolean 0': { ...article, published: 0 },
  'boolean 1': { ...article, published: 1 },
  date: { ...article, created: new Date('2024-01-02T03:04:05.000Z') },
  'nullable null': { ...article, editor: null },
  'expanded to-one null': { ...article, author: null },
  'optional omitted': without(article, 'subtitle'),
  'optional given': article,
  'expanded, well formed': { ...article, author: ann, tags: [{ id: 1, label: 'news' }, { id: 2, label: 'tech' }] },
}

async function buildApp (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.get<{ Querystring: { case: string } }>('/article', { expandable: { resource: Article } }, async (request) => details[request.query.case])
  app.get('/articles-with-a-null', { expandable: { resource: Article, list: true } }, async () => [article, null])
  await app.ready()
  return app
}

/** The 500 a conformance failure answers: fixed code and shape, a message naming `resource` and `path`, never `value`. */
function invalidData (
  t: Test,
  response: { statusCode: number; body: string },
  names: { resource: RegExp; path?: string; value?: string },
  label: string
): void {
  t.equal(response.statusCode, 500, `${label}: status`)
  const body = JSON.parse(response.body) as Record<string, unknown>
  const { message, ...rest } = body
  t.same(rest, { statusCode: 500, code: 'FST_EXPAND_INVALID_DATA', error: 'Internal Server Error' }, `${label}: body`)
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], `${label}: no other property`)
  t.equal(typeof message, 'string', `${label}: a message`)
  t.match(message, names.resource, `${label}: the message names the resource`)
  if (names.path !== undefined) t.ok(String(message).includes(names.path), `${label}: the message names '${names.path}': ${String(message)}`)
  if (names.value !== undefined) t.notOk(response.body.includes(names.value), `${label}: the body does not carry the value ${names.value}`)
}

t.test('data that does not fit the plan is a 500 FST_EXPAND_INVALID_DATA, never coerced', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const get = (name: string, query = '') => app.inject({ method: 'GET', url: '/article', query: { case: name, ...(query === '' ? {} : { expand: query }) } })

  invalidData(t, await get('null in a string field'), { resource: /Article/, path: 'title' }, 'null in a string field')
  invalidData(t, await get('null in an integer field'), { resource: /Article/, path: 'views' }, 'null in an integer field')
  invalidData(t, await get('a fraction in an integer field'), { resource: /Article/, path: 'views', value: '1.7' }, '1.7 in an integer field')
  invalidData(t, await get('the string "false" in a boolean field'), { resource: /Article/, path: 'published', value: 'false' }, '"false" in a boolean field')
  invalidData(t, await get('null for a to-many id array'), { resource: /Article/, path: 'tags' }, 'null for an id array')
  invalidData(t, await get('a detail handler returning null'), { resource: /Article/ }, 'a null detail')
  invalidData(t, await get('a missing required field'), { resource: /Article/, path: 'title' }, 'a missing field')
  invalidData(t, await get('a nested field of the wrong type', 'author'), { resource: /Article|Author/, path: 'author.name', value: '918273' }, 'a nested field of the wrong type')
  invalidData(t, await get('an expanded to-many given null', 'tags'), { resource: /Article/, path: 'tags' }, 'an expanded to-many given null')
  invalidData(t, await app.inject('/articles-with-a-null'), { resource: /Article/ }, 'a list holding null')
})

t.test('the same value in another form is accepted as that value', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const get = async (name: string, query = '') => {
    const response = await app.inject({ method: 'GET', url: '/article', query: { case: name, ...(query === '' ? {} : { expand: query }) } })
    return { status: response.statusCode, body: response.body }
  }
  const text = (value: object) => JSON.stringify(value)

  t.same(await get('bigint'), { status: 200, body: text({ ...article, views: 0 }).replace('"views":0', '"views":9007199254740993') }, 'a bigint is written as its digits')
  t.same(await get('decimal string'), { status: 200, body: text({ ...article, views: 42 }) }, "a decimal integer string (PostgreSQL's int8) is the integer")
  t.same(await get('boolean 0'), { status: 200, body: text({ ...article, published: false }) }, "0 is false (SQLite's boolean)")
  t.same(await get('boolean 1'), { status: 200, body: text({ ...article, published: true }) }, "1 is true (SQLite's boolean)")
  t.same(await get('date'), { status: 200, body: text(article) }, 'a Date in a date-time string field')
  t.same(await get('nullable null'), { status: 200, body: text({ ...article, editor: null }) }, 'null where the schema allows it')
  t.same(await get('expanded to-one null', 'author'), { status: 200, body: text({ ...article, author: null }) }, 'an expanded to-one that is null')
  t.same(await get('optional omitted'), { status: 200, body: text(without(article, 'subtitle')) }, 'an optional field the data omits is absent')
  t.same(await get('optional given'), { status: 200, body: text(article) }, 'an optional field the data gives is present')
  t.same(await get('expanded, well formed', 'author,tags'), {
    status: 200,
    body: text({ ...article, author: ann, tags: [{ id: 1, label: 'news' }, { id: 2, label: 'tech' }] }),
  })
})

t.test('an optional field keeps its place in the declared order', async (t) => {
  const Note = defineResource({
    name: 'Note',
    schema: Type.Object({ id: Type.Integer(), subtitle: Type.Optional(Type.String()), body: Type.String() }),
    fields: ['id', 'subtitle', 'body'],
  })
  const serializer = createSerializer(Note)
  t.equal(serializer.stringify({ body: 'b', subtitle: 's', id: 1 }), '{"id":1,"subtitle":"s","body":"b"}')
  t.equal(serializer.stringify({ body: 'b', id: 1 }), '{"id":1,"body":"b"}')
})

t.test('createSerializer refuses data that does not fit with FST_EXPAND_INVALID_DATA', async (t) => {
  const serializer = createSerializer(Article, { resources })
  const expanded = createSerializer(Article, { resources, expand: 'author' })
  const list = createSerializer(Article, { resources, list: true })
  const bad: Array<[string, () => string]> = [
    ['null in a string field', () => serializer.stringify(details['null in a string field'])],
    ['a fraction in an integer field', () => serializer.stringify(details['a fraction in an integer field'])],
    ['the string "false" in a boolean field', () => serializer.stringify(details['the string "false" in a boolean field'])],
    ['null for an id array', () => serializer.stringify(details['null for a to-many id array'])],
    ['null', () => serializer.stringify(null)],
    ['a missing field', () => serializer.stringify(details['a missing required field'])],
    ['a nested field of the wrong type', () => expanded.stringify(details['a nested field of the wrong type'])],
    ['a list holding null', () => list.stringify([article, null])],
  ]
  for (const [name, stringify] of bad) {
    let failure: { code?: string } | undefined
    try {
      stringify()
    } catch (error) {
      failure = error as { code?: string }
    }
    t.equal(failure?.code, 'FST_EXPAND_INVALID_DATA', name)
  }
  t.equal(serializer.stringify(details['decimal string']), JSON.stringify({ ...article, views: 42 }))
  t.equal(expanded.stringify(details['expanded to-one null']), JSON.stringify({ ...article, author: null }))
})

// A row given to app.expand.load without its to-one key (neither the field
// `owner` nor its column `owner_id`) cannot be answered: writing 0 or null
// would invent a relation.
for (const dialect of dialects()) {
  t.test(`app.expand.load refuses rows without their foreign key on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: tableResources })
    app.get('/without-key', { expandable: { resource: TablePet, list: true } }, async (request) => {
      const rows = await database.db.selectFrom('pets').select(['id', 'name', 'species', 'sold_from_id as sold_from']).where('id', '=', 1).execute()
      return app.expand.load(request, rows)
    })
    app.get('/with-column', { expandable: { resource: TablePet, list: true } }, async (request) => {
      const rows = await database.db.selectFrom('pets').select(handlerPetColumns).where('id', '=', 1).execute()
      return app.expand.load(request, rows)
    })
    t.teardown(() => app.close())
    await app.ready()

    invalidData(t, await app.inject('/without-key?fields=id,owner'), { resource: /Pet/, path: 'owner' }, 'not expanded')
    invalidData(t, await app.inject('/without-key?expand=owner&fields=id,owner'), { resource: /Pet/, path: 'owner' }, 'expanded')
    const control = await app.inject('/with-column?expand=owner&fields=id,owner')
    t.same({ status: control.statusCode, body: control.json() }, {
      status: 200,
      body: [{ id: 1, owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 } }],
    }, 'the key under its column name is enough')
  })
}
