import type Database from 'better-sqlite3'
import Fastify, { type FastifyInstance } from 'fastify'
import mercurius, { type MercuriusLoaders } from 'mercurius'

const schema = `
  type Company { name: String! public: Boolean! }
  type Person { id: Int! name: String! hobbies: String! employer: Company }
  type Toy { id: Int! name: String! }
  type Pet { id: Int! name: String! species: String! owner: Person sold_from: Int toys: [Toy!]! }
  type Query { pets(limit: Int!, offset: Int!): [Pet!]! }
`

/** The GraphQL equivalent of `GET /pets?limit=&offset=&expand=owner.employer,toys`. */
export const petsPageQuery = `
  query Page($limit: Int!, $offset: Int!) {
    pets(limit: $limit, offset: $offset) {
      id name species
      owner { id name hobbies employer { name public } }
      sold_from
      toys { id name }
    }
  }
`

interface PetRow { id: number; owner_id: number | null }
interface PersonRow { employer_id: number | null }

/**
 * mercurius over the same SQLite data, as its documentation recommends:
 * per-request loaders batching each relation into one statement
 * (`IN (SELECT value FROM json_each(?))`, so every statement is prepared once; the page's limit and
 * offset `+?`, which SQLite's planner does not read, as a bare `?` LIMIT it plans for).
 */
export async function graphqlApp (database: Database.Database, jit: number): Promise<FastifyInstance> {
  const pets = database.prepare('SELECT id, name, species, owner_id, sold_from_id AS sold_from FROM pets ORDER BY id LIMIT +? OFFSET +?')
  const people = database.prepare('SELECT id, name, hobbies, employer_id FROM people WHERE id IN (SELECT value FROM json_each(?))')
  const companies = database.prepare('SELECT id, name, public FROM companies WHERE id IN (SELECT value FROM json_each(?))')
  const toys = database.prepare(`SELECT pt.pet_id AS pet_id, t.id AS id, t.name AS name FROM pet_toys AS pt JOIN toys AS t ON t.id = pt.toy_id
    WHERE pt.pet_id IN (SELECT value FROM json_each(?)) ORDER BY pt.pet_id, t.id`)

  const byId = (rows: unknown[]) => new Map((rows as Array<{ id: number }>).map((row) => [row.id, row]))
  const loaders: MercuriusLoaders = {
    Pet: {
      async owner (queries: Array<{ obj: PetRow }>) {
        const found = byId(people.all(JSON.stringify(queries.map(({ obj }) => obj.owner_id))))
        return queries.map(({ obj }) => (obj.owner_id === null ? null : found.get(obj.owner_id) ?? null))
      },
      async toys (queries: Array<{ obj: PetRow }>) {
        const groups = new Map<number, unknown[]>(queries.map(({ obj }) => [obj.id, []]))
        const rows = toys.all(JSON.stringify(queries.map(({ obj }) => obj.id))) as Array<{ pet_id: number; id: number; name: string }>
        for (const row of rows) {
          groups.get(row.pet_id)!.push({ id: row.id, name: row.name })
        }
        return queries.map(({ obj }) => groups.get(obj.id))
      },
    },
    Person: {
      async employer (queries: Array<{ obj: PersonRow }>) {
        const found = byId(companies.all(JSON.stringify(queries.map(({ obj }) => obj.employer_id))))
        return queries.map(({ obj }) => (obj.employer_id === null ? null : found.get(obj.employer_id) ?? null))
      },
    },
  }

  const app = Fastify()
  await app.register(mercurius, {
    schema,
    resolvers: { Query: { pets: async (_root: unknown, args: { limit: number; offset: number }) => pets.all(args.limit, args.offset) } },
    loaders,
    jit,
  })
  await app.ready()
  return app
}
