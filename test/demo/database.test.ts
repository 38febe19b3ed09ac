import { sql } from 'kysely'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import { test } from 'tap'
import { buildApp } from '../../demo/app.js'
import { connect, databaseOf, type DemoDatabase } from '../../demo/database.js'
import { seedIfEmpty } from '../../demo/seed.js'

// `DATABASE_URL=... npm start` on each database the demo connects to: the
// same seeded rows answer the same requests with the same bytes as on SQLite.
// The servers are the test suite's (DATABASE_URL, MARIADB_URL); each run gets
// a schema or database of its own.

const requests = [
  '/pets/1?expand=owner.employer,toys',
  '/pets?limit=3&expand=owner&fields=id,name,owner.name',
  '/people?sort=-pet_count&limit=3&fields=id,name,pet_count',
  '/pets?limit=3&fields=id,label&filter[name][contains]=an&sort=name',
  '/people?filter[pet_count][gte]=6&sort=-name&limit=4&fields=id,name,pet_count',
  '/visits?filter[date][gte]=2024-01-01&filter[pet.species]=cat&sort=-date&limit=3',
  '/visits?limit=3&expand=pet,vet',
]

async function answers (db: DemoDatabase): Promise<string[]> {
  const app = await buildApp({ db, cursorSecret: 'the demo database test cursor key' })
  try {
    const bodies: string[] = []
    for (const url of requests) {
      const reply = await app.inject(url)
      bodies.push(`${reply.statusCode} ${url} ${reply.body}`)
    }
    return bodies
  } finally {
    await app.close()
  }
}

let reference: Promise<string[]> | undefined
/** The answers of the demo on SQLite, computed once. */
function sqliteAnswers (): Promise<string[]> {
  reference ??= (async () => {
    const db = connect({ sqliteFile: ':memory:' })
    try {
      await seedIfEmpty(db)
      return await answers(db)
    } finally {
      await db.destroy()
    }
  })()
  return reference
}

test('the connection string names the database', async (t) => {
  t.equal(databaseOf(undefined), 'SQLite')
  t.equal(databaseOf(''), 'SQLite')
  t.equal(databaseOf('postgres://postgres@127.0.0.1:5433/postgres'), 'PostgreSQL')
  t.equal(databaseOf('postgresql://127.0.0.1/app'), 'PostgreSQL')
  t.equal(databaseOf('mysql://app@127.0.0.1/app'), 'MariaDB/MySQL')
  t.equal(databaseOf('mariadb://app@127.0.0.1/app'), 'MariaDB/MySQL')
})

test('DATABASE_URL=mysql://: the demo seeds MariaDB and answers as on SQLite', {
  skip: process.env.MARIADB_URL ? false : 'needs MARIADB_URL',
}, async (t) => {
  const url = new URL(process.env.MARIADB_URL!)
  const name = `fx_demo_${process.pid}_${Date.now()}`
  const admin = await createConnection(url.href)
  // The server's default collation ignores case and accents: the demo's tables must not (nor ignore trailing spaces).
  await admin.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_general_ci`)
  t.teardown(async () => { await admin.query(`drop database \`${name}\``); await admin.end() })
  url.pathname = `/${name}`
  url.protocol = 'mariadb:'
  const db = connect({ databaseUrl: url.href })
  t.teardown(() => db.destroy())

  t.equal(await seedIfEmpty(db), true)
  t.equal(await seedIfEmpty(db), false, 'a second start finds the rows')
  const { rows } = await sql<{ limit: string; collation: string }>`select @@max_statement_time as "limit", (select table_collation from information_schema.tables where table_schema = database() and table_name = 'pets') as collation`.execute(db)
  t.same(rows.map(({ limit, collation }) => [Number(limit), collation]), [[2, 'utf8mb4_nopad_bin']], 'each statement limited to 2 s; text compared by its bytes')
  const mine = await answers(db)
  t.same(mine.map((answer) => answer.slice(0, 3)), requests.map(() => '200'), 'every request answered')
  t.same(mine, await sqliteAnswers())
})

test('DATABASE_URL=postgres://: the demo seeds PostgreSQL and answers as on SQLite', {
  skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL',
}, async (t) => {
  const schema = `fx_demo_${process.pid}_${Date.now()}`
  const admin = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 })
  await admin.query(`create schema ${schema}`)
  t.teardown(async () => { await admin.query(`drop schema ${schema} cascade`); await admin.end() })
  const url = new URL(process.env.DATABASE_URL!)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const db = connect({ databaseUrl: url.href })
  t.teardown(() => db.destroy())

  t.equal(await seedIfEmpty(db), true)
  const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)
  t.same(rows, [{ statement_timeout: '2s' }])
  t.same(await answers(db), await sqliteAnswers())
})
