import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, type ExpandableRouteOptions } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Comment, Post, Tag, createPosts } from '../fixtures/posts.js'

// The route options of expanded lists and of restricted detail routes, checked at startup:
// `expandedLists` (each path a to-many relation path, each field a column of its resource,
// each operator known, `maxLimit` a positive integer) and `permitExpands`.

async function build (t: Test): Promise<{ app: FastifyInstance; database: TestDatabase }> {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  await createPosts(database.db, [1, 2])
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Post, Comment, Tag] })
  t.teardown(() => app.close())
  return { app, database }
}

t.test('expandedLists: each mistake is a startup error naming the route and the mistake', async (t) => {
  const { app } = await build(t)
  const route = 'Route GET /posts'
  const cases: Array<[unknown, string]> = [
    ['comments', `${route}: expandedLists must be an object of to-many relation paths, each { sort, maxLimit, filter }`],
    [{ comments: 5 }, `${route}: expandedLists 'comments' must be an object ({ sort, maxLimit, filter })`],
    [{ comments: { order: ['rank'] } }, `${route}: expandedLists 'comments' has an unknown option 'order' (it takes sort, maxLimit and filter)`],
    [{ likes: {} }, `${route}: expandedLists 'likes' is not a path of expandable relations ending in a to-many one: 'likes' is not an expandable relation of Post`],
    [{ 'comments.post': {} }, `${route}: expandedLists 'comments.post' is not a path of expandable relations ending in a to-many one: Comment.post is to-one`],
    [{ 'comments.nope': {} }, `${route}: expandedLists 'comments.nope' is not a path of expandable relations ending in a to-many one: 'nope' is not an expandable relation of Comment`],
    [{ comments: { maxLimit: 0 } }, `${route}: expandedLists 'comments': maxLimit must be a positive integer`],
    [{ comments: { maxLimit: 1.5 } }, `${route}: expandedLists 'comments': maxLimit must be a positive integer`],
    [{ comments: { sort: ['nope'] } }, `${route}: expandedLists 'comments': sort: Comment has no field 'nope'`],
    [{ comments: { sort: 'rank' } }, `${route}: expandedLists 'comments': sort must be an array of field names`],
    [{ comments: { sort: ['rank.x'] } }, `${route}: expandedLists 'comments': sort: 'rank.x': 'rank' is not a relation of Comment to a table`],
    [{ comments: { sort: ['post.id'] } },
      `${route}: expandedLists 'comments': sort 'post.id' must be a non-nullable field of the related resource (an expanded array is ordered by its own columns)`],
    [{ comments: { filter: { nope: ['eq'] } } }, `${route}: expandedLists 'comments': filter 'nope': Comment has no field 'nope'`],
    [{ comments: { filter: { rank: ['between'] } } },
      `${route}: expandedLists 'comments': filter 'rank': unknown operator 'between' (operators are eq, ne, lt, lte, gt, gte, in, null, contains, exists)`],
    [{ comments: { filter: { rank: ['contains'] } } }, `${route}: expandedLists 'comments': filter 'rank': 'contains' needs a string field`],
    [{ comments: { filter: { 'post.id': ['eq'] } } },
      `${route}: expandedLists 'comments': filter 'post.id' must be a field of Comment (an expanded list is filtered by its own fields)`],
  ]
  for (const [expandedLists, message] of cases) {
    t.throws(() => app.expand.routes('/posts', Post, { expandedLists: expandedLists as never }), { code: 'FST_EXPAND_INVALID_OPTION', message },
      JSON.stringify(expandedLists))
  }
  t.throws(() => app.get('/mine', { expandable: { resource: Post, expandedLists: { tags: { sort: ['id', 'nope'] } } } }, async () => ({})),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "Route GET /mine: expandedLists 'tags': sort: Tag has no field 'nope'" }, 'on an expandable route')
  t.doesNotThrow(() => app.expand.routes('/ok', Post, {
    expandedLists: { comments: { sort: ['rank', 'post'], maxLimit: 5, filter: { body: { operators: ['contains'], containsMaxLength: 8 } } }, tags: {} },
    permitListExpands: ['tags'],
  }), 'a path the list route does not permit is declared for the detail route: no mistake')
})

