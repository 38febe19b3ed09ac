import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import expandPlugin, { namePreparedStatements } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet, createTables, resources, seed } from '../fixtures/tables.js'

// namePreparedStatements: on PostgreSQL, a SQL text that runs again is a named
// prepared statement (parsed and planned once per connection); what is
// answered does not change.

t.test('options are checked', async (t) => {
  const pool = new pg.Pool()
  t.teardown(() => pool.end())
  t.throws(() => namePreparedStatements(pool, { maxStatements: 0 }), { code: 'FST_EXPAND_INVALID_OPTION', message: 'namePreparedStatements: maxStatements must be a positive integer, got 0' })
  t.throws(() => namePreparedStatements(pool, { maxStatementLength: 1.5 }), { code: 'FST_EXPAND_INVALID_OPTION' })
  t.throws(() => namePreparedStatements(pool, { max: 1 } as never), { code: 'FST_EXPAND_INVALID_OPTION', message: "namePreparedStatements: unknown option 'max'" })
})

t.test('the wrapper passes on what Kysely 0.29 reads of a pool and of its clients', async (t) => {
  // Kysely 0.29 cancels a statement (an aborted signal) from a client of its own, made with the pool's `Client`
  // and `options`, and knows whose statement to cancel by the client's `processID`.
  const pool = new pg.Pool({ connectionString: 'postgres://someone@127.0.0.1:1/nothing' })
  t.teardown(() => pool.end())
  const client = { processID: 4242, query: async () => ({ rows: [] }), release: () => {} }
  const fake = Object.assign(Object.create(pool) as pg.Pool, { connect: async () => client })
  type Wrapped = { Client: unknown; options: unknown; connect(): Promise<{ processID?: number }> }
  const wrapped = namePreparedStatements(fake) as unknown as Wrapped
  t.equal(wrapped.Client, pg.Client)
  t.equal(wrapped.options, pool.options)
  t.equal((await wrapped.connect()).processID, 4242)
  // A pool without them (Kysely 0.28 asks only for connect and end): none is made up.
  const bare = namePreparedStatements({ connect: async () => client, end: async () => {} } as never) as unknown as Record<string, unknown>
  t.equal(bare.Client, undefined)
  t.equal(bare.options, undefined)
})

const postgres = dialects().find((dialect) => dialect.name === 'postgres')

t.test('on PostgreSQL', { skip: postgres === undefined ? 'PostgreSQL not configured' : false }, async (t) => {
  const schema = `fx_named_${process.pid}_${Date.now()}`
  const admin = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1, options: `-c search_path=${schema}` }) }) })
  await sql.raw(`create schema ${schema}`).execute(admin)
  t.teardown(async () => {
    await sql.raw(`drop schema ${schema} cascade`).execute(admin)
    await admin.destroy()
  })
  await createTables(admin)
  await seed(admin)

  /** A pool whose clients report how each statement was sent: its name, or undefined for an unnamed one. */
  const sent: Array<{ name: string | undefined; text: string }> = []
  const watched = (pool: pg.Pool): pg.Pool => ({
    connect: async () => {
      const client = await pool.connect()
      const query = client.query.bind(client) as (...args: unknown[]) => unknown
      return Object.assign(Object.create(client) as pg.PoolClient, {
        query: (first: unknown, values?: unknown) => {
          if (typeof first === 'string') sent.push({ name: undefined, text: first })
          else if (typeof first === 'object' && first !== null && 'text' in first) sent.push({ name: (first as { name?: string }).name, text: (first as { text: string }).text })
          return query(first, values)
        },
        release: () => client.release(),
      })
    },
    end: () => pool.end(),
  } as unknown as pg.Pool)

  async function appOver (db: Kysely<any>): Promise<FastifyInstance> {
    const app = Fastify()
    await app.register(expandPlugin, { db, resources })
    app.expand.routes('/pets', Pet)
    await app.ready()
    return app
  }
  const url = '/pets?expand=owner.employer,toys&limit=2'
  const pool = (max: number) => new pg.Pool({ connectionString: process.env.DATABASE_URL, max, options: `-c search_path=${schema}` })

  const plainDb = new Kysely<any>({ dialect: new PostgresDialect({ pool: pool(2) }) })
  t.teardown(() => plainDb.destroy())
  const plain = await appOver(plainDb)
  t.teardown(() => plain.close())
  const expected = (await plain.inject({ url })).body

  t.test('a text is named the second time it runs, and keeps its name', async (t) => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(watched(pool(2))) }) })
    t.teardown(() => db.destroy())
    const app = await appOver(db)
    t.teardown(() => app.close())
    sent.length = 0
    const first = await app.inject({ url })
    t.equal(first.body, expected)
    t.equal(sent.length, 5, 'page, count, owner, toys, owner.employer')
    t.same(sent.map((statement) => statement.name), [undefined, undefined, undefined, undefined, undefined], 'seen once: unnamed')
    const texts = sent.map((statement) => statement.text)
    for (let round = 0; round < 3; round++) {
      sent.length = 0
      const again = await app.inject({ url })
      t.equal(again.body, expected, 'the same body')
      t.equal(sent.length, 5)
      t.same(sent.map((statement) => statement.text).sort(), [...texts].sort(), 'the same texts')
      t.ok(sent.every((statement) => statement.name?.startsWith('fastify_expand_')), 'each named')
    }
    t.equal(new Set(sent.map((statement) => statement.name)).size, 5, 'one name per text')
  })

  t.test('at most maxStatements texts are named; later ones run unnamed', async (t) => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(watched(pool(2)), { maxStatements: 2 }) }) })
    t.teardown(() => db.destroy())
    const app = await appOver(db)
    t.teardown(() => app.close())
    for (let round = 0; round < 3; round++) t.equal((await app.inject({ url })).body, expected)
    sent.length = 0
    await app.inject({ url })
    t.equal(sent.filter((statement) => statement.name !== undefined).length, 2)
    t.equal(sent.filter((statement) => statement.name === undefined).length, 3)
  })

  t.test('two wrappers over one pool give their texts names of their own', async (t) => {
    const shared = pool(1)
    const first = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(shared) }) })
    const second = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(shared) }) })
    t.teardown(() => first.destroy())
    for (let round = 0; round < 2; round++) {
      t.same((await sql<{ n: number }>`select 1 as n`.execute(first)).rows, [{ n: 1 }])
      t.same((await sql<{ n: string }>`select 'two' as n`.execute(second)).rows, [{ n: 'two' }], 'another text, another name, on the same connection')
    }
  })

  t.test('a failing named statement answers 500 FST_EXPAND_DATABASE_ERROR, as an unnamed one does', async (t) => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(pool(2)) }) })
    t.teardown(() => db.destroy())
    const app = await appOver(db)
    t.teardown(() => app.close())
    t.equal((await app.inject({ url })).statusCode, 200)
    t.equal((await app.inject({ url })).statusCode, 200)
    await sql.raw('alter table toys rename to toys_gone').execute(admin)
    t.teardown(() => sql.raw('alter table toys_gone rename to toys').execute(admin))
    const failed = await app.inject({ url })
    t.same({ status: failed.statusCode, code: failed.json().code }, { status: 500, code: 'FST_EXPAND_DATABASE_ERROR' })
  })
})
