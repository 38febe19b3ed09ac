import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import { Ajv } from 'ajv'
import Fastify, { type FastifyInstance, type FastifyRequest, type RouteOptions } from 'fastify'
import { test } from 'tap'
import expandPlugin, { defineResource, expandOpenApi, isExpanded, type ExpandOpenApiOptions, type ExpandPluginOptions } from '../../plugin/index.js'
import { enumerateExpansionPaths } from '../../plugin/openapi/expansion-paths.js'
import { toOpenApi30 } from '../../plugin/openapi/openapi-version.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { Company, Person, Pet, PetStore, Toy, resources } from '../fixtures/pets.js'

/* expandOpenApi on an application of its own: handler routes, options, OpenAPI 3.0, and what it must leave alone. */

type Json = Record<string, any>

const owner = { id: 7, name: 'Jon', hobbies: 'cooking', employer: 3, password: 'hunter2' }
const toys = [{ id: 4, name: 'Ball', secret: 's' }]

/** A handler's data: relations as the request's plan wants them, and more than the resource declares. */
function storedPet (request: FastifyRequest) {
  return {
    id: 1,
    name: 'Garfield',
    species: 'cat',
    owner: isExpanded(request, 'owner') ? owner : owner.id,
    sold_from: null,
    toys: isExpanded(request, 'toys') ? toys : toys.map((toy) => toy.id),
    internal_note: 'never shown',
  }
}

interface Setup {
  version?: string
  pluginOptions?: Omit<ExpandPluginOptions, 'resources'>
  documentation?: ExpandOpenApiOptions
  components?: Record<string, unknown>
}

async function buildDocumentedApp ({ version = '3.1.0', pluginOptions = {}, documentation = {}, components }: Setup = {}): Promise<{ app: FastifyInstance; routes: RouteOptions[] }> {
  const app = Fastify()
  const expandOptions: ExpandPluginOptions = { resources, ...pluginOptions }
  await app.register(swagger, { openapi: { openapi: version, info: { title: 't', version: '1' }, components: components === undefined ? undefined : { schemas: components as never } }, transform: expandOpenApi(expandOptions, documentation).transform })
  await app.register(expandPlugin, expandOptions)
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => { routes.push(route) })
  // The handler returns more than the resource declares; only declared, planned fields may be written.
  app.get('/pets/:id', { expandable: { resource: 'Pet' } }, async (request) => storedPet(request))
  app.get('/pets', { config: { expandable: { resource: Pet, list: true, permitListExpands: ['owner'] } } }, async (request) => [storedPet(request)])
  app.get('/companies', { expandable: { resource: Company, list: true } }, async () => [])
  app.get('/plain', { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }))
  await app.ready()
  return { app, routes }
}

async function documentOf (app: FastifyInstance): Promise<Json> {
  return app.swagger() as Json
}

function queryParameter (document: Json, path: string, name: string): Json | undefined {
  return document.paths[path].get.parameters?.find((candidate: Json) => candidate.in === 'query' && candidate.name === name)
}

test('handler routes: string references and config.expandable are documented; serialization is untouched', async (t) => {
  const { app, routes } = await buildDocumentedApp()
  t.teardown(() => app.close())
  const document = await documentOf(app)
  t.same(queryParameter(document, '/pets', 'expand')?.schema.items.enum, ['owner', '*', '~all'])
  t.same(queryParameter(document, '/pets/{id}', 'expand')?.schema.items.enum, [
    'owner', 'owner.employer', 'sold_from', 'toys', '*', '~all',
  ], 'the fixture graph has no cycle: every path, whatever the depth')
  t.equal(queryParameter(document, '/companies', 'expand'), undefined, 'Company has no relation: no expand parameter')
  t.same(document.paths['/plain'].get.responses['200'].content['application/json'].schema, { type: 'object', properties: { ok: { type: 'boolean' } } }, 'other routes are left alone')
  t.notOk(document.paths['/plain'].get.parameters, 'and get no expansion parameters')
  t.same(Object.keys(document.components.schemas).sort(), ['Company', 'Person', 'Pet', 'Pet.sold_from', 'Pet.toys'])
  t.same(document.paths['/pets/{id}'].get.responses['400'].content['application/json'].schema.properties.code.enum.slice(-2), ['FST_EXPAND_TOO_LARGE', 'FST_ERR_BAD_URL'], 'no Fastify validation on this route; a malformed URL is Fastify\'s own 400')

  for (const route of routes.filter((candidate) => candidate.url.startsWith('/pets'))) {
    t.equal((route.schema as Json | undefined)?.response, undefined, `${route.method} ${route.url}: Fastify never sees the documentation schemas`)
  }
  const response = await app.inject('/pets/1?expand=owner,toys')
  t.equal(response.body, '{"id":1,"name":"Garfield","species":"cat","owner":{"id":7,"name":"Jon","hobbies":"cooking"},"sold_from":null,"toys":[{"id":4,"name":"Ball"}]}',
    'the compiled serializer still writes the response: no union, no undeclared property')

  const schema = document.paths['/pets/{id}'].get.responses['200'].content['application/json'].schema
  const validate = new Ajv({ strict: false }).compile({ ...schema, components: document.components })
  t.ok(validate(response.json()), JSON.stringify(validate.errors))
  t.ok(validate(JSON.parse((await app.inject('/pets/1')).body)))
})

