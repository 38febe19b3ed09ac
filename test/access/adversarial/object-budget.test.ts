import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../../plugin/index.js'
import { asSent, asWrittenOn, dialects, firstRowsShape, inOneWave, rowsOfParts, type TestDatabase } from '../../fixtures/dialects.js'
import { createPosts, through } from '../../fixtures/posts.js'

// Attack: one request that makes the server read and hold far more rows than
// `maxObjects` allows, through a parent with very many children (expanded or
// shown as an id array), a page whose rows share a parent (each child then
// written once per row), or a second level fetched before the first was
// found too large.
// What must hold: every to-many statement carries `limit <remaining + 1, rounded up to a power of two>`, so
// the database hands over at most one row past what the budget has left, rounded up;
// id arrays are charged as expanded rows are (each id one object, times the
// times its row is written); a level over the budget is answered 400
// FST_EXPAND_TOO_LARGE before any statement of the next level runs.

const children = 5_000
const maxObjects = 1_000
/** The `limit` of a statement while at most 1,000 objects are left: one past them, rounded up to a power of two. */
const rowBound = 1_024

const Comment = defineResource({
  name: 'Comment',
  table: 'comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String(), post: Type.Integer() }),
  fields: ['id', 'body', 'post'],
  columns: { post: 'post_id' },
  expandable: { post: (): AnyResource => Post },
})
const Tag = defineResource({
  name: 'Tag',
  table: 'tags',
  schema: Type.Object({ id: Type.Integer(), label: Type.String() }),
  fields: ['id', 'label'],
})
const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({
    id: Type.Integer(),
    comments: Type.Array(Type.Integer()),
    tags: Type.Array(Type.Integer()),
    latest: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'comments', 'tags', 'latest'],
  expandable: {
    comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id' }],
    tags: [(): AnyResource => Tag, { many: true, through }],
    latest: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id', orderBy: '-id', limit: 2 }],
  },
})

// Post 1 has 5,000 comments and 5,004 tags; post 2 has 40 comments and one tag.
async function seed (db: Kysely<any>): Promise<void> {
  await createPosts(db, [1, 2])
  await db.schema.createIndex('comments_post_id').on('comments').column('post_id').execute()
  const rows = (count: number, make: (index: number) => Record<string, unknown>) => Array.from({ length: count }, (_, index) => make(index))
  for (let start = 0; start < children; start += 500) {
    await db.insertInto('comments').values(rows(500, (index) => ({ id: start + index + 1, post_id: 1, body: 'x', rank: 0 }))).execute()
    await db.insertInto('tags').values(rows(500, (index) => ({ id: 1_000 + start + index, label: 'y', rank: 0 }))).execute()
    await db.insertInto('post_tags').values(rows(500, (index) => ({ post_id: 1, tag_id: 1_000 + start + index }))).execute()
  }
  await db.insertInto('comments').values(rows(40, (index) => ({ id: 10_000 + index, post_id: 2, body: 'z', rank: 0 }))).execute()
}

/** Rows the driver returned for each statement, in the order they ran, beside the statements' SQL. */
function countRows (database: TestDatabase): Array<{ sql: string; rows: number }> {
  const read: Array<{ sql: string; rows: number }> = []
  const execute = database.db.executeQuery.bind(database.db)
  database.db.executeQuery = (async (query: Parameters<typeof execute>[0]) => {
    const result = await execute(query)
    // The wave's statements sent as one (on PostgreSQL): each part with the rows it read.
    read.push(...rowsOfParts('sql' in query ? query : query.compile(), result.rows))
    return result
  }) as typeof database.db.executeQuery
  return read
}

/**
 * The one statement that matches: in one wave the statements finish in any order, and a statement keyed by another holds
 * that one's SQL in its key subquery, so a match must be unique to say which statement it is.
 */
