import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, expandOpenApi, type AnyResource, type ExpandPluginOptions, type RelationOptions } from '../../../plugin/index.js'
import { dialects, type TestDatabase } from '../../fixtures/dialects.js'
import { openTenants } from '../../fixtures/tenants.js'

// The attack: a relation's `fields`/`omit` option removes a field from the
// related level (Writer.posts omits `author`, Writer.cards keeps `id, title`),
// yet a client names it below the relation anyway: `expand=posts.author`,
// `fields=posts.author`, `expand=cards.tags`, or finds it in the OpenAPI
// document and in the 400 messages that list a level's names.
//
// What must hold: within a relation whose options leave a field out, that
// field does not exist for clients. Naming it is 400 FST_EXPAND_UNKNOWN_FIELD
// (dropped under onInvalidExpand 'ignore'), wildcards skip it, messages and the
// OpenAPI enum and schemas do not list it. A relation's `fields` is the whole
// set of names at its level, as in drf-flex-fields: a deferred relation it does
// not list cannot be expanded there (`omit` leaves deferred relations in place).
// Definitions that name a removed field (a relation's `expand`, a route's
// `permitListExpands` or `defaultExpand`) fail at startup, naming the mistake.

interface Domain { Writer: AnyResource; Article: AnyResource; Label: AnyResource; resources: AnyResource[] }

/** Writers (authors), articles (posts) and labels (tags) of the tenants fixture's tables; no access rules. */
function domain (postsOptions: Partial<RelationOptions> = {}): Domain {
  const Label = defineResource({
    name: 'Label',
    table: 'tags',
    schema: Type.Object({ id: Type.Integer(), label: Type.String() }),
    fields: ['id', 'label'],
  })
  const Article = defineResource({
    name: 'Article',
    table: 'posts',
    schema: Type.Object({
      id: Type.Integer(),
      title: Type.String(),
      author: Type.Integer(),
      tags: Type.Array(Type.Integer()),
      editor: Type.Union([Type.Integer(), Type.Null()]),
    }),
    fields: ['id', 'title', 'author', 'tags'],
    expandable: {
      author: ['Writer', { column: 'author_id' }],
      tags: [Label, { many: true, through: { table: 'post_tags', from: 'post_id', to: 'tag_id' } }],
      // Deferred: shown only when expanded.
      editor: ['Writer', { column: 'editor_id' }],
    },
  })
  const Writer = defineResource({
    name: 'Writer',
    table: 'authors',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), posts: Type.Array(Type.Integer()), cards: Type.Array(Type.Integer()) }),
    fields: ['id', 'name', 'posts'],
    expandable: {
      posts: [Article, { many: true, foreignKey: 'author_id', omit: ['author'], ...postsOptions }],
      cards: [Article, { many: true, foreignKey: 'author_id', fields: ['id', 'title'] }],
    },
  })
  return { Writer, Article, Label, resources: [Writer, Article, Label] }
}

interface BuildOptions {
  onInvalidExpand?: 'error' | 'ignore'
  postsOptions?: Partial<RelationOptions>
  permitListExpands?: string[]
  defaultExpand?: string[]
}

async function build (database: TestDatabase, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { Writer, resources } = domain(options.postsOptions)
  const app = Fastify()
  const expandOptions: ExpandPluginOptions = { db: database.db, resources, onInvalidExpand: options.onInvalidExpand ?? 'error', maxDepth: 2 }
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(expandOptions).transform })
  await app.register(expandPlugin, expandOptions)
  app.expand.routes('/writers', Writer, { permitListExpands: options.permitListExpands, defaultExpand: options.defaultExpand })
  await app.ready()
  return app
}

