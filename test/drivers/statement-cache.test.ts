import SQLite from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Kysely, SqliteDialect, sql, type SqliteDatabase, type SqliteStatement } from 'kysely'
import t from 'tap'
import { cachePreparedStatements } from '../../plugin/index.js'
import { sqliteDialect } from '../../plugin/sql/dialects/index.js'

/** A better-sqlite3 database whose `prepare` calls are counted. */
function countingDatabase (database = new SQLite(':memory:')): { database: SQLite.Database; prepared: string[] } {
  const prepared: string[] = []
  const prepare = database.prepare.bind(database)
  database.prepare = ((text: string) => {
    prepared.push(text)
    return prepare(text)
  }) as typeof database.prepare
  return { database, prepared }
}

const mixedRows = `
  select 1 as id, 'Garfield' as name, null as missing, 2.5 as weight, x'00ff' as bytes, 9007199254740991 as big
  union all
  select 2, 'Odie "the dog"', null, -1, x'', 0`

t.test('rows are the objects better-sqlite3 gives: values, key order, repeated names', async (t) => {
  const plain = new SQLite(':memory:')
  const cached = cachePreparedStatements(new SQLite(':memory:'))
  t.teardown(() => { plain.close(); cached.close() })
  for (const text of [
    mixedRows,
    'select 1 as a, 2 as b, 3 as a',
    'select 2 as "constructor", 3 as "a b", 4 as "ü"',
    'select 1 as x where 0',
  ]) {
    const expected = plain.prepare(text).all() as Array<Record<string, unknown>>
    // Twice: the second run goes through the cached statement.
    for (let run = 0; run < 2; run++) {
      const rows = cached.prepare(text).all([]) as Array<Record<string, unknown>>
      t.same(rows, expected, `${text}: values`)
      t.same(rows.map((row) => Object.keys(row)), expected.map((row) => Object.keys(row)), `${text}: keys in order`)
      t.ok(rows.every((row) => Object.getPrototypeOf(row) === Object.prototype), `${text}: plain objects`)
    }
  }
  t.same(cached.prepare('select 1 as a, 2 as b, 3 as a').all([]), [{ a: 3, b: 2 }], 'a repeated name keeps its first place and its last value')
})

t.test('a column named __proto__ is an own property, never the prototype', async (t) => {
  const cached = cachePreparedStatements(new SQLite(':memory:'))
  t.teardown(() => cached.close())
  for (let run = 0; run < 2; run++) {
    const [row] = cached.prepare('select x\'00ff\' as "__proto__", 1 as id').all([]) as Array<Record<string, unknown>>
    t.equal(Object.getPrototypeOf(row), Object.prototype)
    t.same(Object.keys(row!), ['__proto__', 'id'])
    t.same(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, Buffer.from([0, 255]))
  }
})

t.test('each SQL text is prepared once, and at most maxStatements are kept', async (t) => {
  const { database, prepared } = countingDatabase()
  const db = new Kysely<{ pets: { id: number; name: string } }>({
    dialect: new SqliteDialect({ database: cachePreparedStatements(database, { maxStatements: 2 }) }),
  })
  t.teardown(() => db.destroy())
  await db.schema.createTable('pets').addColumn('id', 'integer', (column) => column.primaryKey()).addColumn('name', 'text').execute()
  await db.insertInto('pets').values([{ id: 1, name: 'Garfield' }, { id: 2, name: 'Odie' }]).execute()
  prepared.length = 0

  const byId = (id: number) => db.selectFrom('pets').select(['id', 'name']).where('id', '=', id).execute()
  t.same(await byId(1), [{ id: 1, name: 'Garfield' }])
  t.same(await byId(2), [{ id: 2, name: 'Odie' }], 'other parameters, same statement')
  t.same(await byId(3), [])
  t.equal(prepared.length, 1, 'one prepare for three executions')

  const names = () => db.selectFrom('pets').select('name').orderBy('id').execute()
  const count = () => db.selectFrom('pets').select((eb) => eb.fn.countAll<number>().as('n')).execute()
  await names()
  await count()
  t.equal(prepared.length, 3, 'two more texts, two more prepares')
  await byId(1)
  t.equal(prepared.length, 4, 'the least recently used text was evicted (maxStatements 2) and is prepared again')
  await count()
  t.equal(prepared.length, 4, 'the recently used ones are still there')
})

