// Type tests (tstyche): the shape of a resource under an expansion, with either TypeBox.
import { Type } from '@sinclair/typebox'
import { Type as Type1 } from 'typebox'
import Fastify from 'fastify'
import { describe, expect, test } from 'tstyche'
import {
  createSerializer, defineResource, type AnyResource, type Expanded, type SerializerOptions, type UnresolvedResource,
} from '../plugin/index.js'
import { Company as DemoCompany, Pet as DemoPet } from '../schemas/index.js'

const Company = defineResource({
  name: 'Company',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), motto: Type.Optional(Type.String()) }),
  fields: ['id', 'name', 'motto'],
})
const Person = defineResource({
  name: 'Person',
  schema: Type.Object({
    id: Type.Integer(), name: Type.String(), employer: Type.Union([Type.Integer(), Type.Null()]), pets: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'employer'],
  expandable: { employer: Company, pets: ['Pet', { many: true }] },
})
const Toy = defineResource({
  name: 'Toy',
  schema: Type.Object({ id: Type.Integer(), label: Type.String(), price: Type.Number() }),
  fields: ['id', 'label', 'price'],
})
const Pet = defineResource({
  name: 'Pet',
  schema: Type.Object({
    id: Type.Integer(), name: Type.String(), owner: Type.Integer(), toys: Type.Array(Type.Integer()), maker: Type.Integer(),
  }),
  fields: ['id', 'name', 'owner', 'toys'],
  expandable: {
    owner: Person,
    toys: [() => Toy, { many: true, fields: ['id', 'label'] }],
    maker: ['Company', { expand: [] }],
  },
})

describe('Expanded', () => {
  test('without expansion: the default fields, relations as identifiers', () => {
    expect<Expanded<typeof Pet>>().type.toBe<{ id: number; name: string; owner: number; toys: number[] }>()
  })

  test('expands to-one and to-many relations, at any depth', () => {
    expect<Expanded<typeof Pet, 'owner.employer,toys'>>().type.toBe<{
      id: number
      name: string
      owner: { id: number; name: string; employer: { id: number; name: string; motto?: string } | null }
      toys: Array<{ id: number; label: string }>
    }>()
  })

  test("a relation's fields/omit options remove names below it: expanding one changes nothing", () => {
    const Keeper = defineResource({
      name: 'Keeper',
      schema: Type.Object({ id: Type.Integer(), pets: Type.Array(Type.Integer()), cards: Type.Array(Type.Integer()) }),
      fields: ['id'],
      expandable: { pets: [Pet, { many: true, omit: ['owner'] }], cards: [Pet, { many: true, fields: ['id', 'name'] }] },
    })
    expect(createSerializer(Keeper, { expand: 'pets.owner' }).shape({}))
      .type.toBe<{ id: number; pets: Array<{ id: number; name: string; toys: number[] }> }>()
    expect<Expanded<typeof Keeper, 'pets.owner'>>().type.toBe<{ id: number; pets: Array<{ id: number; name: string; toys: number[] }> }>()
    expect<Expanded<typeof Keeper, 'cards.maker,cards.toys'>>().type.toBe<{ id: number; cards: Array<{ id: number; name: string }> }>()
    expect<Expanded<typeof Keeper, 'pets.maker'>['pets'][number]>().type.toHaveProperty('maker')
    expect<Expanded<typeof Keeper, 'cards.maker'>['cards'][number]>().type.not.toHaveProperty('maker')
  })

  test('deferred relations appear only when expanded', () => {
    expect<Expanded<typeof Person>>().type.not.toHaveProperty('pets')
    expect<Expanded<typeof Person, 'employer'>>().type.not.toHaveProperty('pets')
  })

  test('fields and omit narrow each level', () => {
    expect<Expanded<typeof Pet, 'owner', 'id,owner.name'>>().type.toBe<{ id: number; owner: { name: string } }>()
    expect<Expanded<typeof Pet, 'owner', '', 'toys,owner.employer'>>()
      .type.toBe<{ id: number; name: string; owner: { id: number; name: string } }>()
    expect<Expanded<typeof Pet, '', '*'>>().type.toBe<Expanded<typeof Pet>>()
  })

  test('a lazy string reference without a registry entry is unresolved', () => {
    expect<Expanded<typeof Person, 'pets'>['pets']>().type.toBe<UnresolvedResource[]>()
    expect<Expanded<typeof Pet, 'maker'>['maker']>().type.toBe<UnresolvedResource>()
  })

  test('parameters that are not literal types give an unresolved shape', () => {
    expect<Expanded<typeof Pet, string>>().type.toBe<UnresolvedResource>()
  })

  test('types a handler\'s data through Fastify\'s Reply generic', () => {
    const app = Fastify()
    const card = { id: 1, name: 'Garfield', owner: { id: 1, name: 'Jon', employer: null }, toys: [1] }
    expect(app.get<{ Reply: Expanded<typeof Pet, 'owner'> }>)
      .type.toBeCallableWith('/pets/:id', { expandable: { resource: Pet } }, async () => card)
    expect(app.get<{ Reply: Expanded<typeof Pet, 'owner'> }>)
      .type.not.toBeCallableWith('/pets/:id', { expandable: { resource: Pet } }, async () => ({ ...card, owner: 1 }))
  })

  test('createSerializer(...).shape', () => {
    expect(createSerializer(Pet, { expand: 'owner', fields: ['id', 'owner'] }).shape({}))
      .type.toBe<{ id: number; owner: Expanded<typeof Person> }>()
    expect(createSerializer(Pet, { list: true }).shape([])).type.toBe<Array<Expanded<typeof Pet>>>()
    expect(createSerializer(Pet, { list: false, expand: ['owner', 'toys'] }).shape({})).type.toBe<Expanded<typeof Pet, 'owner,toys'>>()
    expect(createSerializer(Pet).shape({})).type.toBe<Expanded<typeof Pet>>()
  })

  test('createSerializer with settings that are not literal types', () => {
    const settings: SerializerOptions = { expand: 'owner' }
    expect(createSerializer(Pet, settings).shape({})).type.toBe<UnresolvedResource | UnresolvedResource[]>()
    const expand: string = 'owner'
    expect(createSerializer(Pet, { expand }).shape({})).type.toBe<UnresolvedResource>()
    const list = Number(process.env.LIST) > 0
    expect(createSerializer(Pet, { list }).shape({})).type.toBe<Expanded<typeof Pet> | Array<Expanded<typeof Pet>>>()
  })
})

describe('TypeBox 1.x schemas', () => {
  const Owner = defineResource({
    name: 'Owner',
    schema: Type1.Object({ id: Type1.Integer(), name: Type1.String(), nickname: Type1.Optional(Type1.String()) }),
    fields: ['id', 'name', 'nickname'],
  })
  const Cat = defineResource({
    name: 'Cat',
    schema: Type1.Object({
      id: Type1.Integer(),
      name: Type1.String(),
      color: Type1.Union([Type1.Literal('black'), Type1.Literal('white')]),
      owner: Type1.Union([Type1.Integer(), Type1.Null()]),
      tags: Type1.Array(Type1.String()),
    }),
    fields: ['id', 'name', 'color', 'owner', 'tags'],
    expandable: { owner: Owner },
  })

  test('defineResource takes them, with field names checked', () => {
    expect(Cat.fields).type.toBe<readonly ('id' | 'name' | 'color' | 'owner' | 'tags')[]>()
    expect(defineResource).type.not.toBeCallableWith({ name: 'A', schema: Type1.Object({ id: Type1.Integer() }), fields: ['nope'] })
  })

  test('a nested object schema keeps its optional properties', () => {
    const Place = defineResource({
      name: 'Place',
      schema: Type1.Object({ id: Type1.Integer(), geo: Type1.Object({ lat: Type1.Number(), label: Type1.Optional(Type1.String()) }) }),
      fields: ['id', 'geo'],
    })
    expect(createSerializer(Place).shape({})).type.toBe<{ id: number; geo: { lat: number; label?: string } }>()
  })

  test('Expanded reads their keywords', () => {
    expect<Expanded<typeof Cat, 'owner'>>().type.toBe<{
      id: number
      name: string
      color: 'black' | 'white'
      owner: { id: number; name: string; nickname?: string } | null
      tags: string[]
    }>()
  })
})

describe('JSON Schema written by hand', () => {
  test('is read as TypeBox 1.x\'s: required, enum, type lists', () => {
    const Tag = defineResource({
      name: 'Tag',
      schema: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          label: { type: 'string' },
          kind: { enum: ['color', 'size'] },
          note: { type: ['string', 'null'] },
        },
        required: ['id', 'label', 'kind'],
      } as const,
      fields: ['id', 'label', 'kind', 'note'],
    })
    expect(createSerializer(Tag).shape({})).type.toBe<{ id: number; label: string; kind: 'color' | 'size'; note?: string | null }>()
  })
})

