import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource, type ExpandPluginOptions } from '../../plugin/index.js'
import { onDatabase, type Database } from '../fixtures/databases.js'
import { asSent, asWrittenOn, dialects, inOneWave, keySubqueryOf, pageAsSent, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { isCountStatement } from '../helpers/page-count.js'
import { createPosts, through } from '../fixtures/posts.js'

// Expanded lists: `sort[path]`, `limit[path]` and `where[path.field]` order, limit and
// narrow an expanded to-many array per request, on routes declaring `expandedLists`;
// still one statement per relation path, on every dialect, under the related scope.
const visibleOnly = { 'x-visible-only': '1' }
const noRank = { 'x-no-rank': '1' }
const Comment = defineResource({
  name: 'Comment',
  table: 'comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String(), rank: Type.Integer(), post: Type.Integer() }),
  fields: ['id', 'body', 'rank'],
  columns: { post: 'post_id' },
  expandable: { post: (): AnyResource => Post },
  scope: (eb, request) => (request.headers['x-visible-only'] !== undefined ? eb('comments.hidden', '=', 0) : undefined),
  fieldsFor: (request) => {
    if (request.headers['x-no-rank'] !== undefined) return ['id', 'body', 'post']
    return request.headers['x-no-post'] !== undefined ? ['id', 'body', 'rank'] : undefined
  },
})
const Tag = defineResource({
  name: 'Tag',
  table: 'tags',
  schema: Type.Object({ id: Type.Integer(), label: Type.String(), rank: Type.Integer() }),
  fields: ['id', 'label'],
})
const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({ id: Type.Integer(), comments: Type.Array(Type.Integer()), tags: Type.Array(Type.Integer()) }),
  fields: ['id', 'comments', 'tags'],
  expandable: {
    comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id' }],
    tags: [(): AnyResource => Tag, { many: true, through }],
  },
})
const resources = [Post, Comment, Tag]

/** Comments of posts 1 (five, comment 4 hidden) and 2 (one); ranks tie at 2 (comments 1 and 3). */
const comments = [
  { id: 1, post_id: 1, body: 'one', rank: 2, hidden: 0 }, { id: 2, post_id: 1, body: 'two', rank: 1, hidden: 0 },
  { id: 3, post_id: 1, body: 'three', rank: 2, hidden: 0 }, { id: 4, post_id: 1, body: 'four', rank: 3, hidden: 1 },
  { id: 5, post_id: 1, body: 'five', rank: 0, hidden: 0 }, { id: 6, post_id: 2, body: 'six', rank: 5, hidden: 0 },
]
const commentsList = { sort: ['rank', 'body'], maxLimit: 3, filter: { rank: ['eq', 'gte', 'in'], body: ['contains'] } } as const
const expandedLists = { comments: commentsList, tags: { sort: ['rank', 'label'], filter: { label: ['eq'] } } } as const

async function open (dialect: Dialect): Promise<TestDatabase> {
  const database = await dialect.open()
  await createPosts(database.db, [1, 2, 3])
  await database.db.insertInto('comments').values(comments).execute()
  return database
}

async function build (database: TestDatabase, options: Partial<ExpandPluginOptions> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources, ...options })
  app.expand.routes('/posts', Post, { expandedLists })
  app.expand.routes('/comments', Comment, {
    expandedLists: { 'post.comments': { sort: ['rank'], filter: { rank: ['gte'] } } },
    permitDetailExpands: ['post.comments'],
  })
  app.expand.routes('/tags', Tag)
  await app.ready()
  return app
}

/** How a statement of one wave starts (plugin/sql/key-subqueries.ts): its keys, read from its parents' statement. */
const waveStart = 'with "__expand_wave_keys" as ('

const comment = ({ id, body, rank }: { id: number; body: string; rank: number }) => ({ id, body, rank })
const commentRow = (id: number) => comment(comments.find((row) => row.id === id)!)

/**
 * What each database writes and runs differently here: its placeholders (numbered on PostgreSQL alone), the statement
 * of each parent's first rows (`row_number()` on PostgreSQL and MariaDB, a correlated subquery with LIMIT on SQLite,
 * which binds the parent keys first), and whether a level's relations load concurrently on a pool.
 */
