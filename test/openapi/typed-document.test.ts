import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import { Ajv } from 'ajv'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import t0, { test } from 'tap'
import { inMemoryDemo } from '../../demo/readme-examples.js'
import expandPlugin, { defineResource, expandOpenApi, isExpanded, type ExpandOpenApiOptions } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Company, Pet, PetStore, Toy, resources } from '../fixtures/pets.js'
import { Pet as TablePet, openSeeded, resources as tableResources } from '../fixtures/tables.js'

/*
 * What a typed client reads in the generated document, item by item: every
 * status a route answers with, parameters as the routes read them, which
 * fields a response always holds, names and examples that tools show, and
 * nothing a client may not name.
 */

type Json = Record<string, any>

const maxSafe = Number.MAX_SAFE_INTEGER
const demo = await inMemoryDemo()
t0.teardown(demo.close)
const document: Json = (await demo.app.inject('/docs/json')).json()

function operationOf (doc: Json, path: string, method = 'get'): Json {
  const found = doc.paths[path]?.[method]
  if (found === undefined) throw new Error(`no ${method.toUpperCase()} ${path} in the document`)
  return found
}

function queryParameter (doc: Json, path: string, name: string): Json | undefined {
  return operationOf(doc, path).parameters?.find((candidate: Json) => candidate.in === 'query' && candidate.name === name)
}

function bodySchema (doc: Json, path: string, status: string, method = 'get'): Json {
  return operationOf(doc, path, method).responses[status].content['application/json'].schema
}

function validatorOf (doc: Json, schema: Json) {
  return new Ajv({ strict: false, allErrors: true }).compile({ ...schema, components: doc.components })
}

function fastifyError (description: string, statusCode: number, codes: string[]): Json {
  return {
    description,
    type: 'object',
    properties: {
      statusCode: { type: 'integer', enum: [statusCode] },
      code: { type: 'string', enum: codes },
      error: { type: 'string' },
      message: { type: 'string' },
    },
    required: ['statusCode', 'code', 'error', 'message'],
  }
}

const notFoundPet = fastifyError('No Pet with this identifier', 404, ['FST_EXPAND_NOT_FOUND'])
const serverError = fastifyError('Data that does not fit the response, or a failed database statement', 500, ['FST_EXPAND_INVALID_DATA', 'FST_EXPAND_DATABASE_ERROR', 'FST_EXPAND_RELATION_LOAD_FAILED', 'FST_EXPAND_NO_PLAN'])

/** An app on the plain fixtures (no database), documented by the transform. */
async function documentedApp (declare: (app: FastifyInstance) => void, documentation: ExpandOpenApiOptions = {}, version = '3.1.0'): Promise<{ app: FastifyInstance; doc: Json }> {
  const app = Fastify()
  await app.register(swagger, { openapi: { openapi: version, info: { title: 't', version: '1' } }, transform: expandOpenApi({ resources }, documentation).transform })
  await app.register(expandPlugin, { resources })
  declare(app)
  await app.ready()
  return { app, doc: app.swagger() as Json }
}

const storedPet = { id: 1, name: 'Garfield', species: 'cat', owner: 7, sold_from: null, toys: [4] }

test('item 1: a generated detail route documents 200, 400 (with FST_ERR_VALIDATION), 404 and 500 in Fastify\'s error shape', async (t) => {
  t.same(Object.keys(operationOf(document, '/pets/{id}').responses), ['200', '400', '404', '414', '500', '503'], 'a path parameter: 414 when it is too long')
  t.same(bodySchema(document, '/pets/{id}', '404'), notFoundPet)
  t.same(bodySchema(document, '/pets/{id}', '500'), serverError)
  t.same(bodySchema(document, '/pets/{id}', '400').properties.code.enum.slice(-2), ['FST_ERR_VALIDATION', 'FST_ERR_BAD_URL'], ':id is validated; a malformed URL')
  t.same(Object.keys(operationOf(document, '/pets').responses), ['200', '400', '500', '503'], 'a list has no 404')

  const missing = await demo.app.inject('/pets/999999')
  t.equal(missing.statusCode, 404)
  t.ok(validatorOf(document, bodySchema(document, '/pets/{id}', '404'))(missing.json()), 'the real 404 fits its schema')
  t.notOk(validatorOf(document, bodySchema(document, '/pets/{id}', '400'))(missing.json()), 'and not the 400 one')
  const invalid = await demo.app.inject('/pets/abc')
  t.equal(invalid.json().code, 'FST_ERR_VALIDATION')
  t.ok(validatorOf(document, bodySchema(document, '/pets/{id}', '400'))(invalid.json()), 'the real validation 400 fits its schema')
})

