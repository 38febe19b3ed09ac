import { writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import { Kysely, SqliteDialect, sql } from 'kysely'
import t from 'tap'
import expandPlugin, { type AnyResource } from '../../plugin/index.js'
import { generateModule } from '../../plugin/pull/generate.js'
import { introspectSqlite } from '../../plugin/pull/sqlite.js'

// Tables named as Chinook names them (singular, PascalCase, keys such as ArtistId): with --naming camel every field is
// mapped to its column, the primary key is not `id`, and the generated resources still serve to-one, to-many and
// many-to-many expansions by those columns.

const root = fileURLToPath(new URL('../../', import.meta.url))

t.test('PascalCase tables and key columns, pulled with --naming camel, serve', async (t) => {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })
  t.teardown(() => db.destroy())
  for (const statement of [
    'create table Artist (ArtistId integer primary key, Name nvarchar(120))',
    'create table Album (AlbumId integer primary key, Title nvarchar(160) not null, ArtistId integer not null references Artist (ArtistId))',
    'create table Track (TrackId integer primary key, Name nvarchar(200) not null, AlbumId integer references Album (AlbumId))',
    'create table Playlist (PlaylistId integer primary key, Name nvarchar(120))',
    'create table PlaylistTrack (PlaylistId integer not null references Playlist (PlaylistId), ' +
      'TrackId integer not null references Track (TrackId), primary key (PlaylistId, TrackId))',
    "insert into Artist values (1, 'AC/DC')",
    "insert into Album values (1, 'For Those About to Rock', 1)",
    "insert into Track values (1, 'Balls to the Wall', 1), (2, 'Fast as a Shark', null)",
    "insert into Playlist values (1, 'Music'), (2, 'Heavy')",
    'insert into PlaylistTrack values (1, 1), (2, 1)',
  ]) await sql.raw(statement).execute(db)

  const directory = t.testdir({})
  const importFrom = relative(directory, join(root, 'plugin', 'index.js')).split('\\').join('/')
  const generated = generateModule(await introspectSqlite(db), { naming: 'camel', importFrom })
  t.match(generated.text, "export const Track = defineResource({\n  name: 'Track',\n  table: 'Track',\n  schema: Type.Object({\n    trackId: Type.Integer(),")
  t.match(generated.text, "  primaryKey: 'trackId',\n  casing: 'PascalCase',\n  columns: { album: 'AlbumId' },\n  fields: ['trackId', 'name', 'album'],")
  const file = join(directory, 'resources.ts')
  await writeFile(file, generated.text)
  const module = await import(file) as Record<string, AnyResource> & { resources: AnyResource[] }

  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(expandPlugin, { db, resources: module.resources })
  app.expand.routes('/tracks', module.Track!)
  app.expand.routes('/artists', module.Artist!)
  const body = async (url: string) => (await app.inject(url)).json()
  t.same(await body('/tracks/1?expand=album.artist,playlist'), {
    trackId: 1,
    name: 'Balls to the Wall',
    album: { albumId: 1, title: 'For Those About to Rock', artist: { artistId: 1, name: 'AC/DC' } },
    playlist: [{ playlistId: 1, name: 'Music' }, { playlistId: 2, name: 'Heavy' }],
  })
  t.same(await body('/tracks/2?expand=album'), { trackId: 2, name: 'Fast as a Shark', album: null })
  t.same(await body('/artists/1?expand=album'), { artistId: 1, name: 'AC/DC', album: [{ albumId: 1, title: 'For Those About to Rock', artist: 1 }] })
})
