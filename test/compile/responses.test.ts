import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../plugin/index.js'
import { buildApp, getJson, MemoryStore } from '../helpers/app.js'
import { buildPetApp, defaults } from '../helpers/pet-world.js'

const { garfield, odie, jon, acme, petco, toys } = defaults

t.test('default response: relations as identifiers, undeclared properties never written', async (t) => {
  const app = await buildPetApp()
  const reply = await getJson(app, '/pets/1')
  t.equal(reply.status, 200)
  t.equal(reply.contentType, 'application/json; charset=utf-8')
  t.equal(reply.text, JSON.stringify(garfield))
  t.same(reply.body, garfield)
  t.notMatch(reply.text, /password/)
})

t.test('to-one expanded: an object with the nested resource\'s default fields', async (t) => {
  const app = await buildPetApp()
  const reply = await getJson(app, '/pets/1?expand=owner')
  t.equal(reply.status, 200)
  t.equal(reply.text, JSON.stringify({ ...garfield, owner: jon }))
  // Person's deferred employer is absent, its undeclared ssn never written
  t.notMatch(reply.text, /employer|ssn/)
})

t.test('to-many expanded: an array of objects, relation option omit applied', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?expand=toys')).text, JSON.stringify({ ...garfield, toys }))
  t.equal((await getJson(app, '/pets/2?expand=toys')).text, JSON.stringify({ ...odie, toys: [] }), 'empty to-many is []')
})

t.test('nested a.b expansion', async (t) => {
  const app = await buildPetApp()
  const reply = await getJson(app, '/pets/1?expand=owner.employer')
  t.equal(reply.text, JSON.stringify({ ...garfield, owner: { ...jon, employer: acme } }))
  t.notMatch(reply.text, /internal/)
})

t.test('relation option fields narrow the nested resource', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/2?expand=sold_from')).text, JSON.stringify({ ...odie, sold_from: petco }))
  // the query can only narrow what the relation option allows: outside it, address does not exist
  const narrowed = await getJson(app, '/pets/2?expand=sold_from&fields=sold_from.address')
  t.same(narrowed.body, {
    statusCode: 400,
    code: 'FST_EXPAND_UNKNOWN_FIELD',
    error: 'Bad Request',
    message: "Unknown field 'sold_from.address' in 'fields': PetStore has id, name",
  })
  const toyReply = await getJson(app, '/pets/1?expand=toys&fields=toys.secret,toys.name')
  t.same(toyReply.body, {
    statusCode: 400,
    code: 'FST_EXPAND_UNKNOWN_FIELD',
    error: 'Bad Request',
    message: "Unknown field 'toys.secret' in 'fields': Toy has id, name",
  })
  t.same((await getJson(app, '/pets/1?expand=toys&fields=toys.name')).body, { toys: [{ name: 'paper ball' }, { name: 'string' }] })
})

t.test('null to-one: expanded relation with a null key is null', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?expand=sold_from')).text, JSON.stringify(garfield))
  t.equal((await getJson(app, '/pets/1?expand=sold_from&fields=sold_from')).text, '{"sold_from":null}')
})

t.test('to-one whose related row is missing is null', async (t) => {
  const Owner = defineResource({ name: 'Owner', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
  const Car = defineResource({
    name: 'Car',
    schema: Type.Object({ id: Type.Integer(), owner: Type.Integer() }),
    fields: ['id', 'owner'],
    expandable: { owner: Owner },
  })
  const store = new MemoryStore({ Car: { 1: { id: 1, owner: 99 } }, Owner: {} }, { Car: { owner: { type: 'Owner' } } })
  const app = await buildApp({ resources: [Car] }, (app) => {
    app.get('/cars/1', { expandable: { resource: Car } }, async (request) => store.shape(request, 'Car', store.get('Car', 1)!))
  })
  t.equal((await getJson(app, '/cars/1?expand=owner')).text, '{"id":1,"owner":null}')
  t.equal((await getJson(app, '/cars/1')).text, '{"id":1,"owner":99}')
})

t.test('fields and omit at several depths', async (t) => {
  const app = await buildPetApp()
  const cases: [string, unknown][] = [
    ['fields=name,species', { name: 'Garfield', species: 'cat' }],
    ['fields=species,name', { name: 'Garfield', species: 'cat' }],
    ['omit=id,owner,toys', { name: 'Garfield', species: 'cat', sold_from: null }],
    ['expand=owner&fields=name,owner.name', { name: 'Garfield', owner: { name: 'Jon' } }],
    ['expand=owner.employer&fields=name,owner.name,owner.employer.name', { name: 'Garfield', owner: { name: 'Jon', employer: { name: 'Acme' } } }],
    ['expand=owner.employer&omit=id,species,sold_from,toys,owner.hobbies,owner.employer.public',
      { name: 'Garfield', owner: { id: 8, name: 'Jon', employer: { name: 'Acme' } } }],
    ['expand=owner.employer&fields=owner&omit=owner.id,owner.employer.name',
      { owner: { name: 'Jon', hobbies: 'lasagna', employer: { public: true } } }],
  ]
  for (const [query, expected] of cases) {
    const reply = await getJson(app, `/pets/1?${query}`)
    t.equal(reply.status, 200, query)
    t.equal(reply.text, JSON.stringify(expected), query)
  }
})

t.test('fields takes precedence over expand', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?expand=owner,toys&fields=name')).text, '{"name":"Garfield"}')
  t.equal((await getJson(app, '/pets/1?expand=owner&omit=owner')).text, JSON.stringify({ id: 1, name: 'Garfield', species: 'cat', sold_from: null, toys: [1, 2] }))
  // every expand path is still validated
  const invalid = await getJson(app, '/pets/1?expand=owner.nope&fields=name')
  t.equal(invalid.status, 400)
  t.match(invalid.body, { code: 'FST_EXPAND_UNKNOWN_FIELD' })
})

t.test('omit of a nested field keeps its parent', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?expand=owner&omit=owner.hobbies')).text, JSON.stringify({ ...garfield, owner: { id: 8, name: 'Jon' } }))
  t.equal((await getJson(app, '/pets/1?expand=owner&omit=owner.id,owner.name,owner.hobbies')).text, JSON.stringify({ ...garfield, owner: {} }))
})