const databases: Record<Database, { numbered: boolean; firstRows: 'correlated' | 'row_number'; concurrent: boolean }> = {
  sqlite: { numbered: false, firstRows: 'correlated', concurrent: false },
  postgres: { numbered: true, firstRows: 'row_number', concurrent: true },
  mariadb: { numbered: false, firstRows: 'row_number', concurrent: true },
}

for (const dialect of dialects()) {
  const { numbered, firstRows, concurrent } = onDatabase(dialect, databases)
  const rowNumbered = firstRows === 'row_number'
  const p = (index: number) => (numbered ? `$${index}` : '?')
  const keyList = (first: number, count: number) => Array.from({ length: count }, (_, index) => p(first + index)).join(', ')
  const commentColumns = '"comments"."id" as "id", cast("comments"."body" as text) as "body", "comments"."rank" as "rank"'
  /** The statement of each parent's first rows (as the relation option `limit` writes it), with the list's condition and order. */
  const limitedComments = (condition: string, order: string, limit: number, keys: number, firstValue = 1) => {
    const statements = {
      row_number: () =>
        'select "__expand_numbered"."id" as "id", "__expand_numbered"."body" as "body", "__expand_numbered"."rank" as "rank", ' +
        '"__expand_numbered"."__expand_parent" as "__expand_parent" from (' +
        `select ${commentColumns}, "comments"."post_id" as "__expand_parent", ` +
        `row_number() over(partition by "comments"."post_id" order by ${order}) as "__expand_row" ` +
        `from "comments" where ${condition} and "comments"."post_id" in (${keyList(firstValue, keys)})) as "__expand_numbered" ` +
        `where "__expand_numbered"."__expand_row" <= ${limit} order by "__expand_numbered"."__expand_parent", "__expand_numbered"."__expand_row" limit 16384`,
      correlated: () =>
        `with "__expand_keys" as (select distinct "column1" as "key" from (values ${Array.from({ length: keys }, () => '(?)').join(', ')})) ` +
        `select ${commentColumns}, "__expand_keys"."key" as "__expand_parent" from "__expand_keys" cross join "comments" ` +
        'where "comments"."post_id" = "__expand_keys"."key" and "comments"."id" in (' +
        `select "comments"."id" from "comments" where ${condition} and "comments"."post_id" = "__expand_keys"."key" order by ${order} limit ${limit}) ` +
        `order by "__expand_keys"."key", ${order} limit 16384`,
    } satisfies Record<typeof firstRows, () => string>
    return asWrittenOn(dialect, statements[firstRows]())
  }

  t.test(`expanded lists on ${dialect.name}`, async (t) => {
    const database = await open(dialect)
    t.teardown(() => database.close())
    const app = await build(database)
    t.teardown(() => app.close())
    /**
     * The statements a request ran, with their parameters: the route's own first, then the relations' in text order
     * where a pool loads a level concurrently (in one wave they are sent with the route's and any may answer first);
     * without the page's COUNT where it goes out with the page (one wave: its answer dropped on these short pages).
     */
    const get = async (url: string, headers: Record<string, string> = {}) => {
      database.reset()
      const response = await app.inject({ url, headers })
      const ran = database.statements.map((sql, index) => [sql, database.parameters[index]] as const)
        .filter(([sql]) => !(inOneWave(dialect) && isCountStatement(sql)))
      const own = inOneWave(dialect) ? ran.findIndex(([sql]) => !sql.startsWith(waveStart)) : 0
      const relations = ran.filter((_, index) => index !== own)
      return { status: response.statusCode, body: response.json(), ran: concurrent ? [ran[own]!, ...relations.sort()] : ran }
    }
    /** In one wave, a relation's statement keyed by its parents' statement `parent` (`column`, its key); else as written. */
    const sent = (statement: string, parent: string, column = '"posts"."id"') => asSent(dialect, statement, parent, column)
    const page = `select "posts"."id" as "id" from "posts" order by "posts"."id" limit ${p(1)} offset ${p(2)}`
    const post = `select "posts"."id" as "id" from "posts" where "posts"."id" = ${p(1)}`

    t.test('sort, limit and where on a list route: one statement per relation path', async (t) => {
      const url = '/posts?expand=comments,tags&sort[comments]=-rank&limit[comments]=2&where[comments.rank][gte]=1&sort[tags]=-rank'
      const { status, body, ran } = await get(url)
      t.equal(status, 200)
      t.same(body.data, [
        { id: 1, comments: [commentRow(4), commentRow(1)], tags: [{ id: 20, label: 'twenty' }, { id: 10, label: 'ten' }, { id: 30, label: 'thirty' }, { id: 40, label: 'forty' }] },
        { id: 2, comments: [commentRow(6)], tags: [{ id: 20, label: 'twenty' }] },
        { id: 3, comments: [], tags: [] },
      ], 'rank descending, ties by key, two per parent, rank at least 1; tags by rank descending')
      t.same(ran, [
        [asWrittenOn(dialect, pageAsSent(dialect, page, 'select count(*) as "total" from "posts"')), [20, 0]],
        [sent(limitedComments(`"comments"."rank" >= ${p(1)}`, '"comments"."rank" desc, "comments"."id"', 2, 4, 2), page),
          inOneWave(dialect) ? [20, 0, 1] : rowNumbered ? [1, 1, 2, 3, 3] : [1, 2, 3, 3, 1]],
        [sent(asWrittenOn(dialect, 'select "tags"."id" as "id", cast("tags"."label" as text) as "label", "post_tags"."post_id" as "__expand_parent" from "tags" ' +
          `inner join "post_tags" on "post_tags"."tag_id" = "tags"."id" where "post_tags"."post_id" in (${keyList(1, 4)}) ` +
          'order by "post_tags"."post_id", "tags"."rank" desc, "post_tags"."tag_id" limit 16384'), page), inOneWave(dialect) ? [20, 0] : [1, 2, 3, 3]],
      ], 'the page, then one statement per relation (in one wave, keyed by the page\'s statement); values bound, the limit a literal as the relation option writes it')
    })

    t.test('where alone: the statement of the relation with its condition after the scope, values bound', async (t) => {
      const { body, ran } = await get('/posts/1?expand=comments&fields=id,comments&where[comments.rank][in]=1,2,3', visibleOnly)
      t.same(body, { id: 1, comments: [commentRow(1), commentRow(2), commentRow(3)] }, 'comment 4 (rank 3) is out of scope')
      t.same(ran.slice(1), [[
        sent(asWrittenOn(dialect, `select ${commentColumns}, "comments"."post_id" as "__expand_parent" from "comments" ` +
        `where ("comments"."hidden" = ${p(1)} and "comments"."rank" in (${keyList(2, 4)})) and "comments"."post_id" in (${p(6)}) ` +
        'order by "comments"."post_id", "comments"."id" limit 16384'), post),
        inOneWave(dialect) ? [1, 0, 1, 2, 3, 3] : [0, 1, 2, 3, 3, 1],
      ]], 'the in list padded as relation keys are')
      const contains = await get('/posts/1?expand=comments&fields=id,comments&where[comments.body][contains]=T&sort[comments]=body')
      t.same(contains.body, { id: 1, comments: [commentRow(3), commentRow(2)] }, 'contains ignores case; sorted by body')
    })

    t.test('at depth on a detail route, under the related scope', async (t) => {
      const url = '/comments/2?expand=post.comments&fields=id,post.comments&sort[post.comments]=-rank&where[post.comments.rank][gte]=2&limit[post.comments]=2'
      const all = await get(url)
      t.same(all.body, { id: 2, post: { comments: [commentRow(4), commentRow(1)] } })
      t.equal(all.ran.length, 3, 'the comment, its post, the post\'s comments')
      const scoped = await get(url, visibleOnly)
      t.same(scoped.body, { id: 2, post: { comments: [commentRow(1), commentRow(3)] } }, 'the hidden comment 4 takes no place')
      // In one wave the post's comments are keyed by the post's statement, itself keyed by the comment's.
      const scopedComment = `select "comments"."id" as "id", "comments"."post_id" as "post" from "comments" where "comments"."hidden" = ${p(1)} and "comments"."id" = ${p(2)}`
      const commentsPost = `select "posts"."id" as "id" from "posts" where "posts"."id" in (${keySubqueryOf(scopedComment, '"comments"."post_id"')})`
      t.same(scoped.ran.filter(([sql]) => sql.includes('__expand_parent')), [[
        sent(limitedComments(`("comments"."hidden" = ${p(rowNumbered ? 1 : 2)} and "comments"."rank" >= ${p(rowNumbered ? 2 : 3)})`,
          '"comments"."rank" desc, "comments"."id"', 2, 1, 3), commentsPost),
        inOneWave(dialect) ? [0, 2, 0, 2] : rowNumbered ? [0, 2, 1] : [1, 0, 2],
      ]], 'the scope first, then the condition, in the subquery that picks each parent\'s rows')
    })

    t.test('maxLimit clamps limit[path]; no limit keeps every row', async (t) => {
      const { body, ran } = await get('/posts/1?expand=comments&fields=id,comments&limit[comments]=10')
      t.same(body, { id: 1, comments: [1, 2, 3].map(commentRow) })
      t.match(ran[1]![0], rowNumbered ? asWrittenOn(dialect, '"__expand_row" <= 3 ') : 'limit 3)', 'clamped to 3, a literal')
      t.same((await get('/posts/1?expand=comments&fields=id,comments&sort[comments]=-body')).body.comments.map((row: { id: number }) => row.id),
        [2, 3, 1, 4, 5], 'by body descending: two, three, one, four, five')
    })

    t.test('many-to-many: sort, limit and where through the join table, one statement', async (t) => {
      const sorted = await get('/posts?expand=tags&fields=id,tags&sort[tags]=-label&limit[tags]=2')
      t.same(sorted.body.data, [
        { id: 1, tags: [{ id: 20, label: 'twenty' }, { id: 30, label: 'thirty' }] },
        { id: 2, tags: [{ id: 20, label: 'twenty' }] },
        { id: 3, tags: [] },
      ])
      t.equal(sorted.ran.length, 2)
      const narrowed = await get('/posts?expand=tags&fields=id,tags&where[tags.label]=ten&limit[tags]=1')
      t.same(narrowed.body.data, [{ id: 1, tags: [{ id: 10, label: 'ten' }] }, { id: 2, tags: [] }, { id: 3, tags: [] }])
      t.equal(narrowed.ran.length, 2)
    })

    t.test('fieldsFor: a hidden field in sort or where is a 403, at any depth', async (t) => {
      for (const url of [
        '/posts?expand=comments&sort[comments]=rank',
        '/posts?expand=comments&where[comments.rank]=1',
        '/comments/2?expand=post.comments&sort[post.comments]=rank',
      ]) {
        const { status, body } = await get(url, noRank)
        t.equal(status, 403, url)
        t.equal(body.code, 'FST_EXPAND_FORBIDDEN', url)
      }
      t.equal((await get('/posts?expand=comments&sort[comments]=rank', noRank)).body.message,
        "Cannot sort by 'comments.rank': it is not available to this request")
      t.equal((await get('/posts?expand=comments&where[comments.rank]=1', noRank)).body.message,
        "Cannot filter by 'comments.rank': it is not available to this request")
      const visible = await get('/posts/1?expand=comments&fields=id,comments&sort[comments]=-body&limit[comments]=1', noRank)
      t.same(visible.body, { id: 1, comments: [{ id: 2, body: 'two' }] }, 'a visible field orders rows that do not show the hidden one')
    })

    t.test('requests differing only in their sort, limit or where never share a statement', async (t) => {
      // A small deterministic generator: the same sequence on every run.
      let seed = 7
      const next = (bound: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % bound }
      const sorts = [undefined, 'rank', '-rank', 'body', '-body', '-rank,body']
      for (let round = 0; round < 40; round++) {
        const sort = sorts[next(sorts.length)]
        const limit = next(5)
        const gte = next(5) - 1
        const scoped = next(2) === 1
        let url = '/posts?expand=comments&fields=id,comments'
        if (sort !== undefined) url += `&sort[comments]=${sort}`
        if (limit > 0) url += `&limit[comments]=${limit}`
        if (gte >= 0) url += `&where[comments.rank][gte]=${gte}`
        const keys = (sort ?? '').split(',').filter((key) => key !== '').map((key) => [key.replace('-', ''), key.startsWith('-') ? -1 : 1] as const)
        const expected = [1, 2, 3].map((id) => {
          const rows = comments.filter((row) => row.post_id === id && (gte < 0 || row.rank >= gte) && (!scoped || row.hidden === 0))
            .sort((a, b) => {
              for (const [key, direction] of keys) {
                const left = a[key as 'rank' | 'body']
                const right = b[key as 'rank' | 'body']
                if (left !== right) return (left < right ? -1 : 1) * direction
              }
              return a.id - b.id
            })
          return { id, comments: rows.slice(0, limit > 0 ? Math.min(limit, 3) : undefined).map(comment) }
        })
        const { status, body, ran } = await get(url, scoped ? visibleOnly : {})
        t.equal(status, 200, url)
        t.same(body.data, expected, `${url}${scoped ? ' (scoped)' : ''}`)
        t.equal(ran.length, 2, 'the page and one statement')
      }
    })
  })
}

