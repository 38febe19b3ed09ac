import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { asWrittenOn, dialects, inOneWave, inWave, keySubqueryOf } from '../fixtures/dialects.js'
import { createPosts, through } from '../fixtures/posts.js'

// To-many arrays, as ids and expanded: by the related primary key, or by the relation's
// orderBy with the primary key breaking ties; through a join table and by foreign key.
const Tag = defineResource({
  name: 'Tag',
  table: 'tags',
  schema: Type.Object({ id: Type.Integer(), label: Type.String(), rank: Type.Integer() }),
  fields: ['id', 'label'],
})
const Comment = defineResource({
  name: 'Comment',
  table: 'comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String(), rank: Type.Integer() }),
  fields: ['id', 'body'],
})
const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({
    id: Type.Integer(),
    tags: Type.Array(Type.Integer()),
    ranked_tags: Type.Array(Type.Integer()),
    comments: Type.Array(Type.Integer()),
    ranked_comments: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'tags', 'ranked_tags', 'comments', 'ranked_comments'],
  expandable: {
    tags: [(): AnyResource => Tag, { many: true, through }],
    ranked_tags: [(): AnyResource => Tag, { many: true, through, orderBy: 'rank' }],
    comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id' }],
    ranked_comments: [(): AnyResource => Comment, { many: true, foreignKey: 'post_id', orderBy: 'rank' }],
  },
})

async function seed (db: Kysely<any>): Promise<void> {
  await createPosts(db, [1, 2])
  await db.insertInto('comments').values([
    { id: 5, post_id: 1, body: 'five', rank: 2 }, { id: 3, post_id: 1, body: 'three', rank: 2 },
    { id: 9, post_id: 1, body: 'nine', rank: 1 }, { id: 7, post_id: 2, body: 'seven', rank: 0 },
  ]).execute()
}

