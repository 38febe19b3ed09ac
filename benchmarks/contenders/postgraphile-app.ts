import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { postgraphile } from 'postgraphile'
import { makePgService } from 'postgraphile/adaptors/pg'
import { grafserv } from 'postgraphile/grafserv/fastify/v5'
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber'

// PostGraphile 5 (its Amber preset, served by grafserv's Fastify 5 adaptor) over the benchmarks' pets tables in
// PostgreSQL. The tables declare no foreign keys (the same DDL builds every dialect's copy), so the relations are
// given as PostGraphile's smart tags, in comments on the tables: its documented way to declare a relation the
// catalog does not hold. pet_toys has no primary key; its unique index (pet_id, toy_id) is given as one.
const smartTags: Record<string, string> = {
  people: '@foreignKey (employer_id) references companies (id)',
  pets: '@foreignKey (owner_id) references people (id)',
  pet_toys: '@primaryKey pet_id,toy_id\n@foreignKey (pet_id) references pets (id)\n@foreignKey (toy_id) references toys (id)',
}

/**
 * The GraphQL query of `GET /pets?limit=&offset=&expand=owner.employer,toys` in PostGraphile's schema: aliases give
 * the API's field names (`id` is the Amber preset's global object id; the primary key is `rowId`); the toys come
 * through the join table's connection, one level deeper than the API's (`toys.nodes[].toy`), and the page's count
 * is the connection's totalCount.
 */
export const postgraphilePageQuery = `
  query Page($limit: Int!, $offset: Int!) {
    allPets(first: $limit, offset: $offset, orderBy: PRIMARY_KEY_ASC) {
      totalCount
      nodes {
        id: rowId name species
        owner: personByOwnerId { id: rowId name hobbies employer: companyByEmployerId { name public } }
        sold_from: soldFromId
        toys: petToysByPetId(orderBy: TOY_ID_ASC) { nodes { toy: toyByToyId { id: rowId name } } }
      }
    }
  }
`

interface PostgraphilePet {
  toys: { nodes: Array<{ toy: unknown }> }
  [field: string]: unknown
}

/**
 * The records of a PostGraphile page in the API's shape (each pet's toys lifted out of the join table's nodes),
 * written by JSON.stringify: the keys keep the query's order, so the text is comparable byte for byte.
 */
export function postgraphileRecords (body: string): { records: string; total: number } {
  const parsed = JSON.parse(body) as { data?: { allPets: { totalCount: number; nodes: PostgraphilePet[] } }; errors?: unknown }
  if (parsed.data === undefined || parsed.errors !== undefined) throw new Error(`PostGraphile: ${body.slice(0, 300)}`)
  const { totalCount, nodes } = parsed.data.allPets
  const records = nodes.map((pet) => ({ ...pet, toys: pet.toys.nodes.map((node) => node.toy) }))
  return { records: JSON.stringify(records), total: totalCount }
}

/**
 * A Fastify app answering POST /graphql with PostGraphile over `schema` at `url`, through a pool of `poolSize`
 * connections of its own; `close` releases PostGraphile and the pool.
 */
export async function postgraphileApp (
  url: string,
  schema: string,
  poolSize: number
): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  for (const [table, tags] of Object.entries(smartTags)) {
    await pool.query(`COMMENT ON TABLE ${schema}.${table} IS '${tags}'`)
  }
  const instance = postgraphile({
    extends: [PostGraphileAmberPreset],
    pgServices: [makePgService({ pool, schemas: [schema] })],
    grafserv: { graphiql: false, watch: false },
    grafast: { explain: false },
  })
  const app = Fastify()
  await instance.createServ(grafserv).addTo(app)
  await app.ready()
  return {
    app,
    async close () {
      await app.close()
      await instance.release()
      await pool.end()
    },
  }
}
