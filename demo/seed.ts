import type { Insertable, Transaction } from 'kysely'
import { createIndexes, createTables, type DemoDatabase, type DemoTables } from './database.js'

/** How many rows the seed writes per table: about 60,000 in all. */
export const seedCounts = Object.freeze({
  companies: 300,
  people: 12_000,
  pet_stores: 120,
  toys: 1_500,
  vets: 80,
  pets: 15_000,
  visits: 10_000,
})

export type TableCounts = Record<keyof DemoTables, number>

const firstNames = [
  'Ada', 'Bruno', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kemi', 'Liam', 'Maya', 'Nils',
  'Olga', 'Pablo', 'Quinn', 'Rosa', 'Sami', 'Tara', 'Umar', 'Vera', 'Wen', 'Ximena', 'Yusuf', 'Zoe',
]
const lastNames = [
  'Abbott', 'Berg', 'Costa', 'Diallo', 'Eriksen', 'Fischer', 'Garcia', 'Haddad', 'Ivanova', 'Jensen', 'Kowalski', 'Lopez',
  'Moreau', 'Nakamura', 'Okafor', 'Petrov', 'Rossi', 'Silva', 'Tanaka', 'Urbina', 'Varga', 'Weber', 'Yilmaz', 'Zhang',
]
const hobbies = [
  'chess', 'climbing', 'cooking', 'cycling', 'gardening', 'knitting', 'painting', 'photography', 'piano', 'running',
  'sailing', 'woodwork',
]
const companyWords = [
  'Acme', 'Blue', 'Cedar', 'Delta', 'Ember', 'Fjord', 'Granite', 'Harbor', 'Iris', 'Juniper', 'Kestrel', 'Lumen', 'Maple',
  'Nimbus', 'Orchid',
]
const companyKinds = ['Foods', 'Labs', 'Logistics', 'Systems', 'Textiles', 'Works', 'Robotics', 'Studios', 'Pharma', 'Toys']
const cities = ['Lisbon', 'Lyon', 'Oslo', 'Porto', 'Krakow', 'Ghent', 'Turin', 'Utrecht', 'Bilbao', 'Tartu']
const petNames = [
  'Biscuit', 'Clover', 'Dottie', 'Fig', 'Ginger', 'Hazel', 'Juno', 'Kiwi', 'Loki', 'Mango', 'Nacho', 'Olive', 'Pepper',
  'Rusty', 'Sushi', 'Tofu', 'Waffles', 'Ziggy',
]
const species = ['cat', 'dog', 'rabbit', 'parrot', 'hamster', 'tortoise', 'ferret', 'goldfish']
const toyAdjectives = ['Bouncy', 'Crinkly', 'Fluffy', 'Glowing', 'Squeaky', 'Stretchy', 'Tiny', 'Wobbly']
const toyNouns = ['Ball', 'Bone', 'Feather', 'Mouse', 'Rope', 'Ring', 'Tunnel', 'Wheel']
const specialties = ['dentistry', 'dermatology', 'exotics', 'general practice', 'ophthalmology', 'surgery']
const reasons = ['check-up', 'vaccination', 'dental cleaning', 'limping', 'skin rash', 'follow-up', 'microchip', 'upset stomach']

/** mulberry32: small, fast, and the same sequence on every machine for one seed. */
export function randomSource (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state)
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296
  }
}