async function build (db: Kysely<any>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db, resources: [Tag, Comment, Post] })
  app.expand.routes('/posts', Post)
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`to-many order on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await seed(database.db)
    const app = await build(database.db)
    t.teardown(() => app.close())

    const ids = await app.inject('/posts')
    t.same(ids.json().data, [
      { id: 1, tags: [10, 20, 30, 40], ranked_tags: [40, 10, 30, 20], comments: [3, 5, 9], ranked_comments: [9, 3, 5] },
      { id: 2, tags: [20], ranked_tags: [20], comments: [7], ranked_comments: [7] },
    ], 'ids: by key, or by orderBy then key')
    const expanded = await app.inject('/posts/1?expand=tags,ranked_tags,comments,ranked_comments')
    const tag = (id: number, label: string) => ({ id, label })
    const comment = (id: number, body: string) => ({ id, body })
    t.same(expanded.json(), {
      id: 1,
      tags: [tag(10, 'ten'), tag(20, 'twenty'), tag(30, 'thirty'), tag(40, 'forty')],
      ranked_tags: [tag(40, 'forty'), tag(10, 'ten'), tag(30, 'thirty'), tag(20, 'twenty')],
      comments: [comment(3, 'three'), comment(5, 'five'), comment(9, 'nine')],
      ranked_comments: [comment(9, 'nine'), comment(3, 'three'), comment(5, 'five')],
    }, 'expanded: the same order as the ids')
  })
}

t.test('through a join table, expanded rows come in the order of the ids, the join column\'s, even where the related key sorts otherwise', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const Label = defineResource({ name: 'Label', table: 'labels', schema: Type.Object({ id: Type.String() }), fields: ['id'] })
  const Note = defineResource({
    name: 'Note',
    table: 'notes',
    schema: Type.Object({ id: Type.Integer(), labels: Type.Array(Type.String()) }),
    fields: ['id', 'labels'],
    expandable: { labels: [Label, { many: true, through: { table: 'note_labels', from: 'note_id', to: 'label_id' } }] },
  })
  // The related key compares without case; the join column, declared without a collation, with it.
  await sql`create table labels (id text primary key collate nocase)`.execute(database.db)
  await sql`create table notes (id integer primary key)`.execute(database.db)
  await sql`create table note_labels (note_id integer, label_id text)`.execute(database.db)
  await sql`insert into labels values ('apple'), ('Banana'), ('cherry')`.execute(database.db)
  await sql`insert into notes values (1)`.execute(database.db)
  await sql`insert into note_labels values (1, 'cherry'), (1, 'Banana'), (1, 'apple')`.execute(database.db)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Label, Note] })
  app.expand.routes('/notes', Note)
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/notes/1')).json(), { id: 1, labels: ['Banana', 'apple', 'cherry'] }, 'ids in the join column\'s order')
  t.same((await app.inject('/notes/1?expand=labels')).json(), { id: 1, labels: [{ id: 'Banana' }, { id: 'apple' }, { id: 'cherry' }] }, 'expanded in the same order')
})

// orderBy '-column': descending, the related key (ascending) still breaking ties.
const Pup = defineResource({
  name: 'Pup',
  table: 'pets',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), born: Type.String() }),
  fields: ['id', 'name', 'born'],
})
const Owner = defineResource({
  name: 'Owner',
  table: 'people',
  schema: Type.Object({ id: Type.Integer(), pets: Type.Array(Type.Integer()) }),
  fields: ['id', 'pets'],
  expandable: { pets: [Pup, { many: true, foreignKey: 'owner_id', orderBy: '-born' }] },
})
const LatestPost = defineResource({
  name: 'LatestPost',
  table: 'posts',
  schema: Type.Object({ id: Type.Integer(), tags: Type.Array(Type.Integer()) }),
  fields: ['id', 'tags'],
  expandable: { tags: [Tag, { many: true, through, orderBy: '-rank' }] },
})

for (const dialect of dialects()) {
  t.test(`descending orderBy on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const { db } = database
    await seed(db)
    await db.schema.createTable('people').addColumn('id', 'integer', (column) => column.primaryKey()).execute()
    await db.schema.createTable('pets').addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('owner_id', 'integer', (column) => column.notNull()).addColumn('name', 'text', (column) => column.notNull())
      .addColumn('born', 'text', (column) => column.notNull()).execute()
    await db.insertInto('people').values([{ id: 1 }, { id: 2 }]).execute()
    // Two pets of owner 1 born the same day (2 and 3): the key orders them.
    await db.insertInto('pets').values([
      { id: 1, owner_id: 1, name: 'Rex', born: '2019-05-01' }, { id: 2, owner_id: 1, name: 'Tom', born: '2021-02-03' },
      { id: 3, owner_id: 1, name: 'Kit', born: '2021-02-03' }, { id: 4, owner_id: 2, name: 'Bo', born: '2018-01-01' },
      { id: 5, owner_id: 1, name: 'Old', born: '2015-07-07' },
    ]).execute()
    const app = Fastify()
    await app.register(expandPlugin, { db, resources: [Owner, LatestPost] })
    app.expand.routes('/owners', Owner)
    app.expand.routes('/posts', LatestPost)
    await app.ready()
    t.teardown(() => app.close())

    const key = dialect.name === 'postgres' ? '$1' : '?'
    const second = dialect.name === 'postgres' ? '$2' : '?'
    const oneWave = inOneWave(dialect)
    /** What a relation's statement reads its keys from: its parent statement's `column` in one wave, else the keys bound. */
    const keyed = (parent: string, column: string, keys: string) => oneWave ? keySubqueryOf(parent, column) : keys
    /** A relation's statement as sent: in one wave, joined from the keys it answers for. */
    const wave = (statement: string) => oneWave ? inWave(dialect, statement) : statement
    /** The statement of the relation, sent after the root's or with it (then ending in any order). */
    const relationStatement = () => {
      t.equal(database.statements.length, 2)
      return database.statements.find((statement) => statement.includes('__expand_parent'))
    }
    database.reset()
    t.same((await app.inject('/owners/1')).json(), { id: 1, pets: [2, 3, 1, 5] }, 'ids: born descending, then key')
    const owner = `select "people"."id" as "id" from "people" where "people"."id" = ${key}`
    t.equal(relationStatement(), asWrittenOn(dialect, wave(
      `select "pets"."id" as "id", "pets"."owner_id" as "__expand_parent" from "pets" where "pets"."owner_id" in (${keyed(owner, '"people"."id"', key)}) order by "pets"."owner_id", "pets"."born" desc, "pets"."id" limit 16384`)))
    database.reset()
    const pup = (id: number, name: string, born: string) => ({ id, name, born })
    t.same((await app.inject('/owners?expand=pets')).json().data, [
      { id: 1, pets: [pup(2, 'Tom', '2021-02-03'), pup(3, 'Kit', '2021-02-03'), pup(1, 'Rex', '2019-05-01'), pup(5, 'Old', '2015-07-07')] },
      { id: 2, pets: [pup(4, 'Bo', '2018-01-01')] },
    ], 'expanded: the same order')
    t.same(database.statements.filter((statement) => statement.includes(asWrittenOn(dialect, 'from "pets"'))), [
      asWrittenOn(dialect, wave(`select "pets"."id" as "id", cast("pets"."name" as text) as "name", cast("pets"."born" as text) as "born", "pets"."owner_id" as "__expand_parent" from "pets" where "pets"."owner_id" in (${keyed(`select "people"."id" as "id" from "people" order by "people"."id" limit ${key} offset ${second}`, '"people"."id"', `${key}, ${second}`)}) order by "pets"."owner_id", "pets"."born" desc, "pets"."id" limit 16384`)),
    ])

    // Through a join table: the ids join the related table (its rows decide which ids exist) and follow orderBy.
    database.reset()
    t.same((await app.inject('/posts/1')).json(), { id: 1, tags: [20, 10, 30, 40] }, 'through: rank descending, then key')
    const post = `select "posts"."id" as "id" from "posts" where "posts"."id" = ${key}`
    t.equal(relationStatement(), asWrittenOn(dialect, wave(
      'select "post_tags"."tag_id" as "id", "post_tags"."post_id" as "__expand_parent" from "post_tags" inner join "tags" on "tags"."id" = "post_tags"."tag_id" ' +
      `where "post_tags"."post_id" in (${keyed(post, '"posts"."id"', key)}) order by "post_tags"."post_id", "tags"."rank" desc, "post_tags"."tag_id" limit 16384`)))
    t.same((await app.inject('/posts/1?expand=tags')).json().tags, [
      { id: 20, label: 'twenty' }, { id: 10, label: 'ten' }, { id: 30, label: 'thirty' }, { id: 40, label: 'forty' },
    ], 'through, expanded: the same order')
  })
}

