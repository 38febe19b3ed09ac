import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin, { isExpanded, isIncluded } from '../../plugin/index.js'
import { asWrittenOn, dialects, inComparableOrder, inOneWave, inWave, keySubqueryOf, type TestDatabase } from '../fixtures/dialects.js'
import { openTenants, readCallers, tenantResources } from '../fixtures/tenants.js'

// docs/access.md: each resource's `scope`
// decides the rows a request sees and its `fieldsFor` the fields, wherever the
// resource is read (generated routes, app.expand.select, every expanded
// relation and id array at any depth). The caller comes from headers (see
// test/fixtures/tenants.ts): a non-admin sees its tenant's rows that are not
// deleted (and the shared tag) and neither Tenant.plan, Author.email,
// Post.notes nor Post.editor; an admin (scope and fieldsFor undefined) sees
// everything.
//
// Until the implementation lands, `scope`, `fieldsFor`, `app.expand.select`
// (and `db` as a function, in rls.test.ts) are not in plugin/index.ts's
// types: this file is written against the contract and type-checks once they are.

type Who = 'admin' | 1 | 2 | 3 | undefined

interface BuildOptions {
  /** Resources with their scope and fieldsFor (default), or the same resources without. */
  access?: boolean
  onInvalidExpand?: 'error' | 'ignore'
}

/** What the hand-written routes saw, for the isExpanded/isIncluded checks. */
interface Probe { expanded: Record<string, boolean>; included: Record<string, boolean> }

async function build (database: TestDatabase, options: BuildOptions = {}): Promise<{ app: FastifyInstance; probes: Probe[] }> {
  const resources = tenantResources(options.access ?? true)
  const probes: Probe[] = []
  const app = Fastify()
  readCallers(app)
  await app.register(expandPlugin, { db: database.db, resources: resources.all, onInvalidExpand: options.onInvalidExpand ?? 'error' })
  app.expand.routes('/tenants', resources.Tenant)
  app.expand.routes('/authors', resources.Author)
  app.expand.routes('/posts', resources.Post)
  app.expand.routes('/tags', resources.Tag)
  app.expand.routes('/comments', resources.Comment)
  // A handler's own list: the plan's columns and the scope, refined by the handler.
  app.get('/early-posts', { expandable: { resource: resources.Post, list: true } }, async (request) => {
    const rows = await app.expand.select(request).where('posts.id', '<', 6).orderBy('posts.id', 'desc').limit(2).execute()
    return app.expand.load(request, rows)
  })
  // A handler's own detail, by another column.
  app.get('/posts-titled/:title', { expandable: { resource: resources.Post } }, async (request) => {
    const { title } = request.params as { title: string }
    const row = await app.expand.select(request).where('posts.title', '=', title).executeTakeFirst()
    if (row === undefined) throw Object.assign(new Error(`No post titled '${title}'`), { statusCode: 404 })
    const [loaded] = await app.expand.load(request, [row])
    return loaded
  })
  app.get('/probe/posts/:id', { expandable: { resource: resources.Post } }, async (request) => {
    const paths = ['notes', 'editor', 'author', 'author.email', 'author.tenant', 'author.tenant.plan', 'comments', 'tags']
    probes.push({
      expanded: Object.fromEntries(paths.map((path) => [path, isExpanded(request, path)])),
      included: Object.fromEntries(paths.map((path) => [path, isIncluded(request, path)])),
    })
    const id = Number((request.params as { id: string }).id)
    const rows = await app.expand.select(request).where('posts.id', '=', id).execute()
    const [loaded] = await app.expand.load(request, rows)
    return loaded
  })
  await app.ready()
  return { app, probes }
}

function headersOf (who: Who): Record<string, string> {
  if (who === 'admin') return { 'x-role': 'admin' }
  return who === undefined ? {} : { 'x-tenant': String(who) }
}

interface Reply { status: number; body: any; text: string; statements: string[] }

/** The JSON body and the statements of one request of `who`. */
async function get (app: FastifyInstance, database: TestDatabase, url: string, who: Who): Promise<Reply> {
  database.reset()
  const response = await app.inject({ method: 'GET', url, headers: headersOf(who) })
  return { status: response.statusCode, body: response.json(), text: response.body, statements: [...database.statements] }
}

