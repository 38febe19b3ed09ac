/*
 * The worst requests a client can make under the default limits, as the README's security model names them.
 *
 * 1. `contains`: 200 rows holding 20,000 characters each (one letter repeated, the worst text for a substring
 *    search) and a value of the longest length allowed (32 characters) that matches no row, so every row is searched
 *    to its end. The route is `app.expand.routes` with `filter: { body: ['contains'] }`; the request is its first
 *    page (which tells its total: one statement). Also timed: the same search as LIKE on SQLite with 32 and
 *    1,000 characters (the limit before), for comparison.
 * 2. A parent with 1,000,000 children, expanded (`GET /issues/1?expand=comments`) and as ids: `maxObjects`
 *    (10,000) stops the read at 16,384 rows (one past the budget, rounded up to a power of two) and answers 400.
 *    On PostgreSQL with an index on the foreign key
 *    alone and on (foreign key, id).
 *
 * Runs on SQLite (in memory) and, with DATABASE_URL, on PostgreSQL; prints the median and the worst of `rounds`
 * requests, and the heap after the last.
 *
 *   DATABASE_URL=postgres://... node --import tsx benchmarks/investigations/worst-requests.ts [rounds]
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

const Comment = defineResource({
  name: 'Comment',
  table: 'cost_comments',
  schema: Type.Object({ id: Type.Integer(), body: Type.String() }),
  fields: ['id', 'body'],
})
const Issue = defineResource({
  name: 'Issue',
  table: 'cost_issues',
  schema: Type.Object({ id: Type.Integer(), title: Type.String(), comments: Type.Array(Type.Integer()) }),
  fields: ['id', 'title', 'comments'],
  expandable: { comments: [Comment, { many: true, foreignKey: 'issue_id' }] },
})

/** One issue with a million comments (foreign key indexed), inserted by the database itself. */
async function seedChildren (db: Kysely<any>, postgres: boolean, index: readonly string[]): Promise<void> {
  await db.schema.dropTable('cost_comments').ifExists().execute()
  await db.schema.dropTable('cost_issues').ifExists().execute()
  await db.schema.createTable('cost_issues').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('title', 'text').execute()
  await db.schema.createTable('cost_comments').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('issue_id', 'integer', (c) => c.notNull()).addColumn('body', 'text', (c) => c.notNull()).execute()
  await db.insertInto('cost_issues').values({ id: 1, title: 'popular' }).execute()
  await (postgres
    ? sql`insert into cost_comments select n, 1, 'comment ' || n from generate_series(1, 1000000) as n`
    : sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000000) insert into cost_comments select i, 1, 'comment ' || i from n`
  ).execute(db)
  await db.schema.createIndex('cost_comments_issue').on('cost_comments').columns([...index]).execute()
  // The statistics autovacuum would gather: without them PostgreSQL's planner takes the table for a small one.
  if (postgres) await sql`analyze cost_comments`.execute(db)
}

/** `index`: the columns of the index on the children's table (the foreign key, or with the related key after it). */
async function measureChildren (name: string, db: Kysely<any>, postgres: boolean, index: readonly string[]): Promise<void> {
  await seedChildren(db, postgres, index)
  const app = Fastify()
  await app.register(expandPlugin, { db, resources: [Issue, Comment] })
  app.expand.routes('/issues', Issue)
  await app.ready()
  for (const url of ['/issues/1?expand=comments', '/issues/1']) {
    const times: number[] = []
    for (let round = 0; round < rounds; round++) {
      const start = performance.now()
      const response = await app.inject(url)
      times.push(performance.now() - start)
      if (response.statusCode !== 400 || response.json().code !== 'FST_EXPAND_TOO_LARGE') throw new Error(`${name}: ${response.statusCode} ${response.body.slice(0, 200)}`)
    }
    const heap = Math.round(process.memoryUsage().heapUsed / 1e6)
    console.log(`${name}, index on (${index.join(', ')}): ${url} over 1,000,000 children: 400 in ${summary(times)}; heap ${heap} MB after`)
  }
  await app.close()
  await db.schema.dropTable('cost_comments').execute()
  await db.schema.dropTable('cost_issues').execute()
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
await measureChildren('SQLite', sqlite, false, ['issue_id'])
await sqlite.destroy()

if (process.env.DATABASE_URL) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 })
  const postgres = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  await measure('PostgreSQL', postgres)
  // An index on the foreign key alone orders equal keys by their place in the table, not by id: PostgreSQL
  // then sorts every child to find the first 10,001; SQLite's indexes end with the rowid (the id) anyway.
  await measureChildren('PostgreSQL', postgres, true, ['issue_id'])
  await measureChildren('PostgreSQL', postgres, true, ['issue_id', 'id'])
  await postgres.destroy()
}
