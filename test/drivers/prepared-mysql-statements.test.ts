import Fastify from 'fastify'
import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool, type Pool } from 'mysql2'
import { createConnection } from 'mysql2/promise'
import t from 'tap'
import expandPlugin, { prepareMysqlStatements } from '../../plugin/index.js'
import { Pet, createTables, resources, seed } from '../fixtures/tables.js'

// prepareMysqlStatements: on MariaDB and MySQL, a statement with parameters
// runs as a prepared statement (mysql2's `execute`), at most `maxStatements`
// kept per connection; what is answered does not change.

t.test('options are checked', async (t) => {
  const pool = createPool({ host: '127.0.0.1' })
  t.teardown(() => pool.end())
  t.throws(() => prepareMysqlStatements(pool, { maxStatements: 0 }), { code: 'FST_EXPAND_INVALID_OPTION', message: 'prepareMysqlStatements: maxStatements must be a positive integer, got 0' })
  t.throws(() => prepareMysqlStatements(pool, { maxStatementLength: 1.5 }), { code: 'FST_EXPAND_INVALID_OPTION' })
  t.throws(() => prepareMysqlStatements(pool, { max: 1 } as never), { code: 'FST_EXPAND_INVALID_OPTION', message: "prepareMysqlStatements: unknown option 'max'" })
})

const url = process.env.MARIADB_URL
t.test('on MariaDB', { skip: url === undefined ? 'needs MARIADB_URL' : false }, async (t) => {
  const database = `fx_prepared_${process.pid}_${Date.now()}`
  const admin = await createConnection(url!)
  await admin.query(`create database \`${database}\` character set utf8mb4 collate utf8mb4_nopad_bin`)
  t.teardown(async () => { await admin.query(`drop database \`${database}\``); await admin.end() })
  const at = new URL(url!)
  at.pathname = `/${database}`
  /** A Kysely instance over one connection (its session's counters are the pool's), wrapped or not. */
  const open = (wrap: (pool: Pool) => Pool) => {
    const pool = createPool({ uri: at.href, connectionLimit: 1, supportBigNumbers: true })
    const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: wrap(pool) }) })
    t.teardown(() => db.destroy())
    return db
  }
  /** The session's prepared-statement counters (read with a statement without parameters, so not itself prepared). */
  const counters = async (db: Kysely<any>) => {
    const { rows } = await sql<{ Variable_name: string; Value: string }>`show session status like 'Com_stmt_%'`.execute(db)
    const value = (name: string) => Number(rows.find((row) => row.Variable_name === name)!.Value)
    return { prepare: value('Com_stmt_prepare'), execute: value('Com_stmt_execute'), close: value('Com_stmt_close') }
  }

  t.test('a text with parameters is prepared once per connection, then only executed; one without is not prepared', async (t) => {
    const db = open((pool) => prepareMysqlStatements(pool))
    const before = await counters(db)
    for (const value of [1, 2, 3]) t.same((await sql<{ v: number }>`select ${value} + 1 as v`.execute(db)).rows, [{ v: value + 1 }])
    await sql`select 1`.execute(db)
    const after = await counters(db)
    t.same([after.prepare - before.prepare, after.execute - before.execute, after.close - before.close], [1, 3, 0])
  })

  t.test('at most maxStatements stay prepared: the least recently used is closed', async (t) => {
    const db = open((pool) => prepareMysqlStatements(pool, { maxStatements: 2 }))
    const before = await counters(db)
    await sql`select ${1} as a`.execute(db)
    await sql`select ${1} as b`.execute(db)
    await sql`select ${1} as a`.execute(db) // a is now the most recently used
    await sql`select ${1} as c`.execute(db) // closes b
    await sql`select ${1} as a`.execute(db)
    await sql`select ${1} as b`.execute(db) // prepared again, closes c
    const after = await counters(db)
    t.same([after.prepare - before.prepare, after.execute - before.execute, after.close - before.close], [4, 6, 2])
  })

  t.test('longer texts than maxStatementLength run unprepared', async (t) => {
    const db = open((pool) => prepareMysqlStatements(pool, { maxStatementLength: 20 }))
    const before = await counters(db)
    t.same((await sql<{ value: number }>`select ${7} as value, 'a long text' as padding`.execute(db)).rows, [{ value: 7, padding: 'a long text' }])
    t.same((await sql<{ v: number }>`select ${7} as v`.execute(db)).rows, [{ v: 7 }])
    const after = await counters(db)
    t.same([after.prepare - before.prepare, after.execute - before.execute], [1, 1])
  })

  t.test('the plugin answers the same, its repeated statements prepared once', async (t) => {
    const plain = open((pool) => pool)
    await createTables(plain)
    await seed(plain)
    const apps = []
    for (const db of [plain, open((pool) => prepareMysqlStatements(pool))]) {
      const app = Fastify()
      await app.register(expandPlugin, { db, resources })
      app.expand.routes('/pets', Pet, { filter: { species: ['eq'] } })
      t.teardown(() => app.close())
      apps.push({ app, db })
    }
    const [unwrapped, prepared] = apps as [typeof apps[0], typeof apps[0]]
    const before = await counters(prepared.db)
    for (const path of ['/pets/1?expand=owner.employer,toys', '/pets/2?expand=owner.employer,toys', '/pets?limit=2&expand=owner,toys&filter[species]=cat']) {
      const [left, right] = [await unwrapped.app.inject(path), await prepared.app.inject(path)]
      t.equal(right.statusCode, 200, path)
      t.equal(right.body, left.body, path)
    }
    const after = await counters(prepared.db)
    t.ok(after.execute - before.execute > after.prepare - before.prepare, `statements executed again without preparing: ${JSON.stringify({ before, after })}`)
  })
})
