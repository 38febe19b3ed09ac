import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { casedColumn } from '../../plugin/graph/casing.js'
import { asSent, asWrittenOn, dialects, inComparableOrder } from '../fixtures/dialects.js'

// `casing`: the column of a field that `columns` does not map, in the
// database's case. Music tables with PascalCase columns, as the Chinook
// sample's SQLite file has them, read by camelCase fields; a snake_case
// table read by the same fields.

t.test('each casing turns a field into its column by its words', async (t) => {
  const fields = ['id', 'albumId', 'AlbumId', 'album_id', 'mediaTypeId', 'HTTPStatus', 'address2', 'unit_price']
  t.same(fields.map((field) => casedColumn('snake_case', field)),
    ['id', 'album_id', 'album_id', 'album_id', 'media_type_id', 'http_status', 'address2', 'unit_price'])
  t.same(fields.map((field) => casedColumn('camelCase', field)),
    ['id', 'albumId', 'albumId', 'albumId', 'mediaTypeId', 'httpStatus', 'address2', 'unitPrice'])
  t.same(fields.map((field) => casedColumn('PascalCase', field)),
    ['Id', 'AlbumId', 'AlbumId', 'AlbumId', 'MediaTypeId', 'HttpStatus', 'Address2', 'UnitPrice'])
  t.same(fields.map((field) => casedColumn(undefined, field)), fields, 'no casing: the field itself')
  t.equal(casedColumn((field) => `c_${field}`, 'albumId'), 'c_albumId')
})

t.test('definition mistakes: a casing that is none, a column that is no name', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), title: Type.String() })
  const define = (extra: Record<string, unknown>) => () => defineResource({ name: 'Album', table: 'albums', schema, fields: ['id', 'title'], ...extra })
  t.throws(define({ casing: 'kebab-case' }), {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: "Resource 'Album': casing 'kebab-case' is not one of snake_case, camelCase, PascalCase, nor a function from a field to its column",
  })
  t.throws(define({ casing: (field: string) => `${field}-x` }), {
    message: "Resource 'Album': field 'id' is read from the column casing gives it, 'id-x', " +
      'which is not a column name (letters, digits and underscores): map it in columns',
  })
  t.doesNotThrow(define({ casing: (field: string) => `${field}-x`, columns: { id: 'id', title: 'title' } }), 'columns map every field')
  t.throws(define({ casing: (field: string) => (field === 'title' ? 42 : field) }), {
    message: "Resource 'Album': field 'title' is read from the column casing gives it, '42', " +
      'which is not a column name (letters, digits and underscores): map it in columns',
  })
})

const Artist = defineResource({
  name: 'Artist',
  table: 'artists',
  casing: 'PascalCase',
  primaryKey: 'artistId',
  schema: Type.Object({ artistId: Type.Integer(), name: Type.String(), albums: Type.Array(Type.Integer()) }),
  fields: ['artistId', 'name', 'albums'],
  expandable: { albums: [(): AnyResource => Album, { many: true, foreignKey: 'ArtistId' }] },
})
const Album = defineResource({
  name: 'Album',
  table: 'albums',
  casing: 'PascalCase',
  primaryKey: 'albumId',
  schema: Type.Object({
    albumId: Type.Integer(), title: Type.String(), releasedOn: Type.Union([Type.Integer(), Type.Null()]), artist: Type.Integer(),
  }),
  fields: ['albumId', 'title', 'releasedOn', 'artist'],
  columns: { artist: 'ArtistId' },
  expandable: { artist: Artist },
})
const Review = defineResource({
  name: 'Review',
  table: 'album_reviews',
  casing: 'snake_case',
  primaryKey: 'reviewId',
  schema: Type.Object({ reviewId: Type.Integer(), starRating: Type.Integer(), albumId: Type.Integer() }),
  fields: ['reviewId', 'starRating', 'albumId'],
  expandable: { albumId: [Album, { column: 'album_id' }] },
})

