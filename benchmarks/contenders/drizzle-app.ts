import type Database from 'better-sqlite3'
import { count, relations, sql } from 'drizzle-orm'
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3'
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres'
import * as pgCore from 'drizzle-orm/pg-core'
import * as sqliteCore from 'drizzle-orm/sqlite-core'
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'

// Drizzle ORM's relational queries over the benchmarks' pets tables, as its
// documentation declares them: the tables with their keys and indexes (the
// join table's primary key (pet_id, toy_id) and its index (toy_id, pet_id)),
// the relations beside them. Drizzle takes the caller's better-sqlite3
// database and pg pool: the repository's drivers.

const sqliteTables = (() => {
  const { sqliteTable, integer, text, primaryKey, index } = sqliteCore
  const companies = sqliteTable('companies', {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    public: integer('public', { mode: 'boolean' }).notNull(),
  })
  const people = sqliteTable('people', {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    hobbies: text('hobbies').notNull(),
    employerId: integer('employer_id').notNull(),
  }, (table) => [index('people_employer').on(table.employerId)])
  const toys = sqliteTable('toys', { id: integer('id').primaryKey(), name: text('name').notNull(), secret: text('secret').notNull() })
  const pets = sqliteTable('pets', {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    species: text('species').notNull(),
    ownerId: integer('owner_id').notNull(),
    soldFromId: integer('sold_from_id'),
  }, (table) => [index('pets_owner').on(table.ownerId)])
  const petToys = sqliteTable('pet_toys', {
    petId: integer('pet_id').notNull(),
    toyId: integer('toy_id').notNull(),
  }, (table) => [primaryKey({ columns: [table.petId, table.toyId] }), index('pet_toys_toy').on(table.toyId, table.petId)])
  return { companies, people, toys, pets, petToys }
})()

const pgTables = (() => {
  const { pgTable, integer, text, boolean, primaryKey, index } = pgCore
  const companies = pgTable('companies', {
    id: integer('id').primaryKey(), name: text('name').notNull(), public: boolean('public').notNull()
  })
  const people = pgTable('people', {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    hobbies: text('hobbies').notNull(),
    employerId: integer('employer_id').notNull(),
  }, (table) => [index('people_employer').on(table.employerId)])
  const toys = pgTable('toys', { id: integer('id').primaryKey(), name: text('name').notNull(), secret: text('secret').notNull() })
  const pets = pgTable('pets', {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    species: text('species').notNull(),
    ownerId: integer('owner_id').notNull(),
    soldFromId: integer('sold_from_id'),
  }, (table) => [index('pets_owner').on(table.ownerId)])
  const petToys = pgTable('pet_toys', {
    petId: integer('pet_id').notNull(),
    toyId: integer('toy_id').notNull(),
  }, (table) => [primaryKey({ columns: [table.petId, table.toyId] }), index('pet_toys_toy').on(table.toyId, table.petId)])
  return { companies, people, toys, pets, petToys }
})()

/**
 * The relations, the same for both dialects: `relations()` is Drizzle's core, not a dialect's
 * (the tables are typed as SQLite's here only to declare them once).
 */
function relationsOf<T extends typeof sqliteTables | typeof pgTables> (tables: T) {
  const { companies, people, toys, pets, petToys } = tables as typeof sqliteTables
  return {
    ...tables,
    peopleRelations: relations(people, ({ one }) => ({
      employer: one(companies, { fields: [people.employerId], references: [companies.id] }),
    })),
    petsRelations: relations(pets, ({ one, many }) => ({
      owner: one(people, { fields: [pets.ownerId], references: [people.id] }),
      petToys: many(petToys),
    })),
    petToysRelations: relations(petToys, ({ one }) => ({
      pet: one(pets, { fields: [petToys.petId], references: [pets.id] }),
      toy: one(toys, { fields: [petToys.toyId], references: [toys.id] }),
    })),
  }
}

interface DrizzlePet {
  id: number
  name: string
  species: string
  soldFromId: number | null
  owner: { id: number; name: string; hobbies: string; employer: { name: string; public: boolean } | null } | null
  petToys: Array<{ toy: { id: number; name: string } }>
}