/** Every row of the demo, generated from a fixed seed: two calls give identical data. */
export function generateRows (seed = 20240601): { [T in keyof DemoTables]: Array<Insertable<DemoTables[T]>> } {
  const random = randomSource(seed)
  const integer = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
  const date = (fromYear: number, toYear: number) => {
    const month = String(integer(1, 12)).padStart(2, '0')
    const day = String(integer(1, 28)).padStart(2, '0')
    return `${integer(fromYear, toYear)}-${month}-${day}`
  }

  const companies = Array.from({ length: seedCounts.companies }, (_, index) => ({
    id: index + 1,
    name: `${pick(companyWords)} ${pick(companyKinds)} ${index + 1}`,
    // 1/0: better-sqlite3 binds no booleans, and PostgreSQL reads '1'/'0' as booleans.
    public: random() < 0.3 ? 1 : 0,
    founded: integer(1890, 2022),
  }))
  const people = Array.from({ length: seedCounts.people }, (_, index) => {
    const first = pick(firstNames)
    const last = pick(lastNames)
    const id = index + 1
    return {
      id,
      name: `${first} ${last}`,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${id}@example.com`,
      hobbies: [pick(hobbies), pick(hobbies)].filter((hobby, position, all) => all.indexOf(hobby) === position).join(', '),
      employer_id: random() < 0.1 ? null : integer(1, seedCounts.companies),
      password_hash: `scrypt$${Math.floor(random() * 2 ** 48).toString(16).padStart(12, '0')}`,
    }
  })
  const petStores = Array.from({ length: seedCounts.pet_stores }, (_, index) => {
    const city = pick(cities)
    return { id: index + 1, name: `${city} Pets #${index + 1}`, city }
  })
  const toys = Array.from({ length: seedCounts.toys }, (_, index) => ({
    id: index + 1,
    name: `${pick(toyAdjectives)} ${pick(toyNouns)}`,
    price_cents: integer(199, 4999),
    maker_id: integer(1, seedCounts.companies),
  }))
  const vets = Array.from({ length: seedCounts.vets }, (_, index) => ({
    id: index + 1,
    name: `Dr. ${pick(firstNames)} ${pick(lastNames)}`,
    specialty: pick(specialties),
  }))
  const pets = Array.from({ length: seedCounts.pets }, (_, index) => ({
    id: index + 1,
    name: pick(petNames),
    species: pick(species),
    born_on: date(2008, 2023),
    owner_id: integer(1, seedCounts.people),
    sold_from_id: random() < 0.4 ? null : integer(1, seedCounts.pet_stores),
  }))
  const petToys: Array<{ pet_id: number; toy_id: number }> = []
  for (const pet of pets) {
    const chosen = new Set<number>()
    const count = integer(0, 3)
    while (chosen.size < count) chosen.add(integer(1, seedCounts.toys))
    for (const toyId of [...chosen].sort((a, b) => a - b)) petToys.push({ pet_id: pet.id, toy_id: toyId })
  }
  const visits = Array.from({ length: seedCounts.visits }, (_, index) => ({
    id: index + 1,
    visited_on: date(2018, 2024),
    reason: pick(reasons),
    pet_id: integer(1, seedCounts.pets),
    vet_id: integer(1, seedCounts.vets),
  }))
  return { companies, people, pet_stores: petStores, toys, vets, pets, pet_toys: petToys, visits }
}

/** Every table, each after the tables its foreign keys point to. */
const tablesInKeyOrder: ReadonlyArray<keyof DemoTables> = [
  'companies', 'people', 'pet_stores', 'toys', 'vets', 'pets', 'pet_toys', 'visits',
]

/** Rows per INSERT: a few thousand bound parameters, far under SQLite's 32,766 and PostgreSQL's 65,535. */
const rowsPerInsert = 500

/**
 * Creates the tables and, when the database holds no company yet, writes the
 * generated rows in one transaction of multi-row inserts (so a crash leaves
 * the database empty, never half-seeded). Returns whether it seeded.
 */
export async function seedIfEmpty (db: DemoDatabase): Promise<boolean> {
  await createTables(db)
  const existing = await db.selectFrom('companies').select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow()
  if (Number(existing.count) > 0) return false
  const rows = generateRows()
  await db.transaction().execute(async (trx) => {
    for (const table of tablesInKeyOrder) await insertAll(trx, table, rows[table])
  })
  await createIndexes(db)
  return true
}

async function insertAll<T extends keyof DemoTables> (
  trx: Transaction<DemoTables>,
  table: T,
  rows: ReadonlyArray<Insertable<DemoTables[T]>>
): Promise<void> {
  for (let start = 0; start < rows.length; start += rowsPerInsert) {
    // Kysely's insert typing cannot follow a generic table name.
    await trx.insertInto(table).values(rows.slice(start, start + rowsPerInsert) as never).execute()
  }
}

/** Rows per table, for the start-up log and the tests. */
export async function countRows (db: DemoDatabase): Promise<TableCounts> {
  const counts = {} as TableCounts
  for (const table of tablesInKeyOrder) {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow()
    counts[table] = Number(row.count)
  }
  return counts
}