const unknown = (message: string) => ({ statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message })
const bob = { id: 2, name: 'Bob', posts: [7] }
const label = { 1: { id: 1, label: 'shared' }, 2: { id: 2, label: 'acme' }, 3: { id: 3, label: 'globex' } }
// Ann's posts under Writer.posts (no `author`), and under Writer.cards (id and title only).
const annPosts = [{ id: 1, title: 'Hello', tags: [1, 2, 3] }, { id: 4, title: 'Gone', tags: [1] }, { id: 6, title: 'Mixed', tags: [3] }]
const annCards = [{ id: 1, title: 'Hello' }, { id: 4, title: 'Gone' }, { id: 6, title: 'Mixed' }]

for (const dialect of dialects()) {
  t.test(`a field a relation's options remove does not exist for clients, on ${dialect.name}`, async (t) => {
    const database = await openTenants(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const get = async (url: string) => {
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json() }
    }

    t.test('expand, fields and omit naming the removed field: 400, the message listing only what exists', async (t) => {
      t.strictSame(await get('/writers/1?expand=posts.author'), {
        status: 400, body: unknown("Cannot expand 'posts.author' on Article: expandable fields are tags, editor"),
      })
      t.strictSame(await get('/writers?expand=posts.author'), {
        status: 400, body: unknown("Cannot expand 'posts.author' on Article: expandable fields are tags, editor"),
      }, 'on the list route too')
      t.strictSame(await get('/writers/1?expand=posts&fields=posts.author'), {
        status: 400, body: unknown("Unknown field 'posts.author' in 'fields': Article has id, title, tags, editor"),
      })
      t.strictSame(await get('/writers/1?expand=posts&omit=posts.author'), {
        status: 400, body: unknown("Unknown field 'posts.author' in 'omit': Article has id, title, tags, editor"),
      })
      // Nested fields under a relation that is not expanded have no effect (docs/queries.md), whatever they name.
      for (const name of ['author', 'nope']) {
        t.strictSame(await get(`/writers/1?fields=id,posts.${name}`), { status: 200, body: { id: 1, posts: [1, 4, 6] } }, `posts.${name}, not expanded`)
      }
      t.strictSame(await get('/writers/1?expand=*.author'), {
        status: 400, body: unknown("Cannot expand '*.author' on Writer: no relation at that level has 'author'"),
      }, 'a wildcard does not reach it either')
    })

    t.test("a relation's fields: what it does not list does not exist, deferred relations included", async (t) => {
      t.strictSame(await get('/writers/1?expand=cards.tags'), {
        status: 400, body: unknown("Cannot expand 'cards.tags' on Article: it has no expandable fields"),
      })
      t.strictSame(await get('/writers/1?expand=cards.editor'), {
        status: 400, body: unknown("Cannot expand 'cards.editor' on Article: it has no expandable fields"),
      }, 'a deferred relation the option does not list')
      t.strictSame(await get('/writers/1?expand=cards&fields=cards.author'), {
        status: 400, body: unknown("Unknown field 'cards.author' in 'fields': Article has id, title"),
      })
      t.strictSame(await get('/writers/1?expand=cards.*'), { status: 200, body: { id: 1, name: 'Ann', posts: [1, 4, 6], cards: annCards } })
    })

    t.test('what the options keep still works, deferred relations under omit included', async (t) => {
      t.strictSame(await get('/writers/1?expand=posts'), { status: 200, body: { id: 1, name: 'Ann', posts: annPosts } })
      t.strictSame(await get('/writers/1?expand=posts.editor&fields=id,posts.id,posts.editor'), {
        status: 200, body: { id: 1, posts: [{ id: 1, editor: bob }, { id: 4, editor: null }, { id: 6, editor: null }] },
      })
      t.strictSame(await get('/writers/1?expand=posts.*'), {
        status: 200,
        body: {
          id: 1,
          name: 'Ann',
          posts: [
            { id: 1, title: 'Hello', tags: [label[1], label[2], label[3]], editor: bob },
            { id: 4, title: 'Gone', tags: [label[1]], editor: null },
            { id: 6, title: 'Mixed', tags: [label[3]], editor: null },
          ],
        },
      }, 'the wildcard expands what the level has: not author')
    })
  })

  t.test(`under onInvalidExpand 'ignore' the removed field is dropped, on ${dialect.name}`, async (t) => {
    const database = await openTenants(t, dialect)
    const app = await build(database, { onInvalidExpand: 'ignore' })
    t.teardown(() => app.close())
    const get = async (url: string) => (await app.inject(url)).json()
    t.strictSame(await get('/writers/1?expand=posts.author'), { id: 1, name: 'Ann', posts: annPosts })
    t.strictSame(await get('/writers/1?expand=posts&fields=id,posts.id,posts.author'), { id: 1, posts: [{ id: 1 }, { id: 4 }, { id: 6 }] })
    t.strictSame(await get('/writers/1?expand=cards.tags,cards.editor'), { id: 1, name: 'Ann', posts: [1, 4, 6], cards: annCards })
  })
}

