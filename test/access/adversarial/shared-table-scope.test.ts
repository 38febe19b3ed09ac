import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../../plugin/index.js'
import { asSent, asWrittenOn, dialects, inComparableOrder, keySubqueryOf, pageAsSent, type Dialect, type TestDatabase } from '../../fixtures/dialects.js'
import { openTenants, readCallers, tenantResources } from '../../fixtures/tenants.js'

// The attack: a second resource on a scoped table, declared without a scope (a
// lighter "card" view of posts, authors and tags), reads the rows the first
// resource's scope hides: another tenant's posts, deleted ones, in its list,
// its detail, its expanded relations at any depth and its id arrays.
//
// What must hold: `scope` belongs to the table's rows. A resource without
// `scope` on a table that another resource of the registry scopes inherits
// that scope (every such scope, AND-ed: the strictest); one with its own
// `scope` uses only its own. Registration never fails over this.

type Who = 'admin' | 1 | 2

/** Light views of the tenants fixture's tables, none with a scope of its own. */
function cards (): { PostCard: AnyResource; AuthorCard: AnyResource; TagCard: AnyResource } {
  const TagCard = defineResource({
    name: 'TagCard',
    table: 'tags',
    schema: Type.Object({ id: Type.Integer(), label: Type.String() }),
    fields: ['id', 'label'],
  })
  const AuthorCard = defineResource({
    name: 'AuthorCard',
    table: 'authors',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), posts: Type.Array(Type.Integer()) }),
    fields: ['id', 'name', 'posts'],
    expandable: { posts: ['PostCard', { many: true, foreignKey: 'author_id' }] },
  })
  const PostCard = defineResource({
    name: 'PostCard',
    table: 'posts',
    schema: Type.Object({ id: Type.Integer(), title: Type.String(), author: Type.Integer(), tags: Type.Array(Type.Integer()) }),
    fields: ['id', 'title', 'author', 'tags'],
    columns: { author: 'author_id' },
    expandable: {
      author: AuthorCard,
      tags: [TagCard, { many: true, through: { table: 'post_tags', from: 'post_id', to: 'tag_id' } }],
    },
  })
  return { PostCard, AuthorCard, TagCard }
}

/** How often LaterPost's scope ran. */
const laterScopeCalls = { count: 0 }

/** A second scoped resource on `posts`: its own tenant's posts numbered above 2, deleted ones included. */
function laterPosts (): AnyResource {
  return defineResource({
    name: 'LaterPost',
    table: 'posts',
    schema: Type.Object({ id: Type.Integer(), title: Type.String() }),
    fields: ['id', 'title'],
    scope: (eb, request) => {
      laterScopeCalls.count++
      return request.caller.admin ? undefined : eb.and([eb('posts.tenant_id', '=', request.caller.tenant), eb('posts.id', '>', 2)])
    },
  })
}

