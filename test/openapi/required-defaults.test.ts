import swagger from '@fastify/swagger'
import Fastify from 'fastify'
import { test } from 'tap'
import expandPlugin, { expandOpenApi } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet, resources } from '../fixtures/pets.js'

// openApiRequiredDefaults: the opt-in to a document whose `required` describes the default response, per app,
// per route and per routes() call; the route's description says so. Its value is checked like any option.

type Json = Record<string, any>

test('a non-boolean openApiRequiredDefaults is refused, for the app and for a route', async (t) => {
  t.throws(() => expandOpenApi({ resources, openApiRequiredDefaults: 'yes' as never }), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: 'fastify-expand: openApiRequiredDefaults must be a boolean',
  })
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  t.teardown(() => app.close())
  await app.after()
  t.throws(() => app.get('/pets/:id', { expandable: { resource: Pet, openApiRequiredDefaults: 1 as never } }, async () => ({})), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: 'Route GET /pets/:id: expandable: openApiRequiredDefaults must be a boolean',
  })
})

test('opted in per route and per routes(): required default fields, said after the route\'s own description', async (t) => {
  const { Animal, listResources, openListTables } = await import('../fixtures/list-tables.js')
  const database = await openListTables(t, dialects()[0]!)
  const options = { db: database.db, resources: [...listResources, ...resources] }
  const app = Fastify()
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  app.expand.routes('/animals', Animal, { openApiRequiredDefaults: true, route: { schema: { description: 'Shelter animals.' } } })
  app.get('/pets/:id', { expandable: { resource: Pet, openApiRequiredDefaults: true } }, async () => ({}))
  app.get('/pets', { expandable: { resource: Pet, list: true } }, async () => [])
  await app.ready()
  t.teardown(() => app.close())
  const document = app.swagger() as Json
  const note = /^The response schema types the default response \(openApiRequiredDefaults\)/
  const list = document.paths['/animals'].get
  t.match(list.description, /^Shelter animals\.\n\nThe response schema types the default response \(openApiRequiredDefaults\)/)
  t.match(document.paths['/animals/{id}'].get.description, /^Shelter animals\.\n\nThe response schema types/)
  t.match(document.paths['/pets/{id}'].get.description, note)
  t.equal(document.paths['/pets'].get.description, undefined, 'a route that does not opt in says nothing')
  t.same(document.paths['/pets/{id}'].get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Pet.defaults')
  t.same(document.components.schemas['Pet.defaults'].required, ['id', 'name', 'species', 'owner', 'sold_from', 'toys'])
  t.equal(document.components.schemas.Pet.required, undefined, 'the other route\'s Pet requires nothing')
})
