import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { dialects, type Dialect, type TestDatabase } from '../fixtures/dialects.js'

// Keys compare by value, whatever form a driver returns them in: PostgreSQL
// returns int8 as a string and int4 as a number, so a bigint parent key and
// an integer foreign key must still meet; text and UUID keys likewise.

// Integer keys of different column types: authors.id bigint, posts.author_id integer.
const Author = defineResource({
  name: 'Author',
  table: 'authors',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), posts: Type.Array(Type.Integer()) }),
  fields: ['id', 'name', 'posts'],
  expandable: { posts: [(): AnyResource => Post, { many: true, foreignKey: 'author_id' }] },
})

const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({ id: Type.Integer(), title: Type.String(), author: Type.Integer() }),
  fields: ['id', 'title', 'author'],
  columns: { author: 'author_id' },
  expandable: { author: Author },
})

// The other way round: editors.id integer, reviews.editor_id bigint.
const Editor = defineResource({
  name: 'Editor',
  table: 'editors',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), reviews: Type.Array(Type.Integer()) }),
  fields: ['id', 'name', 'reviews'],
  expandable: { reviews: [(): AnyResource => Review, { many: true, foreignKey: 'editor_id' }] },
})

const Review = defineResource({
  name: 'Review',
  table: 'reviews',
  schema: Type.Object({ id: Type.Integer(), stars: Type.Integer(), editor: Type.Integer() }),
  fields: ['id', 'stars', 'editor'],
  columns: { editor: 'editor_id' },
  expandable: { editor: Editor },
})

// Text primary keys.
const Country = defineResource({
  name: 'Country',
  table: 'countries',
  primaryKey: 'code',
  schema: Type.Object({ code: Type.String(), name: Type.String(), cities: Type.Array(Type.Integer()) }),
  fields: ['code', 'name', 'cities'],
  expandable: { cities: [(): AnyResource => City, { many: true, foreignKey: 'country_code' }] },
})

const City = defineResource({
  name: 'City',
  table: 'cities',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), country: Type.String() }),
  fields: ['id', 'name', 'country'],
  columns: { country: 'country_code' },
  expandable: { country: Country },
})

// UUID keys: a uuid column on PostgreSQL, text on SQLite.
const Team = defineResource({
  name: 'Team',
  table: 'teams',
  schema: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), members: Type.Array(Type.Integer()) }),
  fields: ['id', 'name', 'members'],
  expandable: { members: [(): AnyResource => Member, { many: true, foreignKey: 'team_id' }] },
})

const Member = defineResource({
  name: 'Member',
  table: 'members',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), team: Type.String({ format: 'uuid' }) }),
  fields: ['id', 'name', 'team'],
  columns: { team: 'team_id' },
  expandable: { team: Team },
})

const resources = [Author, Post, Editor, Review, Country, City, Team, Member]
const red = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
const blue = 'b1ffcd00-1d1c-4f09-8c7e-7cc0ce491b22'

