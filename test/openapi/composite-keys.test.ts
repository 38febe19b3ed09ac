import swagger from '@fastify/swagger'
import Fastify from 'fastify'
import { test } from 'tap'
import expandPlugin, { expandOpenApi } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { compositeKeyResources, OrderLine, Order, PlaylistTrack, Shipment } from '../fixtures/composite-keys.js'

// A resource keyed by several columns is documented by its identifier: the detail route's `id` is a string of
// the key's parts (the pattern of each part, joined by ','), and so is every relation field holding one (a to-one
// relation over several columns, the ids of a to-many relation to such a resource).

type Json = Record<string, any>

test('composite identifiers in the OpenAPI document', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const options = { db: database.db, resources: compositeKeyResources }
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  app.expand.routes('/playlist-tracks', PlaylistTrack)
  app.expand.routes('/shipments', Shipment)
  app.expand.routes('/orders', Order)
  app.expand.routes('/order-lines', OrderLine)
  await app.ready()
  const document = app.swagger() as Json
  const description = "Composite key: playlistId, trackId, joined by ','"
  t.strictSame(document.paths['/playlist-tracks/{id}'].get.parameters.find((parameter: Json) => parameter.in === 'path'), {
    schema: { type: 'string', pattern: '^-?[0-9]+,-?[0-9]+$' }, in: 'path', name: 'id', required: true, description,
  }, 'the detail route\'s id: the identifier')
  const { Shipment: shipment, Order: order } = document.components.schemas as Json
  const identifier = { pattern: '^-?[0-9]+,-?[0-9]+$', description: "Composite key: orderId, lineNo, joined by ','" }
  t.strictSame(shipment.properties.line.anyOf[0], { type: ['string', 'null'], ...identifier }, 'a to-one over two columns')
  t.strictSame(order.properties.lines.anyOf[0], { type: 'array', items: { type: 'string', ...identifier } }, 'the ids of a to-many relation')
})