// Expected rows. A non-admin sees neither Post.notes nor Author.email nor Tenant.plan.
const tag = {
  1: { id: 1, label: 'shared' },
  2: { id: 2, label: 'acme' },
  3: { id: 3, label: 'globex' },
  4: { id: 4, label: 'news' },
}
const userPost = {
  1: { id: 1, title: 'Hello', author: 1, tags: [1, 2] },
  2: { id: 2, title: 'Cross', author: 3, tags: [2] },
  3: { id: 3, title: 'Ghost', author: 4, tags: [] },
  7: { id: 7, title: 'Bob post', author: 2, tags: [4] },
  // tenant 2's
  5: { id: 5, title: 'Hola', author: 3, tags: [1, 3] },
  6: { id: 6, title: 'Mixed', author: 1, tags: [3] },
}
const adminPost = {
  1: { id: 1, title: 'Hello', notes: 'draft 1', author: 1, tags: [1, 2, 3] },
  2: { id: 2, title: 'Cross', notes: 'about Cid', author: 3, tags: [2] },
  3: { id: 3, title: 'Ghost', notes: 'by Dee', author: 4, tags: [3] },
  4: { id: 4, title: 'Gone', notes: 'removed', author: 1, tags: [1] },
  5: { id: 5, title: 'Hola', notes: 'globex', author: 3, tags: [1, 2, 3] },
  6: { id: 6, title: 'Mixed', notes: 'by Ann', author: 1, tags: [3] },
  7: { id: 7, title: 'Bob post', notes: 'b', author: 2, tags: [4] },
}
const userAuthor = {
  1: { id: 1, name: 'Ann', tenant: 1, posts: [1] },
  2: { id: 2, name: 'Bob', tenant: 1, posts: [7] },
  3: { id: 3, name: 'Cid', tenant: 2, posts: [5] },
  5: { id: 5, name: 'Eve', tenant: 2, posts: [] },
}
const adminAuthor = {
  1: { id: 1, name: 'Ann', email: 'ann@acme.test', tenant: 1, posts: [1, 4, 6] },
  2: { id: 2, name: 'Bob', email: 'bob@acme.test', tenant: 1, posts: [7] },
  3: { id: 3, name: 'Cid', email: 'cid@globex.test', tenant: 2, posts: [2, 5] },
  4: { id: 4, name: 'Dee', email: 'dee@acme.test', tenant: 1, posts: [3] },
  5: { id: 5, name: 'Eve', email: 'eve@globex.test', tenant: 2, posts: [] },
}
const comment = {
  1: { id: 1, body: 'Nice', author: 2, post: 1 },
  2: { id: 2, body: 'From Cid', author: 3, post: 1 },
  3: { id: 3, body: 'Deleted', author: 1, post: 1 },
  4: { id: 4, body: 'Other tenant', author: 3, post: 1 },
  5: { id: 5, body: 'Si', author: 5, post: 5 },
  6: { id: 6, body: 'On ghost', author: 1, post: 3 },
  7: { id: 7, body: 'Re cross', author: 2, post: 2 },
}
const notFound = (message: string) => ({ statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message })
const forbidden = (message: string) => ({ statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message })
const hiddenExpand = (path: string, resource: string) => forbidden(`Cannot expand '${path}' on ${resource}: it is not available to this request`)
const hiddenField = (path: string) => forbidden(`Field '${path}' in 'fields' is not available to this request`)
const unknown = (message: string) => ({ statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message })
/** Columns a non-admin never sees: none of them may be read for its requests. */
const hiddenColumnNames = ['email', 'notes', 'editor_id', '"plan"']

