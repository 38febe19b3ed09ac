import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { createSerializer, defineResource, type AnyResource } from '../../plugin/index.js'
import { Company, Person, Pet, resources } from '../fixtures/pets.js'
import { buildApp, getJson, MemoryStore } from '../helpers/app.js'
import { defaults, petStore } from '../helpers/pet-world.js'

const { jon, acme } = defaults

/** A resource whose one relation `employer` points at `reference`. */
const employeeOf = (reference: AnyResource | string | (() => AnyResource)) => defineResource({
  name: 'Employee',
  schema: Type.Object({ id: Type.Integer(), employer: Type.Integer() }),
  fields: ['id', 'employer'],
  expandable: { employer: reference },
})

t.test("lazy references: 'Company', 'people.Person' and thunks", async (t) => {
  const Contract = defineResource({
    name: 'Contract',
    schema: Type.Object({
      id: Type.Integer(), a: Type.Integer(), b: Type.Integer(), c: Type.Integer(), d: Type.Integer(), e: Type.Integer(),
    }),
    fields: ['id', 'a', 'b', 'c', 'd', 'e'],
    expandable: { a: 'Person', b: 'people.Person', c: 'people.Person', d: () => Person, e: 'Company' },
  })
  const store = new MemoryStore(
    { ...{ Person: { 8: petStore.get('Person', 8)! }, Company: { 4: petStore.get('Company', 4)! } }, Contract: { 1: { id: 1, a: 8, b: 8, c: 8, d: 8, e: 4 } } },
    { Contract: { a: { type: 'Person' }, b: { type: 'Person' }, c: { type: 'Person' }, d: { type: 'Person' }, e: { type: 'Company' } }, Person: { employer: { type: 'Company' } } }
  )
  const app = await buildApp({ resources: [Contract, Person, Company] }, (app) => {
    app.get('/contract', { expandable: { resource: 'Contract' } }, async (request) => store.shape(request, 'Contract', store.get('Contract', 1)!))
  })
  t.same((await getJson(app, '/contract?expand=a,b,c,d.employer,e')).body, { id: 1, a: jon, b: jon, c: jon, d: { ...jon, employer: acme }, e: acme })
})

t.test('routes name resources by the same references', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    for (const name of ['Person', 'people.Person']) {
      app.get(`/${name}`, { expandable: { resource: name } }, async (request) => petStore.shape(request, 'Person', petStore.get('Person', 8)!))
    }
    app.get('/object', { expandable: { resource: Person } }, async (request) => petStore.shape(request, 'Person', petStore.get('Person', 8)!))
  })
  for (const url of ['/Person', '/people.Person', '/object']) {
    t.equal((await getJson(app, `${url}?expand=employer`)).text, JSON.stringify({ ...jon, employer: acme }), url)
  }
})

t.test("one spelling per resource: the earlier form 'people.resources.Person' is a startup error naming the registered ones", async (t) => {
  t.throws(() => createSerializer(employeeOf('people.resources.Person'), { resources }), {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: /^Resource 'Employee', field 'employer': .*'people\.resources\.Person'/,
  })
})

t.test('mutual references resolve, by name and by thunk', async (t) => {
  const Author: AnyResource = defineResource({
    name: 'Author',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), books: Type.Array(Type.Integer()) }),
    fields: ['id', 'name'],
    expandable: { books: [() => Book, { many: true }] },
  })
  const Book: AnyResource = defineResource({
    name: 'Book',
    schema: Type.Object({ id: Type.Integer(), title: Type.String(), author: Type.Integer() }),
    fields: ['id', 'title', 'author'],
    expandable: { author: 'Author' },
  })
  const store = new MemoryStore(
    { Author: { 1: { id: 1, name: 'Le Guin', books: [10] } }, Book: { 10: { id: 10, title: 'Earthsea', author: 1 } } },
    { Author: { books: { type: 'Book', many: true } }, Book: { author: { type: 'Author' } } }
  )
  // Registering one side is enough when the other is reached through a thunk.
  const app = await buildApp({ resources: [Author] }, (app) => {
    app.get('/books/10', { expandable: { resource: 'Book' } }, async (request) => store.shape(request, 'Book', store.get('Book', 10)!))
  })
  t.equal((await getJson(app, '/books/10?expand=author.books.author')).text,
    '{"id":10,"title":"Earthsea","author":{"id":1,"name":"Le Guin","books":[{"id":10,"title":"Earthsea","author":{"id":1,"name":"Le Guin"}}]}}')
})

