import { test } from 'tap'
import { exampleValue } from '../../plugin/openapi/schema-examples.js'

// The examples a resource level's documentation carries: a value each schema
// admits, or undefined where the schema alone cannot tell.

test('arrays: one item repeated up to minItems, or none when no item can be made', async (t) => {
  t.same(exampleValue({ type: 'array', items: { type: 'integer' } }), [0])
  t.same(exampleValue({ type: 'array', items: { type: 'string' }, minItems: 3 }), ['string', 'string', 'string'])
  t.same(exampleValue({ type: 'array', items: { type: 'string', format: 'unknown' } }), [], 'no item: the empty array')
  t.equal(exampleValue({ type: 'array', items: { type: 'string', format: 'unknown' }, minItems: 1 }), undefined, 'no item and minItems')
  t.same(exampleValue({ type: 'array', items: { type: 'integer' }, maxItems: 0 }), [], 'maxItems 0')
  t.same(exampleValue({ type: 'array', items: { type: 'integer' }, prefixItems: [{ type: 'string' }] }), [], 'prefixItems are not followed')
  t.same(exampleValue({ type: 'array', items: { type: 'integer' }, contains: { minimum: 5 } }), [], 'contains is not followed')
  t.equal(exampleValue({ type: 'array', items: { type: 'integer' }, minItems: 2, uniqueItems: true }), undefined,
    'unique items cannot be one item repeated')
  t.same(exampleValue({ type: 'array', items: [{ type: 'integer' }] }), [], 'tuple items are not followed')
})

test('objects: every property that has an example; none when a required one has none', async (t) => {
  t.same(exampleValue({ type: 'object', properties: { id: { type: 'integer' }, tag: { type: 'string', format: 'unknown' } } }), { id: 0 })
  t.equal(exampleValue({
    type: 'object',
    properties: { id: { type: 'integer' }, tag: { type: 'string', format: 'unknown' } },
    required: ['id', 'tag'],
  }), undefined, 'a required property without an example')
  t.equal(exampleValue({ type: 'object', properties: { id: { type: 'integer' } }, required: ['id', 'name'] }), undefined,
    'a required property the schema does not describe')
  t.same(exampleValue({ type: 'object' }), {})
})

test('strings: a pattern the value does not match, or one that is not a regular expression, gives none', async (t) => {
  t.equal(exampleValue({ type: 'string', pattern: '^[0-9]+$' }), undefined)
  t.equal(exampleValue({ type: 'string', pattern: '(' }), undefined, 'an invalid pattern')
  t.equal(exampleValue({ type: 'string', pattern: '^str' }), 'string')
})

test('depth: a schema nested past 16 levels has no example', async (t) => {
  let schema: Record<string, unknown> = { type: 'integer' }
  for (let level = 0; level < 17; level++) schema = { type: 'array', items: schema }
  // Arrays at depths 0 to 16, the integer at 17: the array at 16 gets no item, so it is empty.
  let expected: unknown = []
  for (let level = 0; level < 16; level++) expected = [expected]
  t.same(exampleValue(schema), expected, 'the innermost level is past the limit: its array is empty')
  t.equal(exampleValue({ type: 'integer' }, 17), undefined)
})

test('anyOf: the first member with a value other than null; null when only null fits', async (t) => {
  t.equal(exampleValue({ anyOf: [{ type: 'null' }, { type: 'integer', minimum: 3 }] }), 3)
  t.equal(exampleValue({ anyOf: [{ type: 'null' }, { type: 'string', format: 'unknown' }] }), null)
  t.equal(exampleValue({ anyOf: [{ type: 'string', format: 'unknown' }] }), undefined)
})

test('no type: null for a schema of annotations only, none otherwise', async (t) => {
  t.equal(exampleValue({ description: 'anything', title: 'Any' }), null)
  t.equal(exampleValue({ minimum: 1 }), undefined)
  t.equal(exampleValue({ type: ['null'] }), null)
  t.equal(exampleValue({ type: 'boolean' }), true)
  t.equal(exampleValue({ type: 'bigint' }), undefined, 'a type JSON Schema does not have')
})

test('numbers: a multiple of multipleOf within the bounds', async (t) => {
  t.equal(exampleValue({ type: 'integer', minimum: 7, multipleOf: 5 }), 10)
  t.equal(exampleValue({ type: 'number', exclusiveMinimum: 0.5, exclusiveMaximum: 0.7, multipleOf: 0.25 }), undefined,
    'no multiple of 0.25 lies between 0.5 and 0.7')
  t.equal(exampleValue({ type: 'number', minimum: 1.5, maximum: 1.6 }), 1.5)
})
