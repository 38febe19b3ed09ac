import t from 'tap'
import { createSerializer } from '../../plugin/index.js'
import { Company, Person, Pet, PetStore, resources, Toy } from '../fixtures/pets.js'
import { getJson } from '../helpers/app.js'
import { buildPetApp, defaults } from '../helpers/pet-world.js'

const { garfield, odie, jon, fred, acme, mcdonalds, toys } = defaults

// Data as a handler would load it for `expand=owner.employer,toys`, with properties no resource declares.
const loaded = {
  id: 1,
  name: 'Garfield',
  species: 'cat',
  sold_from: null,
  password: 'hash',
  owner: { id: 8, name: 'Jon', hobbies: 'lasagna', ssn: '456', employer: { id: 4, name: 'Acme', public: true, internal: 'y' } },
  toys: [{ id: 1, name: 'paper ball', secret: 's1' }, { id: 2, name: 'string', secret: 's2' }],
}

t.test('stringify writes exactly JSON.stringify of the expected object', async (t) => {
  const cases: [object, unknown, unknown][] = [
    [{}, { ...loaded, owner: 8, toys: [1, 2] }, garfield],
    [{ expand: 'owner.employer,toys' }, loaded, { ...garfield, owner: { ...jon, employer: acme }, toys }],
    [{ expand: ['owner.employer', 'toys'] }, loaded, { ...garfield, owner: { ...jon, employer: acme }, toys }],
    [{ expand: ['owner', 'owner.employer'], fields: 'name,owner.employer' }, loaded, { name: 'Garfield', owner: { employer: acme } }],
    [{ expand: 'owner', fields: ['id', 'owner.name'], omit: [] }, loaded, { id: 1, owner: { name: 'Jon' } }],
    [{ expand: 'owner.employer', omit: 'species,toys,owner.hobbies,owner.employer.public' }, loaded,
      { id: 1, name: 'Garfield', owner: { id: 8, name: 'Jon', employer: { name: 'Acme' } }, sold_from: null }],
    [{ expand: '*' }, { ...loaded, owner: { ...loaded.owner, employer: 4 } }, { ...garfield, owner: jon, sold_from: null, toys }],
  ]
  for (const [options, data, expected] of cases) {
    const serializer = createSerializer(Pet, { ...options, resources })
    t.equal(serializer.stringify(data), JSON.stringify(expected), JSON.stringify(options))
    t.same(serializer.shape(data), expected, `shape: ${JSON.stringify(options)}`)
  }
})

t.test('list: true serializes an array', async (t) => {
  const serializer = createSerializer(Pet, { list: true, expand: 'owner', fields: 'name,owner.name', resources })
  const data = [{ ...loaded, owner: { name: 'Jon' } }, { name: 'Odie', owner: { name: 'Fred', ssn: '1' } }]
  t.equal(serializer.stringify(data), '[{"name":"Garfield","owner":{"name":"Jon"}},{"name":"Odie","owner":{"name":"Fred"}}]')
  t.equal(createSerializer(Pet, { list: true, resources }).stringify([]), '[]')
})

t.test('permittedExpands restricts expansions whenever given', async (t) => {
  const data = { ...loaded, owner: { ...loaded.owner, employer: 4 }, toys: [1, 2] }
  t.equal(createSerializer(Pet, { expand: 'owner', permittedExpands: ['owner'], resources }).stringify(data), JSON.stringify({ ...garfield, owner: jon }))
  t.equal(createSerializer(Pet, { expand: '*', permittedExpands: ['owner'], resources }).stringify(data), JSON.stringify({ ...garfield, owner: jon }))
  t.throws(() => createSerializer(Pet, { expand: 'toys', permittedExpands: ['owner'], list: true, resources }),
    { code: 'FST_EXPAND_NOT_PERMITTED', statusCode: 400, message: "Cannot expand 'toys' on a list of Pet: permitted expansions are owner" })
  t.throws(() => createSerializer(Pet, { expand: 'owner.employer', permittedExpands: ['owner'], list: false, resources }),
    { code: 'FST_EXPAND_NOT_PERMITTED' }, 'not only on lists')
  t.throws(() => createSerializer(Pet, { permittedExpands: ['owner.nope'], resources }), { message: /owner\.nope/ }, 'permitted paths must exist')
})

t.test('the resources registry resolves lazy names; by default only what the resource reaches', async (t) => {
  for (const registry of [{ Company }, 'Company', null]) {
    t.throws(() => createSerializer(Person, { resources: registry as never }),
      { code: 'FST_EXPAND_INVALID_OPTION', message: 'fastify-expand: resources must be an array of resources' }, `resources: ${registry === null ? 'null' : typeof registry}`)
  }
  t.throws(() => createSerializer(Person, { expand: 'employer' }),
    { code: 'FST_EXPAND_INVALID_DEFINITION', message: /Resource 'people\.Person', field 'employer': resource 'Company' is not registered/ })
  t.equal(createSerializer(Person, { expand: 'employer', resources: [Company] }).stringify({ id: 7, name: 'Fred', hobbies: 'sailing', employer: { name: 'McDonalds', public: false } }),
    JSON.stringify({ ...fred, employer: mcdonalds }))
  t.equal(createSerializer(Toy).stringify({ id: 1, name: 'ball', secret: 'x' }), '{"id":1,"name":"ball","secret":"x"}', 'Toy alone has no references to resolve')
  t.equal(createSerializer(PetStore, { resources: [PetStore] }).stringify({ id: 5, name: 'PetCo', address: 'here' }), '{"id":5,"name":"PetCo","address":"here"}')
})

t.test('invalid options throw when the serializer is created, with the code of the HTTP 400', async (t) => {
  const app = await buildPetApp({}, { permitListExpands: ['owner'] })
  const cases: [string, object, string][] = [
    ['expand=nope', { expand: 'nope' }, '/pets/1'],
    ['expand=owner.nope', { expand: ['owner.nope'] }, '/pets/1'],
    ['fields=nope', { fields: 'nope' }, '/pets/1'],
    ['omit=owner.nope&expand=owner', { omit: 'owner.nope', expand: 'owner' }, '/pets/1'],
    ['expand=owner..employer', { expand: 'owner..employer' }, '/pets/1'],
    ['expand=owner.employer.a.b.c.d', { expand: 'owner.employer.a.b.c.d' }, '/pets/1'],
    [`expand=${'x'.repeat(2001)}`, { expand: 'x'.repeat(2001) }, '/pets/1'],
    ['expand=toys', { expand: 'toys', list: true, permittedExpands: ['owner'] }, '/pets'],
  ]
  for (const [query, options, url] of cases) {
    const reply = await getJson(app, `${url}?${query}`)
    t.equal(reply.status, 400, query.slice(0, 40))
    const { code, message } = reply.body as { code: string; message: string }
    t.throws(() => createSerializer(Pet, { ...options, resources }), { code, message, statusCode: 400 }, query.slice(0, 40))
  }
})

t.test('stringify does not validate: the plan is fixed at creation', async (t) => {
  const serializer = createSerializer(Pet, { fields: 'name', resources })
  t.equal(serializer.stringify({ name: 'Odie', expand: 'owner' }), '{"name":"Odie"}')
  t.equal(serializer.stringify(odie), '{"name":"Odie"}')
})
