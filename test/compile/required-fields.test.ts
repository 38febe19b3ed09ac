import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'

t.test('a planned field missing from the handler data is a 500, never a silently incomplete body', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.get('/pets/:id', { expandable: { resource: 'Pet' } }, async () => ({ id: 1, name: 'Garfield' }))
  const complete = await app.inject('/pets/1?fields=id,name')
  t.equal(complete.statusCode, 200)
  t.equal(complete.body, '{"id":1,"name":"Garfield"}')
  const incomplete = await app.inject('/pets/1')
  t.equal(incomplete.statusCode, 500)
  t.same(incomplete.json(), {
    statusCode: 500,
    code: 'FST_EXPAND_INVALID_DATA',
    error: 'Internal Server Error',
    message: "Data for Pet does not fit the response: 'species' is missing",
  })
})
