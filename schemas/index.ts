import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { defineResource, type AnyResource } from '../plugin/index.js'
import { fakePriceService } from './price-service.js'

/*
 * The demo's domain: a small veterinary network. Every resource but Price is bound to a
 * table (demo/database.ts creates them) and shows one way of declaring a relation:
 *
 *   Company  --employees (to-many, deferred)-->  Person
 *   Person   --employer (to-one, nullable)----->  Company
 *   Person   --pets (to-many, deferred)-------->  Pet        } a circular pair,
 *   Pet      --owner (to-one)------------------>  Person     } Person refers to Pet lazily
 *   Pet      --sold_from (to-one, nullable)---->  PetStore   (a lazy name)
 *   Pet      --toys (many-to-many via pet_toys)->  Toy
 *   Pet      --visits (to-many, deferred)------>  Visit
 *   Pet      --recent_visits (to-many, limit 3)->  Visit      (the latest three, deferred)
 *   Toy      --maker (to-one)------------------>  Company
 *   Toy      --price (to-one, deferred)-------->  Price      (a function: the pricing service)
 *   Visit    --pet / vet (to-one)-------------->  Pet / Vet
 *
 * The people table also holds a `password_hash` column that no schema
 * declares: it is never selected, so it can never reach a response.
 *
 * Derived data, deferred as the relations above are: Person.pet_count counts
 * the person's pets (one grouped statement per request), Pet.label is an
 * expression the database computes in the statement reading the pet.
 */

export const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    public: Type.Boolean({ description: 'Listed on a stock exchange' }),
    founded: Type.Integer({ description: 'Year of foundation' }),
    employees: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'public', 'founded'],
  expandable: {
    // The thunk resolves once Person exists: the two refer to each other. Its return
    // type is annotated because TypeScript cannot infer types through a cycle.
    employees: [(): AnyResource => Person, { many: true, foreignKey: 'employer_id', fields: ['id', 'name'] }],
  },
})

export const Person = defineResource({
  name: 'Person',
  namespace: 'people',
  table: 'people',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    email: Type.String(),
    hobbies: Type.String(),
    employer: Type.Union([Type.Integer(), Type.Null()]),
    pets: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'email', 'hobbies', 'employer'],
  expandable: {
    employer: [Company, { column: 'employer_id' }],
    pets: [(): AnyResource => Pet, { many: true, foreignKey: 'owner_id', omit: ['owner'] }],
  },
  aggregates: { pet_count: { count: 'pets' } },
})

export const PetStore = defineResource({
  name: 'PetStore',
  table: 'pet_stores',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), city: Type.String() }),
  fields: ['id', 'name', 'city'],
})

/** A toy's price today: no table, the pricing service of schemas/price-service.ts answers it. */
export const Price = defineResource({
  name: 'Price',
  schema: Type.Object({
    toy: Type.Integer(),
    cents: Type.Integer({ description: "Today's price, which may differ from the toy's price_cents" }),
    currency: Type.String(),
    on_sale: Type.Boolean(),
  }),
  fields: ['toy', 'cents', 'currency', 'on_sale'],
  primaryKey: 'toy',
})

export const Toy = defineResource({
  name: 'Toy',
  table: 'toys',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    price_cents: Type.Integer(),
    maker: Type.Integer(),
    price: Type.Integer({ description: "The toy's id: expand it for today's price" }),
  }),
  fields: ['id', 'name', 'price_cents', 'maker'],
  expandable: {
    maker: ['Company', { column: 'maker_id' }],
    // One call of the pricing service per request, with every toy id the request shows.
    price: [Price, { column: 'id', load: async (toyIds, { signal }) => fakePriceService(toyIds, signal) }],
  },
})

export const Vet = defineResource({
  name: 'Vet',
  table: 'vets',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), specialty: Type.String() }),
  fields: ['id', 'name', 'specialty'],
})

export const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    species: Type.String(),
    born: Type.String({ description: 'Date of birth, YYYY-MM-DD' }),
    owner: Type.Integer(),
    sold_from: Type.Union([Type.Integer(), Type.Null()]),
    toys: Type.Array(Type.Integer()),
    visits: Type.Array(Type.Integer()),
    recent_visits: Type.Array(Type.Integer(), { description: 'The three latest visits, newest first' }),
  }),
  columns: { born: 'born_on' },
  fields: ['id', 'name', 'species', 'born', 'owner', 'sold_from', 'toys'],
  expandable: {
    owner: [Person, { column: 'owner_id' }],
    sold_from: ['PetStore', { column: 'sold_from_id', fields: ['id', 'name'] }],
    toys: [(): AnyResource => Toy, { many: true, through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
    visits: [(): AnyResource => Visit, { many: true, foreignKey: 'pet_id', omit: ['pet'] }],
    // At most three rows per pet, newest first (orderBy names a column of visits).
    recent_visits: [(): AnyResource => Visit, { many: true, foreignKey: 'pet_id', orderBy: '-visited_on', limit: 3, omit: ['pet'] }],
  },
  computed: {
    // 'Juno the parrot': concatenated by the database (concat() is written alike on SQLite, PostgreSQL and
    // MariaDB; || is a logical OR on MariaDB and MySQL).
    label: { schema: Type.String(), sql: (eb) => sql<string>`concat(${eb.ref('pets.name')}, ' the ', ${eb.ref('pets.species')})` },
  },
})

export const Visit = defineResource({
  name: 'Visit',
  table: 'visits',
  schema: Type.Object({
    id: Type.Integer(),
    date: Type.String({ description: 'YYYY-MM-DD' }),
    reason: Type.String(),
    pet: Type.Integer(),
    vet: Type.Integer(),
  }),
  columns: { date: 'visited_on' },
  fields: ['id', 'date', 'reason', 'pet', 'vet'],
  expandable: {
    pet: [Pet, { column: 'pet_id' }],
    vet: [Vet, { column: 'vet_id' }],
  },
})

export const resources = [Company, Person, PetStore, Price, Toy, Vet, Pet, Visit]