test('item 1: generated list routes document limit with its default and bounds, offset, the id, and their envelope', async (t) => {
  t.same(queryParameter(document, '/pets', 'limit')?.schema, { type: 'integer', minimum: 1, maximum: maxSafe, default: 20 })
  t.equal(queryParameter(document, '/pets', 'limit')?.description, 'Rows per page (default 20; larger than 100 is clamped)')
  t.same(queryParameter(document, '/pets', 'offset')?.schema, { type: 'integer', minimum: 0, maximum: maxSafe, default: 0 })
  const id = operationOf(document, '/pets/{id}').parameters.find((candidate: Json) => candidate.in === 'path')
  t.same(id, { schema: { type: 'integer', minimum: -maxSafe, maximum: maxSafe }, in: 'path', name: 'id', required: true })

  const page = bodySchema(document, '/pets', '200')
  t.same(page.required, ['data', 'limit', 'offset', 'total'])
  t.equal(page.additionalProperties, false)
  t.same(page.properties.limit, { type: 'integer', minimum: 1, maximum: 100, description: 'Rows per page: the limit asked for (default 20), at most 100' })
  t.same(page.properties.offset, { type: 'integer', minimum: 0, maximum: maxSafe, description: 'Rows skipped' })
  t.same(page.properties.total, { type: 'integer', minimum: 0, description: 'Rows in the whole list' })
  const clamped = await demo.app.inject('/pets?limit=1000&offset=3')
  t.ok(validatorOf(document, page)(clamped.json()), 'a clamped page fits')
  t.equal(clamped.json().limit, 100)
})

test('item 1: a failing statement and data that does not fit are the documented 500s; a handler route admits its own', async (t) => {
  const [sqlite] = dialects()
  const database = await openSeeded(t, sqlite!)
  const app = Fastify()
  const options = { db: database.db, resources: tableResources }
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  app.expand.routes('/pets', TablePet, { pageSize: 5, maxPageSize: 10 })
  app.get('/broken/:id', { expandable: { resource: TablePet } }, async () => ({ id: 1, name: 'no species' }))
  app.get('/throwing/:id', { expandable: { resource: TablePet } }, async () => { throw new Error('the handler failed') })
  await app.ready()
  t.teardown(() => app.close())
  const doc = app.swagger() as Json

  t.same(queryParameter(doc, '/pets', 'limit')?.schema, { type: 'integer', minimum: 1, maximum: maxSafe, default: 5 }, 'pageSize is the default')
  t.equal(bodySchema(doc, '/pets', '200').properties.limit.maximum, 10, 'maxPageSize bounds the limit written')

  await sql`drop table pet_toys`.execute(database.db)
  const failed = await app.inject('/pets?expand=toys')
  t.equal(failed.json().code, 'FST_EXPAND_DATABASE_ERROR')
  t.ok(validatorOf(doc, bodySchema(doc, '/pets', '500'))(failed.json()), 'the database error fits the list 500')
  t.ok(validatorOf(doc, bodySchema(doc, '/pets/{id}', '500'))((await app.inject('/pets/1?expand=toys')).json()), 'and the detail 500')

  t.same(Object.keys(operationOf(doc, '/broken/{id}').responses), ['200', '400', '414', '500', '503'], 'a handler route: no 404')
  const handlerError = bodySchema(doc, '/broken/{id}', '500')
  t.same(handlerError, {
    description: 'Data that does not fit the response, or a failed database statement, or an error of the handler',
    type: 'object',
    properties: {
      statusCode: { type: 'integer', enum: [500] },
      code: { type: 'string', description: 'FST_EXPAND_INVALID_DATA or FST_EXPAND_DATABASE_ERROR or FST_EXPAND_RELATION_LOAD_FAILED or FST_EXPAND_NO_PLAN from fastify-expand; another code (or none) from the handler' },
      error: { type: 'string' },
      message: { type: 'string' },
    },
    required: ['statusCode', 'error', 'message'],
  })
  const invalidData = await app.inject('/broken/1')
  t.equal(invalidData.json().code, 'FST_EXPAND_INVALID_DATA')
  t.ok(validatorOf(doc, handlerError)(invalidData.json()))
  t.ok(validatorOf(doc, bodySchema(doc, '/pets/{id}', '500'))(invalidData.json()), 'the same code a generated route documents')
  const thrown = (await app.inject('/throwing/1')).json()
  t.equal(thrown.code, undefined, 'Fastify writes no code for an error without one')
  t.ok(validatorOf(doc, handlerError)(thrown), "so a handler route's 500 does not require one")
})

