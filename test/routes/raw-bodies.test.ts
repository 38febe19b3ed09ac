import { Readable } from 'node:stream'
import t from 'tap'
import { resources } from '../fixtures/pets.js'
import { buildApp, getJson } from '../helpers/app.js'

// A string, a Buffer or a stream is sent as it is, past the serialization hooks:
// on an expandable route that would be a body no plan checked, so a 2xx is refused.
const invalidData = (sent: string) => ({
  statusCode: 500,
  code: 'FST_EXPAND_INVALID_DATA',
  error: 'Internal Server Error',
  message: `Data for Pet does not fit the response: the handler sent ${sent}; return the data itself and fastify-expand writes it`,
})

t.test('a 2xx body the compiled serializer did not write is a 500 FST_EXPAND_INVALID_DATA naming what was sent', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/string', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.type('application/json').send('{"id":1}'))
    app.get('/buffer', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(Buffer.from('{"id":1}')))
    app.get('/stream', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(Readable.from(['{"id":1}'])))
    app.get('/empty', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.code(201).send())
    app.get('/no-content', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.code(204).send())
  })
  t.teardown(() => app.close())
  for (const [url, sent] of [['/string', 'a string'], ['/buffer', 'a Buffer'], ['/stream', 'a stream'], ['/empty', 'no body']]) {
    const reply = await getJson(app, url)
    t.equal(reply.status, 500, url)
    t.equal(reply.text, JSON.stringify(invalidData(sent)), url)
  }
  const noContent = await app.inject('/no-content')
  t.equal(noContent.statusCode, 204, 'a 204 has no body to check')
  t.equal(noContent.body, '')
})
