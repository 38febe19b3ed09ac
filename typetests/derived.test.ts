// Type tests (tstyche): aggregates and computed fields in a resource's shape.
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { defineResource, type Expanded } from '../plugin/index.js'

const Toy = defineResource({
  name: 'Toy',
  table: 'toys',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number(), bought: Type.String({ format: 'date' }) }),
  fields: ['id', 'name'],
})
export const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), toys: Type.Array(Type.Integer()) }),
  fields: ['id', 'name', 'toy_count'],
  expandable: { toys: [Toy, { many: true, foreignKey: 'pet_id' }] },
  aggregates: {
    toy_count: { count: 'toys' },
    cheap_toys: { count: 'toys', where: (eb) => eb('toys.price', '<', 5) },
    newest_toy: { max: ['toys', 'bought'] },
    toy_spend: { sum: ['toys', 'price'] },
    mean_price: { avg: ['toys', 'price'] },
  },
  computed: { shout: { schema: Type.String(), sql: (eb) => eb.fn<string>('upper', [eb.ref('pets.name')]) } },
})

describe('Expanded with derived fields', () => {
  test('a derived field listed in fields is shown by default', () => {
    expect<Expanded<typeof Pet>>().type.toBe<{ id: number; name: string; toy_count: number }>()
  })
  test('deferred ones are shown when named in expand, with their types', () => {
    expect<Expanded<typeof Pet, 'cheap_toys,newest_toy,toy_spend,mean_price,shout'>>().type.toBe<{
      id: number;
      name: string;
      toy_count: number
      cheap_toys: number;
      newest_toy: string | null;
      toy_spend: number | null;
      mean_price: number | null;
      shout: string
    }>()
  })
  test('or in fields', () => {
    expect<Expanded<typeof Pet, '', 'id,shout'>>().type.toBe<{ id: number; shout: string }>()
  })
  test('omit removes them', () => {
    expect<Expanded<typeof Pet, '', '', 'toy_count'>>().type.toBe<{ id: number; name: string }>()
  })
})

describe('defineResource with derived fields', () => {
  test('fields may list an aggregate or computed field, not an unknown name', () => {
    expect(defineResource).type.not.toBeCallableWith({
      name: 'X', schema: Type.Object({ id: Type.Integer() }), fields: ['id', 'nope'], aggregates: {},
    })
  })
  test('an aggregate names a relation field of the schema', () => {
    expect(defineResource).type.not.toBeCallableWith({
      name: 'X', table: 'x', schema: Type.Object({ id: Type.Integer() }), fields: ['id'], aggregates: { n: { count: 'nope' } },
    })
  })
})
