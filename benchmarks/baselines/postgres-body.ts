import Fastify, { type FastifyInstance } from 'fastify'
import type { Pool } from 'pg'

// The page's whole response body written by PostgreSQL in one statement: the page first, the page's toys
// aggregated per pet, to-one relations by LEFT JOIN, and every object a row turned into JSON. row_to_json and
// array_to_json write compact JSON (no space after ':' or ','), as JSON.stringify does; json_build_object and
// json_agg would not (`{"id" : 1}`, `}, \n {`). A row's columns are its keys in order; `(SELECT r FROM
// (SELECT ...) AS r)` names them. Strings are escaped by PostgreSQL as JSON.stringify escapes them (`\"`, `\\`,
// \b \f \n \r \t, other control characters as \u00xx), non-ASCII characters written as they are. The column is
// cast to text, so pg hands the string over unparsed.
const postgresBodySql = `
  WITH page AS (SELECT id, name, species, owner_id, sold_from_id FROM pets ORDER BY id LIMIT $1 OFFSET $2),
  page_toys AS (
    SELECT pt.pet_id, array_to_json(array_agg((SELECT toy FROM (SELECT t.id, t.name) AS toy) ORDER BY t.id)) AS toys
    FROM page JOIN pet_toys AS pt ON pt.pet_id = page.id JOIN toys AS t ON t.id = pt.toy_id
    GROUP BY pt.pet_id)
  SELECT row_to_json(body)::text FROM (
    SELECT
      coalesce((
        SELECT array_to_json(array_agg((SELECT pet FROM (SELECT p.id, p.name, p.species,
          CASE WHEN o.id IS NULL THEN NULL ELSE (SELECT owner FROM (SELECT o.id, o.name, o.hobbies,
            CASE WHEN c.id IS NULL THEN NULL ELSE (SELECT employer FROM (SELECT c.name, c.public) AS employer) END AS employer
          ) AS owner) END AS owner,
          p.sold_from_id AS sold_from,
          coalesce(pt.toys, '[]'::json) AS toys) AS pet) ORDER BY p.id))
        FROM page AS p
        LEFT JOIN people AS o ON o.id = p.owner_id
        LEFT JOIN companies AS c ON c.id = o.employer_id
        LEFT JOIN page_toys AS pt ON pt.pet_id = p.id
      ), '[]'::json) AS data,
      $1::int AS "limit",
      $2::int AS "offset",
      (SELECT count(*) FROM pets) AS total
  ) AS body`

/**
 * The floor of the PostgreSQL page: one named statement (parsed and planned once per connection) in which
 * PostgreSQL writes the response body itself, byte for byte the plugin's; the route hands the string on.
 */
export function postgresWrittenBody (pool: Pool): (limit: number, offset: number) => Promise<string> {
  return async (limit, offset) => {
    const { rows } = await pool.query<[string]>({
      name: 'postgres_written_pets_page', text: postgresBodySql, values: [limit, offset], rowMode: 'array',
    })
    return rows[0]![0]
  }
}

/**
 * The page's route whose body PostgreSQL writes: `GET /pets?limit=&offset=` with the hand-written routes'
 * parameters; Fastify sends a string it is given with a JSON content type as it is.
 */
export async function postgresWrittenBodyApp (pool: Pool): Promise<FastifyInstance> {
  const page = postgresWrittenBody(pool)
  const app = Fastify()
  const querystring = {
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      offset: { type: 'integer', minimum: 0, default: 0 },
    },
  }
  app.get('/pets', { schema: { querystring } }, async (request, reply) => {
    const { limit, offset } = request.query as { limit: number; offset: number }
    reply.type('application/json; charset=utf-8')
    return await page(limit, offset)
  })
  await app.ready()
  return app
}
