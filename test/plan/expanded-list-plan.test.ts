import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { planRequest } from '../../plugin/plan/request-plan.js'
import { dialects } from '../fixtures/dialects.js'
import { createPosts } from '../fixtures/posts.js'

// Where the request's plan keeps its expanded lists. The body's shape does not depend on
// `sort[path]`, `limit[path]` or `where[path.field]`: requests differing only in them share
// the expansion plan and its serializer (one key), and each request's plan carries its own
// lists, which the statements are made from (kept apart per sort, limit and condition shape).
const Comment = defineResource({
  name: 'Comment',
  table: 'comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String(), rank: Type.Integer() }),
  fields: ['id', 'body', 'rank'],
})
const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({ id: Type.Integer(), comments: Type.Array(Type.Integer()) }),
  fields: ['id', 'comments'],
  expandable: { comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id' }] },
})

t.test('the request plan carries its expanded lists; the shared expansion plan does not', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  await createPosts(database.db, [1])
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Post, Comment] })
  const seen: Array<{ key: string; lists: unknown; statements: string[] }> = []
  app.get('/posts/:id', { expandable: { resource: Post, expandedLists: { comments: { sort: ['rank'], filter: { rank: ['gte'] } } } } }, async (request) => {
    const plan = planRequest(request)!
    const lists = plan.expandedLists === undefined
      ? undefined
      : [...plan.expandedLists].map(([field, list]) => ({
          field: field.name,
          sort: list.sort?.map(({ field, descending }) => [field.name, descending]),
          limit: list.limit,
          filters: list.filters.map(({ filter, operator, value }) => [filter.path, operator, value]),
        }))
    seen.push({ key: request.expansion!.key, lists, statements: app.expand.explain(request).statements.map(({ sql }) => sql) })
    return { id: 1, comments: [] }
  })
  await app.ready()
  t.teardown(() => app.close())
  for (const query of ['', '&limit[comments]=1', '&limit[comments]=2&sort[comments]=-rank', '&where[comments.rank][gte]=3']) {
    t.equal((await app.inject(`/posts/1?expand=comments${query}`)).statusCode, 200, query)
  }
  t.same(new Set(seen.map(({ key }) => key)).size, 1, 'one expansion plan: the body is the same shape')
  t.equal(app.expand.cacheStats().compiles, 1, 'one serializer')
  t.same(seen.map(({ lists }) => lists), [
    undefined,
    [{ field: 'comments', sort: undefined, limit: 1, filters: [] }],
    [{ field: 'comments', sort: [['rank', true]], limit: 2, filters: [] }],
    [{ field: 'comments', sort: undefined, limit: undefined, filters: [['comments.rank', 'gte', 3]] }],
  ], "each request's own lists")
  t.equal(new Set(seen.map(({ statements }) => statements[1])).size, 4, 'four statements for the comments')
})