// An orderBy column that may hold NULL: NULL sorts as the largest value on every database (after every value
// ascending, before every value descending), as a list's sort places it, so that a relation with a `limit` keeps
// the same rows on each (SQLite and MariaDB put NULL first ascending by default, PostgreSQL last).
const Item = defineResource({
  name: 'Item',
  table: 'items',
  // `score` says it takes null as OpenAPI 3.0 writes it (`nullable: true`).
  schema: Type.Object({
    id: Type.Integer(),
    rating: Type.Union([Type.Number(), Type.Null()]),
    code: Type.String(),
    score: Type.Number({ nullable: true }),
  }),
  fields: ['id', 'rating'],
})
const Box = defineResource({
  name: 'Box',
  table: 'boxes',
  schema: Type.Object({
    id: Type.Integer(),
    rated: Type.Array(Type.Integer()),
    best: Type.Array(Type.Integer()),
    worst: Type.Array(Type.Integer()),
    by_code: Type.Array(Type.Integer()),
    by_score: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'rated', 'best', 'worst', 'by_code', 'by_score'],
  expandable: {
    rated: [Item, { many: true, foreignKey: 'box_id', orderBy: '-rating' }],
    best: [Item, { many: true, foreignKey: 'box_id', orderBy: '-rating', limit: 1 }],
    worst: [Item, { many: true, foreignKey: 'box_id', orderBy: 'rating', limit: 1 }],
    by_code: [Item, { many: true, foreignKey: 'box_id', orderBy: 'code' }],
    by_score: [Item, { many: true, foreignKey: 'box_id', orderBy: '-score' }],
  },
})
const Book = defineResource({
  name: 'Book',
  table: 'books',
  schema: Type.Object({ id: Type.Integer(), rating: Type.Union([Type.Number(), Type.Null()]) }),
  fields: ['id', 'rating'],
})
const Shelf = defineResource({
  name: 'Shelf',
  table: 'shelves',
  primaryKey: ['row', 'place'],
  schema: Type.Object({ row: Type.Integer(), place: Type.Integer(), books: Type.Array(Type.Integer()) }),
  fields: ['row', 'place', 'books'],
  expandable: { books: [Book, { many: true, foreignKey: ['shelf_row', 'shelf_place'], orderBy: '-rating' }] },
})

for (const dialect of dialects()) {
  t.test(`an orderBy column that may hold NULL on ${dialect.name}: NULL as the largest value`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const { db } = database
    await db.schema.createTable('boxes').addColumn('id', 'integer', (column) => column.primaryKey()).execute()
    await db.schema.createTable('items').addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('box_id', 'integer', (column) => column.notNull()).addColumn('rating', 'double precision')
      .addColumn('code', 'varchar(20)', (column) => column.notNull()).addColumn('score', 'double precision').execute()
    await db.schema.createTable('shelves').addColumn('row', 'integer', (column) => column.notNull())
      .addColumn('place', 'integer', (column) => column.notNull()).addPrimaryKeyConstraint('shelves_key', ['row', 'place']).execute()
    await db.schema.createTable('books').addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('shelf_row', 'integer', (column) => column.notNull()).addColumn('shelf_place', 'integer', (column) => column.notNull())
      .addColumn('rating', 'double precision').execute()
    await db.insertInto('boxes').values([{ id: 1 }, { id: 2 }, { id: 3 }]).execute()
    await db.insertInto('items').values([
      { id: 1, box_id: 1, rating: 2.5, code: 'd', score: null }, { id: 2, box_id: 1, rating: null, code: 'c', score: 1 },
      { id: 3, box_id: 1, rating: 4, code: 'b', score: null }, { id: 4, box_id: 1, rating: null, code: 'a', score: 2 },
      { id: 5, box_id: 2, rating: null, code: 'a', score: 5 }, { id: 6, box_id: 3, rating: 1, code: 'a', score: null },
    ]).execute()
    await db.insertInto('shelves').values([{ row: 1, place: 1 }, { row: 1, place: 2 }]).execute()
    await db.insertInto('books').values([
      { id: 1, shelf_row: 1, shelf_place: 1, rating: 3 }, { id: 2, shelf_row: 1, shelf_place: 1, rating: null },
      { id: 3, shelf_row: 1, shelf_place: 1, rating: 5 }, { id: 4, shelf_row: 1, shelf_place: 2, rating: 1 },
    ]).execute()
    const app = Fastify()
    await app.register(expandPlugin, { db, resources: [Item, Box, Book, Shelf] })
    app.expand.routes('/boxes', Box)
    app.expand.routes('/shelves', Shelf)
    await app.ready()
    t.teardown(() => app.close())

    const ids = await app.inject('/boxes')
    t.equal(ids.statusCode, 200)
    t.same(ids.json().data, [
      { id: 1, rated: [2, 4, 3, 1], best: [2], worst: [1], by_code: [4, 3, 2, 1], by_score: [1, 3, 4, 2] },
      { id: 2, rated: [5], best: [5], worst: [5], by_code: [5], by_score: [5] },
      { id: 3, rated: [6], best: [6], worst: [6], by_code: [6], by_score: [6] },
    ], 'ids: NULL after every value ascending, before every value descending; the key breaks ties')
    const item = (id: number, rating: number | null) => ({ id, rating })
    t.equal((await app.inject('/boxes/1?expand=rated,best,worst')).body, JSON.stringify({
      id: 1,
      rated: [item(2, null), item(4, null), item(3, 4), item(1, 2.5)],
      best: [item(2, null)],
      worst: [item(1, 2.5)],
      by_code: [4, 3, 2, 1],
      by_score: [1, 3, 4, 2],
    }), 'expanded: the same rows and order')
    t.equal((await app.inject('/shelves?expand=books')).body, JSON.stringify({
      data: [
        { row: 1, place: 1, books: [{ id: 2, rating: null }, { id: 3, rating: 5 }, { id: 1, rating: 3 }] },
        { row: 1, place: 2, books: [{ id: 4, rating: 1 }] },
      ],
      limit: 20,
      offset: 0,
      total: 2,
    }), 'over a composite key: the same')

    // Where NULL is not the largest value by default, `is null` orders it first; a column declared without null is
    // ordered by alone (its index reads it in order).
    database.reset()
    await app.inject('/boxes/1?fields=id,rated,by_code,by_score')
    const orders = database.statements.map((statement) => / order by (.*?) limit /.exec(statement)?.[1]).filter((order) => order !== undefined).sort()
    const nullFirst = dialect.name === 'postgres' ? '' : '"items"."rating" is null desc, '
    t.same(orders, [
      asWrittenOn(dialect, '"items"."box_id", "items"."code", "items"."id"'),
      asWrittenOn(dialect, `"items"."box_id", ${nullFirst}"items"."rating" desc, "items"."id"`),
      asWrittenOn(dialect, `"items"."box_id", ${nullFirst.replaceAll('rating', 'score')}"items"."score" desc, "items"."id"`),
    ].sort(), 'the relations\' orders as written')
  })
}
