import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { databaseOf } from '../fixtures/databases.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import {
  compositeKeyResources, createCompositeKeys, Order, OrderLine, Playlist, PlaylistTrack, Shipment, Tag,
} from '../fixtures/composite-keys.js'

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: compositeKeyResources })
  app.expand.routes('/playlists', Playlist)
  app.expand.routes('/playlist-tracks', PlaylistTrack)
  app.expand.routes('/orders', Order)
  app.expand.routes('/order-lines', OrderLine, { pagination: 'cursor', cursorSecret: 'a cursor secret of 32 characters' })
  app.expand.routes('/shipments', Shipment)
  app.expand.routes('/tags', Tag)
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(dialect.name, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createCompositeKeys(database.db, databaseOf(dialect))
    const app = await build(database)
    t.teardown(() => app.close())
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json() as unknown, statements: [...database.statements], parameters: [...database.parameters] }
    }
    for (const url of process.env.URLS!.split(' ')) console.log(url, JSON.stringify(await get(url), null, 1))
  })
}