for (const dialect of dialects()) {
  t.test(`fields read their cased columns on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const { db } = database
    await db.schema.createTable('artists').addColumn('ArtistId', 'integer', (column) => column.primaryKey())
      .addColumn('Name', 'varchar(40)', (column) => column.notNull()).execute()
    await db.schema.createTable('albums').addColumn('AlbumId', 'integer', (column) => column.primaryKey())
      .addColumn('Title', 'varchar(40)', (column) => column.notNull()).addColumn('ReleasedOn', 'integer')
      .addColumn('ArtistId', 'integer', (column) => column.notNull()).execute()
    await db.schema.createTable('album_reviews').addColumn('review_id', 'integer', (column) => column.primaryKey())
      .addColumn('star_rating', 'integer', (column) => column.notNull()).addColumn('album_id', 'integer', (column) => column.notNull()).execute()
    await db.insertInto('artists').values([{ ArtistId: 1, Name: 'AC/DC' }, { ArtistId: 2, Name: 'Accept' }]).execute()
    await db.insertInto('albums').values([
      { AlbumId: 1, Title: 'For Those About To Rock', ReleasedOn: 1981, ArtistId: 1 },
      { AlbumId: 2, Title: 'Balls to the Wall', ReleasedOn: null, ArtistId: 2 },
      { AlbumId: 3, Title: 'Let There Be Rock', ReleasedOn: 1977, ArtistId: 1 },
    ]).execute()
    await db.insertInto('album_reviews').values([{ review_id: 1, star_rating: 5, album_id: 3 }]).execute()

    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(expandPlugin, { db, resources: [Artist, Album, Review] })
    app.expand.routes('/albums', Album, {
      filter: { title: ['eq'], releasedOn: ['gte', 'null'], 'artist.name': ['eq'] },
      sort: ['releasedOn', 'title'],
      pagination: 'cursor',
      cursorSecret: 'casing, every dialect',
    })
    app.expand.routes('/artists', Artist)
    app.expand.routes('/reviews', Review)
    await app.ready()
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json() as unknown }
    }
    const written = (statement: string) => asWrittenOn(dialect, dialect.name === 'postgres' ? statement : statement.replace(/\$[0-9]+/g, '?'))

    t.same(await get('/artists/1?expand=albums'), {
      status: 200,
      body: {
        artistId: 1,
        name: 'AC/DC',
        albums: [
          { albumId: 1, title: 'For Those About To Rock', releasedOn: 1981, artist: 1 },
          { albumId: 3, title: 'Let There Be Rock', releasedOn: 1977, artist: 1 },
        ],
      },
    })
    const artist = 'select "artists"."ArtistId" as "artistId", cast("artists"."Name" as text) as "name" from "artists" where "artists"."ArtistId" = $1'
    t.same(inComparableOrder(dialect, database.statements), inComparableOrder(dialect, [
      written(artist),
      written(asSent(dialect, 'select "albums"."AlbumId" as "albumId", cast("albums"."Title" as text) as "title", "albums"."ReleasedOn" as "releasedOn", ' +
        '"albums"."ArtistId" as "artist", "albums"."ArtistId" as "__expand_parent" from "albums" where "albums"."ArtistId" in ($1) ' +
        'order by "albums"."ArtistId", "albums"."AlbumId" limit 16384', artist, '"artists"."ArtistId"')),
    ]), 'each field its PascalCase column, under the field\'s name')

    const page = await get('/albums?filter[releasedOn][gte]=1970&filter[artist.name]=AC/DC&sort=-releasedOn&expand=artist&fields=title,artist.name')
    t.same(page, {
      status: 200,
      body: {
        data: [{ title: 'For Those About To Rock', artist: { name: 'AC/DC' } }, { title: 'Let There Be Rock', artist: { name: 'AC/DC' } }],
        limit: 20,
        next: null,
        prev: null,
      },
    })
    t.match(database.statements.find((statement) => !statement.startsWith('with ')), written('where "albums"."ReleasedOn" >= $1 and "albums"."ArtistId" in ' +
      '(select "artists"."ArtistId" from "artists" where "artists"."Name" = $2)'), 'filters name the columns')
    const sortedByNullable = await get('/albums?sort=releasedOn&limit=2&fields=albumId')
    const { next } = sortedByNullable.body as { next: string }
    t.same(sortedByNullable.body, { data: [{ albumId: 3 }, { albumId: 1 }], limit: 2, next, prev: null })
    const after = await get(`/albums?sort=releasedOn&limit=2&fields=albumId&after=${next}`)
    t.same(after.body, { data: [{ albumId: 2 }], limit: 2, next: null, prev: (after.body as { prev: string }).prev }, 'NULL last, by the cursor')
    t.same(await get('/albums?filter[releasedOn][null]=true&fields=albumId'), { status: 200, body: { data: [{ albumId: 2 }], limit: 20, next: null, prev: null } })

    t.same(await get('/reviews/1?expand=albumId.artist'), {
      status: 200,
      body: {
        reviewId: 1,
        starRating: 5,
        albumId: { albumId: 3, title: 'Let There Be Rock', releasedOn: 1977, artist: { artistId: 1, name: 'AC/DC', albums: [1, 3] } },
      },
    })
    t.same(database.statements.find((statement) => !statement.startsWith('with ')), written('select "album_reviews"."review_id" as "reviewId", "album_reviews"."star_rating" as "starRating", ' +
      '"album_reviews"."album_id" as "albumId" from "album_reviews" where "album_reviews"."review_id" = $1'), 'snake_case columns')
  })
}