test('item 1: success is 200 for GET, 2XX for other methods, or the 2xx status an earlier transform declared', async (t) => {
  const { app, doc } = await documentedApp((app) => {
    app.get('/pets/:id', { expandable: { resource: Pet } }, async () => storedPet)
    app.post('/pets', { expandable: { resource: Pet } }, async () => storedPet)
    app.put('/pets/:id', { expandable: { resource: Pet } }, async () => storedPet)
    app.route({ method: ['GET', 'PATCH'], url: '/either/:id', expandable: { resource: Pet }, handler: async () => storedPet })
    app.post('/made', { expandable: { resource: Pet } }, async (_request, reply) => reply.code(201).send(storedPet))
  }, {
    transform: ({ schema, url }) => (url === '/made' ? { schema: { ...schema, response: { 201: { description: 'Created' } } }, url } : { schema, url }),
  })
  t.teardown(() => app.close())
  const pet = { $ref: '#/components/schemas/Pet' }
  t.same(Object.keys(operationOf(doc, '/pets/{id}').responses), ['200', '400', '414', '500', '503'])
  t.same(Object.keys(operationOf(doc, '/pets', 'post').responses), ['400', '500', '503', '2XX'], 'POST: any 2xx')
  t.same(bodySchema(doc, '/pets', '2XX', 'post'), pet)
  t.same(Object.keys(operationOf(doc, '/pets/{id}', 'put').responses), ['400', '414', '500', '503', '2XX'])
  t.same(Object.keys(operationOf(doc, '/either/{id}', 'patch').responses), ['400', '414', '500', '503', '2XX'], 'one operation for GET and PATCH: 2XX fits both')
  const made = operationOf(doc, '/made', 'post').responses
  t.same(Object.keys(made), ['201', '400', '500', '503'], 'the declared status, and no other success')
  t.equal(made['201'].description, 'Created', 'with its description')
  t.same(made['201'].content['application/json'].schema, pet, 'and the body')
  const response = await app.inject({ method: 'POST', url: '/made' })
  t.equal(response.statusCode, 201)
  t.ok(validatorOf(doc, made['201'].content['application/json'].schema)(response.json()))
})

test('item 2: the expand enum holds the wildcard tokens of the options; a route that can expand nothing has no expand parameter', async (t) => {
  const paths = ['owner', 'owner.employer', 'sold_from', 'toys']
  t.same(expandOpenApi({ resources }).describeRoute({ resource: Pet }).querystring.expand!.items, { type: 'string', enum: [...paths, '*', '~all'] })
  t.same(expandOpenApi({ resources, wildcards: ['all'] }).describeRoute({ resource: Pet }).querystring.expand!.items, { type: 'string', enum: [...paths, 'all'] })
  const none = expandOpenApi({ resources, wildcards: null }).describeRoute({ resource: Pet }).querystring.expand!
  t.same(none.items, { type: 'string', enum: paths }, 'wildcards: null')
  t.notMatch(String(none.description), /`\*`/, 'and no wildcard in the description')

  const company = expandOpenApi({ resources }).describeRoute({ resource: Company }).querystring
  t.same(Object.keys(company), ['fields', 'omit'], 'Company has no relation')
  t.match(String(company.fields!.description), /This route expands no relation/)
  const restricted = expandOpenApi({ resources }).describeRoute({ resource: Pet, list: true, permitListExpands: [] }).querystring
  t.same(Object.keys(restricted), ['fields', 'omit'], 'a list that permits nothing')
  t.equal(queryParameter(document, '/pet-stores/{id}', 'expand'), undefined)
  t.equal(queryParameter(document, '/companies', 'expand'), undefined)
  const companies = await demo.app.inject('/companies?limit=1&expand=*')
  t.equal(companies.statusCode, 200, 'a wildcard is still accepted there: it expands nothing')
})

