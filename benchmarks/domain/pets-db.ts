import Database from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { cachePreparedStatements, defineResource } from '../../plugin/index.js'
import { randomSource } from '../../demo/seed.js'
import { schemas } from '../../test/fixtures/pets.js'
import { indexStatements, tableStatements } from '../../test/fixtures/tables.js'

// The pets domain of the README's example bound to tables: pets -> people -> companies, and toys through pet_toys.
// Schemas and tables are the tests' (test/fixtures/pets.ts, test/fixtures/tables.ts); the data is larger and random.
export const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: schemas.Company,
  fields: ['name', 'public'],
})

export const Person = defineResource({
  name: 'Person',
  table: 'people',
  schema: schemas.Person,
  fields: ['id', 'name', 'hobbies'],
  expandable: { employer: [Company, { column: 'employer_id' }] },
})

export const PetStore = defineResource({
  name: 'PetStore',
  table: 'pet_stores',
  schema: schemas.PetStore,
  fields: ['id', 'name', 'address'],
})

export const Toy = defineResource({
  name: 'Toy',
  table: 'toys',
  schema: schemas.Toy,
  fields: ['id', 'name', 'secret'],
})

export const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: schemas.Pet,
  fields: ['id', 'name', 'species', 'owner', 'sold_from', 'toys'],
  expandable: {
    owner: [Person, { column: 'owner_id' }],
    sold_from: [PetStore, { column: 'sold_from_id', fields: ['id', 'name'] }],
    toys: [Toy, { many: true, omit: ['secret'], through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
  },
})

export const petResources = [Company, Person, PetStore, Toy, Pet]

/** The response schema a careful user writes by hand for a pet with `expand=owner.employer,toys`: the HTTP suite's ceiling. */
const company = { type: 'object', properties: { name: { type: 'string' }, public: { type: 'boolean' } } }
const person = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, hobbies: { type: 'string' }, employer: { ...company, nullable: true } },
}
export const petResponseSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    species: { type: 'string' },
    owner: { ...person, nullable: true },
    sold_from: { type: ['integer', 'null'] },
    toys: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } } },
  },
}

export interface PetsDatabaseSize {
  pets: number
  people: number
  companies: number
  stores: number
  toys: number
  toysPerPet: number
}

export const defaultSize: PetsDatabaseSize = { pets: 2_000, people: 400, companies: 40, stores: 12, toys: 300, toysPerPet: 3 }

/**
 * The tables of the tests' pets domain (test/fixtures/tables.ts) and the
 * indexes a database of this size needs, compiled for SQLite by Kysely and run
 * synchronously, so that a database is ready when createPetsDatabase returns.
 */
function createTables (database: Database.Database): void {
  const builder = new Kysely<any>({ dialect: new SqliteDialect({ database }) })
  for (const statement of [...tableStatements(builder), ...indexStatements(builder)]) database.exec(statement.compile().sql)
}

const species = ['dog', 'cat', 'rabbit', 'parrot', 'hamster', 'ferret', 'turtle']
const hobbies = ['chess', 'climbing', 'baking', 'birdwatching', 'cycling', 'pottery', 'sailing']

/** An in-memory SQLite database with deterministic data (the same on every run). */
export function createPetsDatabase (size: PetsDatabaseSize = defaultSize): Database.Database {
  const db = new Database(':memory:')
  db.pragma('journal_mode = MEMORY')
  createTables(db)
  const random = randomSource(42)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  db.transaction(() => {
    const company = db.prepare('INSERT INTO companies (id, name, public) VALUES (?, ?, ?)')
    for (let id = 1; id <= size.companies; id++) company.run(id, `Company ${id} "Holdings"`, random() < 0.5 ? 1 : 0)
    const person = db.prepare('INSERT INTO people (id, name, hobbies, employer_id, password_hash) VALUES (?, ?, ?, ?, ?)')
    for (let id = 1; id <= size.people; id++) {
      person.run(id, `Person ${id} Müller`, `${pick(hobbies)}, ${pick(hobbies)}`, 1 + Math.floor(random() * size.companies), `never-read-${id}`)
    }
    const store = db.prepare('INSERT INTO pet_stores (id, name, address) VALUES (?, ?, ?)')
    for (let id = 1; id <= size.stores; id++) store.run(id, `Store ${id}`, `${id} Market Street`)
    const toy = db.prepare('INSERT INTO toys (id, name, secret) VALUES (?, ?, ?)')
    for (let id = 1; id <= size.toys; id++) toy.run(id, `Toy ${id}`, `secret ${id}`)
    const pet = db.prepare('INSERT INTO pets (id, name, species, owner_id, sold_from_id) VALUES (?, ?, ?, ?, ?)')
    const petToy = db.prepare('INSERT INTO pet_toys (pet_id, toy_id) VALUES (?, ?)')
    for (let id = 1; id <= size.pets; id++) {
      pet.run(id, `Pet ${id}`, pick(species), 1 + Math.floor(random() * size.people), random() < 0.3 ? null : 1 + Math.floor(random() * size.stores))
      const toys = new Set<number>()
      const count = Math.floor(random() * (size.toysPerPet * 2 + 1))
      while (toys.size < count) toys.add(1 + Math.floor(random() * size.toys))
      for (const toyId of toys) petToy.run(id, toyId)
    }
  })()
  return db
}

/** Counts the statements a Kysely instance runs, for the statements-per-request figures. */
export interface StatementCounter {
  count: number
}

export interface KyselyOverOptions {
  /** Count the statements run here. */
  counter?: StatementCounter
  /** Kysely's own SQLite driver, without `cachePreparedStatements` (default false). */
  uncached?: boolean
}

/** A Kysely instance over `database`, configured as the README recommends unless told otherwise. */
// Tables are named at runtime in the benchmarks.
export function kyselyOver (database: Database.Database, options: KyselyOverOptions = {}): Kysely<any> {
  const { counter, uncached = false } = options
  return new Kysely({
    dialect: new SqliteDialect({ database: uncached ? database : cachePreparedStatements(database) }),
    log: counter === undefined ? undefined : (event) => { if (event.level === 'query') counter.count++ },
  })
}
