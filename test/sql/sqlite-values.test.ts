// SQLite's statements bind each value behind unary plus (`+?`,
// plugin/sql/dialects/sqlite-values.ts): the SQL it compiles, the same rows
// as a bare `?` for every type of value and column, and a plan SQLite makes
// once for any value, where a bare `?` compared with an indexed column is
// planned for its value (and so planned again each time a value is bound).
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql, type ExpressionBuilder } from 'kysely'
import t from 'tap'
import { cachePreparedStatements } from '../../plugin/index.js'
import { mysqlDialect, postgresDialect, sqliteDialect } from '../../plugin/sql/dialects/index.js'

function database (): { raw: SQLite.Database; db: Kysely<any> } {
  const raw = new SQLite(':memory:')
  return { raw, db: new Kysely<any>({ dialect: new SqliteDialect({ database: cachePreparedStatements(raw) }) }) }
}

t.test('every bound value is written +?, literals as they are, in the order they are bound', async (t) => {
  const { raw, db } = database()
  t.teardown(() => raw.close())
  const statement = db.with('kept', (qb) => qb.selectFrom('items').select('id').where('kind', '=', 'toy'))
    .selectFrom('items')
    .select((eb) => [sql<string>`lower(${'A'})`.as('lowered'), eb.val(7).as('seven')])
    .where('id', 'in', [1, 2, 3])
    .where('id', 'in', (eb: ExpressionBuilder<any, any>) => eb.selectFrom('kept').select('id'))
    .where((eb) => eb('name', 'in', [eb.val('x'), eb.val('y')]))
    .where('price', '>', sql.lit(10))
    .orderBy('id')
    .limit(5)
    .offset(0)
  const { sql: text, parameters } = sqliteDialect.compile(statement)
  t.equal(text, 'with "kept" as (select "id" from "items" where "kind" = +?) select lower(+?) as "lowered", +? as "seven" from "items" ' +
    'where "id" in (+?, +?, +?) and "id" in (select "id" from "kept") and "name" in (+?, +?) and "price" > 10 order by "id" limit +? offset +?')
  t.strictSame(parameters, ['toy', 'A', 7, 1, 2, 3, 'x', 'y', 5, 0])
  // PostgreSQL's and MariaDB's statements are Kysely's own.
  t.equal(postgresDialect.compile(statement).sql, statement.compile().sql)
  t.equal(mysqlDialect.compile(statement).sql, statement.compile().sql)
})

t.test('+? finds the rows ? finds, for every type of value against every affinity and a collation', async (t) => {
  const { raw, db } = database()
  t.teardown(() => raw.close())
  raw.exec(`create table cells (id integer primary key, i integer, r real, x text, b blob, n numeric, a, c text collate nocase);
    create index cells_i on cells(i); create index cells_x on cells(x); create index cells_c on cells(c)`)
  const insert = raw.prepare('insert into cells (i, r, x, b, n, a, c) values (?, ?, ?, ?, ?, ?, ?)')
  insert.run(1, 1.5, '1', Buffer.from([1]), 2, '1', 'Abc')
  insert.run(2, 2, 'abc', Buffer.from([2]), '2.0', 2, 'abc')
  insert.run(null, null, null, null, null, null, null)
  insert.run(9007199254740993n, -0.0, '9007199254740993', Buffer.alloc(0), 1e300, 1.5, 'ABC')
  raw.exec('analyze')
  const values: unknown[] = [1, 2, 1.5, -0, 0, '1', '2', '2.0', 'abc', 'ABC', '', Buffer.from([1]), Buffer.alloc(0), 9007199254740993n, 1e300, null]
  let compared = 0
  for (const column of ['i', 'r', 'x', 'b', 'n', 'a', 'c']) {
    for (const operator of ['=', '<', '>=', 'is'] as const) {
      for (const value of values) {
        const query = db.selectFrom('cells').select('id').where(column, operator, value).orderBy('id')
        const bare = query.compile()
        const plus = sqliteDialect.compile(query)
        // `is null` binds nothing.
        t.equal(plus.sql, bare.parameters.length === 0 ? bare.sql : bare.sql.replace(' ?', ' +?'))
        const rows = (text: string) => raw.prepare(text).all(bare.parameters as unknown[])
        t.strictSame(rows(plus.sql), rows(bare.sql), `${column} ${operator} ${String(value)}`)
        compared++
      }
      const list = db.selectFrom('cells').select('id').where(column, 'in', values.filter((value) => value !== null)).orderBy('id')
      t.strictSame(raw.prepare(sqliteDialect.compile(list).sql).all(list.compile().parameters as unknown[]),
        raw.prepare(list.compile().sql).all(list.compile().parameters as unknown[]), `${column} in (...)`)
    }
  }
  t.equal(compared, 7 * 4 * values.length)
})

t.test('a value behind +? is not read by the planner: one plan for any value, where ? is planned for its value', async (t) => {
  const { raw, db } = database()
  t.teardown(() => raw.close())
  // ANALYZE leaves samples (sqlite_stat4: better-sqlite3 builds SQLite with SQLITE_ENABLE_STAT4) of a skewed column:
  // 1,980 rows hold a = 1, the others one row each.
  raw.exec('create table skewed (id integer primary key, a integer, b integer); create index skewed_a on skewed(a); create index skewed_b on skewed(b)')
  const insert = raw.prepare('insert into skewed (a, b) values (?, ?)')
  for (let index = 0; index < 2000; index++) insert.run(index < 1980 ? 1 : index, index % 40)
  raw.exec('analyze')
  t.ok((raw.prepare('select count(*) from sqlite_stat4').pluck().get() as number) > 0, 'the database has samples')
  const query = (a: number) => db.selectFrom('skewed').select('id').where('a', '=', a).where('b', '=', 3)
  const plan = (text: string, a: number) =>
    (raw.prepare(`explain query plan ${text}`).all([a, 3]) as Array<{ detail: string }>).map(({ detail }) => detail)
  const bare = query(1).compile().sql
  t.not(plan(bare, 1).join(), plan(bare, 1990).join(), 'with ? the plan follows the value: binding another value plans the statement again')
  const plus = sqliteDialect.compile(query(1)).sql
  t.equal(plus, 'select "id" from "skewed" where "a" = +? and "b" = +?')
  t.strictSame(plan(plus, 1990), plan(plus, 1), 'with +? the statement has one plan, whatever it binds')
  t.strictSame(raw.prepare(plus).all([1990, 3]), raw.prepare(bare).all([1990, 3]))
})