test('item 3: no field fields/omit can leave out is required; opted in, components require what the default response always holds', async (t) => {
  const Owner = defineResource({ name: 'Owner', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
  const Label = defineResource({ name: 'Label', schema: Type.Object({ id: Type.Integer(), text: Type.String() }), fields: ['id', 'text'] })
  const Parcel = defineResource({
    name: 'Parcel',
    schema: Type.Object({
      id: Type.Integer(),
      nickname: Type.Optional(Type.String()),
      owner: Type.Integer(),
      label: Type.Integer(),
      history: Type.Array(Type.Integer()),
      insurer: Type.Integer(),
    }),
    fields: ['id', 'nickname', 'owner', 'label'],
    nested: { label: Label },
    expandable: { owner: Owner, history: [Owner, { many: true }], insurer: Owner },
  })
  const Shipment = defineResource({
    name: 'Shipment',
    schema: Type.Object({ id: Type.Integer(), parcel: Type.Integer() }),
    fields: ['id'],
    expandable: { parcel: [Parcel, { expand: ['history'] }] },
  })
  const resources = [Owner, Label, Parcel, Shipment]
  const truthful = expandOpenApi({ resources })
  const parcelRoute = truthful.describeRoute({ resource: Parcel })
  truthful.describeRoute({ resource: Shipment })
  const components: Json = truthful.components()
  for (const name of ['Parcel', 'Shipment.parcel', 'Shipment']) t.equal(components[name].required, undefined, `${name}: nothing required`)
  t.same(Object.keys(components.Parcel.properties), ['id', 'nickname', 'owner', 'label', 'history', 'insurer'])
  t.match(String(parcelRoute.querystring.fields!.description), /\. Fields left out are absent from the response\.$/)
  t.equal(parcelRoute.description, undefined, 'nothing to say in the route description')

  // Opted in for the app: the default response's fields are required, and the route's description says what that means.
  const typed = expandOpenApi({ resources, openApiRequiredDefaults: true })
  const typedRoute = typed.describeRoute({ resource: Parcel })
  typed.describeRoute({ resource: Shipment })
  const typedComponents: Json = typed.components()
  t.same(typedComponents.Parcel.required, ['id', 'owner', 'label'], 'its fields, less the optional nickname; not the deferred history and insurer')
  t.same(typedComponents['Shipment.parcel'].required, ['id', 'owner', 'label', 'history'], 'a deferred relation the relation always expands is always there')
  t.same(typedComponents.Shipment.required, ['id'], 'the deferred parcel is not')
  t.match(String(typedRoute.querystring.fields!.description), /Fields left out are absent from the response, even those its schema requires: the schema describes the default response\.$/)
  t.match(String(typedRoute.description), /^The response schema types the default response \(openApiRequiredDefaults\)/)

  // Per route: the other kind of level is a component of its own, `.defaults` (or `.partial` in a typed app).
  const mixed = expandOpenApi({ resources })
  t.same(mixed.describeRoute({ resource: Parcel, openApiRequiredDefaults: true }).response[200], { description: 'One Parcel', $ref: '#/components/schemas/Parcel.defaults' })
  t.same(mixed.describeRoute({ resource: Parcel }).response[200], { description: 'One Parcel', $ref: '#/components/schemas/Parcel' })
  t.same(mixed.components()['Parcel.defaults']!.required, ['id', 'owner', 'label'])
  t.equal(mixed.components().Parcel!.required, undefined)
  t.same(typed.describeRoute({ resource: Parcel, openApiRequiredDefaults: false }).response[200], { description: 'One Parcel', $ref: '#/components/schemas/Parcel.partial' })
  t.equal(typed.components()['Parcel.partial']!.required, undefined)

  t.same(bodySchema(document, '/pets/{id}', '200'), { $ref: '#/components/schemas/Pet' })
  t.equal(document.components.schemas.Pet.required, undefined)
  const validate = validatorOf(document, bodySchema(document, '/pets/{id}', '200'))
  t.ok(validate((await demo.app.inject('/pets/10')).json()), 'the default response fits')
  t.ok(validate((await demo.app.inject('/pets/10?fields=name')).json()), 'and so does a narrowed one')
})

test('item 4: component titles are their own names; every component has an example that fits it, cycles included', async (t) => {
  const schemas: Json = document.components.schemas
  for (const [name, schema] of Object.entries(schemas)) t.equal(schema.title, name, `${name}: titled by its own name`)
  t.equal(schemas['Company.employees'].title, 'Company.employees', 'not Person: that name is taken')
  t.equal(schemas['Company.employees'].description, 'A Person as Company.employees shows it (fields id, name)')
  for (const [name, schema] of Object.entries(schemas)) {
    t.equal(schema.examples?.length, 1, `${name} has an example`)
    const validate = validatorOf(document, { $ref: `#/components/schemas/${name}` })
    t.ok(validate(schema.examples[0]), `${name}: its example fits: ${JSON.stringify(validate.errors)}`)
  }
  t.same(schemas['Pet.visits'].examples, [{ id: 0, date: 'string', reason: 'string', vet: 0 }], 'the cycle Pet -> visits -> pet -> Pet: pet is deferred there, left out')
  t.same(schemas.Visit.examples, [{ id: 0, date: 'string', reason: 'string', pet: 0, vet: 0 }], 'a relation in the defaults is its identifier, never "string"')
  const listMedia = operationOf(document, '/pets').responses['200'].content['application/json']
  t.same(listMedia.example, {
    data: [{ id: 0, name: 'string', species: 'string', born: 'string', owner: 0, sold_from: 0, toys: [0] }],
    limit: 20,
    offset: 0,
    total: 1,
  }, 'a list response has its own example')
  t.ok(validatorOf(document, listMedia.schema)(listMedia.example))

  const { app, doc } = await documentedApp((app) => {
    app.get('/pets/:id', { expandable: { resource: Pet } }, async () => storedPet)
  }, {}, '3.0.3')
  t.teardown(() => app.close())
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
    t.notOk(Object.hasOwn(schema, 'examples'), `${name}: OpenAPI 3.0 has no examples array`)
    t.ok(Object.hasOwn(schema, 'example'), `${name}: but an example`)
  }
})

test('item 4: examples are values the field schemas admit, or none', async (t) => {
  const Sample = defineResource({
    name: 'Sample',
    schema: Type.Object({
      id: Type.Integer({ minimum: 100 }),
      when: Type.String({ format: 'date-time' }),
      code: Type.String({ pattern: '^[A-Z]{3}$', examples: ['EUR'] }),
      kind: Type.Union([Type.Literal('a'), Type.Literal('b')]),
      ratio: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
      tags: Type.Array(Type.String(), { minItems: 1 }),
      note: Type.Union([Type.String({ minLength: 10 }), Type.Null()]),
    }),
    fields: ['id', 'when', 'code', 'kind', 'ratio', 'tags', 'note'],
  })
  const Unexampled = defineResource({ name: 'Unexampled', schema: Type.Object({ id: Type.Integer(), code: Type.String({ pattern: '^[A-Z]{3}$' }) }), fields: ['id', 'code'] })
  const documentation = expandOpenApi({ resources: [Sample, Unexampled] })
  documentation.describeRoute({ resource: Sample })
  documentation.describeRoute({ resource: Unexampled })
  const components: Json = documentation.components()
  t.same(components.Sample.examples, [{ id: 100, when: '2024-01-01T00:00:00Z', code: 'EUR', kind: 'a', ratio: 1, tags: ['string'], note: 'stringxxxx' }])
  t.ok(new Ajv({ strict: false }).compile(components.Sample)(components.Sample.examples[0]))
  t.notOk(components.Unexampled.examples, 'a pattern without an example: no invented value')
})

test('item 5: fields and omit name what the route can show, with examples from the resource\'s own relations', async (t) => {
  const optional = 'Fields left out are absent from the response.'
  t.equal(queryParameter(document, '/pets', 'fields')?.description,
    `Only these fields (Pet: id, name, species, born, owner, sold_from, toys, recent_visits, label). Dot notation narrows an expanded relation: \`expand=owner&fields=id,owner.name\`. Comma-separated or repeated. ${optional}`,
    'visits is not permitted on the list: never in its responses (recent_visits, three per pet, is; the computed label is)')
  t.equal(queryParameter(document, '/pets', 'omit')?.description,
    `Leave these fields out (Pet: id, name, species, born, owner, sold_from, toys, recent_visits, label); dot notation reaches an expanded relation: \`owner.name\`. Comma-separated or repeated. ${optional}`)
  t.match(queryParameter(document, '/pets/{id}', 'fields')?.description, /^Only these fields \(Pet: id, name, species, born, owner, sold_from, toys, visits, recent_visits, label\)\./, 'a detail route shows visits, and the computed label')
  t.match(queryParameter(document, '/toys', 'fields')?.description, /`expand=maker&fields=id,maker\.name`/)
  t.match(queryParameter(document, '/people', 'fields')?.description, /^Only these fields \(Person: id, name, email, hobbies, employer, pet_count\)\. Dot notation narrows an expanded relation: `expand=employer&fields=id,employer\.name`/, 'pets is not permitted on /people; its count is shown when named')
  t.match(queryParameter(document, '/companies', 'fields')?.description, /^Only these fields \(Company: id, name, public, founded\)\. This route expands no relation/)
  const naming = Object.entries(document.paths as Json)
    .filter(([, item]) => ((item.get?.parameters ?? []) as Json[]).some((parameter) => /owner\./.test(String(parameter.description))))
    .map(([path]) => path)
  t.same(naming, ['/pets', '/pets/{id}'], 'owner.name only where the resource has a relation named owner')
  t.notMatch(queryParameter(document, '/toys', 'fields')?.description, /owner/, 'Toy has no owner')
})

test('item 6: expand, fields and omit are form style, exploded; a route declaring another style is refused', async (t) => {
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const parameter of (item.get?.parameters ?? []) as Json[]) {
      if (parameter.in !== 'query') continue
      t.same([parameter.style, parameter.explode], ['form', true], `${path} ${parameter.name}`)
    }
  }
  t.same(queryParameter(document, '/pets', 'expand')?.schema.type, 'array', 'an array: repeated values, each may be a comma list')
  // Fastify's validator refuses `style` in a route schema: only a transform can declare it.
  const app = Fastify()
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } },
    transform: expandOpenApi({ resources }, {
      transform: ({ schema, url }) => ({ schema: { ...schema, querystring: { ...(schema.querystring as object), style: 'deepObject' } }, url }),
    }).transform,
  })
  await app.register(expandPlugin, { resources })
  app.get('/pets/:id', { expandable: { resource: Pet }, schema: { querystring: { type: 'object', properties: { filter: { type: 'object' } } } } }, async () => storedPet)
  await app.ready()
  t.teardown(() => app.close())
  t.throws(() => app.swagger(), { message: "expandOpenApi: GET /pets/:id declares querystring style 'deepObject', which @fastify/swagger would apply to 'expand', 'fields' and 'omit' too: they are form style, exploded" })
})