t.test('nested fields/omit under a relation that is not expanded: no effect, not validated', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?omit=owner.hobbies')).text, JSON.stringify(garfield))
  t.equal((await getJson(app, '/pets/1?omit=owner.nope')).text, JSON.stringify(garfield))
  t.equal((await getJson(app, '/pets/1?fields=owner.name')).text, '{"owner":8}')
  t.equal((await getJson(app, '/pets/1?fields=name,owner.nope.deeper')).text, '{"name":"Garfield","owner":8}')
  t.equal((await getJson(app, '/pets/1?expand=owner&omit=owner.employer.nope')).text, JSON.stringify({ ...garfield, owner: jon }))
})

t.test('fields/omit naming a field the resource does not have is a 400', async (t) => {
  const app = await buildPetApp()
  for (const query of ['fields=password', 'omit=password', 'expand=owner&fields=owner.ssn', 'expand=owner&omit=owner.ssn']) {
    const reply = await getJson(app, `/pets/1?${query}`)
    t.equal(reply.status, 400, query)
    t.match(reply.body, { code: 'FST_EXPAND_UNKNOWN_FIELD' }, query)
  }
})

t.test('wildcard fields=* keeps the default field set of its level', async (t) => {
  const app = await buildPetApp()
  t.equal((await getJson(app, '/pets/1?fields=*')).text, JSON.stringify(garfield))
  t.equal((await getJson(app, '/pets/1?fields=~all')).text, JSON.stringify(garfield))
  t.equal((await getJson(app, '/pets/1?fields=*,owner.name&expand=owner')).text, JSON.stringify({ ...garfield, owner: { name: 'Jon' } }))
  t.equal((await getJson(app, '/pets/2?fields=id,sold_from.*&expand=sold_from')).text, JSON.stringify({ id: 2, sold_from: petco }))
})

