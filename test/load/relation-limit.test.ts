import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { asSent, asWrittenOn, dialects, firstRowsShape, inComparableOrder, inOneWave, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { isCountStatement } from '../helpers/page-count.js'
import { createPosts, through } from '../fixtures/posts.js'

// Relation option `limit`: the first rows of each parent in the relation's order,
// expanded and as ids, in one statement per relation path (row_number() per parent
// on PostgreSQL and MariaDB, a correlated subquery with LIMIT per parent on SQLite).
// The request's scope applies before the rows are numbered: a hidden row takes no place.
const hiddenToRequest = (request: { headers: Record<string, unknown> }) => request.headers['x-visible-only'] !== undefined
const Comment = defineResource({
  name: 'Comment',
  table: 'comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String(), rank: Type.Integer() }),
  fields: ['id', 'body'],
  scope: (eb, request) => (hiddenToRequest(request) ? eb('comments.hidden', '=', 0) : undefined),
})
const Tag = defineResource({
  name: 'Tag',
  table: 'tags',
  schema: Type.Object({ id: Type.Integer(), label: Type.String() }),
  fields: ['id', 'label'],
  scope: (eb, request) => (hiddenToRequest(request) ? eb('tags.hidden', '=', 0) : undefined),
})
const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({
    id: Type.Integer(),
    top_comments: Type.Array(Type.Integer()),
    first_comments: Type.Array(Type.Integer()),
    top_tags: Type.Array(Type.Integer()),
    first_tags: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'top_comments', 'first_comments', 'top_tags', 'first_tags'],
  expandable: {
    top_comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id', orderBy: '-rank', limit: 2 }],
    first_comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id', limit: 3 }],
    top_tags: [(): AnyResource => Tag, { many: true, through, orderBy: 'rank', limit: 3 }],
    first_tags: [(): AnyResource => Tag, { many: true, through, limit: 2 }],
  },
})

// Post 1 has more rows than any limit, post 2 fewer, post 3 none.
async function seed (db: Kysely<any>): Promise<void> {
  await createPosts(db, [1, 2, 3])
  // Comments 1 and 3 tie on rank 2; comment 4 ranks first but is hidden.
  await db.insertInto('comments').values([
    { id: 1, post_id: 1, body: 'one', rank: 2, hidden: 0 }, { id: 2, post_id: 1, body: 'two', rank: 1, hidden: 0 },
    { id: 3, post_id: 1, body: 'three', rank: 2, hidden: 0 }, { id: 4, post_id: 1, body: 'four', rank: 3, hidden: 1 },
    { id: 5, post_id: 1, body: 'five', rank: 0, hidden: 0 }, { id: 6, post_id: 2, body: 'six', rank: 5, hidden: 0 },
  ]).execute()
}

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Post, Comment, Tag] })
  app.expand.routes('/posts', Post)
  await app.ready()
  return app
}

/** What a statement of a relation with `limit` is made of, as the tests below name it. */
interface Limited {
  /** Selected columns: source column and name. */
  columns: Array<[string, string]>
  from: string
  parent: string
  related: string
  order: string
  limit: number
  /** The request's scope on the related table, if any. */
  scope?: string
  /** The parent keys bound (a list of this many), or the statement of the parents, whose keys a statement of one wave reads. */
  keys: number | { parents: string }
}

/**
 * The SQL of a relation with `limit`, as the dialect writes it: on PostgreSQL
 * and MariaDB, every child numbered per parent by row_number() and the first
 * `limit` kept; on SQLite, each distinct parent key's first `limit` related
 * keys found by a correlated subquery with LIMIT (read from an index, without
 * numbering every child). Both end with the object budget's bound.
 */
