import type Database from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Pool as MysqlPool, RowDataPacket } from 'mysql2'
import type { Pool } from 'pg'

/** The two expansions the database figures use: depth 1 `owner,toys`, depth 2 `owner.employer,toys`. */
export type Depth = 1 | 2

export const expandOfDepth: Record<Depth, string> = { 1: 'owner,toys', 2: 'owner.employer,toys' }

/** The page every suite measures: HTTP, database and end to end answer the same 100 pets. */
export const pageRows = 100

interface PetRecord {
  id: number
  name: string
  species: string
  owner: { id: number; name: string; hobbies: string; employer?: { name: string; public: boolean } | null } | null
  sold_from: number | null
  toys: Array<{ id: number; name: string }>
}

// To-one relations by JOIN; toys aggregated to JSON by SQLite in the same statement. A plain
// JOIN through pet_toys repeats every pet once per toy and measured ~1.7x slower here. The limit
// and offset are bound behind unary plus (`+?`): SQLite plans a statement for a bare `?` LIMIT's
// value, so binding one again would prepare the statement again on every run (as the plugin's
// statements do, plugin/sql/dialects/sqlite-values.ts).
const pageSql = (depth: Depth) => `
  SELECT p.id, p.name, p.species, p.sold_from_id,
    o.id, o.name, o.hobbies,
    ${depth === 2 ? 'c.id, c.name, c.public,' : ''}
    (SELECT json_group_array(json_object('id', t.id, 'name', t.name) ORDER BY t.id)
      FROM pet_toys AS pt JOIN toys AS t ON t.id = pt.toy_id WHERE pt.pet_id = p.id) AS toys
  FROM pets AS p
  LEFT JOIN people AS o ON o.id = p.owner_id
  ${depth === 2 ? 'LEFT JOIN companies AS c ON c.id = o.employer_id' : ''}
  ORDER BY p.id LIMIT +? OFFSET +?`

/**
 * The best hand-written query for a page: one statement through
 * better-sqlite3 (prepared once, rows as arrays), shaped by hand.
 */
export function handWrittenPageLoader (database: Database.Database, depth: Depth): (limit: number, offset: number) => PetRecord[] {
  const statement = database.prepare(pageSql(depth)).raw(true)
  const toysColumn = depth === 2 ? 10 : 7
  return (limit, offset) => {
    const rows = statement.all(limit, offset) as unknown[][]
    const records: PetRecord[] = new Array(rows.length)
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]!
      let owner: PetRecord['owner'] = null
      if (row[4] !== null) {
        owner = { id: row[4] as number, name: row[5] as string, hobbies: row[6] as string }
        if (depth === 2) owner.employer = row[7] === null ? null : { name: row[8] as string, public: row[9] === 1 }
      }
      records[index] = {
        id: row[0] as number,
        name: row[1] as string,
        species: row[2] as string,
        owner,
        sold_from: row[3] as number | null,
        toys: JSON.parse(row[toysColumn] as string),
      }
    }
    return records
  }
}

/**
 * The same depth-2 page loaded as the plugin loads it, by hand: the page, then one statement per relation with
 * its parents' keys in an IN list padded to a power of two (the last key repeated), each statement prepared once
 * per list size, array rows, the rows grouped by key in Maps. Against `handWrittenPageLoader` it prices the
 * plugin's design (a statement per relation) apart from the plugin's own work
 * (benchmarks/investigations/instruction-counts.ts).
 */