t.test('errors: undeclared, not expanded, unknown names, bad values', async (t) => {
  const database = await open(dialects()[0]!)
  t.teardown(() => database.close())
  const app = await build(database)
  t.teardown(() => app.close())
  const cases: Array<[string, string, string]> = [
    ['/posts?expand=comments&sort[tags]=rank', 'FST_EXPAND_BAD_SORT', "Cannot use 'sort[tags]': this request does not expand 'tags'"],
    ['/posts?sort[comments]=rank', 'FST_EXPAND_BAD_SORT', "Cannot use 'sort[comments]': this request does not expand 'comments'"],
    ['/posts?expand=comments&omit=comments&sort[comments]=rank', 'FST_EXPAND_BAD_SORT', "Cannot use 'sort[comments]': this request does not expand 'comments'"],
    ['/posts?expand=comments&sort[likes]=rank', 'FST_EXPAND_BAD_SORT', "Cannot use 'sort[likes]' on Post: expanded lists are comments, tags"],
    ['/posts?expand=comments&sort[comments]=nope', 'FST_EXPAND_BAD_SORT', "Cannot sort 'comments' by 'nope': sort fields are rank, body"],
    ['/posts?expand=comments&sort[comments]=rank,-rank', 'FST_EXPAND_BAD_SORT', "'sort[comments]' names 'rank' more than once"],
    ['/posts?expand=comments&sort[comments]=rank&sort[comments]=body', 'FST_EXPAND_BAD_SORT', "'sort[comments]' must be given once, as a comma-separated list"],
    ['/posts?expand=comments&sort[comments][x]=rank', 'FST_EXPAND_BAD_SORT',
      "'sort[comments][x]' is not a parameter of an expanded list: write sort[path]=-field,field, limit[path]=n, where[path.field]=value or where[path.field][operator]=value"],
    ['/posts?expand=comments&limit[likes]=2', 'FST_EXPAND_BAD_FILTER', "Cannot use 'limit[likes]' on Post: expanded lists are comments, tags"],
    ['/posts?expand=comments&limit[comments]=0', 'FST_EXPAND_BAD_FILTER', "'limit[comments]' must be an integer from 1 to 9007199254740991"],
    ['/posts?expand=comments&limit[comments]=two', 'FST_EXPAND_BAD_FILTER', "'limit[comments]' must be an integer from 1 to 9007199254740991"],
    ['/posts?expand=comments&where[comments.nope]=1', 'FST_EXPAND_BAD_FILTER', "Cannot filter 'comments' by 'comments.nope': filters are comments.rank, comments.body"],
    ['/posts?expand=comments&where[comments.rank][lt]=1', 'FST_EXPAND_BAD_FILTER',
      "Cannot filter 'comments' by 'comments.rank' with 'lt': operators for 'comments.rank' are eq, gte, in"],
    ['/posts?expand=comments&where[comments.rank]=x', 'FST_EXPAND_BAD_FILTER',
      "'where[comments.rank]' must be an integer from -9007199254740991 to 9007199254740991, got 'x'"],
    ['/posts?expand=comments&where[comments.rank]=1&where[comments.rank]=2', 'FST_EXPAND_BAD_FILTER', "'where[comments.rank]' must be given once, as a string"],
    ['/posts?expand=comments&where[comments]=1', 'FST_EXPAND_BAD_FILTER',
      "'where[comments]' is not a parameter of an expanded list: write sort[path]=-field,field, limit[path]=n, where[path.field]=value or where[path.field][operator]=value"],
    ['/posts?expand=comments&where[comments.rank][in][x]=1', 'FST_EXPAND_BAD_FILTER',
      "'where[comments.rank][in][x]' is not a parameter of an expanded list: write sort[path]=-field,field, limit[path]=n, where[path.field]=value or where[path.field][operator]=value"],
    [`/posts?expand=comments&where[comments.body][contains]=${'x'.repeat(1001)}`, 'FST_EXPAND_BAD_FILTER', "'where[comments.body][contains]' is 1001 characters long; the limit is 1000"],
    ['/comments/2?expand=post.tags', 'FST_EXPAND_NOT_PERMITTED', "Cannot expand 'post.tags' on Comment: permitted expansions are post, post.comments"],
  ]
  for (const [url, code, message] of cases) {
    const response = await app.inject(url)
    t.same(response.json(), { statusCode: code === 'FST_EXPAND_NOT_PERMITTED' ? 400 : 400, code, error: 'Bad Request', message }, url)
  }
  const hiddenPost = await app.inject({ url: '/comments/2?sort[post.tags]=label', headers: { 'x-no-post': '1' } })
  t.equal(hiddenPost.json().message, "Cannot use 'sort[post.tags]' on Comment: it has no expanded lists", 'a path through a hidden relation is not named')
  t.equal((await app.inject('/comments/2?sort[post.tags]=label')).json().message, "Cannot use 'sort[post.tags]' on Comment: expanded lists are post.comments")
  const many = Array.from({ length: 21 }, (_, index) => `where[comments.rank${index === 0 ? '' : `][${['eq', 'gte', 'in'][index % 3]}`}]=1`)
  t.equal((await app.inject(`/posts?expand=comments&${many.map((item, index) => item.replace('comments.rank', `comments.f${index}`)).join('&')}`)).json().message,
    'A request takes at most 20 filters')
  t.equal((await app.inject('/comments?expand=post.tags&fields=id,post.id')).statusCode, 200, 'permitDetailExpands restricts the detail route only')
  t.equal((await app.inject('/tags?sort[x]=1&where[x.y]=2&limit[x]=0')).statusCode, 200, 'a route without expandedLists does not read them')
  t.equal((await app.inject('/posts/1?expand=comments&sort[comments]=')).statusCode, 200, 'an empty sort: the relation\'s own order')
  database.reset()
  const unbounded = await app.inject('/posts/1?expand=tags&fields=id,tags&limit[tags]=9007199254740991')
  t.same(unbounded.json(), { id: 1, tags: [{ id: 10, label: 'ten' }, { id: 20, label: 'twenty' }, { id: 30, label: 'thirty' }, { id: 40, label: 'forty' }] })
  t.match(database.statements[1], / limit 10000\) /, 'a list without maxLimit: clamped to maxObjects, so limits make few statement texts')
})