t.test('the OpenAPI document lists only what exists below each relation', async (t) => {
  const [dialect] = dialects()
  const database = await openTenants(t, dialect!)
  const app = await build(database)
  t.teardown(() => app.close())
  const document = app.swagger() as Record<string, any>
  const expand = document.paths['/writers/{id}'].get.parameters.find((parameter: { name: string }) => parameter.name === 'expand')
  t.strictSame(expand.schema.items.enum, ['posts', 'posts.tags', 'posts.editor', 'cards', '*', '~all'])
  const schemas = document.components.schemas
  t.strictSame(Object.keys(schemas['Writer.posts'].properties), ['id', 'title', 'tags', 'editor'], 'no author')
  t.strictSame(Object.keys(schemas['Writer.cards'].properties), ['id', 'title'], 'no deferred editor')
  t.notMatch(JSON.stringify(expand), /posts\.author|cards\.(tags|editor)/)
})

t.test('definitions naming a removed field fail at startup, naming the mistake', async (t) => {
  const [dialect] = dialects()
  const database = await openTenants(t, dialect!)
  const fails = async (options: BuildOptions, message: string, code = 'FST_EXPAND_INVALID_DEFINITION') => {
    await t.rejects(build(database, options), { code, message }, message)
  }
  await fails({ postsOptions: { expand: ['author'] } },
    "Resource 'Writer', field 'posts': expand 'author' names 'author', which Writer.posts leaves out (its fields/omit option)")
  await fails({ postsOptions: { expand: ['tags'], fields: ['id', 'title'] } },
    "Resource 'Writer', field 'posts': expand 'tags' names 'tags', which Writer.posts leaves out (its fields/omit option)")
  await fails({ postsOptions: { expand: ['editor.posts.author'] } },
    "Resource 'Writer', field 'posts': expand 'editor.posts.author' names 'author', which Writer.posts leaves out (its fields/omit option)")
  await fails({ permitListExpands: ['posts.author'] },
    "Route GET /writers: permitted expansions: 'posts.author' names 'author', which Writer.posts leaves out (its fields/omit option)",
    'FST_EXPAND_INVALID_OPTION')
  await fails({ defaultExpand: ['cards.editor'] },
    "Route GET /writers: default expansions: 'cards.editor' names 'editor', which Writer.cards leaves out (its fields/omit option)",
    'FST_EXPAND_INVALID_OPTION')
  const articles = domain()
  const Latest = defineResource({
    name: 'Latest',
    schema: Type.Object({ id: Type.Integer(), article: Type.Integer() }),
    fields: ['id', 'article'],
    nested: { article: [articles.Article, { omit: ['tags'], expand: ['tags'] }] },
  })
  const app = Fastify()
  await t.rejects(async () => {
    await app.register(expandPlugin, { resources: [Latest, ...articles.resources] })
    await app.ready()
  }, {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: "Resource 'Latest', field 'article': expand 'tags' names 'tags', which Latest.article leaves out (its fields/omit option)",
  }, 'a nested relation too')
})
