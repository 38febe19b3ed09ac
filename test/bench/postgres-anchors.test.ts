import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { postgresWrittenBodyApp } from '../../benchmarks/baselines/postgres-body.js'
import { createPetsDatabase, petResources } from '../../benchmarks/domain/pets-db.js'
import { copyPetsToPostgres } from '../../benchmarks/domain/pets-pg.js'
import { buildApp } from '../helpers/app.js'

// The anchors of the benchmarks' PostgreSQL page (benchmarks/suites/end-to-end.ts) answer with the plugin's bytes:
// the body PostgreSQL writes in one statement is the plugin's body, byte for byte, and PostGraphile's records (on
// Node 22+, once installed in benchmarks/contenders) are the plugin's records. Checked here on a small copy of the
// benchmarks' data holding what the benchmark's rows do not: strings JSON escapes, a person without an employer,
// one whose employer row is missing, a pet whose owner row is missing, pets without toys, a page past the end.

const url = process.env.DATABASE_URL
if (!url) {
  if (process.env.REQUIRE_POSTGRES) throw new Error('REQUIRE_POSTGRES is set but DATABASE_URL is not')
  t.comment('PostgreSQL anchors skipped: set DATABASE_URL to run them')
  process.exit(0)
}

const tricky = 'quote " backslash \\ newline \n tab \t bell \u0007 unit \u001f del \u007f é ü 😀 \u2028 </script>'

async function petsInPostgres (t: Test) {
  const database = createPetsDatabase({ pets: 130, people: 12, companies: 4, stores: 3, toys: 9, toysPerPet: 2 })
  database.prepare('UPDATE people SET name = ?, hobbies = ? WHERE id = 1').run(tricky, `${tricky} ${tricky}`)
  database.prepare('UPDATE companies SET name = ? WHERE id = 1').run(tricky)
  database.prepare('UPDATE toys SET name = ? WHERE id = 1').run(tricky)
  database.prepare('UPDATE pets SET name = ? WHERE id = 2').run(tricky)
  database.prepare('UPDATE people SET employer_id = NULL WHERE id = 2').run()
  database.prepare('UPDATE people SET employer_id = 999 WHERE id = 3').run()
  database.prepare('UPDATE pets SET owner_id = 999 WHERE id = 3').run()
  database.prepare('DELETE FROM pet_toys WHERE pet_id IN (1, 4)').run()
  const postgres = await copyPetsToPostgres(database, url!)
  t.teardown(async () => {
    await postgres.close()
    database.close()
  })
  const ours = await buildApp({ db: postgres.namedDb, resources: petResources }, (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: 100 }))
  t.teardown(() => ours.close())
  return { database, postgres, ours }
}

const pages = [[100, 0], [100, 100], [7, 3], [100, 500]] as const
const ourPage = async (app: FastifyInstance, limit: number, offset: number) =>
  await app.inject({ url: `/pets?limit=${limit}&offset=${offset}&expand=owner.employer,toys` })

t.test('the body PostgreSQL writes in one statement is the plugin\'s, byte for byte', async (t) => {
  const { ours, postgres } = await petsInPostgres(t)
  const written = await postgresWrittenBodyApp(postgres.pool)
  t.teardown(() => written.close())
  for (const [limit, offset] of pages) {
    const expected = await ourPage(ours, limit, offset)
    const actual = await written.inject({ url: `/pets?limit=${limit}&offset=${offset}` })
    t.equal(expected.statusCode, 200)
    t.equal(actual.statusCode, 200)
    t.equal(actual.body, expected.body, `limit ${limit}, offset ${offset}`)
    t.equal(actual.headers['content-type'], expected.headers['content-type'])
  }
  const first = JSON.parse((await ourPage(ours, 100, 0)).body)
  t.equal(first.data[1].name, tricky, 'the escaped strings are in the page')
  t.same([first.data[0].toys, first.data[2].owner], [[], null], 'a pet without toys, a pet whose owner row is missing')
  t.same(JSON.parse((await ourPage(ours, 100, 500)).body).data, [], 'a page past the end')
})

interface PostgraphileModule {
  postgraphilePageQuery: string
  postgraphileRecords(body: string): { records: string; total: number }
  postgraphileApp(url: string, schema: string, poolSize: number): Promise<{ app: FastifyInstance; close(): Promise<void> }>
}

const contenders = fileURLToPath(new URL('../../benchmarks/contenders/', import.meta.url))
const nodeMajor = Number(process.versions.node.split('.')[0])
const postgraphileSkip = nodeMajor < 22
  ? `PostGraphile needs Node 22 or later (this is ${process.version})`
  : !existsSync(`${contenders}node_modules/postgraphile/package.json`)
      ? 'PostGraphile is not installed in benchmarks/contenders (node benchmarks/contenders/install.mjs)'
      : false

t.test('PostGraphile\'s records are the plugin\'s', { skip: postgraphileSkip }, async (t) => {
  const { ours, postgres, database } = await petsInPostgres(t)
  process.env.GRAPHILE_ENV ??= 'production'
  const specifier = '../../benchmarks/contenders/postgraphile-app.js'
  const postgraphile = await import(specifier) as PostgraphileModule
  const served = await postgraphile.postgraphileApp(url!, postgres.schema, 2)
  t.teardown(() => served.close())
  const total = database.prepare('SELECT count(*) FROM pets').pluck().get()
  for (const [limit, offset] of pages) {
    // The records as the plugin's body holds them, byte for byte.
    const body = (await ourPage(ours, limit, offset)).body
    const records = body.slice('{"data":'.length, body.lastIndexOf(',"limit":'))
    const response = await served.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: postgraphile.postgraphilePageQuery, variables: { limit, offset } }),
    })
    t.equal(response.statusCode, 200)
    const page = postgraphile.postgraphileRecords(response.body)
    t.equal(page.records, records, `limit ${limit}, offset ${offset}`)
    t.equal(page.total, total)
  }
})
