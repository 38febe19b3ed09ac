import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely'
import { createPool, type Pool, type PoolConnection } from 'mysql2'
import pg from 'pg'
import t, { type Test } from 'tap'
import expandPlugin from '../../plugin/index.js'
import { asWrittenOn, dialects, type Dialect } from '../fixtures/dialects.js'
import { Pet, createTables, openSeeded, resources, seed } from '../fixtures/tables.js'

// The relations of one level do not depend on each other: on a pool (PostgreSQL,
// MariaDB) they are loaded at the same time (each path still one statement after
// its parent's), in a transaction and on SQLite one after another. What is
// answered is the same.

const url = '/pets?expand=owner.employer,sold_from,toys'
const expectedPets = [
  {
    id: 1,
    name: 'Garfield',
    species: 'cat',
    owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: { id: 1, name: 'McDonalds', public: true } },
    sold_from: { id: 1, name: 'Pet Place' },
    toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }],
  },
  {
    id: 2,
    name: 'Odie',
    species: 'dog',
    owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: { id: 1, name: 'McDonalds', public: true } },
    sold_from: { id: 2, name: 'Zoo Shop' },
    toys: [{ id: 3, name: 'bone' }],
  },
]

/** The statements a client of the pool ran: when each started and ended, and how many ran at once. */
interface Watch {
  started: string[]
  inFlight: number
  mostInFlight: number
  /** Each statement waits this long before it is sent, so that overlapping statements are seen to overlap. */
  delayMs: (text: string) => number
  /** A statement whose text matches fails with a driver error. */
  failing?: RegExp
  reset(): void
}

