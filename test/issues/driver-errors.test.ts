import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources, handlerPetColumns } from '../fixtures/tables.js'

// A failing statement is the server's problem: the client gets a fixed 500
// that carries neither the driver's code (SQLITE_ERROR, 42P01) nor its
// message (table and column names, sometimes values), and the log gets both,
// tied to the request.

const databaseError = '{"statusCode":500,"code":"FST_EXPAND_DATABASE_ERROR","error":"Internal Server Error","message":"Internal Server Error"}'

/** Every string in a parsed log line, at any depth. */
function strings (value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(strings)
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings)
  return []
}

interface Logged { reqId?: unknown; [key: string]: unknown }

async function build (database: TestDatabase, lines: Logged[]): Promise<FastifyInstance> {
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Logged)
      callback()
    },
  })
  let requests = 0
  const app = Fastify({ logger: { level: 'error', stream }, genReqId: () => `request-${++requests}` })
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet)
  app.get('/handler-pets', { expandable: { resource: Pet, list: true } }, async (request) => {
    // The handler's own statement reads only pets, which stays: the failure is in app.expand.load.
    const rows = await database.db.selectFrom('pets').select(handlerPetColumns).orderBy('id').execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

/** The message the driver gives for a statement that reads `table`. */
async function driverMessage (database: TestDatabase, table: string): Promise<string> {
  try {
    await sql`select * from ${sql.table(table)}`.execute(database.db)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`reading ${table} did not fail`)
}

for (const dialect of dialects()) {
  t.test(`a failing statement on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const lines: Logged[] = []
    const app = await build(database, lines)
    t.teardown(() => app.close())
    const before = await app.inject('/pets/1?fields=id,toys')
    t.same({ status: before.statusCode, body: before.body }, { status: 200, body: '{"id":1,"toys":[1,2]}' }, 'served while the table is there')

    // After startup, the join table of Pet.toys disappears: every request that shows toys fails.
    await database.db.schema.dropTable('pet_toys').execute()
    const message = await driverMessage(database, 'pet_toys')

    const cases: Array<[url: string, label: string]> = [
      ['/pets/1', 'generated detail route'],
      ['/pets?expand=toys', 'generated list route'],
      ['/handler-pets', 'hand-written route through app.expand.load'],
      ['/handler-pets?expand=toys', 'hand-written route, expanded'],
    ]
    let requestNumber = 1
    for (const [url, label] of cases) {
      lines.length = 0
      const response = await app.inject(url)
      const id = `request-${++requestNumber}`
      t.equal(response.statusCode, 500, `${label}: status`)
      t.equal(response.body, databaseError, `${label}: a fixed body`)
      t.notOk(response.body.includes('pet_toys'), `${label}: no table name in the body`)
      const logged = lines.filter((line) => strings(line).some((text) => text.includes(message)))
      t.ok(logged.length > 0, `${label}: the log has the driver's message '${message}'`)
      t.ok(logged.some((line) => line.reqId === id), `${label}: with the request id ${id}`)
    }

    // Columns too: a column Pet reads is dropped from its table.
    await database.db.schema.alterTable('pets').dropColumn('species').execute()
    lines.length = 0
    const detail = await app.inject('/pets/2?fields=id,species')
    t.equal(detail.statusCode, 500, 'a missing column: status')
    t.equal(detail.body, databaseError, 'a missing column: the same fixed body')
    t.notOk(detail.body.includes('species'), 'a missing column: not named in the body')
    t.ok(lines.some((line) => line.reqId === `request-${++requestNumber}` && strings(line).some((text) => text.includes('species'))), 'the log names the column, with the request id')
  })
}
