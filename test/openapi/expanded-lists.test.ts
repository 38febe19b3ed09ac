import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, expandOpenApi, type AnyResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Comment, Post, Tag, createPosts } from '../fixtures/posts.js'

// The OpenAPI document of expanded lists (`sort[path]`, `limit[path]`, `where[path.field]`,
// each with its type), of `permitExpands` on a detail route, and of the default `maxEnumeratedPaths`.
type Json = Record<string, any>

const resources = [Post, Comment, Tag]
const expandedLists = { comments: { sort: ['rank', 'body'], maxLimit: 5, filter: { rank: ['eq', 'gte'], body: ['contains'] } }, tags: {} } as const

t.test('the parameters of expanded lists, each with its type', async (t) => {
  const described = expandOpenApi({ resources }).describeRoute({ resource: Post, expandedLists })
  const querystring = described.querystring as Json
  const response = described.response as Json
  t.same(querystring['sort[comments]'], {
    anyOf: [{ type: 'string', enum: ['rank', '-rank', 'body', '-body'] }, { type: 'string', pattern: '^-?(?:rank|body)(?:,-?(?:rank|body))*$' }],
    description: 'Order of each expanded `comments` array: sort keys, comma-separated, `-` for descending (rank, body). ' +
      'The related key, ascending, ends the order. Only with the relation expanded.',
  })
  t.same(querystring['limit[comments]'], {
    type: 'integer', minimum: 1, maximum: 5, description: 'The most rows of each expanded `comments` array (at most 5). Only with the relation expanded.',
  })
  t.same(querystring['where[comments.rank]'], { type: 'integer', description: 'comments.rank equals this value (at most 1,000 characters)' })
  t.same(querystring['where[comments.rank][gte]'], { type: 'integer', description: 'comments.rank is at least this value (at most 1,000 characters)' })
  t.same(querystring['where[comments.body][contains]'], {
    type: 'string', maxLength: 32, description: 'comments.body contains this text, ignoring case (at most 32 characters)',
  })
  t.equal(querystring['sort[tags]'], undefined, 'no sort fields: no sort parameter')
  t.same(querystring['limit[tags]'], {
    type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The most rows of each expanded `tags` array. Only with the relation expanded.',
  })
  t.same(Object.keys(querystring).filter((name) => /^(sort|limit|where)\[/.test(name)),
    ['sort[comments]', 'limit[comments]', 'where[comments.rank]', 'where[comments.rank][gte]', 'where[comments.body][contains]', 'limit[tags]'])
  const codes = response[400].properties.code.enum as string[]
  t.ok(codes.includes('FST_EXPAND_BAD_SORT') && codes.includes('FST_EXPAND_BAD_FILTER'), 'their 400s')
  t.notOk(codes.includes('FST_EXPAND_BAD_CURSOR'))
  const plain = expandOpenApi({ resources }).describeRoute({ resource: Post })
  t.notOk(((plain.response as Json)[400].properties.code.enum as string[]).includes('FST_EXPAND_BAD_SORT'), 'a route without expanded lists answers none')
  t.throws(() => expandOpenApi({ resources }).describeRoute({ resource: Post, expandedLists: { likes: {} } }), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: "expandOpenApi: expandedLists 'likes' is not a path of expandable relations ending in a to-many one: 'likes' is not an expandable relation of Post",
  })
})

t.test('permitExpands: a detail route enumerates its permitted paths only', async (t) => {
  const documentation = expandOpenApi({ resources, maxDepth: 3, allowRecursive: false })
  const open = documentation.describeRoute({ resource: Post })
  t.same((open.querystring as Json).expand.items.enum, [
    'comments', 'comments.post', 'comments.post.tags', 'tags', '*', '~all',
  ], 'every path to the depth limit (recursion off)')
  const restricted = documentation.describeRoute({ resource: Post, permitExpands: ['comments.post'] })
  t.same(restricted.querystring.expand, {
    type: 'array',
    items: { type: 'string', enum: ['comments', 'comments.post', '*', '~all'] },
    description: 'Relations to expand (depth 3 at most). Comma-separated or repeated; dot notation reaches nested relations. ' +
      'This route permits only the paths listed. `*` or `~all` expands every permitted relation of a level (`comments.*`: every one below `comments`).',
  })
})

t.test('maxEnumeratedPaths defaults to 50: a route with more paths is described by its top-level ones', async (t) => {
  // Twelve relations to one another: 12 paths at depth 1, 144 at depth 2.
  const names = Array.from({ length: 12 }, (_, index) => `r${index}`)
  const Node: AnyResource = defineResource({
    name: 'Node',
    maxDepth: 2,
    schema: Type.Object(Object.fromEntries([['id', Type.Integer()], ...names.map((name) => [name, Type.Integer()])])),
    fields: ['id'],
    expandable: Object.fromEntries(names.map((name) => [name, (): AnyResource => Node])),
  })
  const described = expandOpenApi({ resources: [Node], allowRecursive: true }).describeRoute({ resource: Node })
  const expand = (described.querystring as Json).expand
  t.equal(expand.items.enum, undefined, 'more than 50 paths at depth 2: no enum')
  t.match(expand.description, /^Relations to expand, up to 2 levels deep: r0, r1, .*, r11 and their own relations\./)
  const wide = expandOpenApi({ resources: [Node], allowRecursive: true }, { maxEnumeratedPaths: 200 }).describeRoute({ resource: Node })
  t.equal((wide.querystring as Json).expand.items.enum.length, 12 + 144 + 2, 'up to 200: both depths and the wildcards')
})

t.test('the generated routes are documented with their expanded lists', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  await createPosts(database.db, [1])
  const app = Fastify()
  const options = { db: database.db, resources }
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  app.expand.routes('/posts', Post, { expandedLists, permitDetailExpands: ['tags'] })
  await app.ready()
  t.teardown(() => app.close())
  const document = app.swagger() as Json
  const parameters = (path: string) =>
    new Map<string, Json>(document.paths[path].get.parameters.map((parameter: Json) => [parameter.name, parameter]))
  for (const path of ['/posts', '/posts/{id}']) {
    t.same(parameters(path).get('limit[comments]')?.schema, { type: 'integer', minimum: 1, maximum: 5 }, path)
    t.ok(parameters(path).has('where[comments.body][contains]'), path)
  }
  t.ok(parameters('/posts').has('limit'), "the list route's own limit stays")
  t.same(parameters('/posts/{id}').get('expand')?.schema.items.enum, ['tags', '*', '~all'], 'permitDetailExpands')
  t.ok(parameters('/posts').get('expand')?.schema.items.enum.includes('comments.post.comments'), 'the list route is not restricted')
})