t.test("onInvalidExpand 'ignore' drops a hidden sort key or condition", async (t) => {
  const database = await open(dialects()[0]!)
  t.teardown(() => database.close())
  const app = await build(database, { onInvalidExpand: 'ignore' })
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/posts/1?expand=comments&fields=id,comments&sort[comments]=-rank&where[comments.rank][gte]=2&limit[comments]=2', headers: noRank })
  t.same(response.json(), { id: 1, comments: [{ id: 1, body: 'one' }, { id: 2, body: 'two' }] }, 'in key order, unfiltered, two')
})

t.test('explain shows the statements of the request\'s expanded lists', async (t) => {
  const database = await open(dialects()[0]!)
  t.teardown(() => database.close())
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  let statements: Array<{ path: string; sql: string }> = []
  app.get('/explain/posts', { expandable: { resource: Post, list: true, expandedLists } }, async (request) => {
    statements = app.expand.explain(request).statements
    return []
  })
  await app.ready()
  t.teardown(() => app.close())
  await app.inject('/explain/posts?expand=tags&fields=id,tags&sort[tags]=label&where[tags.label]=ten')
  t.same(statements, [
    { path: '', sql: 'select "posts"."id" as "id" from "posts"' },
    {
      path: 'tags',
      sql: 'select "tags"."id" as "id", cast("tags"."label" as text) as "label", "post_tags"."post_id" as "__expand_parent" from "tags" ' +
        'inner join "post_tags" on "post_tags"."tag_id" = "tags"."id" where "tags"."label" = +? and "post_tags"."post_id" in (+?) ' +
        'order by "post_tags"."post_id", "tags"."label", "post_tags"."tag_id" limit 16384',
    },
  ])
})