t.test('a bare name finds a namespaced resource when unambiguous; qualified names pick one of several', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), label: Type.String() })
  const Left = defineResource({ name: 'Unit', namespace: 'left', schema, fields: ['id'] })
  const Right = defineResource({ name: 'Unit', namespace: 'right', schema, fields: ['label'] })
  const Pair = defineResource({
    name: 'Pair',
    schema: Type.Object({ id: Type.Integer(), left: Type.Integer(), right: Type.Integer() }),
    fields: ['id', 'left', 'right'],
    expandable: { left: 'left.Unit', right: 'right.Unit' },
  })
  const serializer = createSerializer(Pair, { expand: 'left,right', resources: [Left, Right] })
  t.equal(serializer.stringify({ id: 1, left: { id: 2, label: 'l' }, right: { id: 3, label: 'r' } }), '{"id":1,"left":{"id":2},"right":{"label":"r"}}')
  t.throws(() => createSerializer(employeeOf('Unit'), { resources: [Left, Right] }),
    { code: 'FST_EXPAND_INVALID_DEFINITION', message: "Resource 'Employee', field 'employer': 'Unit' is ambiguous, use one of 'left.Unit', 'right.Unit'" })
  t.equal(createSerializer(employeeOf('Unit'), { resources: [Left], expand: 'employer' }).stringify({ id: 1, employer: { id: 2 } }), '{"id":1,"employer":{"id":2}}')
})

t.test('an unresolvable reference names the resource, the field and the reference', async (t) => {
  t.throws(() => createSerializer(employeeOf('Nobody')),
    { code: 'FST_EXPAND_INVALID_DEFINITION', message: /^Resource 'Employee', field 'employer': resource 'Nobody' is not registered/ })
  t.throws(() => createSerializer(employeeOf('other.Company'), { resources: [Company] }),
    { code: 'FST_EXPAND_INVALID_DEFINITION', message: /Resource 'Employee', field 'employer': resource 'other\.Company' is not registered/ })
  t.throws(() => createSerializer(employeeOf(() => { throw new Error('not yet') })),
    { code: 'FST_EXPAND_INVALID_DEFINITION', message: /Resource 'Employee', field 'employer': the reference function threw: not yet/ })
  // (the same failures at app.ready() are in startup-errors.test.ts)
})

t.test('a route naming an unregistered resource fails when it is added', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  t.throws(() => app.get('/x', { expandable: { resource: 'Nobody' } }, async () => ({})), { message: /Route GET \/x.*'Nobody'/ })
  t.throws(() => app.get('/y', { expandable: { resource: employeeOf(Company) } }, async () => ({})), { message: /Route GET \/y.*'Employee' is not registered/ })
  // Another resource of a registered name (another defineResource call): said so, not that the name is unregistered.
  const { kind: _kind, ...petDefinition } = Pet
  t.throws(() => app.get('/z', { expandable: { resource: defineResource(petDefinition) } }, async () => ({})), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: "Route GET /z: resource 'Pet' is not the one registered under that name (another defineResource call made it): " +
      'name the registered one, or register this one',
  })
})

t.test("a route naming an unregistered resource is a route option error (README: 'a plugin, route or routes() option is wrong')", async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  t.throws(() => app.get('/x', { expandable: { resource: 'Nobody' } }, async () => ({})), { code: 'FST_EXPAND_INVALID_OPTION' })
})

t.test('two apps may each define a resource of the same name', async (t) => {
  const First = defineResource({ name: 'Thing', schema: Type.Object({ id: Type.Integer(), a: Type.String() }), fields: ['id', 'a'] })
  const Second = defineResource({ name: 'Thing', schema: Type.Object({ id: Type.Integer(), b: Type.Boolean() }), fields: ['b'] })
  const data = { id: 1, a: 'x', b: true }
  const first = await buildApp({ resources: [First] }, (app) => { app.get('/t', { expandable: { resource: 'Thing' } }, async () => data) })
  const second = await buildApp({ resources: [Second] }, (app) => { app.get('/t', { expandable: { resource: 'Thing' } }, async () => data) })
  t.equal((await getJson(first, '/t')).text, '{"id":1,"a":"x"}')
  t.equal((await getJson(second, '/t')).text, '{"b":true}')
  t.equal((await getJson(first, '/t?fields=b')).status, 400, "each app validates against its own 'Thing'")
})

t.test('the same resource in two registries resolves its lazy names in each', async (t) => {
  const OneCompany = defineResource({ name: 'Company', schema: Type.Object({ id: Type.Integer(), one: Type.String() }), fields: ['one'] })
  const TwoCompany = defineResource({ name: 'Company', schema: Type.Object({ id: Type.Integer(), two: Type.String() }), fields: ['two'] })
  const Employee = employeeOf('Company')
  const data = { id: 1, employer: { id: 2, one: '1', two: '2' } }
  t.equal(createSerializer(Employee, { expand: 'employer', resources: [OneCompany] }).stringify(data), '{"id":1,"employer":{"one":"1"}}')
  t.equal(createSerializer(Employee, { expand: 'employer', resources: [TwoCompany] }).stringify(data), '{"id":1,"employer":{"two":"2"}}')
})
