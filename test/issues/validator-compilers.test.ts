import { Ajv } from 'ajv'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources } from '../fixtures/tables.js'

// The generated routes read limit, offset and :id themselves, so they answer
// the same under a validator compiler that does not coerce strings to numbers
// (as @fastify/type-provider-typebox's does) as under Fastify's default Ajv.

const garfield = { id: 1, name: 'Garfield', species: 'cat', owner: 1, sold_from: 1, toys: [1, 2] }

t.test('generated routes under a validator compiler without coercion', async (t) => {
  const database = await openSeeded(t, dialects()[0])
  const app = Fastify()
  const strict = new Ajv({ coerceTypes: false, allErrors: false })
  app.setValidatorCompiler(({ schema }) => strict.compile(schema))
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet)
  // A hand-written route keeps the application's compiler: its string id is refused as not an integer.
  app.get('/strict/:id', { schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } } }, async () => ({}))
  await app.ready()
  t.teardown(() => app.close())

  t.same((await app.inject('/pets/1')).json(), garfield)
  const page = (await app.inject('/pets?limit=1&offset=1')).json()
  t.same([page.limit, page.offset, page.total, page.data.map((pet: { id: number }) => pet.id)], [1, 1, 4, [2]])
  t.same((await app.inject('/pets?limit=-1')).json(), {
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    error: 'Bad Request',
    message: 'querystring/limit must be an integer from 1 to 9007199254740991',
  })
  t.equal((await app.inject('/strict/1')).statusCode, 400)
})