t.test('writes, RETURNING, transactions and streams through Kysely', async (t) => {
  const db = new Kysely<{ pets: { id: number; name: string } }>({ dialect: new SqliteDialect({ database: cachePreparedStatements(new SQLite(':memory:')) }) })
  t.teardown(() => db.destroy())
  await db.schema.createTable('pets').addColumn('id', 'integer', (column) => column.primaryKey()).addColumn('name', 'text').execute()

  const insert = await db.insertInto('pets').values({ id: 7, name: 'Garfield' }).executeTakeFirst()
  t.equal(insert.insertId, 7n)
  t.equal(insert.numInsertedOrUpdatedRows, 1n)
  const returned = await db.insertInto('pets').values({ id: 8, name: 'Odie' }).returning(['id', 'name']).execute()
  t.same(returned, [{ id: 8, name: 'Odie' }], 'RETURNING gives its row')
  const again = await db.insertInto('pets').values({ id: 9, name: 'Nermal' }).returning(['id', 'name']).execute()
  t.same(again, [{ id: 9, name: 'Nermal' }], 'the cached RETURNING statement runs once per call')
  t.equal((await db.selectFrom('pets').select('id').execute()).length, 3, 'no row inserted twice')

  await t.rejects(db.transaction().execute(async (trx) => {
    await trx.updateTable('pets').set({ name: 'changed' }).execute()
    throw new Error('roll back')
  }), { message: 'roll back' })
  t.same(await db.selectFrom('pets').select('name').orderBy('id').execute(), [{ name: 'Garfield' }, { name: 'Odie' }, { name: 'Nermal' }], 'the rollback went through')

  const streamed: unknown[] = []
  for await (const row of db.selectFrom('pets').select('id').orderBy('id').stream()) streamed.push(row)
  t.same(streamed, [{ id: 7 }, { id: 8 }, { id: 9 }])
})

t.test('two iterations of one SQL text at once, and a read between their rows', async (t) => {
  const database = cachePreparedStatements(new SQLite(':memory:'))
  t.teardown(() => database.close())
  const text = 'select value from json_each(?)'
  const first = database.prepare(text).iterate(['[1,2,3]'])
  t.same(first.next().value, { value: 1 })
  const second = database.prepare(text).iterate(['[4,5]'])
  t.same([...second], [{ value: 4 }, { value: 5 }], 'a second iteration while the first is open')
  t.same(database.prepare(text).all(['[6]']), [{ value: 6 }], 'and the cached statement still answers all()')
  t.same([...first], [{ value: 2 }, { value: 3 }], 'the first iteration goes on where it was')
})