test('item 7: a schema field a client may not name appears nowhere in the document', async (t) => {
  const Account = defineResource({ name: 'Account', schema: Type.Object({ id: Type.Integer(), name: Type.String(), password_hash: Type.String(), store: Type.Integer() }), fields: ['id', 'name', 'store'], expandable: { store: PetStore } })
  const Holder = defineResource({ name: 'Holder', schema: Type.Object({ id: Type.Integer(), account: Type.Integer(), pin: Type.String() }), fields: ['id'], expandable: { account: Account } })
  const app = Fastify()
  const options = { resources: [Account, Holder, PetStore, Toy] }
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  const account = { id: 1, name: 'a', password_hash: 'secret', store: 2 }
  app.get('/accounts/:id', { expandable: { resource: Account } }, async () => account)
  app.get('/accounts', { expandable: { resource: Account, list: true } }, async () => [account])
  app.get('/holders/:id', { expandable: { resource: Holder } }, async (request) => ({ id: 1, account: isExpanded(request, 'account') ? account : 1, pin: '0000' }))
  await app.ready()
  t.teardown(() => app.close())
  const text = JSON.stringify(app.swagger())
  t.notMatch(text, /password_hash/, 'not a property, not in a description, not in an example')
  t.notMatch(text, /\bpin\b/)
  t.match(text, /"store"/, 'the fields a client may name are there')
  t.equal((await app.inject('/holders/1?expand=account')).body, '{"id":1,"account":{"id":1,"name":"a","store":2}}')
})