test('OpenAPI 3.0: components use nullable instead of null types', async (t) => {
  const { app } = await buildDocumentedApp({ version: '3.0.3' })
  t.teardown(() => app.close())
  const document = await documentOf(app)
  t.equal(document.openapi, '3.0.3')
  const text = JSON.stringify(document)
  t.notMatch(text, /"type":\[/, 'no type arrays')
  t.notMatch(text, /"type":"null"/, 'no null type')
  t.same(document.components.schemas.Pet.properties.sold_from.anyOf[0], { type: 'integer', nullable: true })
  const schema = document.paths['/pets/{id}'].get.responses['200'].content['application/json'].schema
  const validate = new Ajv({ strict: false }).compile({ ...schema, components: document.components })
  t.ok(validate(JSON.parse((await app.inject('/pets/1?expand=sold_from')).body)), JSON.stringify(validate.errors))
  t.notOk(validate({ id: 'one' }))
})

test('renamed parameters, component prefix, and a transform of its own run first', async (t) => {
  const seen: string[] = []
  const { app } = await buildDocumentedApp({
    pluginOptions: { expandParam: 'include', fieldsParam: 'only', omitParam: 'except' },
    documentation: {
      componentPrefix: 'Api.',
      transform: ({ schema, url }) => {
        seen.push(url)
        return { schema: { ...schema, tags: ['mine'] }, url }
      },
    },
  })
  t.teardown(() => app.close())
  const document = await documentOf(app)
  t.ok(queryParameter(document, '/pets', 'include'))
  t.ok(queryParameter(document, '/pets', 'only'))
  t.ok(queryParameter(document, '/pets', 'except'))
  t.notOk(queryParameter(document, '/pets', 'expand'))
  t.same(document.paths['/pets/{id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Api.Pet' })
  t.same(document.paths['/pets/{id}'].get.tags, ['mine'])
  t.ok(seen.includes('/plain'), 'the chained transform sees every route')
})

test('a component name the application already uses is an error naming componentPrefix', async (t) => {
  const { app } = await buildDocumentedApp({ components: { Pet: { type: 'string' } } })
  t.teardown(() => app.close())
  t.throws(() => app.swagger(), /already has a component 'Pet'; set componentPrefix/)
})

test("a route's own success schema is refused at startup; its error schemas are documented as given", async (t) => {
  const options = { resources }
  const refused = Fastify()
  await refused.register(expandPlugin, options)
  t.teardown(() => refused.close())
  t.throws(() => refused.get('/pets/:id', { expandable: { resource: Pet }, schema: { response: { 200: { description: 'mine', type: 'object' } } } }, async (request) => storedPet(request)), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: "Route GET /pets/:id: schema.response declares '200', but an expandable route's success body is written by fastify-expand for each request: remove it (expandOpenApi documents the body), or declare error statuses (4xx, 5xx) only",
  })
  const app = Fastify()
  await app.register(swagger, { openapi: { info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  const notFound = { description: 'mine', type: 'object', properties: { message: { type: 'string' } } }
  app.get('/pets/:id', { expandable: { resource: Pet }, schema: { response: { 404: notFound } } }, async (request) => storedPet(request))
  await app.ready()
  t.teardown(() => app.close())
  const responses = (app.swagger() as Json).paths['/pets/{id}'].get.responses
  t.same(responses['404'].content['application/json'].schema, notFound)
  t.ok(responses['200'], 'the success response is generated')
  t.ok(responses['400'], 'the error response is still added')
})

test('swagger 2.0 mode is refused with a clear message', async (t) => {
  const app = Fastify()
  await app.register(swagger, { swagger: { info: { title: 't', version: '1' } }, transform: expandOpenApi({ resources }).transform as never })
  await app.register(expandPlugin, { resources })
  app.get('/pets/:id', { expandable: { resource: Pet } }, async (request) => storedPet(request))
  await app.ready()
  t.teardown(() => app.close())
  t.throws(() => app.swagger(), /OpenAPI 3 only/)
})

test('describeRoute and components, without @fastify/swagger', async (t) => {
  const documentation = expandOpenApi({ resources })
  const described: Json = documentation.describeRoute({ resource: Pet, list: true, envelope: 'items', permitListExpands: ['toys'] })
  t.same(described.querystring.expand, { type: 'array', items: { type: 'string', enum: ['toys', '*', '~all'] }, description: described.querystring.expand.description })
  const item = described.response[200].properties.items.items
  t.same(item.properties.toys.anyOf[1].items.properties, { id: { type: 'integer' }, name: { type: 'string' } }, "the toys relation's omit, inline")
  t.same(item.properties.owner, { type: 'integer' }, 'a relation that is not permitted is only its identifier')
  t.same(described.response[400].required, ['statusCode', 'code', 'error', 'message'])
  t.same(documentation.components(), {}, 'a restricted list needs no component')
  documentation.describeRoute({ resource: 'Pet' })
  t.same(Object.keys(documentation.components()).sort(), ['Company', 'Person', 'Pet', 'Pet.sold_from', 'Pet.toys'])
  t.same((documentation.components('3.0.3') as Json).Pet.properties.sold_from.anyOf[0], { type: 'integer', nullable: true })
  t.throws(() => documentation.describeRoute({ resource: 'Nobody' }), /resource 'Nobody' is not registered/)
  t.throws(() => expandOpenApi({ resources }, { maxEnumeratedPaths: 0 }), /maxEnumeratedPaths/)
  t.throws(() => expandOpenApi({ resources, cacheSize: -1 }), /cacheSize/, 'the plugin options are checked as the plugin checks them')
})

test('defaultExpand: the expand parameter says what its absence expands, and takes the empty value', async (t) => {
  const documentation = expandOpenApi({ resources })
  const list: Json = documentation.describeRoute({ resource: Pet, list: true, permitListExpands: ['owner', 'toys'], defaultExpand: ['owner', 'toys'] })
  t.same(list.querystring.expand, {
    type: 'array',
    items: { type: 'string', enum: ['', 'owner', 'toys', '*', '~all'] },
    description: 'Relations to expand (depth 5 at most). Comma-separated or repeated; dot notation reaches nested relations. This list route permits only the paths listed. ' +
      '`*` or `~all` expands every permitted relation of a level. Without this parameter, `owner`, `toys` are expanded; `expand=` (empty) expands none.',
    default: ['owner', 'toys'],
  })
  const detail: Json = documentation.describeRoute({ resource: 'Pet', defaultExpand: ['owner'] })
  t.match(detail.querystring.expand.description, /Without this parameter, `owner` is expanded; `expand=` \(empty\) expands none\.$/)
  t.same(detail.querystring.expand.default, ['owner'])
  const plain: Json = documentation.describeRoute({ resource: 'Pet' })
  t.notOk('default' in plain.querystring.expand, 'no defaultExpand, no default')
  t.notMatch(plain.querystring.expand.description, /Without this parameter/)
})

test('a to-many relation with limit is documented with maxItems, as ids and expanded', async (t) => {
  const Shelf = defineResource({
    name: 'Shelf',
    schema: Type.Object({ id: Type.Integer(), toys: Type.Array(Type.Integer()) }),
    fields: ['id', 'toys'],
    expandable: { toys: [Toy, { many: true, foreignKey: 'shelf_id', limit: 2 }] },
  })
  const documentation = expandOpenApi({ resources: [Shelf, Toy] })
  documentation.describeRoute({ resource: Shelf })
  const toys: Json = (documentation.components() as Json).Shelf.properties.toys
  t.same(toys.anyOf.map((member: Json) => [member.type, member.maxItems]), [['array', 2], ['array', 2]])
})

test('path enumeration is bounded on cyclic graphs', async (t) => {
  const Node = defineResource({
    name: 'Node',
    schema: Type.Object({ id: Type.Integer(), parent: Type.Integer(), children: Type.Array(Type.Integer()), partner: Type.Integer() }),
    fields: ['id', 'parent'],
    expandable: { parent: 'Node', children: ['Node', { many: true }], partner: 'Node' },
  })
  const node = new ResourceGraph([Node]).node(Node)
  const all = enumerateExpansionPaths(node, { maxDepth: 2, allowRecursive: true, permitted: undefined, limit: 100 })
  t.same(all, {
    complete: true,
    depth: 2,
    paths: ['parent', 'parent.parent', 'parent.children', 'parent.partner', 'children', 'children.parent', 'children.children', 'children.partner', 'partner', 'partner.parent', 'partner.children', 'partner.partner'],
  })
  const noRepeats = enumerateExpansionPaths(node, { maxDepth: 3, allowRecursive: false, permitted: undefined, limit: 100 })
  t.equal(noRepeats.paths.length, 3 + 6 + 6, 'allowRecursive: false drops paths that repeat a field')
  t.ok(noRepeats.complete)
  const deep = enumerateExpansionPaths(node, { maxDepth: 50, allowRecursive: true, permitted: undefined, limit: 200 })
  t.same({ complete: deep.complete, depth: deep.depth, count: deep.paths.length }, { complete: false, depth: 4, count: 3 + 9 + 27 + 81 }, 'stops at the last whole depth under the limit')

  const documentation = expandOpenApi({ resources: [Node], maxDepth: 50 }, { maxEnumeratedPaths: 50 })
  const expand: Json = documentation.describeRoute({ resource: Node }).querystring.expand
  t.notOk(expand.items.enum, 'an incomplete list is not offered as an enum')
  t.match(expand.description, /up to 50 levels deep: parent, children, partner/)
  t.same(Object.keys(documentation.components()), ['Node'], 'one component, however deep the cycle')
})

test('always-nested relations and relation expand options', async (t) => {
  const Author = defineResource({ name: 'Author', schema: Type.Object({ id: Type.Integer(), name: Type.String(), team: Type.Integer() }), fields: ['id', 'name'], expandable: { team: Company } })
  const Book = defineResource({
    name: 'Book',
    schema: Type.Object({ id: Type.Integer(), author: Type.Integer(), store: Type.Union([Type.Integer(), Type.Null()]) }),
    fields: ['id', 'author', 'store'],
    nested: { author: [Author, { expand: ['team'] }] },
    expandable: { store: PetStore },
  })
  const documentation = expandOpenApi({ resources: [Book, Toy, Person] })
  documentation.describeRoute({ resource: Book })
  const components: Json = documentation.components()
  t.same(components.Book.properties.author, { description: 'The Author, always nested', $ref: '#/components/schemas/Book.author' })
  t.same(components['Book.author'].properties.team, { description: 'The Company, always nested', $ref: '#/components/schemas/Company' }, "the relation's expand option")
  t.same(components.Book.properties.store.anyOf, [{ type: ['integer', 'null'] }, { $ref: '#/components/schemas/PetStore' }])

  const list: Json = documentation.describeRoute({ resource: Book, list: true, permitListExpands: [] })
  t.same(list.response[200].items.properties.author.properties.team.properties.name, { type: 'string' }, 'always nested even where nothing is permitted')
  t.same(list.response[200].items.properties.store, { type: ['integer', 'null'] })
})

test('toOpenApi30 rewrites every null form, at any depth', async (t) => {
  t.same(toOpenApi30({
    type: 'object',
    properties: {
      a: { type: ['integer', 'null'], description: 'd' },
      b: { type: ['string', 'integer', 'null'] },
      c: { anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'null' }] },
      d: { type: 'array', items: { type: ['boolean', 'null'] } },
      e: { type: 'string', enum: ['x'] },
      f: { description: 'described', $ref: '#/components/schemas/X' },
      g: { type: 'object', properties: { type: { type: 'null' } }, examples: [{ type: 'null' }] },
    },
    examples: [{ a: 1 }, { a: 2 }],
  }), {
    type: 'object',
    properties: {
      a: { type: 'integer', nullable: true, description: 'd' },
      b: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'object', nullable: true, enum: [null] }] },
      c: { anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'object', nullable: true, enum: [null] }] },
      d: { type: 'array', items: { type: 'boolean', nullable: true } },
      e: { type: 'string', enum: ['x'] },
      f: { description: 'described', allOf: [{ $ref: '#/components/schemas/X' }] },
      g: { type: 'object', properties: { type: { type: 'object', nullable: true, enum: [null] } }, example: { type: 'null' } },
    },
    example: { a: 1 },
  }, 'examples become one example, left as data; a described $ref becomes a described allOf')
})