function limitedStatement (dialect: Dialect, { columns, from, parent, related, order, limit, scope, keys }: Limited): string {
  if (typeof keys === 'object') return asSent(dialect, limitedStatement(dialect, { columns, from, parent, related, order, limit, scope, keys: 1 }), keys.parents, '"posts"."id"')
  const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
  const first = scope === undefined ? 1 : 2
  const keyList = Array.from({ length: keys }, (_, index) => p(first + index))
  const bound = '16384'
  const scoped = (condition: string) => (scope === undefined ? condition : `${scope} and ${condition}`)
  if (firstRowsShape[dialect.name] === 'row numbered') {
    return asWrittenOn(dialect, `select ${columns.map(([, name]) => `"__expand_numbered"."${name}" as "${name}", `).join('')}"__expand_numbered"."__expand_parent" as "__expand_parent" from (` +
      `select ${columns.map(([column, name]) => `${column} as "${name}", `).join('')}${parent} as "__expand_parent", ` +
      `row_number() over(partition by ${parent} order by ${order}) as "__expand_row" ` +
      `from ${from} where ${scoped(`${parent} in (${keyList.join(', ')})`)}) as "__expand_numbered" ` +
      `where "__expand_numbered"."__expand_row" <= ${limit} order by "__expand_numbered"."__expand_parent", "__expand_numbered"."__expand_row" limit ${bound}`)
  }
  return asWrittenOn(dialect, `with "__expand_keys" as (select distinct "column1" as "key" from (values ${keyList.map((key) => `(${key})`).join(', ')})) ` +
    `select ${columns.map(([column, name]) => `${column} as "${name}", `).join('')}"__expand_keys"."key" as "__expand_parent" ` +
    `from "__expand_keys" cross join ${from} where ${parent} = "__expand_keys"."key" and ${related} in (` +
    `select ${related} from ${from} where ${scoped(`${parent} = "__expand_keys"."key"`)} order by ${order} limit ${limit}) ` +
    `order by "__expand_keys"."key", ${order} limit ${bound}`)
}

const commentsFrom = { from: '"comments"', parent: '"comments"."post_id"', related: '"comments"."id"' }
const tagIdsFrom = { parent: '"post_tags"."post_id"', related: '"post_tags"."tag_id"' }
const commentIds = { ...commentsFrom, columns: [['"comments"."id"', 'id']] as Array<[string, string]> }
const tagIds = { ...tagIdsFrom, columns: [['"post_tags"."tag_id"', 'id']] as Array<[string, string]> }
const tagRows = {
  ...tagIdsFrom,
  from: '"tags" inner join "post_tags" on "post_tags"."tag_id" = "tags"."id"',
  columns: [['"tags"."id"', 'id'], ['cast("tags"."label" as text)', 'label']] as Array<[string, string]>,
}
const topComments = { order: '"comments"."rank" desc, "comments"."id"', limit: 2 }
/**
 * `tags.rank` is no field of Tag (its schema does not declare it): as far as the plugin knows it may hold NULL, which
 * sorts as the largest value on every database, written on SQLite and MariaDB (PostgreSQL's default).
 */
const topTagsOn = (dialect: Dialect) => ({
  order: `${dialect.name === 'postgres' ? '' : '"tags"."rank" is null, '}"tags"."rank", "post_tags"."tag_id"`,
  limit: 3,
})

const comment = (id: number, body: string) => ({ id, body })
const tag = (id: number, label: string) => ({ id, label })

