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

/**
 * A pool of one client standing for pg's: it records what it is sent and,
 * like pg, what its connection has parsed; `parse` decides what a named
 * statement does (parsed now, still pending, or refused) and `refuse` fails
 * statements whose text starts with it.
 */
function fakePool (options: { pgRecord?: boolean } = {}) {
  const calls: string[] = []
  const connection = { parsedStatements: {} as Record<string, string>, submittedNamedStatements: {} as Record<string, string> }
  const control = { parse: 'now' as 'now' | 'pending' | 'refused', refuse: undefined as string | undefined }
  const client = {
    ...(options.pgRecord === false ? {} : { connection }),
    query: async (first: string | { name: string; text: string }) => {
      const text = typeof first === 'string' ? first : first.text
      calls.push(typeof first === 'string' ? first : `${first.name}: ${first.text}`)
      if (control.refuse !== undefined && text.startsWith(control.refuse)) throw new Error('refused')
      if (typeof first !== 'string' && connection.parsedStatements[first.name] === undefined) {
        if (control.parse === 'now') connection.parsedStatements[first.name] = text
        if (control.parse === 'pending') connection.submittedNamedStatements[first.name] = text
      }
      return { rows: [] }
    },
    release: () => {},
  }
  const pool = { connect: async () => client, end: async () => {} } as unknown as pg.Pool
  return { pool, calls, connection, control }
}

