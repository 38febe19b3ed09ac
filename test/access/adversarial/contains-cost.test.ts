import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource } from '../../../plugin/index.js'
import { asWrittenOn, dialects, type Dialect, type TestDatabase } from '../../fixtures/dialects.js'

// Attack: a `contains` filter as a denial of service. A substring search costs
// the text's length times the value's (LIKE's matcher backtracks per
// character): 200 rows of 20,000 characters and a 1,000-character value held
// SQLite's single thread (better-sqlite3 is synchronous: every other client
// waits) for seconds, twice per request (the page and its COUNT). What must
// hold: a `contains` value is at most 32 characters unless the route says
// otherwise, SQLite and MariaDB search with instr (bytes compared at each position), a
// page that tells its total runs no COUNT, and on PostgreSQL a statement past
// the pool's statement_timeout is a 503 with a stable code, never a 500 or the
// driver's text.

const Note = defineResource({
  name: 'Note',
  table: 'notes',
  schema: Type.Object({ id: Type.Integer(), title: Type.String(), body: Type.String() }),
  fields: ['id', 'title'],
})

const rowCount = 200
const bodyLength = 20_000

async function createNotes (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('notes').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull()).addColumn('body', 'text', (c) => c.notNull()).execute()
  // The worst text for a substring search: one letter repeated, which every prefix of the value matches.
  const body = 'a'.repeat(bodyLength)
  const rows = Array.from({ length: rowCount }, (_row, index) => ({ id: index + 1, title: `note ${index + 1}`, body }))
  for (let start = 0; start < rows.length; start += 50) await db.insertInto('notes').values(rows.slice(start, start + 50)).execute()
}

async function build (t: Test, db: Kysely<any>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db, resources: [Note] })
  app.expand.routes('/notes', Note, { filter: { body: ['contains'], title: { operators: ['eq', 'contains'], containsMaxLength: 8 } } })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

const badFilter = (message: string) => ({ statusCode: 400, code: 'FST_EXPAND_BAD_FILTER', error: 'Bad Request', message })
/** The search of `filter[body][contains]` as each dialect writes it (plugin/sql/dialects: `contains`). */
const bodyContains = {
  sqlite: 'where instr(lower("notes"."body"), lower(?)) > 0',
  'sqlite with cached statements': 'where instr(lower("notes"."body"), lower(?)) > 0',
  postgres: 'where lower("notes"."body") like lower($1) escape \'\\\'',
  mariadb: 'where instr(cast(lower("notes"."body") as binary), cast(lower(?) as binary)) > 0',
} satisfies Record<Dialect['name'], string>

/** The longest value the default allows, matching no row after scanning every one. */
const worstValue = `${'a'.repeat(31)}b`

for (const dialect of dialects()) {
  t.test(`contains is bounded on ${dialect.name}`, async (t) => {
    const database: TestDatabase = await dialect.open()
    t.teardown(() => database.close())
    await createNotes(database.db)
    const app = await build(t, database.db)
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json(), statements: [...database.statements] }
    }

    const tooLong = await get(`/notes?filter[body][contains]=${'a'.repeat(33)}`)
    t.strictSame({ status: tooLong.status, body: tooLong.body }, {
      status: 400, body: badFilter("'filter[body][contains]' is 33 characters long; the limit is 32"),
    }, 'the default: 32 characters')
    t.equal(tooLong.statements.length, 0, 'refused before any statement')
    t.strictSame((await get('/notes?filter[title][contains]=note 1234')).body, badFilter("'filter[title][contains]' is 9 characters long; the limit is 8"),
      "a route's own bound")
    t.equal((await get(`/notes?filter[title]=${'x'.repeat(500)}`)).status, 200, 'the bound is for contains alone: eq takes longer values')

    const worst = await get(`/notes?fields=id&filter[body][contains]=${worstValue}`)
    t.strictSame(worst.body, { data: [], limit: 20, offset: 0, total: 0 })
    t.equal(worst.statements.length, 1, 'the empty first page tells its total: the search runs once, not again for a COUNT')
    t.match(worst.statements[0], asWrittenOn(dialect, bodyContains[dialect.name]))

    const found = await get('/notes?fields=id&filter[title][contains]=NOTE 19&limit=5')
    t.strictSame(found.body, { data: [{ id: 19 }, { id: 190 }, { id: 191 }, { id: 192 }, { id: 193 }], limit: 5, offset: 0, total: 11 },
      'a full page: the COUNT gives the total')
    t.equal(found.statements.length, 2)
    t.strictSame((await get('/notes?fields=id&filter[title][contains]=NOTE 19&limit=5&offset=10')).body,
      { data: [{ id: 199 }], limit: 5, offset: 10, total: 11 }, 'a short last page: its total from the page')
    t.strictSame((await get('/notes?fields=id&filter[title][contains]=NOTE 19&limit=5&offset=20')).body,
      { data: [], limit: 5, offset: 20, total: 11 }, 'past the end: the COUNT again')
  })
}

t.test('options: containsMaxLength is checked at startup', async (t) => {
  const sqlite = dialects()[0]!
  const database = await sqlite.open()
  t.teardown(() => database.close())
  for (const [declaration, message] of [
    [{ operators: ['contains'], containsMaxLength: 0 }, "expand.routes('/notes'): filter 'body': containsMaxLength must be an integer from 1 to 1000"],
    [{ operators: ['contains'], containsMaxLength: 1001 }, "expand.routes('/notes'): filter 'body': containsMaxLength must be an integer from 1 to 1000"],
    [{ operators: ['contains'], containsMaxLength: '64' }, "expand.routes('/notes'): filter 'body': containsMaxLength must be an integer from 1 to 1000"],
    [{ operators: ['contains'], maxLength: 64 }, "expand.routes('/notes'): filter 'body': unknown key 'maxLength' (a filter takes operators and containsMaxLength)"],
    ['contains', "expand.routes('/notes'): filter 'body': give an array of operators (eq, ne, lt, lte, gt, gte, in, null, contains, exists), or { operators, containsMaxLength }"],
  ] as const) {
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: [Note] })
    t.throws(() => app.expand.routes('/notes', Note, { filter: { body: declaration as never } }), { code: 'FST_EXPAND_INVALID_OPTION', message }, JSON.stringify(declaration))
    await app.close()
  }
})

const postgres = process.env.DATABASE_URL ? dialects().find((dialect) => dialect.name === 'postgres') : undefined
t.test('PostgreSQL: a statement past statement_timeout is a 503, not the driver\'s text', { skip: postgres === undefined ? 'needs PostgreSQL' : false }, async (t) => {
  const database = await postgres!.open()
  t.teardown(() => database.close())
  await createNotes(database.db)
  const { rows: [current] } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)
  // As the README advises: the pool's statement_timeout bounds every statement (here 20 ms, below the worst search).
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, statement_timeout: 20, options: `-c search_path=${current!.schema}` })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  t.teardown(() => db.destroy())
  const app = await build(t, db)
  const response = await app.inject(`/notes?fields=id&filter[body][contains]=${worstValue}`)
  t.equal(response.statusCode, 503)
  t.strictSame(response.json(), { statusCode: 503, code: 'FST_EXPAND_UNAVAILABLE', error: 'Service Unavailable', message: 'Service Unavailable' })
  t.equal(response.headers['retry-after'], '1')
  t.strictSame((await app.inject('/notes?fields=id&limit=1')).json(), { data: [{ id: 1 }], limit: 1, offset: 0, total: 200 }, 'the next request is served')
})