for (const dialect of dialects()) {
  t.test(`relation limit on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await seed(database.db)
    const app = await build(database)
    t.teardown(() => app.close())
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : '?')
    const topTags = topTagsOn(dialect)
    // On PostgreSQL's and MariaDB's pools the relations of a level are loaded concurrently, so their statements
    // end (and are logged) in any order: there they are compared in text order, and found by their text.
    const levelOrder = (statements: string[]) => inComparableOrder(dialect, statements)
    const concurrent = dialect.name === 'postgres' || dialect.name === 'mariadb'
    const relationStatement = (statements: string[], index: number, text: string) =>
      concurrent ? statements.filter((statement) => statement.includes(asWrittenOn(dialect, text))) : [statements[index]]
    const get = async (url: string, headers: Record<string, string> = {}) => {
      database.reset()
      const response = await app.inject({ url, headers })
      t.equal(response.statusCode, 200, url)
      return { body: response.json(), statements: [...database.statements] }
    }

    /** Not the page nor its count: statements are logged as they answer, the count maybe after the relations'. */
    const isRelationStatement = (statement: string) => !statement.startsWith(asWrittenOn(dialect, 'select "posts".')) && !isCountStatement(statement)
    // In one wave, each relation's statement reads its parents' keys from a subquery of the page's or the row's statement.
    const pageKeys = inOneWave(dialect) ? { parents: `select "posts"."id" as "id" from "posts" order by "posts"."id" limit ${p(1)} offset ${p(2)}` } : 4
    const rowKeys = inOneWave(dialect) ? { parents: `select "posts"."id" as "id" from "posts" where "posts"."id" = ${p(1)}` } : 1

    t.test('as ids: the first rows of each parent in the relation\'s order, one statement per relation', async (t) => {
      const { body, statements } = await get('/posts')
      t.same(body.data, [
        { id: 1, top_comments: [4, 1], first_comments: [1, 2, 3], top_tags: [40, 10, 30], first_tags: [10, 20] },
        { id: 2, top_comments: [6], first_comments: [6], top_tags: [20], first_tags: [20] },
        { id: 3, top_comments: [], first_comments: [], top_tags: [], first_tags: [] },
      ], 'rank descending (ties by key), by key, rank ascending (ties by key), by key; fewer rows than the limit; none')
      t.equal(statements.length, 5, 'the page (three rows: it tells its total; in one wave, it reads its count) and one statement per relation')
      // Three parents: their keys padded to four by repeating the last (statement templates).
      t.same(levelOrder(statements.filter(isRelationStatement)), levelOrder([
        limitedStatement(dialect, { ...commentIds, ...topComments, keys: pageKeys }),
        limitedStatement(dialect, { ...commentIds, order: '"comments"."id"', limit: 3, keys: pageKeys }),
        limitedStatement(dialect, { ...tagIds, from: '"post_tags" inner join "tags" on "tags"."id" = "post_tags"."tag_id"', ...topTags, keys: pageKeys }),
        limitedStatement(dialect, { ...tagIds, from: '"post_tags" inner join "tags" on "tags"."id" = "post_tags"."tag_id"', order: '"post_tags"."tag_id"', limit: 2, keys: pageKeys }),
      ]))
    })

    t.test('expanded: the same rows in the same order', async (t) => {
      const { body, statements } = await get('/posts?expand=top_comments,first_comments,top_tags,first_tags')
      t.same(body.data, [
        {
          id: 1,
          top_comments: [comment(4, 'four'), comment(1, 'one')],
          first_comments: [comment(1, 'one'), comment(2, 'two'), comment(3, 'three')],
          top_tags: [tag(40, 'forty'), tag(10, 'ten'), tag(30, 'thirty')],
          first_tags: [tag(10, 'ten'), tag(20, 'twenty')],
        },
        { id: 2, top_comments: [comment(6, 'six')], first_comments: [comment(6, 'six')], top_tags: [tag(20, 'twenty')], first_tags: [tag(20, 'twenty')] },
        { id: 3, top_comments: [], first_comments: [], top_tags: [], first_tags: [] },
      ])
      t.equal(statements.length, 5, 'the page (three rows: it tells its total; in one wave, it reads its count) and one statement per relation')
      t.same(relationStatement(statements, 1, '"comments"."rank" desc'), [
        limitedStatement(dialect, { ...commentIds, columns: [...commentIds.columns, ['cast("comments"."body" as text)', 'body']], ...topComments, keys: pageKeys })])
      t.same(relationStatement(statements, 3, '"tags"."rank"'), [limitedStatement(dialect, { ...tagRows, ...topTags, keys: pageKeys })])
      const detail = await get('/posts/1?expand=top_comments&fields=id,top_comments')
      t.same(detail.body, { id: 1, top_comments: [comment(4, 'four'), comment(1, 'one')] }, 'a detail route: the same rows')
      t.equal(detail.statements.length, 2)
    })

    t.test('scoped: rows out of scope are left out before the numbering, so they take no place', async (t) => {
      const visibleOnly = { 'x-visible-only': '1' }
      const ids = await get('/posts/1', visibleOnly)
      t.same(ids.body, { id: 1, top_comments: [1, 3], first_comments: [1, 2, 3], top_tags: [10, 30, 20], first_tags: [10, 20] },
        'the hidden comment 4 and tag 40 leave their places to the next rows')
      t.equal(ids.statements.length, 5)
      t.same(ids.statements.filter((statement) => statement.includes(asWrittenOn(dialect, '"comments"."rank"'))), [
        limitedStatement(dialect, { ...commentIds, ...topComments, scope: `"comments"."hidden" = ${p(1)}`, keys: rowKeys }),
      ], 'the scope inside the subquery')
      t.same(ids.statements.filter((statement) => statement.includes(asWrittenOn(dialect, '"tags"."rank"'))), [
        limitedStatement(dialect, {
          ...tagIds, from: '"post_tags" inner join "tags" on "tags"."id" = "post_tags"."tag_id"', ...topTags, scope: `"tags"."hidden" = ${p(1)}`, keys: rowKeys,
        }),
      ])
      const expanded = await get('/posts?expand=top_comments,top_tags&fields=id,top_comments,top_tags', visibleOnly)
      t.same(expanded.body.data, [
        { id: 1, top_comments: [comment(1, 'one'), comment(3, 'three')], top_tags: [tag(10, 'ten'), tag(30, 'thirty'), tag(20, 'twenty')] },
        { id: 2, top_comments: [comment(6, 'six')], top_tags: [tag(20, 'twenty')] },
        { id: 3, top_comments: [], top_tags: [] },
      ])
      t.equal(expanded.statements.length, 3, 'the page (short: it tells its total; in one wave, it reads its count) and one statement per relation')
      // Again without the scope: the statements are templates per scope shape, and none leaks into the other.
      t.same((await get('/posts/1?fields=id,top_comments')).body, { id: 1, top_comments: [4, 1] })
      t.same((await get('/posts/1?fields=id,top_comments', visibleOnly)).body, { id: 1, top_comments: [1, 3] })
    })
  })
}

t.test('defineResource checks limit', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), comments: Type.Array(Type.Integer()), first: Type.Integer() })
  const define = (expandable: Record<string, unknown>) => () => defineResource({ name: 'Post', table: 'posts', schema, fields: ['id'], expandable: expandable as never })
  for (const limit of [0, -1, 1.5, 1e21, '2', null]) {
    t.throws(define({ comments: [Comment, { many: true, foreignKey: 'post_id', limit }] }),
      { code: 'FST_EXPAND_INVALID_DEFINITION', message: `Resource 'Post': expandable field 'comments': limit ${String(limit)} must be a positive integer (the most related rows shown per parent)` })
  }
  t.throws(define({ first: [Comment, { limit: 1 }] }),
    { message: "Resource 'Post': expandable field 'first': limit bounds the rows of a to-many relation: it needs many: true" })
  t.throws(define({ comments: [Comment, { many: true, limit: 1 }] }),
    { message: "Resource 'Post': expandable field 'comments': limit bounds the rows loaded from the database: it needs foreignKey or through" })
  t.doesNotThrow(define({ comments: [Comment, { many: true, foreignKey: 'post_id', limit: 1 }] }))
  t.doesNotThrow(define({ comments: [Comment, { many: true, through, limit: 1 }] }))
})

t.test('maxObjects counts the rows loaded: a limit keeps a response under it', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  await seed(database.db)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Post, Comment, Tag], maxObjects: 4 })
  app.expand.routes('/posts', Post)
  await app.ready()
  t.teardown(() => app.close())
  // Three comments of post 1 (of five) and one of post 2: four objects.
  const limited = await app.inject('/posts?expand=first_comments&fields=id,first_comments')
  t.equal(limited.statusCode, 200)
  t.same(limited.json().data.map((post: { first_comments: unknown[] }) => post.first_comments.length), [3, 1, 0])
  const over = await app.inject('/posts?expand=first_comments,first_tags&fields=id,first_comments,first_tags')
  t.equal(over.statusCode, 400, 'four comments and three tags are seven objects')
  t.equal(over.json().code, 'FST_EXPAND_TOO_LARGE')
})