function only (t: Test, read: Array<{ sql: string; rows: number }>, matches: (sql: string) => boolean): { sql: string; rows: number } {
  const found = read.filter(({ sql }) => matches(sql))
  t.equal(found.length, 1, 'one statement matches')
  return found[0]!
}

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Post, Comment, Tag], maxObjects })
  app.expand.routes('/posts', Post)
  app.expand.routes('/comments', Comment, { maxPageSize: 1_000, total: false })
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`the object budget bounds what is read on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await seed(database.db)
    const app = await build(database)
    t.teardown(() => app.close())
    const read = countRows(database)
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
    /** Expected statements, written with double-quoted identifiers, as the dialect quotes them. */
    const written = (statements: string[]) => statements.map((statement) => asWrittenOn(dialect, statement))
    const post = `select "posts"."id" as "id" from "posts" where "posts"."id" = ${p(1)}`
    /** A statement keyed by the post's id, as the dialect sends it (in one wave, keyed by the post's statement). */
    const byPost = (statement: string) => asSent(dialect, statement, post, '"posts"."id"')
    const get = async (url: string) => {
      read.length = 0
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json(), read: [...read] }
    }
    const tooLarge = {
      statusCode: 400,
      code: 'FST_EXPAND_TOO_LARGE',
      error: 'Bad Request',
      message: `The expanded relations would hold more than ${maxObjects} objects: expand fewer relations or ask for a smaller page`,
    }

    t.test('an expanded relation over the budget: its statement reads at most the budget\'s bound', async (t) => {
      const { status, body, read } = await get('/posts/1?expand=comments&fields=id,comments')
      t.same([status, body], [400, tooLarge])
      t.same(read.map((statement) => statement.sql).sort(), written([
        post,
        byPost('select "comments"."id" as "id", cast("comments"."body" as text) as "body", "comments"."post_id" as "post", "comments"."post_id" as "__expand_parent" ' +
          `from "comments" where "comments"."post_id" in (${p(1)}) order by "comments"."post_id", "comments"."id" limit 1024`),
      ]).sort())
      t.equal(only(t, read, (sql) => sql.includes('__expand_parent')).rows, rowBound, 'one row past the budget rounded up to a power of two, of 5,000')
    })

    t.test('id arrays are charged: 5,000 ids are over the budget, read with the same bound', async (t) => {
      const ids = await get('/posts/1?fields=id,comments')
      t.same([ids.status, ids.body], [400, tooLarge])
      t.same(ids.read.map((statement) => statement.sql).sort(), written([
        post,
        byPost('select "comments"."id" as "id", "comments"."post_id" as "__expand_parent" ' +
          `from "comments" where "comments"."post_id" in (${p(1)}) order by "comments"."post_id", "comments"."id" limit 1024`),
      ]).sort())
      t.equal(only(t, ids.read, (sql) => sql.includes('__expand_parent')).rows, rowBound)
      const through = await get('/posts/1?fields=id,tags')
      t.same([through.status, through.body], [400, tooLarge])
      t.same(through.read.map((statement) => statement.sql).sort(), written([
        post,
        byPost('select "post_tags"."tag_id" as "id", "post_tags"."post_id" as "__expand_parent" ' +
          'from "post_tags" inner join "tags" on "tags"."id" = "post_tags"."tag_id" ' +
          `where "post_tags"."post_id" in (${p(1)}) order by "post_tags"."post_id", "post_tags"."tag_id" limit 1024`),
      ]).sort())
      t.equal(only(t, through.read, (sql) => sql.includes('__expand_parent')).rows, rowBound)
      const small = await get('/posts/2?fields=id,comments,tags')
      t.equal(small.status, 200, 'forty-one ids are within the budget')
      t.same(small.body, { id: 2, comments: Array.from({ length: 40 }, (_, index) => 10_000 + index), tags: [20] })
    })

    t.test('id arrays count once per time their row is written', async (t) => {
      // Ten comments of post 2 share their post: its forty ids are written ten times, 10 + 400 objects.
      const ten = await get('/comments?offset=5000&limit=10&expand=post&fields=id,post.id,post.comments')
      t.equal(ten.status, 200)
      t.equal(ten.body.data.length, 10)
      // Thirty: 30 + 1,200 objects.
      const thirty = await get('/comments?offset=5000&limit=30&expand=post&fields=id,post.id,post.comments')
      t.same([thirty.status, thirty.body], [400, tooLarge])
      const ids = only(t, thirty.read, (sql) => sql.includes('__expand_parent'))
      if (inOneWave(dialect)) {
        // Sent with the page, before anything is charged: the budget's whole bound.
        t.match(ids.sql, / limit 1024\) as /)
        t.ok(ids.rows <= rowBound)
      } else {
        t.same(ids.sql, asWrittenOn(dialect, 'select "comments"."id" as "id", "comments"."post_id" as "__expand_parent" ' +
          `from "comments" where "comments"."post_id" in (${p(1)}) order by "comments"."post_id", "comments"."id" limit 1024`))
        t.ok(ids.rows <= rowBound, `${ids.rows} ids read: at most the 970 left, plus one, rounded up to a power of two`)
      }
    })

    t.test('a level over the budget is answered before the next level is fetched', async (t) => {
      const { status, body, read } = await get('/posts/1?expand=comments.post&fields=id,comments.id,comments.post.id')
      t.same([status, body], [400, tooLarge])
      // In one wave the comments' posts are read with them (sent before any row is), never placed.
      t.equal(read.length, inOneWave(dialect) ? 3 : 2, 'the post and its comments: the comments\' posts are never placed')
      t.equal(only(t, read, (sql) => sql.includes('__expand_parent')).rows, rowBound)
    })

    t.test('a relation with limit carries the budget\'s bound too', async (t) => {
      // 600 comments of post 1 share it: 600 posts written, then its 2 latest comments 600 times each.
      const page = await get('/comments?limit=600&expand=post.latest.post&fields=id,post.id,post.latest.id,post.latest.post.id')
      t.same([page.status, page.body], [400, tooLarge])
      if (inOneWave(dialect)) {
        // Sent with the page, before anything is charged: the budget's whole bound; their posts read with them, never placed.
        t.equal(page.read.length, 4, 'the page, the post, its latest comments and their posts, in one wave')
        // The latest comments' statement: their posts' statement is keyed by it, so holds its numbered rows too, not its wave rows.
        const latest = only(t, page.read, (sql) => /"__expand_numbered"\."__expand_row" <= 2 order by "__expand_numbered"\."__expand_parent", "__expand_numbered"\."__expand_row" limit 1024\) as "__expand_wave_rows"/.test(sql))
        t.equal(latest.rows, 2)
      } else {
        t.equal(page.read.length, 3, 'the page, the post, its latest comments: their posts are never read')
        // Row numbers per parent on PostgreSQL and MariaDB, a correlated subquery per parent on SQLite: either way the bound last
        // (400 objects left after the 600 posts: 401 rounded up, 512).
        const latestComments = {
          'row numbered': 'select "__expand_numbered"."id" as "id", "__expand_numbered"."post" as "post", "__expand_numbered"."__expand_parent" as "__expand_parent" from (' +
            'select "comments"."id" as "id", "comments"."post_id" as "post", "comments"."post_id" as "__expand_parent", ' +
            'row_number() over(partition by "comments"."post_id" order by "comments"."id" desc, "comments"."id") as "__expand_row" ' +
            `from "comments" where "comments"."post_id" in (${p(1)})) as "__expand_numbered" ` +
            'where "__expand_numbered"."__expand_row" <= 2 order by "__expand_numbered"."__expand_parent", "__expand_numbered"."__expand_row" limit 512',
          'correlated subquery': 'with "__expand_keys" as (select distinct "column1" as "key" from (values (?))) ' +
            'select "comments"."id" as "id", "comments"."post_id" as "post", "__expand_keys"."key" as "__expand_parent" ' +
            'from "__expand_keys" cross join "comments" where "comments"."post_id" = "__expand_keys"."key" and "comments"."id" in (' +
            'select "comments"."id" from "comments" where "comments"."post_id" = "__expand_keys"."key" order by "comments"."id" desc, "comments"."id" limit 2) ' +
            'order by "__expand_keys"."key", "comments"."id" desc, "comments"."id" limit 512',
        }[firstRowsShape[dialect.name]]
        t.same(page.read[2], {
          sql: asWrittenOn(dialect, latestComments),
          rows: 2,
        })
      }
      const posts = await get('/posts?expand=latest&fields=id,latest.id')
      t.equal(posts.status, 200)
      t.same(posts.body.data, [{ id: 1, latest: [{ id: 5000 }, { id: 4999 }] }, { id: 2, latest: [{ id: 10_039 }, { id: 10_038 }] }])
    })
  })
}