export function handWrittenBatchedLoader (database: Database.Database): (limit: number, offset: number) => PetRecord[] {
  const page = database.prepare('SELECT id, name, species, owner_id, sold_from_id FROM pets ORDER BY id LIMIT +? OFFSET +?').raw(true)
  const byKeys = (sql: (list: string) => string) => {
    const prepared = new Map<number, Database.Statement>()
    return (keys: unknown[]): unknown[][] => {
      let size = 1
      while (size < keys.length) size *= 2
      let statement = prepared.get(size)
      if (statement === undefined) {
        statement = database.prepare(sql(new Array(size).fill('+?').join(', '))).raw(true)
        prepared.set(size, statement)
      }
      const padded = keys.slice()
      while (padded.length < size) padded.push(keys[keys.length - 1])
      return statement.all(padded) as unknown[][]
    }
  }
  const people = byKeys((list) => `SELECT id, name, hobbies, employer_id FROM people WHERE id IN (${list})`)
  const companies = byKeys((list) => `SELECT id, name, public FROM companies WHERE id IN (${list})`)
  const toys = byKeys((list) => 'SELECT t.id, t.name, pt.pet_id FROM toys AS t JOIN pet_toys AS pt ON pt.toy_id = t.id ' +
    `WHERE pt.pet_id IN (${list}) ORDER BY pt.pet_id, pt.toy_id`)
  return (limit, offset) => {
    const pets = page.all(limit, offset) as unknown[][]
    const records: PetRecord[] = new Array(pets.length)
    const owners = new Map<unknown, PetRecord['owner']>()
    const toysOf = new Map<unknown, PetRecord['toys']>()
    for (let index = 0; index < pets.length; index++) {
      const pet = pets[index]!
      if (pet[3] !== null) owners.set(pet[3], null)
      const petToys: PetRecord['toys'] = []
      toysOf.set(pet[0], petToys)
      records[index] = {
        id: pet[0] as number,
        name: pet[1] as string,
        species: pet[2] as string,
        owner: null,
        sold_from: pet[4] as number | null,
        toys: petToys,
      }
    }
    const employers = new Map<unknown, { name: string; public: boolean } | null>()
    const employerOf = new Map<unknown, unknown>()
    if (owners.size > 0) {
      for (const person of people([...owners.keys()])) {
        owners.set(person[0], { id: person[0] as number, name: person[1] as string, hobbies: person[2] as string, employer: null })
        if (person[3] !== null) {
          employers.set(person[3], null)
          employerOf.set(person[0], person[3])
        }
      }
    }
    if (employers.size > 0) {
      for (const company of companies([...employers.keys()])) {
        employers.set(company[0], { name: company[1] as string, public: company[2] === 1 })
      }
    }
    for (const [id, owner] of owners) {
      if (owner !== null) owner.employer = employers.get(employerOf.get(id)) ?? null
    }
    if (toysOf.size > 0) {
      for (const toy of toys([...toysOf.keys()])) toysOf.get(toy[2])!.push({ id: toy[0] as number, name: toy[1] as string })
    }
    for (let index = 0; index < pets.length; index++) records[index]!.owner = owners.get(pets[index]![3]) ?? null
    return records
  }
}

// Tables are named at runtime in the benchmarks.
type AnyKysely = Kysely<any>

/** What a loader written without batching does: one statement per row and relation (N+1). */
export async function naivePage (db: AnyKysely, depth: Depth, limit: number, offset: number): Promise<PetRecord[]> {
  const pets = await db.selectFrom('pets').select(['id', 'name', 'species', 'owner_id', 'sold_from_id'])
    .orderBy('id').limit(limit).offset(offset).execute()
  const records: PetRecord[] = []
  for (const pet of pets) {
    const person = await db.selectFrom('people').select(['id', 'name', 'hobbies', 'employer_id'])
      .where('id', '=', pet.owner_id).executeTakeFirst()
    let owner: PetRecord['owner'] = null
    if (person !== undefined) {
      owner = { id: person.id, name: person.name, hobbies: person.hobbies }
      if (depth === 2) {
        const company = await db.selectFrom('companies').select(['name', 'public']).where('id', '=', person.employer_id).executeTakeFirst()
        owner.employer = company === undefined ? null : { name: company.name, public: company.public === 1 }
      }
    }
    const toys = await db.selectFrom('pet_toys')
      .innerJoin('toys', 'toys.id', 'pet_toys.toy_id')
      .select(['toys.id', 'toys.name'])
      .where('pet_toys.pet_id', '=', pet.id)
      .orderBy('toys.id')
      .execute()
    records.push({ id: pet.id, name: pet.name, species: pet.species, owner, sold_from: pet.sold_from_id, toys })
  }
  return records
}

// The same page on PostgreSQL in one statement: the page first, to-one relations by JOIN, the page's
// toys aggregated to JSON in one pass (pg parses json columns), the count as an uncorrelated
// subquery (computed once). A correlated json_agg subquery per row, as on SQLite, measured ~2x slower:
// PostgreSQL runs it once per pet, hashing the toys table each time.
const postgresPageSql = `
  WITH page AS (SELECT id, name, species, owner_id, sold_from_id FROM pets ORDER BY id LIMIT $1 OFFSET $2),
  page_toys AS (
    SELECT pt.pet_id, json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.id) AS toys
    FROM page JOIN pet_toys AS pt ON pt.pet_id = page.id JOIN toys AS t ON t.id = pt.toy_id
    GROUP BY pt.pet_id)
  SELECT p.id, p.name, p.species, p.sold_from_id,
    o.id, o.name, o.hobbies,
    c.id, c.name, c.public,
    coalesce(pt.toys, '[]'),
    (SELECT count(*) FROM pets) AS total
  FROM page AS p
  LEFT JOIN people AS o ON o.id = p.owner_id
  LEFT JOIN companies AS c ON c.id = o.employer_id
  LEFT JOIN page_toys AS pt ON pt.pet_id = p.id
  ORDER BY p.id`