// A resource whose relations are all deferred, declared in an order unlike the query's.
const Author = defineResource({ name: 'Author', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
const Book = defineResource({
  name: 'Book',
  schema: Type.Object({
    id: Type.Integer(),
    title: Type.String(),
    author: Type.Integer(),
    editor: Type.Integer(),
    reviewers: Type.Array(Type.Integer()),
  }),
  fields: ['title', 'id', 'author'],
  expandable: { reviewers: [Author, { many: true }], author: Author, editor: Author },
})
const bookStore = new MemoryStore(
  {
    Book: { 1: { editor: 2, reviewers: [2, 1], author: 1, title: 'Dune', id: 1 } },
    Author: { 1: { name: 'Frank', id: 1 }, 2: { id: 2, name: 'Sterling' } },
  },
  { Book: { author: { type: 'Author' }, editor: { type: 'Author' }, reviewers: { type: 'Author', many: true } } }
)

const bookApp = () => buildApp({ resources: [Book] }, (app) => {
  app.get('/books/1', { expandable: { resource: 'Book' } }, async (request) => bookStore.shape(request, 'Book', bookStore.get('Book', 1)!))
})

t.test('key order: resource fields, then expanded deferred fields in expandable order; never query order', async (t) => {
  const app = await bookApp()
  t.equal((await getJson(app, '/books/1')).text, '{"title":"Dune","id":1,"author":1}')
  const expected = '{"title":"Dune","id":1,"author":{"id":1,"name":"Frank"},"reviewers":[{"id":2,"name":"Sterling"},{"id":1,"name":"Frank"}],"editor":{"id":2,"name":"Sterling"}}'
  for (const query of ['expand=editor,reviewers,author', 'expand=author,editor,reviewers', 'expand=reviewers&expand=editor&expand=author', 'expand=*']) {
    t.equal((await getJson(app, `/books/1?${query}`)).text, expected, query)
  }
  t.equal((await getJson(app, '/books/1?expand=editor,reviewers&fields=editor,title')).text, '{"title":"Dune","editor":{"id":2,"name":"Sterling"}}')
  t.equal((await getJson(app, '/books/1?expand=editor&fields=editor.name,editor.id')).text, '{"editor":{"id":2,"name":"Sterling"}}')
})

t.test('deferred relation: absent unless expanded', async (t) => {
  const app = await bookApp()
  t.equal((await getJson(app, '/books/1?fields=editor')).text, '{}', 'fields cannot show a deferred relation that is not expanded')
  t.equal((await getJson(app, '/books/1?expand=editor&fields=editor')).text, '{"editor":{"id":2,"name":"Sterling"}}')
})

t.test('nested: a field always shown as a nested object', async (t) => {
  const Company = defineResource({
    name: 'Company',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), country: Type.Integer() }),
    fields: ['id', 'name'],
    expandable: { country: 'Country' },
  })
  const Country = defineResource({ name: 'Country', schema: Type.Object({ id: Type.Integer(), code: Type.String() }), fields: ['id', 'code'] })
  const Employee = defineResource({
    name: 'Employee',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), employer: Type.Integer(), past: Type.Array(Type.Integer()) }),
    fields: ['id', 'employer', 'name', 'past'],
    nested: { employer: [Company, { omit: ['id'] }], past: [Company, { many: true, fields: ['name'] }] },
  })
  const store = new MemoryStore(
    {
      Employee: { 1: { id: 1, name: 'Ada', employer: 10, past: [11, 10] } },
      Company: { 10: { id: 10, name: 'Babbage & Co', country: 44 }, 11: { id: 11, name: 'Analytical', country: 44 } },
      Country: { 44: { id: 44, code: 'GB' } },
    },
    { Employee: { employer: { type: 'Company' }, past: { type: 'Company', many: true } }, Company: { country: { type: 'Country' } } }
  )
  const app = await buildApp({ resources: [Employee, Country] }, (app) => {
    app.get('/employees/1', { expandable: { resource: Employee } }, async (request) => store.shape(request, 'Employee', store.get('Employee', 1)!))
  })
  t.equal((await getJson(app, '/employees/1')).text,
    '{"id":1,"employer":{"name":"Babbage & Co"},"name":"Ada","past":[{"name":"Analytical"},{"name":"Babbage & Co"}]}')
  t.equal((await getJson(app, '/employees/1?expand=employer.country&fields=employer')).text,
    '{"employer":{"name":"Babbage & Co","country":{"id":44,"code":"GB"}}}')
  t.equal((await getJson(app, '/employees/1?omit=employer.name,past')).text, '{"id":1,"employer":{},"name":"Ada"}')
})

t.test('relation option expand: nested expansions always applied with the relation', async (t) => {
  const Country = defineResource({ name: 'Country', schema: Type.Object({ id: Type.Integer(), code: Type.String() }), fields: ['code'] })
  const City = defineResource({
    name: 'City',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), country: Type.Integer() }),
    fields: ['name', 'country'],
    expandable: { country: Country },
  })
  const Trip = defineResource({
    name: 'Trip',
    schema: Type.Object({ id: Type.Integer(), from: Type.Integer(), to: Type.Integer() }),
    fields: ['id', 'from', 'to'],
    expandable: { from: [City, { expand: ['country'] }], to: City },
  })
  const store = new MemoryStore(
    { Trip: { 1: { id: 1, from: 1, to: 1 } }, City: { 1: { id: 1, name: 'Lyon', country: 33 } }, Country: { 33: { id: 33, code: 'FR' } } },
    { Trip: { from: { type: 'City' }, to: { type: 'City' } }, City: { country: { type: 'Country' } } }
  )
  const app = await buildApp({ resources: [Trip] }, (app) => {
    app.get('/trip', { expandable: { resource: Trip } }, async (request) => store.shape(request, 'Trip', store.get('Trip', 1)!))
  })
  t.equal((await getJson(app, '/trip')).text, '{"id":1,"from":1,"to":1}', 'nothing applied while the relation is not expanded')
  t.equal((await getJson(app, '/trip?expand=from,to')).text, '{"id":1,"from":{"name":"Lyon","country":{"code":"FR"}},"to":{"name":"Lyon","country":33}}')
  t.equal((await getJson(app, '/trip?expand=from&fields=from.name')).text, '{"from":{"name":"Lyon"}}', 'fields still narrows it')
})

t.test('HEAD on an expandable route answers like GET without a body', async (t) => {
  const app = await buildPetApp()
  const head = await app.inject({ method: 'HEAD', url: '/pets/1?expand=owner' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal((await app.inject({ method: 'HEAD', url: '/pets/1?expand=nope' })).statusCode, 400)
})