t.test('schema changes under cached statements: rows follow them as better-sqlite3\'s do', async (t) => {
  const directory = mkdtempSync(path.join(tmpdir(), 'fastify-expand-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const file = path.join(directory, 'schema.db')
  const connection = new SQLite(file)
  const cached = cachePreparedStatements(connection)
  const other = new SQLite(file)
  t.teardown(() => { cached.close(); other.close() })
  const run = (text: string) => cached.prepare(text).run([])
  // Against a statement prepared now on the same connection, as without the cache.
  const same = (text: string, message: string) => t.same(cached.prepare(text).all([]), connection.prepare(text).all(), message)

  run('create table pets (id integer primary key, name text)')
  run("insert into pets values (1, 'Garfield')")
  same('select * from pets', 'select *')
  same('select id, name from pets', 'named columns')
  run("alter table pets add column species text default 'cat'")
  same('select * from pets', 'a column added by this connection')
  other.exec('alter table pets rename column name to nickname')
  same('select * from pets', 'a column renamed by another connection')
  t.throws(() => cached.prepare('select id, name from pets').all([]), /no such column: name/, 'a named column that is gone fails as it would uncached')
  run('begin')
  run('alter table pets add column owner integer default 7')
  same('select * from pets', 'a column added in a transaction')
  run('rollback')
  run('alter table pets add column weight integer default 4')
  same('select * from pets', 'after a rollback, another column added (the schema version is the same as inside the transaction)')
  run('create temp table pets (id integer, tag text)')
  run("insert into temp.pets values (9, 'temp')")
  same('select * from pets', 'a temp table shadowing the main one')
  same('select id from pets', 'named columns of the temp table')
})

t.test('SQL texts longer than maxStatementLength are prepared on every run', async (t) => {
  const { database, prepared } = countingDatabase()
  const cached = cachePreparedStatements(database, { maxStatementLength: 40 })
  t.teardown(() => cached.close())
  const short = 'select 1 as a'
  const long = 'select 1 as a, 2 as b, 3 as c, 4 as d, 5 as e'
  for (let run = 0; run < 3; run++) {
    t.same(cached.prepare(short).all([]), [{ a: 1 }])
    t.same(cached.prepare(long).all([]), [{ a: 1, b: 2, c: 3, d: 4, e: 5 }])
  }
  t.equal(prepared.filter((text) => text === short).length, 1, 'the short text once')
  t.equal(prepared.filter((text) => text === long).length, 3, 'the long one each time')
})

t.test('by default a statement over 512 keys, each written +? as the plugin binds values on SQLite, is kept', async (t) => {
  const { database, prepared } = countingDatabase()
  database.exec('create table toys (id integer primary key, name text); create table pet_toys (pet_id integer, toy_id integer)')
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: cachePreparedStatements(database) }) })
  t.teardown(() => db.destroy())
  const keys = Array.from({ length: 512 }, (_, index) => index + 1)
  // The to-many statement the loader sends for a page of 512 rows (test/load/loading.test.ts), through SQLite's dialect.
  const statement = sqliteDialect.compile(db.selectFrom('toys').innerJoin('pet_toys', 'pet_toys.toy_id', 'toys.id')
    .select(['toys.id as id', sql<string>`cast("toys"."name" as text)`.as('name'), 'pet_toys.pet_id as __expand_parent'])
    .where('pet_toys.pet_id', 'in', keys).orderBy('pet_toys.pet_id').orderBy('pet_toys.toy_id').limit(sql.lit(16384)))
  t.ok(statement.sql.length > 2_048 && statement.sql.length <= 3_072, `${statement.sql.length} characters`)
  for (let run = 0; run < 3; run++) await db.executeQuery(statement)
  t.equal(prepared.filter((text) => text === statement.sql).length, 1, 'prepared once')
})

t.test('a database that is not better-sqlite3: statements cached, rows as its driver gives them', async (t) => {
  let prepares = 0
  const rows = [{ id: 1 }]
  const statement: SqliteStatement = {
    reader: true,
    all: () => rows,
    run: () => ({ changes: 0, lastInsertRowid: 0 }),
    iterate: () => rows[Symbol.iterator](),
  }
  const database: SqliteDatabase = { close () {}, prepare () { prepares++; return statement } }
  const cached = cachePreparedStatements(database)
  const setup = prepares
  t.equal(cached.prepare('select 1').all([]), rows, 'the driver\'s own rows')
  t.equal(cached.prepare('select 1').all([]), rows)
  t.equal(prepares - setup, 1, 'prepared once')
  const db = new Kysely({ dialect: new SqliteDialect({ database: cached }) })
  t.same((await sql`select 1`.execute(db)).rows, rows, 'and Kysely runs on it')
  await db.destroy()
})

t.test('options: maxStatements and maxStatementLength are positive integers, and no other is known', async (t) => {
  for (const value of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => cachePreparedStatements(new SQLite(':memory:'), { maxStatements: value }), { code: 'FST_EXPAND_INVALID_OPTION', message: `cachePreparedStatements: maxStatements must be a positive integer, got ${value}` })
    t.throws(() => cachePreparedStatements(new SQLite(':memory:'), { maxStatementLength: value }), { code: 'FST_EXPAND_INVALID_OPTION', message: `cachePreparedStatements: maxStatementLength must be a positive integer, got ${value}` })
  }
  t.throws(() => cachePreparedStatements(new SQLite(':memory:'), { maxStatement: 5 } as never), { code: 'FST_EXPAND_INVALID_OPTION', message: "cachePreparedStatements: unknown option 'maxStatement'" })
})