t.test('expandedLists on a relation not loaded from a table', async (t) => {
  const Item = defineResource({ name: 'Item', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const Holder = defineResource({
    name: 'Holder',
    schema: Type.Object({ id: Type.Integer(), items: Type.Array(Type.Integer()) }),
    fields: ['id', 'items'],
    expandable: { items: [Item, { many: true }] },
  })
  const app = Fastify()
  await app.register(expandPlugin, { resources: [Holder, Item] })
  t.teardown(() => app.close())
  t.throws(() => app.get('/holders', { expandable: { resource: Holder, list: true, expandedLists: { items: {} } } }, async () => []), {
    message: "Route GET /holders: expandedLists 'items' is not a path of expandable relations ending in a to-many one: Holder.items is not loaded from a table",
  })
})

t.test('permitExpands restricts any route; permitDetailExpands is the detail route\'s', async (t) => {
  // Routes refused at startup stay registered: they are refused on an app of their own, never made ready.
  const { app: refusing } = await build(t)
  const bad: Array<[ExpandableRouteOptions, string]> = [
    [{ resource: Post, permitExpands: 'comments' as never }, 'Route GET /x: expandable.permitExpands must be an array of paths'],
    [{ resource: Post, list: true, permitExpands: ['comments'], permitListExpands: ['comments'] },
      'Route GET /x: expandable has both permitExpands and permitListExpands: give one (permitExpands restricts any route, permitListExpands list routes only)'],
    [{ resource: Post, permitExpands: ['comments'], defaultExpand: ['tags'] },
      "Route GET /x: default expansion 'tags' is not permitted by permitExpands (comments)"],
    [{ resource: Post, permitExpands: ['comments.nope'] },
      "Route GET /x: permitted expansions: 'comments.nope' names 'nope', which is not a relation of Comment"],
  ]
  for (const [setting, message] of bad) {
    t.throws(() => refusing.get('/x', { expandable: setting }, async () => ({})), { code: 'FST_EXPAND_INVALID_OPTION', message }, message)
  }
  t.throws(() => refusing.expand.routes('/bad', Post, { permitDetailExpands: 'tags' as never }),
    { message: 'Route GET /bad/:id: expandable.permitExpands must be an array of paths' })
  const { app } = await build(t)
  app.get('/one', { expandable: { resource: Post, permitExpands: ['comments.post'], defaultExpand: ['comments'] } }, async () => ({ id: 1, comments: [], tags: [] }))
  app.get('/many', { expandable: { resource: Post, list: true, permitExpands: ['tags'] } }, async () => [{ id: 1, comments: [], tags: [] }])
  app.expand.routes('/posts', Post, { permitDetailExpands: ['tags'] })
  await app.ready()
  const get = async (url: string) => (await app.inject(url)).json()
  t.same(await get('/one?expand=tags'), {
    statusCode: 400, code: 'FST_EXPAND_NOT_PERMITTED', error: 'Bad Request', message: "Cannot expand 'tags' on Post: permitted expansions are comments, comments.post",
  }, 'a detail route')
  t.same(await get('/one?expand=*.tags'), {
    statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message: "Cannot expand '*.tags' on Post: no relation permitted at that level has 'tags'",
  }, 'a wildcard finds permitted relations only')
  t.same(await get('/one'), { id: 1, comments: [], tags: [] }, 'defaultExpand is permitted')
  t.same(await get('/many?expand=comments'), {
    statusCode: 400, code: 'FST_EXPAND_NOT_PERMITTED', error: 'Bad Request', message: "Cannot expand 'comments' on a list of Post: permitted expansions are tags",
  }, 'a list route')
  t.same(await get('/posts/1?expand=comments'), {
    statusCode: 400, code: 'FST_EXPAND_NOT_PERMITTED', error: 'Bad Request', message: "Cannot expand 'comments' on Post: permitted expansions are tags",
  }, 'the detail route of routes()')
  t.same(await get('/posts/2?expand=tags'), { id: 2, comments: [], tags: [{ id: 20, label: 'twenty' }] })
  t.equal((await app.inject('/posts?expand=comments')).statusCode, 200, 'its list route is not restricted')
})