/** A pg pool whose clients report what they run, for Kysely's PostgresDialect. */
function watchedPool (pool: pg.Pool, watch: Watch): pg.Pool {
  const clients = new WeakMap<pg.PoolClient, pg.PoolClient>()
  const wrap = (client: pg.PoolClient): pg.PoolClient => {
    let wrapped = clients.get(client)
    if (wrapped === undefined) {
      const query = async (text: string, values?: unknown[]) => {
        watch.started.push(text)
        watch.mostInFlight = Math.max(watch.mostInFlight, ++watch.inFlight)
        try {
          await new Promise((resolve) => setTimeout(resolve, watch.delayMs(text)))
          if (watch.failing?.test(text) === true) throw Object.assign(new Error('relation "pet_toys" is being rebuilt'), { code: '55006' })
          return await client.query(text, values)
        } finally {
          watch.inFlight--
        }
      }
      wrapped = new Proxy(client, {
        get (target, property) {
          if (property === 'query') return query
          const value = Reflect.get(target, property, target) as unknown
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
      clients.set(client, wrapped)
    }
    return wrapped
  }
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  } as unknown as pg.Pool
}

/** A mysql2 pool whose connections report what they run, for Kysely's MysqlDialect. */
function watchedMysqlPool (pool: Pool, watch: Watch): Pool {
  type Callback = (error: unknown, result?: unknown) => void
  const connections = new WeakMap<PoolConnection, PoolConnection>()
  const wrap = (connection: PoolConnection): PoolConnection => {
    let wrapped = connections.get(connection)
    if (wrapped === undefined) {
      const query = (text: string, values: unknown[], callback: Callback) => {
        watch.started.push(text)
        watch.mostInFlight = Math.max(watch.mostInFlight, ++watch.inFlight)
        const done: Callback = (error, result) => {
          watch.inFlight--
          callback(error, result)
        }
        setTimeout(() => {
          if (watch.failing?.test(text) === true) {
            done(Object.assign(new Error("Table 'pet_toys' is being rebuilt"), { code: 'ER_TABLE_DEF_CHANGED', errno: 1412 }))
          } else {
            connection.query(text, values, done)
          }
        }, watch.delayMs(text))
      }
      wrapped = new Proxy(connection, {
        get (target, property) {
          if (property === 'query') return query
          const value = Reflect.get(target, property, target) as unknown
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
      connections.set(connection, wrapped)
    }
    return wrapped
  }
  return {
    getConnection: (callback: (error: unknown, connection?: PoolConnection) => void) =>
      pool.getConnection((error, connection) => { callback(error, error === null ? wrap(connection) : connection) }),
    end: (callback: (error: unknown) => void) => pool.end(callback),
  } as unknown as Pool
}

async function buildApp (db: Kysely<any>, transaction: boolean): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db, resources })
  app.get('/pets', { expandable: { resource: Pet, list: true } }, async (request) => {
    const load = async (db: Kysely<any>) => {
      const rows = await db.selectFrom('pets').select(['id', 'name', 'species', 'owner_id', 'sold_from_id']).where('id', '<=', 2).orderBy('id').execute()
      return await app.expand.load(request, rows, { db })
    }
    return transaction ? await db.transaction().execute(load) : await load(db)
  })
  await app.ready()
  return app
}

/** A fresh watch: every statement waits 40 ms before it is sent. */
function newWatch (): Watch {
  return {
    started: [],
    inFlight: 0,
    mostInFlight: 0,
    delayMs: () => 40,
    reset () {
      this.started = []
      this.mostInFlight = 0
      this.failing = undefined
      this.delayMs = () => 40
    },
  }
}

/** The table each statement reads from, in the order they ran. */
const tablesRead = (dialect: Dialect, statements: readonly string[]) =>
  statements.map((text) => new RegExp(asWrittenOn(dialect, 'from "(\\w+)"')).exec(text)?.[1])
/** The page, then each relation of the level in its order, owner.employer right after owner. */
const levelOrder = ['pets', 'people', 'companies', 'pet_stores', 'toys']

/** What a pool of four does with the relations of a level, on a database `db` reads through a pool `watch` reports. */
function poolTests (t: Test, dialect: Dialect, db: Kysely<any>, watch: Watch): void {
  const statementsOf = (started: string[], table: string) => started.filter((text) => text.includes(asWrittenOn(dialect, `from "${table}"`))).length

  t.test('owner, sold_from and toys overlap; owner.employer follows owner', async (t) => {
    const app = await buildApp(db, false)
    t.teardown(() => app.close())
    watch.reset()
    const response = await app.inject({ url })
    t.same({ status: response.statusCode, body: response.json() }, { status: 200, body: expectedPets })
    t.equal(watch.started.length, 5, 'the page, owner, sold_from, toys, owner.employer: one statement each')
    t.equal(watch.mostInFlight, 3, 'the three relations of the page ran at once')
    t.equal(statementsOf(watch.started.slice(4), 'companies'), 1, 'owner.employer started after the others, once owner had its rows')
  })

  t.test('in a transaction (one connection), one after another', async (t) => {
    const app = await buildApp(db, true)
    t.teardown(() => app.close())
    watch.reset()
    const response = await app.inject({ url })
    t.same({ status: response.statusCode, body: response.json() }, { status: 200, body: expectedPets })
    t.equal(watch.mostInFlight, 1)
    t.same([watch.started[0], watch.started.at(-1)], ['begin', 'commit'])
    t.same(tablesRead(dialect, watch.started.slice(1, -1)), levelOrder,
      'begin, the page, then each relation in the order of the level, owner.employer right after owner, commit')
  })

  t.test('one relation fails: 500 once every statement has ended, nothing further started, no rejection left unhandled', async (t) => {
    const app = await buildApp(db, false)
    t.teardown(() => app.close())
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => { unhandled.push(reason) }
    process.on('unhandledRejection', onUnhandled)
    t.teardown(() => { process.off('unhandledRejection', onUnhandled) })
    watch.reset()
    // toys fails at once; owner (and sold_from) are still running when it does.
    const toys = asWrittenOn(dialect, 'from "toys"')
    watch.failing = new RegExp(toys)
    watch.delayMs = (text) => (text.includes(toys) ? 1 : 80)
    const response = await app.inject({ url })
    t.equal(watch.inFlight, 0, 'no statement of the request is still running when it is answered')
    t.same({ status: response.statusCode, code: response.json().code }, { status: 500, code: 'FST_EXPAND_DATABASE_ERROR' })
    t.notMatch(response.body, /rebuilt/, "the driver's words are not in the body")
    t.equal(statementsOf(watch.started, 'companies'), 0, 'owner.employer was not started after toys failed')
    t.equal(watch.started.length, 4, 'the page, owner, sold_from, toys')
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.same(unhandled, [])
  })
}

const postgres = dialects().find((dialect) => dialect.name === 'postgres')

t.test('on a PostgreSQL pool, the relations of a level are loaded at the same time', { skip: postgres === undefined ? 'PostgreSQL not configured' : false }, async (t) => {
  // The tables of the loading tests, in a schema of their own, read through a pool of 4 that reports its statements.
  const schema = `fx_concurrency_${process.pid}_${Date.now()}`
  const admin = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1, options: `-c search_path=${schema}` }) }) })
  await sql.raw(`create schema ${schema}`).execute(admin)
  t.teardown(async () => {
    await sql.raw(`drop schema ${schema} cascade`).execute(admin)
    await admin.destroy()
  })
  await createTables(admin)
  await seed(admin)

  const watch = newWatch()
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, options: `-c search_path=${schema}` })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: watchedPool(pool, watch) }) })
  t.teardown(() => db.destroy())
  // Four connections open before anything is timed: opening one takes longer than a statement here.
  await Promise.all([1, 2, 3, 4].map(() => pool.query('select pg_sleep(0.05)')))
  poolTests(t, postgres!, db, watch)
})

const mariadb = dialects().find((dialect) => dialect.name === 'mariadb')

t.test('on a MariaDB pool, the relations of a level are loaded at the same time', { skip: mariadb === undefined ? 'MariaDB not configured' : false }, async (t) => {
  // The tables of the loading tests in a database of their own, read through a second pool of 4 that reports its statements.
  const database = await openSeeded(t, mariadb!)
  const { rows: [current] } = await sql<{ name: string }>`select database() as name`.execute(database.db)
  const address = new URL(process.env.MARIADB_URL!)
  address.pathname = `/${current!.name}`
  const watch = newWatch()
  const pool = createPool({ uri: address.href, connectionLimit: 4 })
  const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: watchedMysqlPool(pool, watch) }) })
  t.teardown(() => db.destroy())
  // Four connections open before anything is timed: opening one takes longer than a statement here.
  await Promise.all([1, 2, 3, 4].map(() => sql`select sleep(0.05)`.execute(db)))
  poolTests(t, mariadb!, db, watch)
})

for (const dialect of dialects().filter((dialect) => dialect.name === 'sqlite' || dialect.name === 'sqlite with cached statements')) {
  t.test(`on ${dialect.name}, the relations of a level are loaded one after another, in the level's order`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await buildApp(database.db, false)
    t.teardown(() => app.close())
    database.reset()
    const response = await app.inject({ url })
    t.same({ status: response.statusCode, body: response.json() }, { status: 200, body: expectedPets })
    t.same(tablesRead(dialect, database.statements), levelOrder)
  })
}
