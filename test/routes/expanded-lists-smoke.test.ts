import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { createPosts, through } from '../fixtures/posts.js'

const Comment = defineResource({
  name: 'Comment', table: 'comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String(), rank: Type.Integer(), post: Type.Integer() }),
  fields: ['id', 'body', 'rank'], columns: { post: 'post_id' },
  expandable: { post: (): AnyResource => Post },
  scope: (eb, request) => (request.headers['x-visible-only'] !== undefined ? eb('comments.hidden', '=', 0) : undefined),
  fieldsFor: (request) => (request.headers['x-no-rank'] !== undefined ? ['id', 'body', 'post'] : undefined),
})
const Tag = defineResource({ name: 'Tag', table: 'tags', schema: Type.Object({ id: Type.Integer(), label: Type.String(), rank: Type.Integer() }), fields: ['id', 'label'] })
const Post = defineResource({
  name: 'Post', table: 'posts',
  schema: Type.Object({ id: Type.Integer(), comments: Type.Array(Type.Integer()), tags: Type.Array(Type.Integer()) }),
  fields: ['id', 'comments', 'tags'],
  expandable: { comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id' }], tags: [(): AnyResource => Tag, { many: true, through }] },
})
for (const dialect of dialects()) {
  t.test(dialect.name, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createPosts(database.db, [1, 2, 3])
    await database.db.insertInto('comments').values([
      { id: 1, post_id: 1, body: 'one', rank: 2, hidden: 0 }, { id: 2, post_id: 1, body: 'two', rank: 1, hidden: 0 },
      { id: 3, post_id: 1, body: 'three', rank: 2, hidden: 0 }, { id: 4, post_id: 1, body: 'four', rank: 3, hidden: 1 },
      { id: 5, post_id: 1, body: 'five', rank: 0, hidden: 0 }, { id: 6, post_id: 2, body: 'six', rank: 5, hidden: 0 },
    ]).execute()
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: [Post, Comment, Tag] })
    app.expand.routes('/posts', Post, { expandedLists: { comments: { sort: ['rank', 'body'], maxLimit: 3, filter: { rank: ['eq', 'gte', 'in'], body: ['contains'] } }, tags: { sort: ['rank'], filter: { label: ['eq'] } } } })
    app.expand.routes('/comments', Comment, { expandedLists: { 'post.comments': { sort: ['rank'], filter: { rank: ['gte'] } } } })
    await app.ready()
    for (const url of ['/posts?expand=comments,tags&sort[comments]=-rank&limit[comments]=2&where[comments.rank][gte]=1&sort[tags]=-rank',
      '/posts/1?expand=comments&where[comments.rank][in]=1,2,3', '/comments/2?expand=post.comments&sort[post.comments]=-rank&where[post.comments.rank][gte]=2&limit[post.comments]=2',
      '/posts?expand=comments&sort[tags]=rank', '/posts?sort[comments]=rank', '/posts?expand=comments&sort[comments]=nope', '/posts?expand=comments&where[comments.rank][lt]=1', '/posts?expand=comments&limit[comments]=0']) {
      database.reset()
      const r = await app.inject({ url, headers: { 'x-visible-only': '1' } })
      console.log(url, r.statusCode, r.body)
      database.statements.forEach((s, i) => console.log('  ', s, JSON.stringify(database.parameters[i])))
    }
    await app.close()
  })
}