async function build (database: TestDatabase, withLaterPosts: boolean): Promise<FastifyInstance> {
  const tenants = tenantResources()
  const { PostCard, AuthorCard, TagCard } = cards()
  const LaterPost = laterPosts()
  const app = Fastify()
  readCallers(app)
  const resources = [...tenants.all, PostCard, AuthorCard, TagCard, ...(withLaterPosts ? [LaterPost] : [])]
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/post-cards', PostCard)
  app.expand.routes('/author-cards', AuthorCard)
  app.expand.routes('/tag-cards', TagCard)
  if (withLaterPosts) app.expand.routes('/later-posts', LaterPost)
  // A handler's own list over the card: app.expand.select starts from the inherited scope.
  app.get('/card-search', { expandable: { resource: PostCard, list: true } }, async (request) => {
    const rows = await app.expand.select(request).orderBy('posts.id').execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

function headersOf (who: Who): Record<string, string> {
  return who === 'admin' ? { 'x-role': 'admin' } : { 'x-tenant': String(who) }
}

/**
 * A statement as SQLite writes it, as the dialect writes it: PostgreSQL numbers
 * the `?` placeholders (MariaDB writes `?` too), MariaDB quotes identifiers in
 * backticks.
 */
function writtenOn (dialect: Dialect, text: string): string {
  let index = 0
  return asWrittenOn(dialect, dialect.name === 'postgres' ? text.replace(/\?/g, () => `$${++index}`) : text)
}

const tag = { 1: { id: 1, label: 'shared' }, 2: { id: 2, label: 'acme' }, 3: { id: 3, label: 'globex' }, 4: { id: 4, label: 'news' } }
const notFound = (message: string) => ({ statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message })
const page = (data: unknown[], total = data.length) => ({ data, limit: 20, offset: 0, total })

for (const dialect of dialects()) {
  t.test(`a resource without scope on a scoped table, on ${dialect.name}`, async (t) => {
    const database = await openTenants(t, dialect)
    const app = await build(database, false)
    t.teardown(() => app.close())
    const get = async (url: string, who: Who) => {
      const response = await app.inject({ method: 'GET', url, headers: headersOf(who) })
      return { status: response.statusCode, body: response.json() }
    }

    t.test('list and total: only the rows Post, Author and Tag let the caller see', async (t) => {
      t.strictSame(await get('/post-cards', 1), {
        status: 200,
        body: page([
          { id: 1, title: 'Hello', author: 1, tags: [1, 2] },
          { id: 2, title: 'Cross', author: 3, tags: [2] },
          { id: 3, title: 'Ghost', author: 4, tags: [] },
          { id: 7, title: 'Bob post', author: 2, tags: [4] },
        ]),
      }, "not tenant 2's posts 5 and 6, not the deleted post 4; tag ids in Tag's scope")
      t.strictSame((await get('/post-cards', 2)).body, page([
        { id: 5, title: 'Hola', author: 3, tags: [1, 3] },
        { id: 6, title: 'Mixed', author: 1, tags: [3] },
      ]))
      t.strictSame((await get('/author-cards', 1)).body, page([
        { id: 1, name: 'Ann', posts: [1] },
        { id: 2, name: 'Bob', posts: [7] },
      ]), 'not the deleted Dee nor tenant 2; post ids in scope only')
      t.strictSame((await get('/tag-cards', 2)).body, page([tag[1], tag[3]]))
      t.strictSame((await get('/card-search', 1)).body, [
        { id: 1, title: 'Hello', author: 1, tags: [1, 2] },
        { id: 2, title: 'Cross', author: 3, tags: [2] },
        { id: 3, title: 'Ghost', author: 4, tags: [] },
        { id: 7, title: 'Bob post', author: 2, tags: [4] },
      ], 'app.expand.select carries the inherited scope')
    })

    t.test('the inherited scopes are conditions of the same statements: none is added', async (t) => {
      database.reset()
      await get('/post-cards?expand=author,tags', 1)
      const postScope = '("posts"."deleted_at" is null and "posts"."tenant_id" = ?)'
      const page = `select "posts"."id" as "id", cast("posts"."title" as text) as "title", "posts"."author_id" as "author" from "posts" where ${postScope} order by "posts"."id" limit ? offset ?`
      const authors = 'select "authors"."id" as "id", cast("authors"."name" as text) as "name" from "authors" ' +
        'where ("authors"."deleted_at" is null and "authors"."tenant_id" = ?) and "authors"."id" in (?, ?, ?, ?)'
      // In one wave, each keyed by its parent's statement (the page's, the authors' keyed by it).
      const authorsSent = asSent(dialect, authors, page, '"posts"."author_id"')
      const keyedAuthors = authors.replace(' in (?, ?, ?, ?)', ` in (${keySubqueryOf(page, '"posts"."author_id"')})`)
      t.strictSame(inComparableOrder(dialect, database.statements), inComparableOrder(dialect, [
        pageAsSent(dialect, page, `select count(*) as "total" from "posts" where ${postScope}`),
        authorsSent,
        asSent(dialect, `select "posts"."id" as "id", "posts"."author_id" as "__expand_parent" from "posts" where ${postScope} ` +
          'and "posts"."author_id" in (?, ?) order by "posts"."author_id", "posts"."id" limit 16384', keyedAuthors, '"authors"."id"'),
        asSent(dialect, 'select "tags"."id" as "id", cast("tags"."label" as text) as "label", "post_tags"."post_id" as "__expand_parent" from "tags" ' +
          'inner join "post_tags" on "post_tags"."tag_id" = "tags"."id" where ("tags"."tenant_id" is null or "tags"."tenant_id" = ?) ' +
          'and "post_tags"."post_id" in (?, ?, ?, ?) order by "post_tags"."post_id", "post_tags"."tag_id" limit 16384', page, '"posts"."id"'),
      ].map((text) => writtenOn(dialect, text))),
      "the statements Post's own route would run (its short page tells its total: its count read with it in one wave, else none), with Author's and Tag's scopes")
    })

    t.test('detail: 404 for a row the scope hides', async (t) => {
      t.strictSame(await get('/post-cards/5', 1), { status: 404, body: notFound('PostCard 5 not found') }, "tenant 2's post")
      t.strictSame(await get('/post-cards/4', 1), { status: 404, body: notFound('PostCard 4 not found') }, 'a deleted post')
      t.strictSame(await get('/author-cards/4', 1), { status: 404, body: notFound('AuthorCard 4 not found') }, 'a deleted author')
      t.strictSame(await get('/tag-cards/3', 1), { status: 404, body: notFound('TagCard 3 not found') })
      t.strictSame(await get('/post-cards/1', 1), { status: 200, body: { id: 1, title: 'Hello', author: 1, tags: [1, 2] } })
    })

    t.test('expanded relations at depth and id arrays', async (t) => {
      t.strictSame((await get('/post-cards?expand=author,tags', 1)).body, page([
        { id: 1, title: 'Hello', author: { id: 1, name: 'Ann', posts: [1] }, tags: [tag[1], tag[2]] },
        { id: 2, title: 'Cross', author: null, tags: [tag[2]] },
        { id: 3, title: 'Ghost', author: null, tags: [] },
        { id: 7, title: 'Bob post', author: { id: 2, name: 'Bob', posts: [7] }, tags: [tag[4]] },
      ]), "an author of another tenant or deleted is null; another tenant's tag is left out")
      t.strictSame((await get('/author-cards/1?expand=posts.tags', 1)).body, {
        id: 1, name: 'Ann', posts: [{ id: 1, title: 'Hello', author: 1, tags: [tag[1], tag[2]] }],
      }, "Ann's deleted post 4 and tenant 2's post 6 are left out, at depth 1 and 2")
      t.strictSame((await get('/author-cards/1?expand=posts.author.posts', 2)).body, notFound('AuthorCard 1 not found'))
      t.strictSame((await get('/post-cards/6?expand=author.posts.tags', 2)).body, {
        id: 6, title: 'Mixed', author: null, tags: [3],
      }, "tenant 1's author of tenant 2's post")
      t.strictSame((await get('/post-cards/5?expand=author.posts.tags', 2)).body, {
        id: 5,
        title: 'Hola',
        author: { id: 3, name: 'Cid', posts: [{ id: 5, title: 'Hola', author: 3, tags: [tag[1], tag[3]] }] },
        tags: [1, 3],
      }, "Cid's post 2 of tenant 1 is left out below tenant 2's post")
    })

    t.test('an administrator (every scope undefined) sees every row', async (t) => {
      t.strictSame((await get('/author-cards/1?expand=posts', 'admin')).body, {
        id: 1,
        name: 'Ann',
        posts: [
          { id: 1, title: 'Hello', author: 1, tags: [1, 2, 3] },
          { id: 4, title: 'Gone', author: 1, tags: [1] },
          { id: 6, title: 'Mixed', author: 1, tags: [3] },
        ],
      })
      t.equal((await get('/post-cards', 'admin')).body.total, 7)
    })
  })

  t.test(`several scopes on one table, on ${dialect.name}`, async (t) => {
    const database = await openTenants(t, dialect)
    const app = await build(database, true)
    t.teardown(() => app.close())
    const get = async (url: string, who: Who) => (await app.inject({ method: 'GET', url, headers: headersOf(who) })).json()

    database.reset()
    await get('/post-cards/3', 1)
    t.strictSame(database.statements.find((statement) => !statement.startsWith('with ')), writtenOn(dialect,
      'select "posts"."id" as "id", cast("posts"."title" as text) as "title", "posts"."author_id" as "author" from "posts" ' +
      'where (("posts"."deleted_at" is null and "posts"."tenant_id" = ?) and ("posts"."tenant_id" = ? and "posts"."id" > ?)) ' +
      'and "posts"."id" = ?'), 'the detail: both conditions AND-ed in its one statement')

    t.strictSame(await get('/later-posts', 1), page([
      { id: 3, title: 'Ghost' },
      { id: 4, title: 'Gone' },
      { id: 7, title: 'Bob post' },
    ]), "a resource with its own scope uses only its own: the deleted post 4 that Post's scope hides is in it")
    t.strictSame(await get('/post-cards', 1), page([
      { id: 3, title: 'Ghost', author: 4, tags: [] },
      { id: 7, title: 'Bob post', author: 2, tags: [4] },
    ]), "a resource without scope gets every scope of its table AND-ed: Post's and LaterPost's")
    t.strictSame(await get('/author-cards/1?expand=posts', 1), { id: 1, name: 'Ann', posts: [] }, 'below a relation too')
    t.strictSame(await get('/post-cards/1', 1), notFound('PostCard 1 not found'), "in Post's scope, not in LaterPost's")
    t.equal((await get('/post-cards', 'admin')).total, 7, 'both scopes undefined: every row')
    laterScopeCalls.count = 0
    await get('/post-cards?expand=author.posts', 1)
    t.equal(laterScopeCalls.count, 1, 'a scope runs once per request, however many statements and resources it guards')
  })
}

t.test('a resource on a table no resource scopes reads every row, and registration never fails over scopes', async (t) => {
  const [dialect] = dialects()
  const database = await openTenants(t, dialect!)
  const { PostCard, AuthorCard, TagCard } = cards()
  const app = Fastify()
  readCallers(app)
  await app.register(expandPlugin, { db: database.db, resources: [PostCard, AuthorCard, TagCard] })
  app.expand.routes('/post-cards', PostCard)
  await app.ready()
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/post-cards', headers: { 'x-tenant': '1' } })).json().total, 7, 'no scope anywhere: nothing to inherit')
})