test('access: fields a fieldsFor may hide are not required, 403 is documented where a reachable resource has fieldsFor, 414 is the body Fastify writes', async (t) => {
  const Owner = defineResource({
    name: 'Owner',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }),
    fields: ['id', 'name', 'email'],
    fieldsFor: (request) => (request.headers['x-role'] === 'admin' ? undefined : ['id', 'name']),
  })
  const Car = defineResource({
    name: 'Car',
    schema: Type.Object({ id: Type.Integer(), model: Type.String(), owner: Type.Integer() }),
    fields: ['id', 'model', 'owner'],
    expandable: { owner: Owner },
  })
  const Tyre = defineResource({ name: 'Tyre', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const options = { resources: [Car, Tyre] }
  const app = Fastify()
  await app.register(swagger, { openapi: { info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  app.get('/cars/:id', { expandable: { resource: Car } }, async (request) =>
    isExpanded(request, 'owner') ? { id: 1, model: 'T', owner: { id: 2, name: 'Ann', email: 'ann@example.com' } } : { id: 1, model: 'T', owner: 2 })
  app.get('/tyres', { expandable: { resource: Tyre, list: true } }, async () => [{ id: 1 }])
  await app.ready()
  t.teardown(() => app.close())
  const doc = app.swagger() as Json

  t.same(doc.components.schemas.Owner.required, undefined, 'any field of Owner may be hidden from a request')
  t.same(doc.components.schemas.Car.required, undefined, 'fields and omit can leave out any field of Car')
  t.same(Object.keys(operationOf(doc, '/cars/{id}').responses), ['200', '400', '403', '414', '500', '503'])
  t.same(Object.keys(operationOf(doc, '/tyres').responses), ['200', '400', '500', '503'], 'no fieldsFor within reach, no path parameter')

  const ajv = new Ajv({ strict: false })
  const forbidden = await app.inject('/cars/1?expand=owner&fields=owner.email')
  t.equal(forbidden.statusCode, 403)
  t.ok(ajv.validate(bodySchema(doc, '/cars/{id}', '403'), forbidden.json()), 'the real 403 fits its schema')
  const tooLong = await app.inject(`/cars/${'1'.repeat(101)}`)
  t.equal(tooLong.statusCode, 414)
  t.ok(ajv.validate(bodySchema(doc, '/cars/{id}', '414'), tooLong.json()), `the real 414 fits its schema: ${tooLong.body}`)
})

test('item 1: list routes document their filters, sort, cursor and envelopes; the bodies they answer fit', async (t) => {
  const { Animal, listResources, openListTables } = await import('../fixtures/list-tables.js')
  const [sqlite] = dialects()
  const database = await openListTables(t, sqlite!)
  const app = Fastify()
  const options = { db: database.db, resources: listResources }
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  const filter = { species: ['eq', 'in'], born: ['gte'], sold_from: ['null'], 'keeper.name': ['contains'], adopted: ['eq'], weight: ['lt'] } as const
  app.expand.routes('/animals', Animal, { filter, sort: ['born', 'name'], route: { schema: { tags: ['animals'], summary: 'Shelter animals' } } })
  app.expand.routes('/feed', Animal, { filter, sort: ['born'], pagination: 'cursor' })
  app.expand.routes('/uncounted', Animal, { total: false })
  await app.ready()
  t.teardown(() => app.close())
  const doc = app.swagger() as Json

  t.same(queryParameter(doc, '/animals', 'filter[species]')?.schema, { type: 'string', maxLength: 1000 })
  t.equal(queryParameter(doc, '/animals', 'filter[species]')?.description, 'species equals this value (at most 1,000 characters)')
  t.same(queryParameter(doc, '/animals', 'filter[species][in]')?.schema, { type: 'string', maxLength: 1000 })
  t.equal(queryParameter(doc, '/animals', 'filter[species][in]')?.description, 'species is one of these values, comma-separated (each string; 1,000 characters at most in all)')
  t.same(queryParameter(doc, '/animals', 'filter[born][gte]')?.schema, { type: 'string', format: 'date', maxLength: 1000 })
  t.equal(queryParameter(doc, '/animals', 'filter[weight][lt]')?.description, 'weight is less than this value (at most 1,000 characters)')
  t.equal(queryParameter(doc, '/animals', 'filter[keeper.name][contains]')?.description, 'keeper.name contains this text, ignoring case (at most 32 characters)')
  t.same(queryParameter(doc, '/animals', 'filter[weight][lt]')?.schema, { type: 'number' })
  t.same(queryParameter(doc, '/animals', 'filter[adopted]')?.schema, { type: 'boolean' })
  t.same(queryParameter(doc, '/animals', 'filter[sold_from][null]')?.schema, { type: 'boolean' })
  t.same(queryParameter(doc, '/animals', 'filter[keeper.name][contains]')?.schema, { type: 'string', maxLength: 32 })
  t.same(queryParameter(doc, '/animals', 'sort')?.schema, { type: 'string', pattern: '^-?(?:born|name)(?:,-?(?:born|name))*$' })
  t.equal(queryParameter(doc, '/animals', 'sort')?.description, 'Sort keys, comma-separated, `-` for descending: born, name. The primary key, ascending, ends the order.')
  t.equal(queryParameter(doc, '/animals', 'after'), undefined, 'offset pages take no cursor')
  t.same(queryParameter(doc, '/feed', 'after')?.schema, { type: 'string' })
  t.equal(queryParameter(doc, '/feed', 'offset'), undefined, 'cursor pages take no offset')
  t.equal(queryParameter(doc, '/uncounted', 'sort'), undefined, 'no sort declared, none documented')
  t.same(operationOf(doc, '/animals').tags, ['animals'])
  t.equal(operationOf(doc, '/animals/{id}').summary, 'Shelter animals')

  t.same(bodySchema(doc, '/animals', '200').required, ['data', 'limit', 'offset', 'total'])
  t.same(bodySchema(doc, '/feed', '200').required, ['data', 'limit', 'next', 'prev'])
  t.same(bodySchema(doc, '/feed', '200').properties.next.type, ['string', 'null'])
  t.same(bodySchema(doc, '/uncounted', '200').required, ['data', 'limit', 'offset'])
  t.same(Object.keys(bodySchema(doc, '/uncounted', '200').properties), ['data', 'limit', 'offset'])
  t.same(bodySchema(doc, '/animals', '400').properties.code.enum.filter((code: string) => code.startsWith('FST_EXPAND_BAD')), ['FST_EXPAND_BAD_FILTER', 'FST_EXPAND_BAD_SORT'])
  t.same(bodySchema(doc, '/feed', '400').properties.code.enum.filter((code: string) => code.startsWith('FST_EXPAND_BAD')), ['FST_EXPAND_BAD_FILTER', 'FST_EXPAND_BAD_SORT', 'FST_EXPAND_BAD_CURSOR'])
  t.same(bodySchema(doc, '/uncounted', '400').properties.code.enum.filter((code: string) => code.startsWith('FST_EXPAND_BAD')), ['FST_EXPAND_BAD_FILTER', 'FST_EXPAND_BAD_SORT'], 'a list without filters refuses them')

  const fits = async (path: string, url: string, status: string) => {
    const reply = await app.inject(url)
    t.equal(String(reply.statusCode), status, url)
    t.ok(validatorOf(doc, bodySchema(doc, path, status))(reply.json()), `${url}: the body fits the documented ${status}`)
    return reply.json()
  }
  await fits('/animals', '/animals?filter[species][in]=cat,dog&sort=-born&filter[keeper.name][contains]=costa', '200')
  const first = await fits('/feed', '/feed?limit=2&sort=born', '200')
  await fits('/feed', `/feed?limit=2&sort=born&after=${encodeURIComponent(first.next)}`, '200')
  await fits('/feed', '/feed?limit=100', '200')
  await fits('/uncounted', '/uncounted?limit=2', '200')
  await fits('/animals', '/animals?filter[born][gte]=soon', '400')
  await fits('/animals', '/animals?sort=species', '400')
  await fits('/feed', '/feed?after=nope', '400')
  await fits('/uncounted', '/uncounted?filter[species]=cat', '400')
})

test('503: a database out of reach is documented on every expandable route, in the shape the plugin answers', async (t) => {
  const unavailableBody = bodySchema(document, '/pets/{id}', '503')
  t.same(unavailableBody.properties.code, { type: 'string', enum: ['FST_EXPAND_UNAVAILABLE'] })
  const ajv = new Ajv({ strict: false })
  t.ok(ajv.validate(unavailableBody, { statusCode: 503, code: 'FST_EXPAND_UNAVAILABLE', error: 'Service Unavailable', message: 'Service Unavailable' }))
})