/**
 * The best hand-written page on PostgreSQL: one named statement (parsed and
 * planned once per connection) with the count in it, array rows, shaped by hand.
 */
export function handWrittenPostgresPage (pool: Pool): (limit: number, offset: number) => Promise<{ data: PetRecord[]; total: number }> {
  return async (limit, offset) => {
    const { rows } = await pool.query<unknown[]>({
      name: 'hand_written_pets_page', text: postgresPageSql, values: [limit, offset], rowMode: 'array'
    })
    const data: PetRecord[] = new Array(rows.length)
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]!
      data[index] = {
        id: row[0] as number,
        name: row[1] as string,
        species: row[2] as string,
        owner: row[4] === null
          ? null
          : {
              id: row[4] as number,
              name: row[5] as string,
              hobbies: row[6] as string,
              employer: row[7] === null ? null : { name: row[8] as string, public: row[9] as boolean },
            },
        sold_from: row[3] as number | null,
        toys: row[10] as PetRecord['toys'],
      }
    }
    // A page past the end has no row to carry the count.
    if (rows.length === 0) {
      const counted = await pool.query<{ total: string }>('SELECT count(*) AS total FROM pets')
      return { data, total: Number(counted.rows[0]!.total) }
    }
    return { data, total: Number(rows[0]![11]) }
  }
}

// The same page on MariaDB in one statement: the page first (a derived table), to-one relations by JOIN,
// each pet's toys aggregated to JSON by a correlated subquery (an index lookup per pet: MariaDB runs it
// once per row of the page, on the join table's (pet_id, toy_id) index), the count as an uncorrelated
// subquery (computed once). The whole page as one JSON document (JSON_ARRAYAGG of JSON_OBJECT, booleans
// through JSON_EXTRACT) was measured beside it and was no faster, its document still parsed and written again.
const mariadbPageSql = `
  SELECT p.id, p.name, p.species, p.sold_from_id,
    o.id, o.name, o.hobbies,
    c.id, c.name, c.public,
    (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', t.id, 'name', t.name) ORDER BY t.id)
      FROM pet_toys AS pt JOIN toys AS t ON t.id = pt.toy_id WHERE pt.pet_id = p.id) AS toys,
    (SELECT count(*) FROM pets) AS total
  FROM (SELECT id, name, species, owner_id, sold_from_id FROM pets ORDER BY id LIMIT ? OFFSET ?) AS p
  LEFT JOIN people AS o ON o.id = p.owner_id
  LEFT JOIN companies AS c ON c.id = o.employer_id
  ORDER BY p.id`

/**
 * The best hand-written page on MariaDB: one prepared statement (mysql2's
 * `execute`: parsed once per connection, rows in the binary protocol) with
 * the count in it, array rows, shaped by hand.
 */
export function handWrittenMariadbPage (pool: MysqlPool): (limit: number, offset: number) => Promise<{ data: PetRecord[]; total: number }> {
  const promisePool = pool.promise()
  return async (limit, offset) => {
    // mysql2 binds a number as a DOUBLE, which LIMIT refuses on MySQL 8.0.22 and later; as text it is taken on both.
    const parameters = [String(limit), String(offset)]
    const [result] = await promisePool.execute<RowDataPacket[][]>({ sql: mariadbPageSql, rowsAsArray: true }, parameters)
    const rows = result as unknown[][]
    const data: PetRecord[] = new Array(rows.length)
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]!
      // mysql2 parses a column the server marks as JSON (MariaDB 10.11 here does); from a server that does not, it is text.
      const toys = row[10] as PetRecord['toys'] | string | null
      data[index] = {
        id: row[0] as number,
        name: row[1] as string,
        species: row[2] as string,
        owner: row[4] === null
          ? null
          : {
              id: row[4] as number,
              name: row[5] as string,
              hobbies: row[6] as string,
              employer: row[7] === null ? null : { name: row[8] as string, public: row[9] === 1 },
            },
        sold_from: row[3] as number | null,
        // A pet without toys aggregates no row: NULL.
        toys: toys === null ? [] : typeof toys === 'string' ? JSON.parse(toys) as PetRecord['toys'] : toys,
      }
    }
    // A page past the end has no row to carry the count.
    if (rows.length === 0) {
      const [counted] = await promisePool.query<RowDataPacket[][]>({ sql: 'SELECT count(*) FROM pets', rowsAsArray: true })
      return { data, total: Number((counted as unknown[][])[0]![0]) }
    }
    return { data, total: Number(rows[0]![11]) }
  }
}
