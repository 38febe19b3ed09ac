// Type tests (tstyche): lazy string references resolved through the ResourceRegistry augmentation.
import { Type } from '@sinclair/typebox'
import { expect, test } from 'tstyche'
import { defineResource, type Expanded } from '../plugin/index.js'

export const Keeper = defineResource({
  name: 'Keeper',
  namespace: 'zoo',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), animals: Type.Array(Type.Integer()) }),
  fields: ['id', 'name'],
  expandable: { animals: ['Animal', { many: true, fields: ['id', 'keeper'] }] },
})
export const Animal = defineResource({
  name: 'Animal',
  schema: Type.Object({ id: Type.Integer(), keeper: Type.Integer() }),
  fields: ['id', 'keeper'],
  expandable: { keeper: 'zoo.Keeper' },
})

declare module '../plugin/index.js' {
  interface ResourceRegistry {
    Animal: typeof Animal
    'zoo.Keeper': typeof Keeper
  }
}

test('a registered name resolves, through cycles', () => {
  expect<Expanded<typeof Animal, 'keeper.animals'>>()
    .type.toBe<{ id: number; keeper: { id: number; name: string; animals: Array<{ id: number; keeper: number }> } }>()
  expect<Expanded<typeof Keeper, 'animals.keeper'>>()
    .type.toBe<{ id: number; name: string; animals: Array<{ id: number; keeper: { id: number; name: string } }> }>()
})

test('a wrong expectation fails', () => {
  expect<Expanded<typeof Animal>>().type.not.toBe<{ id: number }>()
  expect<Expanded<typeof Animal>>().type.not.toBe<{ id: number; keeper: number; extra?: string }>()
})