t.test('dropped names, with a client standing for pg\'s', async (t) => {
  t.test('a client that keeps no record of its prepared statements (not pg\'s) runs every text unnamed', async (t) => {
    const { pool, calls } = fakePool({ pgRecord: false })
    const client = await namePreparedStatements(pool).connect()
    for (let run = 0; run < 3; run++) await client.query('select 1', [])
    t.same(calls, ['select 1', 'select 1', 'select 1'])
  })

  t.test('a name still being prepared is deallocated once it is parsed; one that failed to prepare is forgotten', async (t) => {
    const { pool, calls, connection, control } = fakePool()
    const client = await namePreparedStatements(pool, { maxStatements: 1 }).connect()
    const twice = async (text: string) => { await client.query(text, []); await client.query(text, []) }
    control.parse = 'pending'
    await twice('select 1')
    const [first] = Object.keys(connection.submittedNamedStatements)
    control.parse = 'refused'
    await twice('select 2')
    control.parse = 'now'
    calls.length = 0
    await client.query('select 3', [])
    t.same(calls, ['select 3'], 'select 1 is still pending: nothing to deallocate yet; select 2 never parsed')
    connection.parsedStatements[first!] = 'select 1'
    delete connection.submittedNamedStatements[first!]
    await client.query('select 4', [])
    t.same(calls.slice(1), [`deallocate "${first}"`, 'select 4'], 'parsed now: deallocated before the next statement')
    t.equal(connection.parsedStatements[first!], undefined, 'and forgotten by the client')
  })

  t.test('a refused DEALLOCATE (an aborted transaction, say) is sent again before a later statement', async (t) => {
    const { pool, calls, control } = fakePool()
    const client = await namePreparedStatements(pool, { maxStatements: 1 }).connect()
    await client.query('select 1', [])
    await client.query('select 1', [])
    await client.query('select 2', [])
    control.refuse = 'deallocate'
    calls.length = 0
    await client.query('select 2', [])
    control.refuse = undefined
    await client.query('select 2', [])
    t.equal(calls.filter((call) => call.startsWith('deallocate')).length, 2, 'refused, then sent again')
    calls.length = 0
    await client.query('select 2', [])
    t.equal(calls.filter((call) => call.startsWith('deallocate')).length, 0, 'and not after it went through')
  })
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
    t.equal(sent.length, 1, 'page (reading its count), owner, toys, owner.employer: one statement (plugin/sql/combined-statements.ts)')
    t.same(sent.map((statement) => statement.name), [undefined], 'seen once: unnamed')
    const learning = sent[0]!.text
    sent.length = 0
    t.equal((await app.inject({ url })).body, expected)
    t.equal(sent.length, 1)
    t.not(sent[0]!.text, learning, 'its columns\' types learnt from the first answer: another text')
    t.same(sent.map((statement) => statement.name), [undefined], 'seen once: unnamed')
    const texts = sent.map((statement) => statement.text)
    t.ok(texts[0]!.length > 2_048 && texts[0]!.length <= 16_384, `${texts[0]!.length} characters: within the default maxStatementLength, 16,384`)
    for (let round = 0; round < 3; round++) {
      sent.length = 0
      const again = await app.inject({ url })
      t.equal(again.body, expected, 'the same body')
      t.equal(sent.length, 1)
      t.same(sent.map((statement) => statement.text), texts, 'the same text')
      t.ok(sent.every((statement) => statement.name?.startsWith('fastify_expand_')), 'named')
    }
  })

  /** The prepared statements of the connection `db` runs on (a pool of one): each look is a text of its own, never named. */
  let looks = 0
  const preparedOn = async (db: Kysely<any>): Promise<string[]> =>
    (await sql.raw<{ name: string }>(`select name from pg_prepared_statements order by name /* ${looks++} */`).execute(db)).rows.map((row) => row.name)
  const namesOf = (text: string) =>
    sent.filter((statement) => statement.text === text && statement.name !== undefined).map((statement) => statement.name!)

  t.test('at most maxStatements names are held: a new text takes the least recently used one\'s, deallocated first', async (t) => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(watched(pool(1)), { maxStatements: 2 }) }) })
    t.teardown(() => db.destroy())
    const run = async (text: string) => (await sql.raw(text).execute(db)).rows
    sent.length = 0
    for (const text of ['select 1 as a', 'select 1 as a', 'select 2 as b', 'select 2 as b', 'select 1 as a']) await run(text)
    const [a] = namesOf('select 1 as a')
    const [b] = namesOf('select 2 as b')
    t.same(await preparedOn(db), [a, b].sort(), 'two named, each prepared once')
    sent.length = 0
    t.same(await run('select 3 as c'), [{ c: 3 }])
    t.same(await run('select 3 as c'), [{ c: 3 }], 'named the second time')
    const [c] = namesOf('select 3 as c')
    t.ok(c !== undefined && c !== a && c !== b, 'a name of its own')
    t.same(sent.map((statement) => statement.name === undefined ? statement.text : 'named'), ['select 3 as c', `deallocate "${b}"`, 'named'],
      'b, the least recently used, deallocated on the connection before c is prepared')
    t.same(await preparedOn(db), [a, c].sort())
    sent.length = 0
    t.same(await run('select 2 as b'), [{ b: 2 }], 'b runs unnamed again, as a text seen once')
    t.same(sent.map((statement) => statement.name), [undefined])
  })

  t.test('600 texts: the newest is still named, and a connection never holds more than maxStatements', async (t) => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: namePreparedStatements(watched(pool(1))) }) })
    t.teardown(() => db.destroy())
    let most = 0
    const wrong: number[] = []
    for (let text = 0; text < 600; text++) {
      for (let run = 0; run < 2; run++) if ((await sql.raw<{ n: number }>(`select ${text} as n`).execute(db)).rows[0]?.n !== text) wrong.push(text)
      if (text % 50 === 49) most = Math.max(most, (await preparedOn(db)).length)
    }
    t.same(wrong, [], 'each text answers its own row')
    t.equal(most, 256, 'the default bound, reached and never passed')
    sent.length = 0
    await sql.raw('select 600 as n').execute(db)
    await sql.raw('select 600 as n').execute(db)
    t.equal(namesOf('select 600 as n').length, 1, 'a new text is still named')
    const prepared = await preparedOn(db)
    t.equal(prepared.length, 256)
    t.ok(prepared.includes(namesOf('select 600 as n')[0]!))
  })

  t.test('a dropped name is deallocated on the connection that prepared it, and only there', async (t) => {
    const named = namePreparedStatements(watched(pool(2)), { maxStatements: 1 })
    t.teardown(() => named.end())
    const first = await named.connect()
    const second = await named.connect()
    t.teardown(() => { first.release(); second.release() })
    const prepared = async (client: typeof first) =>
      (await client.query<{ name: string }>(`select name from pg_prepared_statements /* ${looks++} */`, [])).rows.map((row) => row.name)
    sent.length = 0
    await first.query('select 1 as a', [])
    await first.query('select 1 as a', [])
    const [a] = namesOf('select 1 as a')
    t.same(await prepared(first), [a])
    await second.query('select 2 as b', [])
    await second.query('select 2 as b', [])
    const [b] = namesOf('select 2 as b')
    t.same(await prepared(second), [b], 'b named on the second connection, dropping a')
    t.same(sent.filter((statement) => statement.text.startsWith('deallocate')), [], 'the second connection never prepared a')
    t.same(await prepared(first), [], 'the first connection deallocates a before its next statement')
    t.same(sent.filter((statement) => statement.text.startsWith('deallocate')).map((statement) => statement.text), [`deallocate "${a}"`])
    t.same(await prepared(second), [b])
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