describe('the demo\'s resources', () => {
  test('nested paths, relation options and thunks typed AnyResource', () => {
    expect<Expanded<typeof DemoPet, 'owner.employer,sold_from'>>().type.toBe<{
      id: number
      name: string
      species: string
      born: string
      owner: {
        id: number
        name: string
        email: string
        hobbies: string
        employer: { id: number; name: string; public: boolean; founded: number } | null
      }
      sold_from: UnresolvedResource | null
      toys: number[]
    }>()
    expect<Expanded<typeof DemoPet, 'toys,visits', '', 'born'>>().type.toBe<{
      id: number
      name: string
      species: string
      owner: number
      sold_from: number | null
      toys: UnresolvedResource[]
      visits: UnresolvedResource[]
    }>()
    expect<Expanded<typeof DemoCompany, 'employees'>['employees']>().type.toBe<UnresolvedResource[]>()
    expect<Expanded<AnyResource, 'owner'>>().type.toBe<UnresolvedResource>()
  })
})

describe('nested relations and always-applied expansions', () => {
  const Address = defineResource({
    name: 'Address',
    schema: Type.Object({ street: Type.String(), city: Type.Integer() }),
    fields: ['street', 'city'],
    expandable: { city: Company },
  })
  const Shop = defineResource({
    name: 'Shop',
    schema: Type.Object({ id: Type.Integer(), address: Type.Integer(), landlord: Type.Integer() }),
    fields: ['id', 'address', 'landlord'],
    nested: { address: [Address, { omit: ['street'] }] },
    expandable: { landlord: [Person, { expand: ['employer'], fields: ['id', 'employer'] }] },
  })

  test('a nested relation is always an object; a relation\'s expand option applies whenever it is expanded', () => {
    expect(Shop.nested.address).type.toBe<readonly [typeof Address, { readonly omit: readonly ['street'] }]>()
    expect<Expanded<typeof Shop>>().type.toBe<{ id: number; address: { city: number }; landlord: number }>()
    expect<Expanded<typeof Shop, 'landlord,address.city'>>().type.toBe<{
      id: number
      address: { city: { id: number; name: string; motto?: string } }
      landlord: { id: number; employer: { id: number; name: string; motto?: string } | null }
    }>()
    expect<Expanded<typeof Shop, '', '', 'address'>>().type.toBe<{ id: number; landlord: number }>()
  })
})
