import { Ajv } from 'ajv'
import t0, { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { inMemoryDemo } from '../../demo/readme-examples.js'

/* The OpenAPI document of the demo app: parameters, response schemas, and real responses validated against them. */

type Json = Record<string, any>

const { app, close } = await inMemoryDemo()
t0.teardown(close)
const document: Json = (await app.inject('/docs/json')).json()

function operation (path: string): Json {
  const found = document.paths[path]?.get
  if (found === undefined) throw new Error(`no GET ${path} in the document`)
  return found
}

function parameter (path: string, name: string): Json | undefined {
  return operation(path).parameters?.find((candidate: Json) => candidate.name === name && candidate.in === 'query')
}

/** A validator of one documented response, its `$ref`s resolved against the document's components. */
function validatorOf (path: string, status: string) {
  const schema = operation(path).responses[status].content['application/json'].schema
  return new Ajv({ strict: false, allErrors: true }).compile({ ...schema, components: document.components })
}

async function get (target: FastifyInstance, url: string): Promise<unknown> {
  const response = await target.inject(url)
  return JSON.parse(response.body)
}

test('the document is OpenAPI 3.1 and lists every demo route', async (t) => {
  t.equal(document.openapi, '3.1.0')
  for (const prefix of ['/companies', '/people', '/pets', '/pet-stores', '/toys', '/vets', '/visits']) {
    t.ok(document.paths[prefix]?.get, `${prefix}`)
    t.ok(document.paths[`${prefix}/{id}`]?.get, `${prefix}/{id}`)
  }
  t.ok(document.paths['/health']?.get)
})

test('a list route documents exactly its permitted expansions', async (t) => {
  t.same(parameter('/pets', 'expand')?.schema, {
    type: 'array',
    items: { type: 'string', enum: ['owner', 'owner.employer', 'sold_from', 'toys', 'recent_visits', '*', '~all'] },
  }, 'permitListExpands owner.employer, sold_from, toys, recent_visits: their prefixes, nothing else; then the wildcards')
  t.same(parameter('/people', 'expand')?.schema.items.enum, ['employer', '*', '~all'])
  t.equal(parameter('/companies', 'expand'), undefined, 'an empty permit list: no expand parameter at all')
  t.same(parameter('/visits', 'expand')?.schema.items.enum, ['', 'pet', 'vet', '*', '~all'], "defaultExpand: '' (expand none) is a value too")
  for (const name of ['fields', 'omit']) {
    t.same(parameter('/pets', name)?.schema, { type: 'array', items: { type: 'string' } }, name)
  }
  t.ok(parameter('/pets', 'limit'), "the route's own parameters are kept")
})

test('a detail route documents every path up to the depth limit, cycles included', async (t) => {
  t.same(parameter('/pets/{id}', 'expand')?.schema.items.enum, [
    'owner', 'owner.employer', 'owner.employer.employees', 'owner.pets',
    'owner.pets.sold_from', 'owner.pets.toys', 'owner.pets.visits', 'owner.pets.recent_visits',
    'sold_from', 'toys', 'toys.maker', 'toys.maker.employees', 'toys.price',
    'visits', 'visits.vet',
    'recent_visits', 'recent_visits.vet',
    '*', '~all',
  ], "not what a relation's options leave out: Person.pets omits owner, Pet.visits and Pet.recent_visits omit pet")
  t.equal(parameter('/pet-stores/{id}', 'expand'), undefined, 'a resource without relations: no expand parameter')
  t.ok(operation('/pets/{id}').parameters.some((candidate: Json) => candidate.in === 'path' && candidate.name === 'id'))
})

test('a relation admits its identifier or its expanded object', async (t) => {
  const detail = operation('/pets/{id}').responses['200'].content['application/json'].schema
  t.same(detail, { $ref: '#/components/schemas/Pet' })
  const pet = document.components.schemas.Pet
  t.equal(pet.additionalProperties, false)
  t.equal(pet.required, undefined, 'no field is required: fields and omit can leave out any (openApiRequiredDefaults is not set)')
  t.same(pet.properties.owner.anyOf, [{ type: 'integer' }, { $ref: '#/components/schemas/Person' }])
  t.same(pet.properties.sold_from.anyOf, [{ type: ['integer', 'null'] }, { $ref: '#/components/schemas/Pet.sold_from' }])
  t.same(pet.properties.toys.anyOf, [
    { type: 'array', items: { type: 'integer' } },
    { type: 'array', items: { $ref: '#/components/schemas/Toy' } },
  ], 'many-to-many: id array or object array')
  t.same(pet.properties.visits, {
    description: 'The Visit list; present only when expanded',
    type: 'array',
    items: { $ref: '#/components/schemas/Pet.visits' },
  }, 'deferred: only the expanded form')
  t.same(Object.keys(document.components.schemas['Pet.sold_from'].properties), ['id', 'name'], "the relation's field set")
  // The relation omits `pet`: below it, `pet` does not exist, expanded or not.
  t.same(Object.keys(document.components.schemas['Pet.visits'].properties), ['id', 'date', 'reason', 'vet'], "the relation's omit")
  t.same(Object.keys((await get(app, '/pets/5?expand=visits')) as Json).includes('visits'), true)
  t.notOk(((await get(app, '/pets/5?expand=visits')) as Json).visits[0].pet, 'omitted')
  t.same(await get(app, '/pets/5?expand=visits.pet'), {
    statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message: "Cannot expand 'visits.pet' on Visit: expandable fields are vet",
  }, 'and not expandable')
  t.same(Object.keys(document.components.schemas.Person.properties), ['id', 'name', 'email', 'hobbies', 'employer', 'pets', 'pet_count'])
})

test('derived data: a count, a computed field and a relation resolved by a function, each deferred and documented', async (t) => {
  const derived = 'Derived by the database; present only when named in expand or fields'
  t.same(document.components.schemas.Person.properties.pet_count, { description: derived, type: 'integer', readOnly: true })
  t.same(document.components.schemas.Pet.properties.label, { description: derived, type: 'string', readOnly: true })
  t.same(document.components.schemas.Toy.properties.price, { description: 'The Price; present only when expanded', $ref: '#/components/schemas/Price' })
  t.same(Object.keys(document.components.schemas.Price.properties), ['toy', 'cents', 'currency', 'on_sale'])
  t.same(parameter('/toys/{id}', 'expand')?.schema.items.enum, ['maker', 'maker.employees', 'price', '*', '~all'])
  t.same(parameter('/toys', 'expand')?.schema.items.enum, ['maker', '*', '~all'], 'not permitted on the list')
  t.same(parameter('/people', 'sort')?.schema, { type: 'string', pattern: '^-?(?:pet_count|name)(?:,-?(?:pet_count|name))*$' })
  t.same(parameter('/people', 'filter[pet_count][gte]')?.schema, { type: 'integer' })
  t.same(await get(app, '/pets/10'), await get(app, '/pets/10?omit=label'), 'deferred: absent by default')
  t.notOk('pet_count' in (await get(app, '/people/8768') as Json), 'deferred: absent by default')
  const validateToy = validatorOf('/toys/{id}', '200')
  const toy = await get(app, '/toys/552?expand=price')
  t.same(toy, {
    id: 552, name: 'Stretchy Feather', price_cents: 3842, maker: 74, price: { toy: 552, cents: 2062, currency: 'EUR', on_sale: true },
  })
  t.ok(validateToy(toy), `the priced toy fits its schema: ${JSON.stringify(validateToy.errors)}`)
  const validatePeople = validatorOf('/people', '200')
  const people = await get(app, '/people?sort=-pet_count&limit=2&fields=id,pet_count')
  t.same(people, { data: [{ id: 7473, pet_count: 9 }, { id: 4242, pet_count: 7 }], limit: 2, offset: 0, total: 12000 })
  t.ok(validatePeople(people), `the sorted page fits its schema: ${JSON.stringify(validatePeople.errors)}`)
  const validatePets = validatorOf('/pets', '200')
  const labelled = await get(app, '/pets?limit=1&fields=id,label')
  t.same(labelled, { data: [{ id: 1, label: 'Mango the parrot' }], limit: 1, offset: 0, total: 15000 })
  t.ok(validatePets(labelled), `the labelled page fits its schema: ${JSON.stringify(validatePets.errors)}`)
})

test('real detail responses validate against the documented schema', async (t) => {
  const validate = validatorOf('/pets/{id}', '200')
  for (const url of [
    '/pets/10', '/pets/2', '/pets/10?expand=owner.employer,sold_from', '/pets/5?expand=toys.maker,visits.vet',
    '/pets/14?expand=owner.employer', '/pets/5?expand=*',
  ]) {
    const body = await get(app, url)
    t.ok(validate(body), `${url}: ${JSON.stringify(validate.errors)}`)
  }
  // Narrowed responses fit the same schema: nothing fields/omit can leave out is required.
  for (const url of ['/pets/10?expand=owner.pets.toys&fields=name,owner.pets', '/pets/5?expand=*&omit=name']) {
    const body = await get(app, url)
    t.ok(validate(body), `${url}: narrowed, and valid: ${JSON.stringify(validate.errors)}`)
  }
  const pet = await get(app, '/pets/10?expand=owner') as Json
  t.notOk(validate({ ...pet, password_hash: 'x' }), 'a property the resource does not declare is refused')
  t.notOk(validate({ ...pet, owner: 'Wen' }), 'an owner that is neither an id nor a Person is refused')
  t.notOk(validate({ ...pet, owner: { ...pet.owner, employer: { id: 1, name: 'x', secret: true } } }), 'nested levels are checked too')
  t.notOk(validate({ ...pet, visits: [3, 4] }), 'a deferred relation has no identifier form')
})

test('real list responses validate against the documented schema, which follows the permitted paths', async (t) => {
  const validate = validatorOf('/pets', '200')
  for (const url of ['/pets?limit=3', '/pets?limit=3&expand=owner.employer,sold_from,toys', '/pets?limit=2&expand=*']) {
    const body = await get(app, url)
    t.ok(validate(body), `${url}: ${JSON.stringify(validate.errors)}`)
  }
  const narrowed = await get(app, '/pets?limit=2&expand=*&fields=id,owner')
  t.ok(validate(narrowed), `fields narrows the response, which still fits: ${JSON.stringify(validate.errors)}`)
  const page = await get(app, '/pets?limit=1&expand=owner') as Json
  t.ok(validate(page))
  const visits = (await get(app, '/pets/5?expand=visits') as Json).visits
  t.notOk(validate({ ...page, data: [{ ...page.data[0], visits }] }), 'visits is not permitted on the list: not documented there')
  t.notOk(validate({ ...page, data: [{ ...page.data[0], toys: [{ id: 1, name: 'x', price_cents: 1, maker: { id: 1 } }] }] }), 'toys.maker is not permitted')
  t.same(Object.keys(operation('/pets').responses['200'].content['application/json'].schema.properties), ['data', 'limit', 'offset', 'total'])
})

test('error responses are documented with the FST_EXPAND_* codes, and real ones validate', async (t) => {
  const error = operation('/pets').responses['400'].content['application/json'].schema
  t.same(error.properties.code.enum, [
    'FST_EXPAND_UNKNOWN_FIELD', 'FST_EXPAND_NOT_PERMITTED', 'FST_EXPAND_TOO_DEEP', 'FST_EXPAND_RECURSIVE', 'FST_EXPAND_MALFORMED',
    'FST_EXPAND_TOO_LARGE', 'FST_EXPAND_BAD_FILTER', 'FST_EXPAND_BAD_SORT', 'FST_ERR_VALIDATION', 'FST_ERR_BAD_URL',
  ], 'with Fastify validation: the route validates limit and offset; a generated list refuses filters and sort keys it does not declare')
  const validate = validatorOf('/pets', '400')
  for (const url of ['/pets?expand=visits', '/pets?expand=nope', '/pets?expand=owner..x', '/pets?limit=x', '/pets?filter[nope]=1', '/pets?sort=nope']) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 400, url)
    t.ok(validate(response.json()), `${url}: ${JSON.stringify(validate.errors)}`)
  }
})
