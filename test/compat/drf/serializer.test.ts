// Port of drf-flex-fields' tests/test_serializer.py (and the older
// tests/test_serializers.py, whose include_fields/exclude_fields/expand_fields
// are today's fields/omit/expand). Serializer keyword arguments become
// createSerializer options; the unsaved model instances become the plain data
// a handler would pass. Python compares dicts without order; here the JSON
// text is compared too, in the resource's field order. drf also accepts
// generators for these arguments; the closest here are arrays, and each case
// is run with both a list and a comma string.
import t, { type Test } from 'tap'
import { createSerializer } from '../../../plugin/index.js'
import { PlainPet, testappResources } from './testapp.js'
import { buildApp, getJson } from '../../helpers/app.js'

const resources = testappResources

type Options = Parameters<typeof createSerializer>[1]

/** Both spellings of each list option: an array, and the comma string of a query. */
function variants (options: NonNullable<Options>): NonNullable<Options>[] {
  const joined: Record<string, unknown> = { ...options }
  for (const key of ['expand', 'fields', 'omit'] as const) {
    const value = options[key]
    if (Array.isArray(value)) joined[key] = value.join(',')
  }
  return [options, joined as NonNullable<Options>]
}

function check (t: Test, data: unknown, options: NonNullable<Options>, expected: unknown): void {
  for (const variant of variants(options)) {
    const serializer = createSerializer(PlainPet, { ...variant, resources })
    t.same(serializer.shape(data), expected, JSON.stringify(variant))
    t.equal(serializer.stringify(data), JSON.stringify(expected), JSON.stringify(variant))
  }
}

// Pet(name='Garfield', toys='paper ball, string', species='cat', owner=Person(name='Fred'))
const garfieldFredUnemployed = { id: 1, name: 'Garfield', toys: 'paper ball, string', species: 'cat', owner: 2 }

t.test('test_basic_field_omit', async (t) => {
  check(t, garfieldFredUnemployed, { omit: ['species', 'owner'] }, { name: 'Garfield', toys: 'paper ball, string' })
})

t.test('test_nested_field_omit', async (t) => {
  const data = { ...garfieldFredUnemployed, owner: { name: 'Fred', hobbies: '', employer: { name: 'McDonalds', public: false } } }
  check(t, data, { expand: ['owner.employer'], omit: ['owner.name', 'owner.employer.public'] }, {
    owner: { hobbies: '', employer: { name: 'McDonalds' } },
    name: 'Garfield',
    toys: 'paper ball, string',
    species: 'cat',
  })
})

t.test('test_basic_field_include', async (t) => {
  check(t, garfieldFredUnemployed, { fields: ['name', 'toys'] }, { name: 'Garfield', toys: 'paper ball, string' })
})

t.test('test_nested_field_include', async (t) => {
  const data = { ...garfieldFredUnemployed, owner: { name: 'Fred', hobbies: '', employer: { name: 'McDonalds', public: false } } }
  check(t, data, { expand: ['owner.employer'], fields: ['owner.employer.name'] }, { owner: { employer: { name: 'McDonalds' } } })
})

t.test('test_basic_expand', async (t) => {
  const data = { ...garfieldFredUnemployed, owner: { name: 'Fred', hobbies: 'sailing' } }
  check(t, data, { expand: ['owner'] }, { owner: { name: 'Fred', hobbies: 'sailing' }, name: 'Garfield', toys: 'paper ball, string', species: 'cat' })
})

t.test('test_nested_expand', async (t) => {
  const data = { ...garfieldFredUnemployed, owner: { name: 'Fred', hobbies: 'sailing', employer: { name: 'McDonalds', public: false } } }
  check(t, data, { expand: ['owner.employer'] }, {
    owner: { name: 'Fred', hobbies: 'sailing', employer: { name: 'McDonalds', public: false } },
    name: 'Garfield',
    toys: 'paper ball, string',
    species: 'cat',
  })
})

t.test('test_expand_from_request', async (t) => {
  const data = { ...garfieldFredUnemployed, owner: { name: 'Fred', hobbies: 'sailing', employer: { name: 'McDonalds', public: false } } }
  const app = await buildApp({ resources }, (app) => {
    app.get('/pet', { expandable: { resource: 'testapp.PlainPet' } }, async () => data)
  })
  const reply = await getJson(app, '/pet?expand=owner.employer')
  t.equal(reply.status, 200)
  t.same(reply.body, {
    name: 'Garfield',
    toys: 'paper ball, string',
    species: 'cat',
    owner: { name: 'Fred', hobbies: 'sailing', employer: { public: false, name: 'McDonalds' } },
  })
})

// tests/test_serializers.py (the 0.x names). Its PetSerializer deferred `owner`
// (expandable, not in fields); PlainPet lists it, so these omit it as well.
t.test('legacy test_basic_field_include / test_basic_field_exclude', async (t) => {
  const remy = { ...garfieldFredUnemployed, name: 'Remy' }
  check(t, remy, { fields: ['name', 'toys'] }, { name: 'Remy', toys: 'paper ball, string' })
  check(t, remy, { omit: ['species', 'owner'] }, { name: 'Remy', toys: 'paper ball, string' })
})

t.test('legacy test_nested_field_exclude', async (t) => {
  const data = { id: 1, name: 'Remy', toys: 'paper ball, string', species: 'cat', owner: { name: 'Fred', hobbies: 'sailing', employer: { name: 'McDonalds', public: false } } }
  check(t, data, { expand: ['owner.employer'], omit: ['toys', 'owner.name', 'owner.employer.public'] }, {
    owner: { hobbies: 'sailing', employer: { name: 'McDonalds' } },
    name: 'Remy',
    species: 'cat',
  })
})