for (const dialect of dialects()) {
  t.test(`rows and fields per request on ${dialect.name}`, async (t) => {
    // `plan` as a quoted identifier, in the dialect's quotes, never a part of another word.
    const hiddenColumns = new RegExp(hiddenColumnNames.map((column) => asWrittenOn(dialect, column)).join('|'))
    const database = await openTenants(t, dialect)
    const { app, probes } = await build(database)
    t.teardown(() => app.close())
    const request = (url: string, who: Who) => get(app, database, url, who)

    t.test('list pages: each caller its rows, and a total that counts only them', async (t) => {
      const tenant1 = await request('/posts', 1)
      t.strictSame(tenant1.body, { data: [userPost[1], userPost[2], userPost[3], userPost[7]], limit: 20, offset: 0, total: 4 }, 'not tenant 2\'s posts 5 and 6, not the deleted post 4')
      t.equal(tenant1.statements.length, 2,
        'root and tag ids (the short page tells its total: its count read with it in one wave, else none)')
      t.strictSame((await request('/posts?limit=2&offset=1', 1)).body, { data: [userPost[2], userPost[3]], limit: 2, offset: 1, total: 4 })
      t.strictSame((await request('/posts?offset=3', 1)).body, { data: [userPost[7]], limit: 20, offset: 3, total: 4 })
      t.strictSame((await request('/posts', 2)).body, { data: [userPost[5], userPost[6]], limit: 20, offset: 0, total: 2 })
      t.strictSame((await request('/posts', 3)).body, { data: [], limit: 20, offset: 0, total: 0 }, 'a tenant without posts')
      t.strictSame((await request('/posts', undefined)).body, { data: [], limit: 20, offset: 0, total: 0 }, 'no tenant: no rows')
      t.strictSame((await request('/posts', 'admin')).body, { data: Object.values(adminPost), limit: 20, offset: 0, total: 7 })
      t.strictSame((await request('/authors', 1)).body, { data: [userAuthor[1], userAuthor[2]], limit: 20, offset: 0, total: 2 }, 'not the deleted Dee')
      t.strictSame((await request('/authors', 2)).body, { data: [userAuthor[3], userAuthor[5]], limit: 20, offset: 0, total: 2 })
      t.strictSame((await request('/authors?limit=2&offset=3', 'admin')).body, { data: [adminAuthor[4], adminAuthor[5]], limit: 2, offset: 3, total: 5 })
      t.strictSame((await request('/tags', 1)).body, { data: [tag[1], tag[2], tag[4]], limit: 20, offset: 0, total: 3 }, 'the shared tag and its own')
      t.strictSame((await request('/tags', 2)).body, { data: [tag[1], tag[3]], limit: 20, offset: 0, total: 2 })
      t.strictSame((await request('/tags', undefined)).body, { data: [tag[1]], limit: 20, offset: 0, total: 1 })
      t.strictSame((await request('/tenants', 3)).body, { data: [{ id: 3, name: 'Initech' }], limit: 20, offset: 0, total: 1 })
      t.strictSame((await request('/comments', 1)).body, { data: [comment[1], comment[2], comment[6], comment[7]], limit: 20, offset: 0, total: 4 })
      t.strictSame((await request('/comments', 2)).body, { data: [comment[4], comment[5]], limit: 20, offset: 0, total: 2 })
    })

    t.test("detail: 200 in scope, 404 for another tenant's row or a deleted one", async (t) => {
      const own = await request('/posts/1', 1)
      t.same({ status: own.status, body: own.body }, { status: 200, body: userPost[1] })
      const other = await request('/posts/5', 1)
      t.same({ status: other.status, body: other.body }, { status: 404, body: notFound('Post 5 not found') })
      if (inOneWave(dialect)) t.equal(other.statements.length, 2, 'the root statement, and the tag ids\' sent with it')
      else t.equal(other.statements.length, 1, 'the root statement only')
      const deleted = await request('/posts/4', 1)
      t.same({ status: deleted.status, body: deleted.body }, { status: 404, body: notFound('Post 4 not found') })
      t.strictSame((await request('/posts/4', 2)).body, notFound('Post 4 not found'))
      t.strictSame((await request('/posts/5', 2)).body, userPost[5])
      t.strictSame((await request('/posts/4', 'admin')).body, adminPost[4])
      t.strictSame((await request('/authors/4', 1)).body, notFound('Author 4 not found'), 'deleted author')
      t.strictSame((await request('/authors/3', 1)).body, notFound('Author 3 not found'), "tenant 2's author")
      t.strictSame((await request('/authors/3', 2)).body, userAuthor[3])
      t.strictSame((await request('/comments/4', 1)).body, notFound('Comment 4 not found'), "tenant 2's comment on tenant 1's post")
      t.strictSame((await request('/comments/3', 1)).body, notFound('Comment 3 not found'), 'deleted comment')
      t.strictSame((await request('/tags/3', 1)).body, notFound('Tag 3 not found'))
      t.strictSame((await request('/tags/1', 2)).body, tag[1], 'the shared tag')
      t.strictSame((await request('/tenants/2', 1)).body, notFound('Tenant 2 not found'))
      t.strictSame((await request('/tenants/1', 1)).body, { id: 1, name: 'Acme' })
      t.strictSame((await request('/tenants/2', 'admin')).body, { id: 2, name: 'Globex', plan: 'free' })
    })

    t.test('an expanded to-one out of scope is null; its id stays on the visible parent', async (t) => {
      t.strictSame((await request('/posts/2', 1)).body, userPost[2], "the id of tenant 2's author is the post's own data")
      t.strictSame((await request('/posts/2?expand=author', 1)).body, { ...userPost[2], author: null })
      t.strictSame((await request('/posts/3?expand=author', 1)).body, { ...userPost[3], author: null }, 'deleted author')
      t.strictSame((await request('/posts/3?expand=author', 'admin')).body, { ...adminPost[3], author: adminAuthor[4] })
      t.strictSame((await request('/posts/6?expand=author', 2)).body, { ...userPost[6], author: null }, "tenant 1's author")
      t.strictSame((await request('/posts/6?expand=author', 'admin')).body, { ...adminPost[6], author: adminAuthor[1] })
      t.strictSame((await request('/posts?expand=author', 1)).body, {
        data: [
          { ...userPost[1], author: userAuthor[1] },
          { ...userPost[2], author: null },
          { ...userPost[3], author: null },
          { ...userPost[7], author: userAuthor[2] },
        ],
        limit: 20,
        offset: 0,
        total: 4,
      })
      t.strictSame((await request('/comments?expand=author,post', 1)).body, {
        data: [
          { ...comment[1], author: userAuthor[2], post: userPost[1] },
          { ...comment[2], author: null, post: userPost[1] },
          { ...comment[6], author: userAuthor[1], post: userPost[3] },
          { ...comment[7], author: userAuthor[2], post: userPost[2] },
        ],
        limit: 20,
        offset: 0,
        total: 4,
      })
      t.strictSame((await request('/comments?expand=post', 2)).body, {
        data: [{ ...comment[4], post: null }, { ...comment[5], post: userPost[5] }],
        limit: 20,
        offset: 0,
        total: 2,
      }, "tenant 2's comment on tenant 1's post")
    })

    t.test('to-many and many-to-many leave out-of-scope rows out, as ids and as objects', async (t) => {
      // ids
      t.strictSame((await request('/authors/1', 1)).body, userAuthor[1], 'foreign key: not the deleted post 4 nor post 6 of tenant 2')
      t.strictSame((await request('/authors/1', 'admin')).body, adminAuthor[1])
      t.strictSame((await request('/posts/1', 1)).body.tags, [1, 2], "through a join table: not tenant 2's tag 3")
      t.strictSame((await request('/posts/5', 2)).body.tags, [1, 3])
      t.strictSame((await request('/posts/5', 'admin')).body.tags, [1, 2, 3])
      // objects
      t.strictSame((await request('/authors/1?expand=posts', 1)).body, { ...userAuthor[1], posts: [userPost[1]] })
      t.strictSame((await request('/authors/3?expand=posts', 2)).body, { ...userAuthor[3], posts: [userPost[5]] }, "not tenant 1's post 2")
      t.strictSame((await request('/authors/5?expand=posts', 2)).body, { ...userAuthor[5], posts: [] })
      t.strictSame((await request('/posts/1?expand=tags,comments', 1)).body, {
        ...userPost[1],
        tags: [tag[1], tag[2]],
        comments: [comment[1], comment[2]],
      }, 'not the deleted comment 3 nor tenant 2\'s comment 4')
      t.strictSame((await request('/posts/1?expand=tags,comments', 'admin')).body, {
        ...adminPost[1],
        tags: [tag[1], tag[2], tag[3]],
        comments: [comment[1], comment[2], comment[3], comment[4]],
      })
      t.strictSame((await request('/posts/5?expand=tags,comments', 2)).body, {
        ...userPost[5],
        tags: [tag[1], tag[3]],
        comments: [comment[5]],
      })
      t.strictSame((await request('/posts?expand=tags&fields=id,tags', 1)).body, {
        data: [{ id: 1, tags: [tag[1], tag[2]] }, { id: 2, tags: [tag[2]] }, { id: 3, tags: [] }, { id: 7, tags: [tag[4]] }],
        limit: 20,
        offset: 0,
        total: 4,
      })
    })

    t.test("the SQL: each statement's scope, in parentheses, before the keys; an admin's statements have none", async (t) => {
      // PostgreSQL numbers its placeholders; SQLite and MariaDB write `?`.
      const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
      const written = (statements: string[]) => statements.map((statement) => asWrittenOn(dialect, statement))
      const postScope = (index: number) => `("posts"."deleted_at" is null and "posts"."tenant_id" = ${p(index)})`
      const tagScope = (index: number) => `("tags"."tenant_id" is null or "tags"."tenant_id" = ${p(index)})`
      const oneWave = inOneWave(dialect)
      // In one wave, each statement's keys are its parent's statement, which binds its own scope's values after the statement's
      // (the values of every level's scope, then the root's id): `at` is where the parent's values start, `keys` the keys bound else.
      const keyed = (parent: (at: number) => string, column: string, keys: string) => oneWave ? keySubqueryOf(parent(2), column) : keys
      /** A relation's statement as sent: in one wave, joined from the keys it answers for (its placeholders numbered as written). */
      const wave = (statement: string) => oneWave ? inWave(dialect, statement) : statement
      const url = '/posts/1?expand=author,tags,comments&fields=id,author,tags,comments'
      const user = await request(url, 1)
      t.equal(user.status, 200)
      const post = (at: number) => `select "posts"."id" as "id", "posts"."author_id" as "author" from "posts" where ${postScope(at)} and "posts"."id" = ${p(at + 1)}`
      const author = (at: number) => 'select "authors"."id" as "id", cast("authors"."name" as text) as "name", "authors"."tenant_id" as "tenant" from "authors" ' +
        `where ("authors"."deleted_at" is null and "authors"."tenant_id" = ${p(at)}) and "authors"."id" in (${oneWave ? keySubqueryOf(post(at + 1), '"posts"."author_id"') : p(at + 1)})`
      t.strictSame(inComparableOrder(dialect, user.statements), inComparableOrder(dialect, written([
        post(1),
        wave(author(1)),
        wave('select "posts"."id" as "id", "posts"."author_id" as "__expand_parent" from "posts" ' +
          `where ${postScope(1)} and "posts"."author_id" in (${keyed(author, '"authors"."id"', p(2))}) order by "posts"."author_id", "posts"."id" limit 16384`),
        wave('select "tags"."id" as "id", cast("tags"."label" as text) as "label", "post_tags"."post_id" as "__expand_parent" from "tags" ' +
          'inner join "post_tags" on "post_tags"."tag_id" = "tags"."id" ' +
          `where ${tagScope(1)} and "post_tags"."post_id" in (${keyed(post, '"posts"."id"', p(2))}) order by "post_tags"."post_id", "post_tags"."tag_id" limit 16384`),
        wave('select "comments"."id" as "id", cast("comments"."body" as text) as "body", "comments"."author_id" as "author", "comments"."post_id" as "post", ' +
          '"comments"."post_id" as "__expand_parent" from "comments" ' +
          `where ("comments"."deleted_at" is null and "comments"."tenant_id" = ${p(1)}) and "comments"."post_id" in (${keyed(post, '"posts"."id"', p(2))}) ` +
          'order by "comments"."post_id", "comments"."id" limit 16384'),
      ])), oneWave
        ? 'to-one, to-many ids (author.posts), many-to-many and to-many, each with its scope, and in its subqueries each parent\'s'
        : 'to-one, to-many ids (author.posts), many-to-many and to-many, each with its scope')
      const tagIds = await request('/posts/1?fields=id,tags', 1)
      t.equal(tagIds.statements.length, 2)
      t.strictSame(tagIds.statements.filter((statement) => statement.includes('__expand_parent')), written([
        wave('select "post_tags"."tag_id" as "id", "post_tags"."post_id" as "__expand_parent" from "post_tags" ' +
          'inner join "tags" on "tags"."id" = "post_tags"."tag_id" ' +
          `where ${tagScope(1)} and "post_tags"."post_id" in (${keyed((at) => `select "posts"."id" as "id" from "posts" where ${postScope(at)} and "posts"."id" = ${p(at + 1)}`, '"posts"."id"', p(2))}) ` +
          'order by "post_tags"."post_id", "post_tags"."tag_id" limit 16384'),
      ]), 'many-to-many ids join the related table for its scope')
      const admin = await request(url, 'admin')
      const openPost = `select "posts"."id" as "id", "posts"."author_id" as "author" from "posts" where "posts"."id" = ${p(1)}`
      const openAuthor = 'select "authors"."id" as "id", cast("authors"."name" as text) as "name", cast("authors"."email" as text) as "email", "authors"."tenant_id" as "tenant" from "authors" ' +
        `where "authors"."id" in (${oneWave ? keySubqueryOf(openPost, '"posts"."author_id"') : p(1)})`
      const openKeyed = (parent: string, column: string) => oneWave ? keySubqueryOf(parent, column) : p(1)
      t.strictSame(inComparableOrder(dialect, admin.statements), inComparableOrder(dialect, written([
        openPost,
        wave(openAuthor),
        wave(`select "posts"."id" as "id", "posts"."author_id" as "__expand_parent" from "posts" where "posts"."author_id" in (${openKeyed(openAuthor, '"authors"."id"')}) order by "posts"."author_id", "posts"."id" limit 16384`),
        wave('select "tags"."id" as "id", cast("tags"."label" as text) as "label", "post_tags"."post_id" as "__expand_parent" from "tags" ' +
          'inner join "post_tags" on "post_tags"."tag_id" = "tags"."id" ' +
          `where "post_tags"."post_id" in (${openKeyed(openPost, '"posts"."id"')}) order by "post_tags"."post_id", "post_tags"."tag_id" limit 16384`),
        wave('select "comments"."id" as "id", cast("comments"."body" as text) as "body", "comments"."author_id" as "author", "comments"."post_id" as "post", ' +
          '"comments"."post_id" as "__expand_parent" from "comments" ' +
          `where "comments"."post_id" in (${openKeyed(openPost, '"posts"."id"')}) order by "comments"."post_id", "comments"."id" limit 16384`),
      ])), 'scope undefined: the statements of a resource without one')
    })

    t.test('depth 2 and 3: the scope of every resource at every level', async (t) => {
      const depth2 = await request('/posts/1?expand=comments.author,tags', 1)
      t.strictSame(depth2.body, {
        ...userPost[1],
        tags: [tag[1], tag[2]],
        comments: [{ ...comment[1], author: userAuthor[2] }, { ...comment[2], author: null }],
      })
      t.equal(depth2.statements.length, 5, 'post, tags, comments, comments.author, comments.author.posts ids')

      const depth3 = await request('/posts?expand=author.posts.tags', 1)
      t.strictSame(depth3.body, {
        data: [
          { ...userPost[1], author: { ...userAuthor[1], posts: [{ ...userPost[1], tags: [tag[1], tag[2]] }] } },
          { ...userPost[2], author: null },
          { ...userPost[3], author: null },
          { ...userPost[7], author: { ...userAuthor[2], posts: [{ ...userPost[7], tags: [tag[4]] }] } },
        ],
        limit: 20,
        offset: 0,
        total: 4,
      })
      t.equal(depth3.statements.length, 5, 'posts, tag ids, author, author.posts, author.posts.tags')

      const authors = await request('/authors?expand=posts.comments.author', 1)
      t.strictSame(authors.body, {
        data: [
          {
            ...userAuthor[1],
            posts: [{ ...userPost[1], comments: [{ ...comment[1], author: userAuthor[2] }, { ...comment[2], author: null }] }],
          },
          { ...userAuthor[2], posts: [{ ...userPost[7], comments: [] }] },
        ],
        limit: 20,
        offset: 0,
        total: 2,
      })
      t.equal(authors.statements.length, 6, 'authors, posts, posts.tags ids, posts.comments, posts.comments.author, its posts ids')

      t.strictSame((await request('/authors?expand=posts.tags', 2)).body, {
        data: [{ ...userAuthor[3], posts: [{ ...userPost[5], tags: [tag[1], tag[3]] }] }, { ...userAuthor[5], posts: [] }],
        limit: 20,
        offset: 0,
        total: 2,
      })

      const tenantOfAuthor = await request('/comments/1?expand=post.author.tenant', 1)
      t.strictSame(tenantOfAuthor.body, {
        ...comment[1],
        post: { ...userPost[1], author: { ...userAuthor[1], tenant: { id: 1, name: 'Acme' } } },
      })
      t.equal(tenantOfAuthor.statements.length, 6, 'comment, post, post.tags ids, post.author, post.author.tenant, post.author.posts ids')
      t.strictSame((await request('/comments/7?expand=post.author.tenant', 1)).body, {
        ...comment[7],
        post: { ...userPost[2], author: null },
      }, "tenant 2's author at depth 2 is null; nothing below it")
    })

    t.test('an admin (scope undefined) sees every row at every depth', async (t) => {
      t.strictSame((await request('/authors/1?expand=posts.comments', 'admin')).body, {
        ...adminAuthor[1],
        posts: [
          { ...adminPost[1], comments: [comment[1], comment[2], comment[3], comment[4]] },
          { ...adminPost[4], comments: [] },
          { ...adminPost[6], comments: [] },
        ],
      })
      t.strictSame((await request('/comments?expand=author,post.author.tenant&limit=3&offset=1', 'admin')).body, {
        data: [
          { ...comment[2], author: adminAuthor[3], post: { ...adminPost[1], author: { ...adminAuthor[1], tenant: { id: 1, name: 'Acme', plan: 'gold' } } } },
          { ...comment[3], author: adminAuthor[1], post: { ...adminPost[1], author: { ...adminAuthor[1], tenant: { id: 1, name: 'Acme', plan: 'gold' } } } },
          { ...comment[4], author: adminAuthor[3], post: { ...adminPost[1], author: { ...adminAuthor[1], tenant: { id: 1, name: 'Acme', plan: 'gold' } } } },
        ],
        limit: 3,
        offset: 1,
        total: 7,
      })
    })

    t.test('app.expand.select in a hand-written route: the plan\'s columns and the scope, refined by the handler', async (t) => {
      const tenant1 = await request('/early-posts?expand=tags,comments', 1)
      t.strictSame(tenant1.body, [
        { ...userPost[3], tags: [], comments: [comment[6]] },
        { ...userPost[2], tags: [tag[2]], comments: [comment[7]] },
      ], 'posts 3 and 2: the handler\'s where, order and limit over tenant 1\'s posts')
      t.equal(tenant1.statements.length, 3, 'the handler\'s select, tags, comments')
      const select = tenant1.statements[0]!
      t.notMatch(select, /\*/, 'no select *')
      t.notMatch(select, hiddenColumns, 'no hidden column')
      t.strictSame((await request('/early-posts', 2)).body, [userPost[5]])
      const admin = await request('/early-posts?expand=author', 'admin')
      t.strictSame(admin.body, [{ ...adminPost[5], author: adminAuthor[3] }, { ...adminPost[4], author: adminAuthor[1] }])
      t.equal(admin.statements.length, 4, 'select, author, author.posts ids, tag ids')
      t.strictSame((await request('/early-posts?fields=id,title', 3)).body, [])
      // The plan's columns, as `column as field`, the primary key always among them.
      const titles = await request('/early-posts?fields=title,author', 1)
      t.strictSame(titles.body, [{ title: 'Ghost', author: 4 }, { title: 'Cross', author: 3 }])
      const selectList = titles.statements[0]!.slice(0, titles.statements[0]!.indexOf(' from '))
      t.equal(selectList, asWrittenOn(dialect, 'select "posts"."id" as "id", cast("posts"."title" as text) as "title", "posts"."author_id" as "author"'))

      t.strictSame((await request('/posts-titled/Hola?expand=comments', 2)).body, { ...userPost[5], comments: [comment[5]] })
      const hidden = await request('/posts-titled/Hola', 1)
      t.same({ status: hidden.status, message: hidden.body.message }, { status: 404, message: "No post titled 'Hola'" })
      t.equal((await request('/posts-titled/Gone', 1)).status, 404, 'deleted')
      t.strictSame((await request('/posts-titled/Gone', 'admin')).body, adminPost[4])
    })

    t.test('fieldsFor: hidden fields are absent at every level where the resource appears', async (t) => {
      const url = '/comments/1?expand=author.tenant,post.author.tenant'
      t.strictSame((await request(url, 1)).body, {
        ...comment[1],
        author: { ...userAuthor[2], tenant: { id: 1, name: 'Acme' } },
        post: { ...userPost[1], author: { ...userAuthor[1], tenant: { id: 1, name: 'Acme' } } },
      })
      t.strictSame((await request(url, 'admin')).body, {
        ...comment[1],
        author: { ...adminAuthor[2], tenant: { id: 1, name: 'Acme', plan: 'gold' } },
        post: { ...adminPost[1], author: { ...adminAuthor[1], tenant: { id: 1, name: 'Acme', plan: 'gold' } } },
      })
      t.strictSame((await request('/authors/2?expand=posts', 1)).body, { ...userAuthor[2], posts: [userPost[7]] }, 'Post.notes hidden under Author too')
    })

    t.test('fieldsFor: wildcards skip hidden fields', async (t) => {
      const user = await request('/posts/1?expand=*', 1)
      t.strictSame(user.body, { ...userPost[1], author: userAuthor[1], tags: [tag[1], tag[2]], comments: [comment[1], comment[2]] }, 'the hidden editor is not expanded')
      t.equal(user.text, JSON.stringify({ ...userPost[1], author: userAuthor[1], tags: [tag[1], tag[2]], comments: [comment[1], comment[2]] }), 'in definition order')
      const admin = await request('/posts/1?expand=*', 'admin')
      const adminBody = {
        ...adminPost[1],
        author: adminAuthor[1],
        tags: [tag[1], tag[2], tag[3]],
        comments: [comment[1], comment[2], comment[3], comment[4]],
        editor: adminAuthor[2],
      }
      t.strictSame(admin.body, adminBody)
      t.equal(admin.text, JSON.stringify(adminBody), 'deferred fields in expandable order')
      t.strictSame((await request('/authors/1?expand=posts.*', 1)).body, {
        ...userAuthor[1],
        posts: [{ ...userPost[1], author: userAuthor[1], tags: [tag[1], tag[2]], comments: [comment[1], comment[2]] }],
      })
      t.strictSame((await request('/posts/1?fields=*', 1)).body, userPost[1])
      t.strictSame((await request('/posts/1?expand=author&fields=id,author.*', 1)).body, { id: 1, author: userAuthor[1] })
    })

    t.test('fieldsFor: naming a hidden field in expand or fields is a 403', async (t) => {
      const cases: Array<[string, Who, object]> = [
        ['/posts/1?expand=editor', 1, hiddenExpand('editor', 'Post')],
        ['/posts?expand=author,editor', 1, hiddenExpand('editor', 'Post')],
        ['/authors/1?expand=posts.editor', 1, hiddenExpand('posts.editor', 'Post')],
        ['/posts?expand=comments.post.editor', 2, hiddenExpand('comments.post.editor', 'Post')],
        ['/posts/1?expand=editor.tenant', 1, hiddenExpand('editor', 'Post')],
        ['/posts/1?fields=id,notes', 1, hiddenField('notes')],
        ['/posts/1?fields=editor', 1, hiddenField('editor')],
        ['/posts/1?expand=author&fields=id,author.email', 1, hiddenField('author.email')],
        ['/comments/1?expand=author.tenant&fields=author.tenant.plan', 1, hiddenField('author.tenant.plan')],
        ['/tenants/1?fields=id,plan', 1, hiddenField('plan')],
        ['/tenants?fields=plan', undefined, hiddenField('plan')],
      ]
      for (const [url, who, body] of cases) {
        const response = await request(url, who)
        t.same({ status: response.status, body: response.body }, { status: 403, body }, url)
        t.equal(response.statements.length, 0, `${url}: refused before any statement`)
      }
      // The same paths for an admin.
      t.strictSame((await request('/posts/1?expand=editor', 'admin')).body, { ...adminPost[1], editor: adminAuthor[2] })
      t.strictSame((await request('/tenants/1?fields=id,plan', 'admin')).body, { id: 1, plan: 'gold' })
      // Nested fields under a relation that is not expanded are neither applied nor validated (docs/queries.md).
      t.strictSame((await request('/posts/1?fields=id,author.email', 1)).body, { id: 1, author: 1 })
    })

    t.test('fieldsFor: naming a hidden field in omit has no effect', async (t) => {
      for (const [url, plain] of [
        ['/posts/1?omit=notes', '/posts/1'],
        ['/posts/1?omit=editor', '/posts/1'],
        ['/posts?omit=notes,editor', '/posts'],
        ['/posts/1?expand=author.tenant&omit=author.email,author.tenant.plan', '/posts/1?expand=author.tenant'],
      ] as const) {
        const omitted = await request(url, 1)
        const expected = await request(plain, 1)
        t.equal(omitted.status, 200, url)
        t.strictSame(omitted.body, expected.body, `${url} answers as ${plain}`)
      }
      t.strictSame((await request('/posts/1?omit=notes,author', 1)).body, { id: 1, title: 'Hello', tags: [1, 2] }, 'the visible names are omitted')
      t.strictSame((await request('/posts/1?omit=notes', 'admin')).body, { id: 1, title: 'Hello', author: 1, tags: [1, 2, 3] })
    })

    t.test('error messages never list a hidden field', async (t) => {
      const cases: Array<[string, Who, object]> = [
        ['/posts/1?fields=nope', 1, unknown("Unknown field 'nope' in 'fields': Post has id, title, author, tags, comments")],
        ['/posts/1?fields=nope', 'admin', unknown("Unknown field 'nope' in 'fields': Post has id, title, notes, author, tags, comments, editor")],
        ['/posts/1?omit=nope', 1, unknown("Unknown field 'nope' in 'omit': Post has id, title, author, tags, comments")],
        ['/posts/1?expand=nope', 1, unknown("Cannot expand 'nope' on Post: expandable fields are author, tags, comments")],
        ['/posts/1?expand=nope', 'admin', unknown("Cannot expand 'nope' on Post: expandable fields are author, tags, comments, editor")],
        ['/posts/1?expand=author&fields=author.nope', 1, unknown("Unknown field 'author.nope' in 'fields': Author has id, name, tenant, posts")],
        ['/posts/1?expand=author.tenant&fields=author.tenant.nope', 1, unknown("Unknown field 'author.tenant.nope' in 'fields': Tenant has id, name")],
        ['/authors?expand=posts.nope', 2, unknown("Cannot expand 'posts.nope' on Post: expandable fields are author, tags, comments")],
      ]
      for (const [url, who, body] of cases) {
        const response = await request(url, who)
        t.same({ status: response.status, body: response.body }, { status: 400, body }, `${url} (${String(who)})`)
      }
    })

    t.test('isExpanded and isIncluded answer false for hidden paths', async (t) => {
      probes.length = 0
      const user = await request('/probe/posts/1?expand=*,author.tenant&fields=id,notes', undefined)
      t.equal(user.status, 403, 'a hidden field in fields is refused before the handler')
      t.equal(probes.length, 0)
      const url = '/probe/posts/1?expand=*,author.tenant'
      const body = await request(url, 1)
      t.strictSame(body.body, { ...userPost[1], author: { ...userAuthor[1], tenant: { id: 1, name: 'Acme' } }, tags: [tag[1], tag[2]], comments: [comment[1], comment[2]] })
      await request(url, 'admin')
      t.strictSame(probes, [
        {
          expanded: { notes: false, editor: false, author: true, 'author.email': false, 'author.tenant': true, 'author.tenant.plan': false, comments: true, tags: true },
          included: { notes: false, editor: false, author: true, 'author.email': false, 'author.tenant': true, 'author.tenant.plan': false, comments: true, tags: true },
        },
        {
          expanded: { notes: false, editor: true, author: true, 'author.email': false, 'author.tenant': true, 'author.tenant.plan': false, comments: true, tags: true },
          included: { notes: true, editor: true, author: true, 'author.email': true, 'author.tenant': true, 'author.tenant.plan': true, comments: true, tags: true },
        },
      ])
    })

    t.test('a hidden column is never read (the primary key aside)', async (t) => {
      const urls = [
        '/posts', '/posts/1', '/posts?expand=*', '/posts/1?expand=author.tenant,comments.author.tenant,comments.post',
        '/authors?expand=posts.tags,tenant', '/comments?expand=author.posts,post.author.tenant', '/tenants', '/tenants/1',
        '/early-posts?expand=*', '/probe/posts/1?expand=*',
      ]
      for (const url of urls) {
        const { status, statements } = await request(url, 1)
        t.equal(status, 200, url)
        t.ok(statements.length > 0, url)
        for (const statement of statements) t.notMatch(statement, hiddenColumns, `${url}: ${statement}`)
      }
      // A hidden primary key is still read (rows are keyed by it), never written.
      const keyHidden = await app.inject({ url: '/posts?expand=tags', headers: { 'x-tenant': '2', 'x-visible': JSON.stringify({ Post: ['title', 'tags'], Tag: ['label'] }) } })
      t.strictSame(keyHidden.json(), {
        data: [{ title: 'Hola', tags: [{ label: 'shared' }, { label: 'globex' }] }, { title: 'Mixed', tags: [{ label: 'globex' }] }],
        limit: 20,
        offset: 0,
        total: 2,
      })
      // The same requests of an admin read them: the check above would see them.
      const admin = await request('/posts/1?expand=editor,author.tenant', 'admin')
      const text = admin.statements.join('\n')
      for (const column of hiddenColumnNames.map((name) => asWrittenOn(dialect, name))) t.ok(text.includes(column), `an admin's statements read ${column}`)
    })

    t.test('scopes add no statements: the same counts as the same requests without access rules', async (t) => {
      const { app: open } = await build(database, { access: false })
      t.teardown(() => open.close())
      const cases: Array<[string, number]> = [
        // Lists: pages shorter than their limit, which tell their total without a count statement (in one wave the page's reads it).
        ['/posts', 2],
        ['/posts/1', 2],
        ['/posts?expand=author', 4],
        ['/posts/1?expand=comments.author,tags', 5],
        ['/posts?expand=author.posts.tags', 5],
        ['/authors?expand=posts.comments.author', 6],
        ['/authors/1?expand=tenant,posts.tags', 4],
        ['/comments?expand=author,post.author', 7],
        ['/comments/1?expand=post.author.tenant', 6],
        ['/tags', 1],
        ['/early-posts?expand=tags,comments.author', 5],
      ]
      for (const [url, count] of cases) {
        const scoped = await request(url, 1)
        const unscoped = await get(open, database, url, 1)
        t.equal(scoped.status, 200, url)
        t.equal(scoped.statements.length, count, `${url}: ${count} statements with scopes`)
        t.equal(unscoped.statements.length, count, `${url}: ${count} statements without`)
      }
      // Where the scope leaves a level without rows there is nothing below it to load: never more statements.
      for (const url of ['/comments/7?expand=post.author.tenant', '/posts/2?expand=author.posts', '/posts?expand=comments.author.tenant']) {
        const scoped = await request(url, 1)
        const unscoped = await get(open, database, url, 1)
        t.ok(scoped.statements.length <= unscoped.statements.length, `${url}: ${scoped.statements.length} statements, no more than ${unscoped.statements.length}`)
      }
    })
  })

  t.test(`plans are never shared between requests whose fieldsFor answers differ on ${dialect.name}`, async (t) => {
    const database = await openTenants(t, dialect)
    const { app } = await build(database)
    t.teardown(() => app.close())
    const request = (url: string, who: Who) => get(app, database, url, who)
    const adminBody = { ...adminPost[1], author: { ...adminAuthor[1], tenant: { id: 1, name: 'Acme', plan: 'gold' } } }
    const userBody = { ...userPost[1], author: { ...userAuthor[1], tenant: { id: 1, name: 'Acme' } } }

    // admin, then user
    t.strictSame((await request('/posts/1?expand=author.tenant', 'admin')).body, adminBody)
    t.strictSame((await request('/posts/1?expand=author.tenant', 1)).body, userBody)
    t.strictSame((await request('/posts/1', 'admin')).body, adminPost[1])
    t.strictSame((await request('/posts/1', 1)).body, userPost[1])
    // user, then admin
    t.strictSame((await request('/posts/1?expand=author.tenant&fields=id,author', 1)).body, { id: 1, author: userBody.author })
    t.strictSame((await request('/posts/1?expand=author.tenant&fields=id,author', 'admin')).body, { id: 1, author: adminBody.author })
    t.strictSame((await request('/authors?limit=1', 1)).body, { data: [userAuthor[1]], limit: 1, offset: 0, total: 2 })
    t.strictSame((await request('/authors?limit=1', 'admin')).body, { data: [adminAuthor[1]], limit: 1, offset: 0, total: 5 })
    // and again, now that every plan is cached
    t.strictSame((await request('/posts/1?expand=author.tenant', 1)).body, userBody)
    t.strictSame((await request('/posts/1?expand=author.tenant', 'admin')).body, adminBody)
    t.strictSame((await request('/authors?limit=1', 1)).body, { data: [userAuthor[1]], limit: 1, offset: 0, total: 2 })
    t.strictSame((await request('/posts/1?expand=author.tenant&fields=id,author', 'admin')).body, { id: 1, author: adminBody.author })
    // Two tenants with the same fieldsFor answers: each its own rows.
    t.strictSame((await request('/authors?limit=1', 2)).body, { data: [userAuthor[3]], limit: 1, offset: 0, total: 2 })
    // A caller whose answers are its own (x-visible): its own field set.
    const custom = await app.inject({
      url: '/posts/1?expand=author.tenant',
      headers: { 'x-tenant': '1', 'x-visible': JSON.stringify({ Post: ['title', 'author'], Author: ['email', 'tenant'] }) },
    })
    t.strictSame(custom.json(), { title: 'Hello', author: { email: 'ann@acme.test', tenant: { id: 1, name: 'Acme', plan: 'gold' } } })
    t.strictSame((await request('/posts/1?expand=author.tenant', 1)).body, userBody)
    // Cached: the same requests again compile nothing new.
    for (const who of [1, 'admin'] as const) await request('/posts?expand=author.tenant', who)
    const before = app.expand.cacheStats()
    for (const who of [1, 'admin', 2, 'admin', 1] as const) {
      t.equal((await request('/posts?expand=author.tenant', who)).status, 200)
      t.equal((await request('/authors?limit=1', who)).status, 200)
    }
    const after = app.expand.cacheStats()
    t.equal(after.compiles, before.compiles, 'no new serializer')
    t.equal(after.hits - before.hits, 10, 'every request served from the cache')
  })

  t.test(`onInvalidExpand 'ignore' drops hidden names silently on ${dialect.name}`, async (t) => {
    const database = await openTenants(t, dialect)
    const { app } = await build(database, { onInvalidExpand: 'ignore' })
    t.teardown(() => app.close())
    const request = async (url: string, who: Who) => {
      const response = await get(app, database, url, who)
      t.equal(response.status, 200, url)
      return response.body
    }
    t.strictSame(await request('/posts/1?expand=editor,author', 1), { ...userPost[1], author: userAuthor[1] })
    t.strictSame(await request('/posts/1?expand=editor.tenant', 1), userPost[1])
    t.strictSame(await request('/posts/1?fields=id,notes', 1), { id: 1 })
    t.strictSame(await request('/posts/1?expand=author&fields=id,author.email,author.name', 1), { id: 1, author: { name: 'Ann' } })
    t.strictSame(await request('/posts/1?expand=comments.post.editor&fields=id,comments', 1), {
      id: 1,
      comments: [{ ...comment[1], post: userPost[1] }, { ...comment[2], post: userPost[1] }],
    }, 'the valid head of the path is still expanded')
    t.strictSame(await request('/posts/1?expand=editor,author&fields=id,notes,author,editor', 'admin'), { id: 1, notes: 'draft 1', author: adminAuthor[1], editor: adminAuthor[2] })
    t.strictSame(await request('/tenants/1?fields=id,plan', 1), { id: 1 })
  })
}