async function createTables (db: Kysely<any>, dialect: Dialect): Promise<void> {
  // MariaDB keys no whole TEXT: a bounded text there.
  const keyText = dialect.name === 'mariadb' ? 'varchar(64)' : 'text'
  const uuid = dialect.name === 'postgres' ? 'uuid' : keyText
  await db.schema.createTable('authors').addColumn('id', 'bigint', (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('posts').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull()).addColumn('author_id', 'integer', (c) => c.notNull()).execute()
  await db.schema.createTable('editors').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('reviews').addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('stars', 'integer', (c) => c.notNull()).addColumn('editor_id', 'bigint', (c) => c.notNull()).execute()
  await db.schema.createTable('countries').addColumn('code', keyText, (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('cities').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull()).addColumn('country_code', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('teams').addColumn('id', uuid, (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('members').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull()).addColumn('team_id', uuid, (c) => c.notNull()).execute()

  await db.insertInto('authors').values([{ id: 1, name: 'Ann' }, { id: 2, name: 'Bob' }, { id: 3, name: 'Cy' }]).execute()
  await db.insertInto('posts').values([
    { id: 10, title: 'First', author_id: 1 },
    { id: 11, title: 'Second', author_id: 2 },
    { id: 12, title: 'Third', author_id: 1 },
  ]).execute()
  await db.insertInto('editors').values([{ id: 1, name: 'Eve' }, { id: 2, name: 'Flo' }]).execute()
  await db.insertInto('reviews').values([{ id: 5, stars: 4, editor_id: 2 }, { id: 6, stars: 2, editor_id: 2 }]).execute()
  await db.insertInto('countries').values([{ code: 'fr', name: 'France' }, { code: 'jp', name: 'Japan' }]).execute()
  await db.insertInto('cities').values([
    { id: 1, name: 'Paris', country_code: 'fr' },
    { id: 2, name: 'Kyoto', country_code: 'jp' },
    { id: 3, name: 'Lyon', country_code: 'fr' },
  ]).execute()
  await db.insertInto('teams').values([{ id: red, name: 'Red' }, { id: blue, name: 'Blue' }]).execute()
  await db.insertInto('members').values([
    { id: 1, name: 'Ada', team_id: red },
    { id: 2, name: 'Bea', team_id: blue },
    { id: 3, name: 'Cid', team_id: red },
  ]).execute()
}

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  for (const [prefix, resource] of [['/authors', Author], ['/posts', Post], ['/editors', Editor], ['/reviews', Review], ['/countries', Country], ['/cities', City], ['/teams', Team], ['/members', Member]] as const) {
    app.expand.routes(prefix, resource)
  }
  app.get('/handler-posts', { expandable: { resource: Post, list: true } }, async (request) => {
    const rows = await database.db.selectFrom('posts').select(['id', 'title', 'author_id']).orderBy('id').execute()
    return app.expand.load(request, rows)
  })
  app.get('/handler-authors', { expandable: { resource: Author, list: true } }, async (request) => {
    const rows = await database.db.selectFrom('authors').select(['id', 'name']).orderBy('id').execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`keys compare by value on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createTables(database.db, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const get = async (url: string) => {
      const response = await app.inject(url)
      return { status: response.statusCode, text: response.body }
    }
    const ok = (body: unknown) => ({ status: 200, text: JSON.stringify(body) })

    t.test('bigint parent key, integer foreign key', async (t) => {
      const ann = { id: 1, name: 'Ann', posts: [10, 12] }
      t.same(await get('/authors/1'), ok(ann), 'the id array of a bigint parent')
      t.same(await get('/posts/10?expand=author'), ok({ id: 10, title: 'First', author: ann }), 'a to-one through an integer column')
      t.same(await get('/authors/1?expand=posts'), ok({
        id: 1,
        name: 'Ann',
        posts: [{ id: 10, title: 'First', author: 1 }, { id: 12, title: 'Third', author: 1 }],
      }), 'a to-many through an integer foreign key')
      t.same(await get('/authors?expand=posts'), ok({
        data: [
          { id: 1, name: 'Ann', posts: [{ id: 10, title: 'First', author: 1 }, { id: 12, title: 'Third', author: 1 }] },
          { id: 2, name: 'Bob', posts: [{ id: 11, title: 'Second', author: 2 }] },
          { id: 3, name: 'Cy', posts: [] },
        ],
        limit: 20,
        offset: 0,
        total: 3,
      }))
      t.same(await get('/posts?expand=author&fields=id,author.name'), ok({
        data: [{ id: 10, author: { name: 'Ann' } }, { id: 11, author: { name: 'Bob' } }, { id: 12, author: { name: 'Ann' } }],
        limit: 20,
        offset: 0,
        total: 3,
      }))
      t.same(await get('/authors/1?expand=posts.author&fields=id,posts.id,posts.author.id'), ok({
        id: 1,
        posts: [{ id: 10, author: { id: 1 } }, { id: 12, author: { id: 1 } }],
      }), 'back and forth')
      t.same(await get('/handler-posts?expand=author&fields=id,author.id'), ok([
        { id: 10, author: { id: 1 } }, { id: 11, author: { id: 2 } }, { id: 12, author: { id: 1 } },
      ]), 'app.expand.load, the key under its column name')
      t.same(await get('/handler-authors?fields=id,posts'), ok([{ id: 1, posts: [10, 12] }, { id: 2, posts: [11] }, { id: 3, posts: [] }]), 'app.expand.load, id arrays')
    })

    t.test('integer parent key, bigint foreign key', async (t) => {
      const flo = { id: 2, name: 'Flo', reviews: [5, 6] }
      t.same(await get('/editors/2'), ok(flo), 'the id array of an integer parent')
      t.same(await get('/editors/1'), ok({ id: 1, name: 'Eve', reviews: [] }))
      t.same(await get('/reviews/5?expand=editor'), ok({ id: 5, stars: 4, editor: flo }), 'a to-one through a bigint column, written as a number')
      t.same(await get('/reviews/6'), ok({ id: 6, stars: 2, editor: 2 }), 'a bigint id written as a JSON number')
      t.same(await get('/editors/2?expand=reviews'), ok({ id: 2, name: 'Flo', reviews: [{ id: 5, stars: 4, editor: 2 }, { id: 6, stars: 2, editor: 2 }] }))
    })

    t.test('text keys', async (t) => {
      const france = { code: 'fr', name: 'France', cities: [1, 3] }
      t.same(await get('/countries/fr'), ok(france))
      t.same(await get('/cities/1?expand=country'), ok({ id: 1, name: 'Paris', country: france }))
      t.same(await get('/countries/fr?expand=cities'), ok({
        code: 'fr',
        name: 'France',
        cities: [{ id: 1, name: 'Paris', country: 'fr' }, { id: 3, name: 'Lyon', country: 'fr' }],
      }))
      t.same(await get('/countries?expand=cities&fields=code,cities.name'), ok({
        data: [{ code: 'fr', cities: [{ name: 'Paris' }, { name: 'Lyon' }] }, { code: 'jp', cities: [{ name: 'Kyoto' }] }],
        limit: 20,
        offset: 0,
        total: 2,
      }))
    })

    t.test('UUID keys', async (t) => {
      const redTeam = { id: red, name: 'Red', members: [1, 3] }
      t.same(await get(`/teams/${red}`), ok(redTeam))
      t.same(await get('/members/1?expand=team'), ok({ id: 1, name: 'Ada', team: redTeam }))
      t.same(await get(`/teams/${red}?expand=members`), ok({
        id: red,
        name: 'Red',
        members: [{ id: 1, name: 'Ada', team: red }, { id: 3, name: 'Cid', team: red }],
      }))
      t.same(await get('/members?expand=team&fields=id,team.name'), ok({
        data: [{ id: 1, team: { name: 'Red' } }, { id: 2, team: { name: 'Blue' } }, { id: 3, team: { name: 'Red' } }],
        limit: 20,
        offset: 0,
        total: 3,
      }))
    })
  })
}
