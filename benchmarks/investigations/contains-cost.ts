/*
 * The worst request a client can make with `contains` under the default limits: 200 rows holding 20,000 characters
 * each (one letter repeated, the worst text for a substring search) and a value of the longest length allowed
 * (32 characters) that matches no row, so every row is searched to its end. The route is `app.expand.routes` with
 * `filter: { body: ['contains'] }`; the request is its first page (which tells its total: one statement). Runs on
 * SQLite (in memory) and, with DATABASE_URL, on PostgreSQL; prints the median and the worst of `rounds` requests.
 * Also times the same search as LIKE on SQLite and a 1,000-character value (the limit before), for comparison.
 *
 *   DATABASE_URL=postgres://... node --import tsx benchmarks/investigations/contains-cost.ts [rounds]
 */
import { Type } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely'
import pg from 'pg'
import expandPlugin, { defineResource } from '../../plugin/index.js'

const rounds = Number(process.argv[2] ?? 9)
const Note = defineResource({
  name: 'Note',
  table: 'cost_notes',
  schema: Type.Object({ id: Type.Integer(), body: Type.String() }),
  fields: ['id'],
})

async function seed (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cost_notes').ifExists().execute()
  await db.schema.createTable('cost_notes').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('body', 'text', (c) => c.notNull()).execute()
  const body = 'a'.repeat(20_000)
  for (let start = 0; start < 200; start += 50) {
    await db.insertInto('cost_notes').values(Array.from({ length: 50 }, (_row, index) => ({ id: start + index + 1, body }))).execute()
  }
}

function summary (times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b)
  return `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, worst ${sorted[sorted.length - 1]!.toFixed(1)} ms`
}

async function measure (name: string, db: Kysely<any>): Promise<void> {
  await seed(db)
  const app = Fastify()
  await app.register(expandPlugin, { db, resources: [Note] })
  app.expand.routes('/notes', Note, { filter: { body: ['contains'] } })
  await app.ready()
  const times: number[] = []
  for (let round = 0; round < rounds; round++) {
    const start = performance.now()
    const response = await app.inject(`/notes?filter[body][contains]=${'a'.repeat(31)}b`)
    times.push(performance.now() - start)
    if (response.statusCode !== 200 || response.json().total !== 0) throw new Error(`${name}: ${response.statusCode} ${response.body}`)
  }
  console.log(`${name}: worst request under the defaults (32 characters): ${summary(times)}`)
  await app.close()
  await db.schema.dropTable('cost_notes').execute()
}

const database = new SQLite(':memory:')
const sqlite = new Kysely<any>({ dialect: new SqliteDialect({ database }) })
await measure('SQLite', sqlite)
await seed(sqlite)
for (const [label, length] of [['LIKE, 32 characters', 32], ['LIKE, 1,000 characters (the limit before)', 1000]] as const) {
  const start = performance.now()
  await sql`select count(*) from cost_notes where lower(body) like lower(${`%${'a'.repeat(length - 1)}b%`})`.execute(sqlite)
  console.log(`SQLite, ${label}: ${(performance.now() - start).toFixed(1)} ms`)
}
await sqlite.destroy()

if (process.env.DATABASE_URL) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 })
  const postgres = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  await measure('PostgreSQL', postgres)
  await postgres.destroy()
}