/** Drizzle's rows in the API's shape: field names, key order, the join table's rows replaced by the toys. */
function shaped (pets: DrizzlePet[]) {
  return pets.map((pet) => ({
    id: pet.id,
    name: pet.name,
    species: pet.species,
    owner: pet.owner,
    sold_from: pet.soldFromId,
    toys: pet.petToys.map((petToy) => petToy.toy),
  }))
}

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] })
/** The page's response schema, for the route that declares one (fast-json-stringify writes the body). */
const pageSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          name: { type: 'string' },
          species: { type: 'string' },
          owner: nullable({
            type: 'object',
            properties: {
              id: { type: 'integer' },
              name: { type: 'string' },
              hobbies: { type: 'string' },
              employer: nullable({
                type: 'object', properties: { name: { type: 'string' }, public: { type: 'boolean' } }, required: ['name', 'public'],
              }),
            },
            required: ['id', 'name', 'hobbies', 'employer'],
          }),
          sold_from: { type: ['integer', 'null'] },
          toys: {
            type: 'array',
            items: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id', 'name'] },
          },
        },
        required: ['id', 'name', 'species', 'owner', 'sold_from', 'toys'],
      },
    },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    total: { type: 'integer' },
  },
  required: ['data', 'limit', 'offset', 'total'],
}

const querystring = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, offset: { type: 'integer', minimum: 0, default: 0 } },
}

export type DrizzleSource = { sqlite: Database.Database } | { pool: pg.Pool }

/**
 * `GET /pets?limit=&offset=` answered by `db.query.pets.findMany({ with })`
 * and a count, with a response schema (`responseSchema`) or without
 * (Fastify's JSON.stringify). `prepared`: the query is prepared once, as
 * Drizzle's documentation advises for queries that run again (limit and
 * offset placeholders); else built and run per request (SQLite only).
 */
export async function drizzleApp (source: DrizzleSource, responseSchema: boolean, prepared = true): Promise<FastifyInstance> {
  type Page = (limit: number, offset: number) => Promise<{ rows: DrizzlePet[]; total: number }>
  let page: Page
  // The page's query, the same for both dialects: the columns and relations of `expand=owner.employer,toys`, toys in id order.
  if ('sqlite' in source) {
    const schema = relationsOf(sqliteTables)
    const db = sqliteDrizzle(source.sqlite, { schema })
    const query = <L, O>(limit: L, offset: O) => db.query.pets.findMany({
      columns: { id: true, name: true, species: true, soldFromId: true },
      with: {
        owner: { columns: { id: true, name: true, hobbies: true }, with: { employer: { columns: { name: true, public: true } } } },
        petToys: { columns: {}, with: { toy: { columns: { id: true, name: true } } }, orderBy: (petToys, { asc }) => [asc(petToys.toyId)] },
      },
      orderBy: (pets, { asc }) => [asc(pets.id)],
      limit: limit as number,
      offset: offset as number,
    })
    if (prepared) {
      const pets = query(sql.placeholder('limit'), sql.placeholder('offset')).prepare()
      const total = db.select({ total: count() }).from(schema.pets).prepare()
      page = async (limit, offset) => ({ rows: pets.all({ limit, offset }), total: total.get()!.total })
    } else {
      page = async (limit, offset) => ({
        rows: await query(limit, offset),
        total: db.select({ total: count() }).from(schema.pets).get()!.total,
      })
    }
  } else {
    const schema = relationsOf(pgTables)
    const db = pgDrizzle(source.pool, { schema })
    const pets = db.query.pets.findMany({
      columns: { id: true, name: true, species: true, soldFromId: true },
      with: {
        owner: { columns: { id: true, name: true, hobbies: true }, with: { employer: { columns: { name: true, public: true } } } },
        petToys: { columns: {}, with: { toy: { columns: { id: true, name: true } } }, orderBy: (petToys, { asc }) => [asc(petToys.toyId)] },
      },
      orderBy: (pets, { asc }) => [asc(pets.id)],
      limit: sql.placeholder('limit'),
      offset: sql.placeholder('offset'),
    }).prepare('drizzle_pets_page')
    const total = db.select({ total: count() }).from(schema.pets).prepare('drizzle_pets_count')
    page = async (limit, offset) => {
      const [rows, [counted]] = await Promise.all([pets.execute({ limit, offset }), total.execute()])
      return { rows, total: counted!.total }
    }
  }
  const app = Fastify()
  app.get('/pets', { schema: responseSchema ? { querystring, response: { 200: pageSchema } } : { querystring } }, async (request) => {
    const { limit, offset } = request.query as { limit: number; offset: number }
    const { rows, total } = await page(limit, offset)
    return { data: shaped(rows), limit, offset, total }
  })
  await app.ready()
  return app
}
