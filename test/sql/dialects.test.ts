// Each difference between the databases, as its dialect writes it: the exact
// SQL and parameters on each one, then the statement run there, with the rows
// it must find. Kept beside plugin/sql/dialects/: a new quirk gets its case here.
import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool } from 'mysql2'
import t from 'tap'
import {
  databaseFailureKind,
  refusedForItsText,
  dialectOf,
  mysqlDialect,
  postgresDialect,
  sqliteDialect,
  type ExpandDialect,
  type LimitedRelation,
} from '../../plugin/sql/dialects/index.js'
import type { AnySelect } from '../../plugin/sql/selection.js'
import { dialects, type Dialect } from '../fixtures/dialects.js'

const dateTime = { kind: 'string', format: 'date-time' } as const
const date = { kind: 'string', format: 'date' } as const
const integer = { kind: 'integer' } as const
const number = { kind: 'number' } as const

/** The statement's SQL and parameters as the dialect compiles them. */
function compiled (query: { compile(): { sql: string; parameters: readonly unknown[] } }): [string, unknown[]] {
  const { sql, parameters } = query.compile()
  return [sql, [...parameters]]
}

/** The column types of the table `items` on each database: the date-times and dates typed where the database has types. */
const itemColumns = {
  sqlite: { name: 'text', at: 'text', day: 'text' },
  postgres: { name: 'text', at: 'timestamptz', day: 'date' },
  // The name in MariaDB's default collation (the test databases' is utf8mb4_nopad_bin), which ignores case and accents.
  mariadb: { name: 'text collate utf8mb4_general_ci', at: 'datetime(6)', day: 'date' },
} as const

/** The database a test dialect runs on. */
function databaseOf (dialect: Dialect): keyof typeof itemColumns {
  return dialect.name === 'postgres' || dialect.name === 'mariadb' ? dialect.name : 'sqlite'
}

/** PostgreSQL's or SQLite's SQL as MariaDB writes it: backticks for identifiers, `?` for parameters. */
function inMariadbQuotes (text: string): string {
  return text.replace(/"/g, '`').replace(/\$[0-9]+/g, '?')
}

async function seeded (dialect: Dialect): Promise<{ db: Kysely<any>; close(): Promise<void> }> {
  const { db, close } = await dialect.open()
  const { name, at, day } = itemColumns[databaseOf(dialect)]
  await sql.raw(`create table items (id integer primary key, name ${name} not null, at ${at} not null, day ${day} not null, n integer)`).execute(db)
  await sql.raw('create table children (id integer primary key, parent integer not null)').execute(db)
  // MariaDB's DATETIME holds no offset (it would drop one with a warning): its date-times are written in UTC.
  const utc = dialect.name === 'mariadb'
  await db.insertInto('items').values([
    // 01:00 at +01:00 is midnight UTC: as text it sorts after every 00:xx UTC, as an instant it is midnight.
    { id: 1, name: 'Half 50%_off\\ sale', at: utc ? '2021-01-01 00:00:00' : '2021-01-01T01:00:00+01:00', day: '2021-03-04', n: null },
    { id: 2, name: 'no match: 50 off', at: utc ? '2021-01-01 00:00:01' : '2021-01-01T00:00:01Z', day: '2021-03-05', n: 3 },
    { id: 3, name: 'HALF 50%_OFF\\', at: utc ? '2020-12-31 23:59:59' : '2020-12-31T23:59:59Z', day: '2021-03-06', n: 5 },
    // Item 3's name but for an accent: a `_ci` collation would find it where contains does not.
    ...(utc ? [{ id: 4, name: 'HALF 50%_ÖFF\\', at: '2019-01-01 00:00:00', day: '2019-01-01', n: 7 }] : []),
  ]).execute()
  await db.insertInto('children').values([10, 11, 12, 20, 30, 31].map((id) => ({ id, parent: Math.floor(id / 10) }))).execute()
  return { db, close }
}

for (const dialect of dialects()) {
  const database = databaseOf(dialect)
  const onSqlite = database === 'sqlite'
  const onMariadb = database === 'mariadb'
  /** The SQL written on this dialect: SQLite's, PostgreSQL's or MariaDB's (by default PostgreSQL's in MariaDB's quotes). */
  const either = (sqlite: string, postgres: string, mariadb = inMariadbQuotes(postgres)) =>
    onSqlite ? sqlite : onMariadb ? mariadb : postgres
  /** The rows found: item 4, which only MariaDB's table holds, left out on the others. */
  const found = (ids: readonly number[]) => onMariadb ? [...ids] : ids.filter((id) => id !== 4)

  t.test(`${dialect.name}: each difference, written and run`, async (t) => {
    const { db, close } = await seeded(dialect)
    t.teardown(close)
    const written: ExpandDialect = dialectOf(db)
    t.equal(written, { sqlite: sqliteDialect, postgres: postgresDialect, mariadb: mysqlDialect }[database], 'the adapter tells the dialect')
    t.equal(dialectOf(db), written, 'resolved once per Kysely instance')
    await db.transaction().execute(async (trx) => { t.equal(dialectOf(trx), written, "a transaction's Kysely: the same dialect") })
    const ids = async (query: AnySelect) => (await query.execute()).map((row) => Number(row.id))
    const items = () => db.selectFrom('items').select('id') as AnySelect

    t.test('contains: instr on SQLite, an escaped LIKE on PostgreSQL, ignoring case', async (t) => {
      const { condition, value } = written.contains('items.name', '50%_off\\')
      const query = items().where(() => condition).orderBy('id')
      t.same(compiled(query), [either(
        'select "id" from "items" where instr(lower("items"."name"), lower(?)) > 0 order by "id"',
        'select "id" from "items" where lower("items"."name") like lower($1) escape \'\\\' order by "id"',
        'select `id` from `items` where instr(cast(lower(`items`.`name`) as binary), cast(lower(?) as binary)) > 0 order by `id`'
      ), [either('50%_off\\', '%50\\%\\_off\\\\%', '50%_off\\')]])
      t.equal(value, either('50%_off\\', '%50\\%\\_off\\\\%', '50%_off\\'))
      t.same(await ids(query), [1, 3], '% _ and \\ are the text itself, and an accented letter is not its letter')
    })

    t.test('a correlated EXISTS: as written on SQLite and PostgreSQL, with HAVING on MariaDB, which keeps it correlated', async (t) => {
      const children = db.selectFrom('children').select(sql.lit(1).as('found')).whereRef('children.parent', '=', 'items.id') as AnySelect
      const query = items().where((eb) => eb.exists(written.correlatedSubquery(children))).orderBy('id')
      t.same(compiled(query), [either(
        'select "id" from "items" where exists (select 1 as "found" from "children" where "children"."parent" = "items"."id") order by "id"',
        'select "id" from "items" where exists (select 1 as "found" from "children" where "children"."parent" = "items"."id") order by "id"',
        'select `id` from `items` where exists (select 1 as `found` from `children` where `children`.`parent` = `items`.`id` having 1) order by `id`'
      ), []])
      t.same(await ids(query), [1, 2, 3], 'the items with children: HAVING 1 keeps every row')
      const childless = items().where((eb) => eb.not(eb.exists(written.correlatedSubquery(children)))).orderBy('id')
      t.same(await ids(childless), found([4]))
    })

    t.test('date-time compared by its instant: julianday on SQLite, the timestamp itself on PostgreSQL', async (t) => {
      const query = items().where((eb) => eb(written.filterColumn(dateTime, 'items.at'), '>', written.filterValue(dateTime, '2021-01-01T00:00:00Z').expression))
      t.same(compiled(query), [either(
        'select "id" from "items" where julianday("items"."at") > julianday(?)',
        'select "id" from "items" where "items"."at" > $1'
      ), [onMariadb ? '2021-01-01 00:00:00.000' : '2021-01-01T00:00:00Z']], 'MariaDB reads no offset: bound as UTC wall-clock time')
      t.same(await ids(query), [2], "midnight at +01:00's 01:00 is not after midnight UTC")
      t.same(written.filterColumn(integer, 'items.n').toOperationNode(), sql.ref('items.n').toOperationNode(), 'other types: the column itself')
    })

    t.test('wide numbers: cast on PostgreSQL where the bare parameter would not hold them, never on SQLite', async (t) => {
      const cases: Array<[typeof integer | typeof number, number, '=' | '<', string | undefined, number[]]> = [
        [integer, 2 ** 31, '=', 'bigint', []],
        [integer, -(2 ** 31) - 1, '=', 'bigint', []],
        [integer, 2 ** 31 - 1, '=', undefined, []],
        [number, 1e300, '<', 'numeric', [2, 3, 4]],
        [number, 2 ** 40, '<', 'numeric', [2, 3, 4]],
        [number, 4, '<', undefined, [2]],
      ]
      for (const [type, value, operator, cast, expected] of cases) {
        const bound = written.filterValue(type, value)
        t.equal(bound.cast, onSqlite || onMariadb ? undefined : cast, `${type.kind} ${value}`)
        t.equal(bound.item, value)
        const query = items().where((eb) => eb(written.filterColumn(type, 'items.n'), operator, bound.expression)).orderBy('id')
        const right = onSqlite ? '?' : onMariadb || cast === undefined ? '$1' : `cast($1 as ${cast})`
        const statement = `select "id" from "items" where "items"."n" ${operator} ${right} order by "id"`
        t.same(compiled(query), [onMariadb ? inMariadbQuotes(statement) : statement, [value]])
        t.same(await ids(query), found(expected), `${type.kind} ${value} runs`)
      }
      t.equal(written.filterValue(integer, '7').cast, undefined, 'a string is never cast')
    })

    t.test("cursor keys: a date as PostgreSQL's text, the stored value on SQLite", async (t) => {
      const query = db.selectFrom('items').select((eb) => [
        written.cursorKey(eb, date, 'items.day').as('k0'),
        written.cursorKey(eb, dateTime, 'items.at').as('k1'),
        written.cursorKey(eb, integer, 'items.id').as('k2'),
      ]).where('id', '=', 3)
      t.same(compiled(query), [either(
        'select "items"."day" as "k0", "items"."at" as "k1", "items"."id" as "k2" from "items" where "id" = ?',
        'select cast("items"."day" as text) as "k0", cast("items"."at" as text) as "k1", "items"."id" as "k2" from "items" where "id" = $1',
        'select cast(`items`.`day` as char) as `k0`, cast(`items`.`at` as char) as `k1`, `items`.`id` as `k2` from `items` where `id` = ?'
      ), [3]])
      const [row] = await query.execute()
      t.equal(row!.k0, '2021-03-06', 'the key as text, never a Date in the time zone of the process')
      t.equal(typeof row!.k1, 'string')
      t.equal(row!.k2, 3)
    })

    t.test('a key as its text: cast to text (char on MariaDB), exact past 2^53 where the driver would round it', async (t) => {
      await sql`create table wide (id bigint primary key)`.execute(db)
      await sql`insert into wide values (9007199254740992), (9007199254740993), (9223372036854775807), (5)`.execute(db)
      const query = db.selectFrom('wide').select([written.asText('wide.id').as('id'), 'wide.id as raw']).orderBy('wide.id')
      t.same(compiled(query), [either(
        'select cast("wide"."id" as text) as "id", "wide"."id" as "raw" from "wide" order by "wide"."id"',
        'select cast("wide"."id" as text) as "id", "wide"."id" as "raw" from "wide" order by "wide"."id"',
        'select cast(`wide`.`id` as char) as `id`, `wide`.`id` as `raw` from `wide` order by `wide`.`id`'
      ), []])
      const rows = await query.execute()
      t.same(rows.map((row) => row.id), ['5', '9007199254740992', '9007199254740993', '9223372036854775807'], 'the exact text, small keys too')
      // Read bare: SQLite's driver rounds; pg gives int8 as text; mysql2 rounds unless its pool says otherwise (the tests' pool
      // sets supportBigNumbers: text past 2^53, a number below).
      const raw = rows.map((row) => row.raw)
      t.same(raw, onSqlite
        ? [5, 2 ** 53, 2 ** 53, 2 ** 63]
        : onMariadb
          ? [5, '9007199254740992', '9007199254740993', '9223372036854775807']
          : ['5', '9007199254740992', '9007199254740993', '9223372036854775807'], 'read bare: as the driver gives it')
      const matched = async (operator: '=' | '>' | 'in', value: string | string[]) =>
        (await db.selectFrom('wide').select(written.asText('wide.id').as('id')).where('wide.id', operator, value).orderBy('wide.id').execute())
          .map((row) => row.id)
      t.same(await matched('=', '9007199254740993'), ['9007199254740993'], 'the text bound back finds its row exactly')
      t.same(await matched('>', '9007199254740992'), ['9007199254740993', '9223372036854775807'])
      t.same(await matched('in', ['9007199254740993', '5']), ['5', '9007199254740993'])
      const after = db.selectFrom('wide').select(written.asText('wide.id').as('id'))
        .where(() => written.rowComparison(['wide.id'], '>', ['9007199254740992']).condition).orderBy('wide.id')
      t.same((await after.execute()).map((row) => row.id), ['9007199254740993', '9223372036854775807'], 'a row value comparison too')
    })

    t.test('keyset: a row value comparison on each, behind a bound on its first key on MariaDB', async (t) => {
      const after = written.rowComparison(['items.n', 'items.id'], '>', [3, 2])
      const query = items().where(() => after.condition)
      t.same(compiled(query), [either(
        'select "id" from "items" where ("items"."n", "items"."id") > (?, ?)',
        'select "id" from "items" where ("items"."n", "items"."id") > ($1, $2)',
        'select `id` from `items` where (`items`.`n` >= ? and (`items`.`n`, `items`.`id`) > (?, ?))'
      ), [...after.values]], 'the values it says it binds, in order')
      t.same(after.values, onMariadb ? [3, 3, 2] : [3, 2])
      t.same((await ids(query)).sort(), found([3, 4]))
      const before = items().where(() => written.rowComparison(['items.n', 'items.id'], '<', [5, 3]).condition)
      t.same(await ids(before), [2])
      const one = written.rowComparison(['items.id'], '>', [2])
      t.same(compiled(items().where(() => one.condition)), [either('select "id" from "items" where ("items"."id") > (?)', 'select "id" from "items" where ("items"."id") > ($1)'), [2]],
        'one key: its comparison alone')
      t.same(await ids(items().where(() => one.condition)), found([3, 4]))
    })

    t.test('NULL order written explicitly: `is null` on SQLite, NULLS FIRST/LAST on PostgreSQL', async (t) => {
      const cases: Array<['asc' | 'desc', 'first' | 'last', string, string, number[]]> = [
        ['asc', 'first', '"items"."n" is null desc, "items"."n" asc', '"items"."n" asc nulls first', [1, 2, 3, 4]],
        ['asc', 'last', '"items"."n" is null asc, "items"."n" asc', '"items"."n" asc nulls last', [2, 3, 4, 1]],
        ['desc', 'first', '"items"."n" is null desc, "items"."n" desc', '"items"."n" desc nulls first', [1, 4, 3, 2]],
        ['desc', 'last', '"items"."n" is null asc, "items"."n" desc', '"items"."n" desc nulls last', [4, 3, 2, 1]],
      ]
      for (const [direction, nulls, sqlite, postgres, expected] of cases) {
        const query = written.orderBy(items(), 'items.n', direction, nulls)
        // MariaDB has no NULLS FIRST/LAST: it writes SQLite's `is null`.
        const statement = `select "id" from "items" order by ${either(sqlite, postgres, sqlite)}`
        t.same(compiled(query), [onMariadb ? inMariadbQuotes(statement) : statement, []], `${direction} nulls ${nulls}`)
        t.same(await ids(query), found(expected), `${direction} nulls ${nulls} runs`)
      }
    })

    t.test('a statement bound: a literal `limit`, no parameter', async (t) => {
      const query = written.limit(items().orderBy('id'), 2)
      const statement = 'select "id" from "items" order by "id" limit 2'
      t.same(compiled(query), [onMariadb ? inMariadbQuotes(statement) : statement, []])
      t.same(await ids(query), [1, 2])
    })

    t.test('keys of a subquery: `= any(array(...))` on PostgreSQL, which reads them first and then the index; `in (...)` elsewhere', async (t) => {
      const keys = db.selectFrom('children').select('children.parent').where('children.id', '>', 15) as AnySelect
      const query = items().where(written.amongKeys('items.id', keys)).orderBy('id')
      t.same(compiled(query), [either(
        'select "id" from "items" where "items"."id" in (select "children"."parent" from "children" where "children"."id" > ?) order by "id"',
        'select "id" from "items" where "items"."id" = any(array(select "children"."parent" from "children" where "children"."id" > $1)) order by "id"',
        'select `id` from `items` where `items`.`id` in (select `children`.`parent` from `children` where `children`.`id` > ?) order by `id`'
      ), [15]])
      t.same(await ids(query), [2, 3], 'each key once, whatever the subquery repeats')
      const none = items().where(written.amongKeys('items.id', keys.where('children.id', '>', 99))).orderBy('id')
      t.same(await ids(none), [], 'no keys, no rows')
    })

    t.test("a relation's first rows per parent: a correlated LIMIT on SQLite, row_number() on PostgreSQL", async (t) => {
      const relation = (bound: number, order: LimitedRelation['order']): LimitedRelation => ({
        db,
        source: {
          table: 'children',
          parentColumn: 'children.parent',
          relatedKey: 'children.id',
          select: (query) => query.select('children.id as id'),
          columns: ['id', '__expand_parent'],
        },
        scope: undefined,
        keys: [1, 2, 1],
        addedColumns: [],
        order,
        limit: 2,
        bound,
        tagged: () => db.selectFrom('children').select(['children.id as id', 'children.parent as __expand_parent'])
          .where('children.parent', 'in', [1, 2, 1]) as AnySelect,
      })
      const query = written.firstRowsPerParent(relation(16, [['children.id', 'asc']]))
      t.same(compiled(query), [either(
        'with "__expand_keys" as (select distinct "column1" as "key" from (values (?), (?), (?))) ' +
          'select "children"."id" as "id", "__expand_keys"."key" as "__expand_parent" from "__expand_keys" cross join "children" ' +
          'where "children"."parent" = "__expand_keys"."key" and "children"."id" in ' +
          '(select "children"."id" from "children" where "children"."parent" = "__expand_keys"."key" order by "children"."id" limit 2) ' +
          'order by "__expand_keys"."key", "children"."id" limit 16',
        'select "__expand_numbered"."id" as "id", "__expand_numbered"."__expand_parent" as "__expand_parent" from ' +
          '(select "children"."id" as "id", "children"."parent" as "__expand_parent", ' +
          'row_number() over(partition by "children"."parent" order by "children"."id") as "__expand_row" ' +
          'from "children" where "children"."parent" in ($1, $2, $3)) as "__expand_numbered" ' +
          'where "__expand_numbered"."__expand_row" <= 2 order by "__expand_numbered"."__expand_parent", "__expand_numbered"."__expand_row" limit 16'
      ), [1, 2, 1]])
      t.equal(written.firstRowsBindKeysFirst, onSqlite, 'the keys come first only where the statement starts with them')
      const rows = async (query: AnySelect) => (await query.execute()).map((row) => [Number(row.id), Number(row.__expand_parent)])
      t.same(await rows(query), [[10, 1], [11, 1], [20, 2]], 'two per parent, parent first')
      t.same(await rows(written.firstRowsPerParent(relation(2, [['children.id', 'asc']]))), [[10, 1], [11, 1]], 'the bound caps them all')
      t.same(await rows(written.firstRowsPerParent(relation(16, [['children.id', 'desc']]))), [[12, 1], [11, 1], [20, 2]], "the relation's order")
    })

    t.test("aggregates' numbers: a count cast to an integer, a sum and an average to a double", async (t) => {
      const { integer, double } = written.numberCasts
      t.same([integer, double], onMariadb ? ['signed', 'double'] : ['integer', 'double precision'])
      const query = db.selectFrom('items').select([
        sql`cast(count(*) as ${sql.raw(integer)})`.as('count'),
        sql`cast(sum(${sql.ref('n')}) as ${sql.raw(double)})`.as('sum'),
        written.quotient(sql`cast(sum(${sql.ref('n')}) as ${sql.raw(double)})`, sql`count(${sql.ref('n')})`).as('avg'),
      ]).where('id', '<=', 3)
      t.same(await query.execute(), [{ count: 3, sum: 8, avg: 4 }], 'numbers, never text')
    })

    t.test('an average as IEEE division gives it, down to the subnormal doubles', async (t) => {
      const { integer, double } = written.numberCasts
      const quotient = async (dividend: number | null, divisor: number) => {
        const value = sql`cast(${dividend} as ${sql.raw(double)})`
        const { rows } = await sql<{ q: number | null }>`select ${written.quotient(value, sql`cast(${divisor} as ${sql.raw(integer)})`)} as q`.execute(db)
        return rows[0]!.q
      }
      // PostgreSQL refuses a quotient that rounds to 0 from a dividend that is not 0 ("value out of range: underflow").
      const cases = [
        [5e-324, 2], [-5e-324, 2], [5e-324, 3], [1e-322, 2], [1.5e-323, 3], [3e-300, 7],
        [0, 5], [1e308, 3], [-1.7976931348623157e308, 1], [7, 3],
      ] as const
      for (const [dividend, divisor] of cases) {
        const answer = await quotient(dividend, divisor)
        // -0 and 0 compare equal: JSON writes both 0.
        t.ok(answer === dividend / divisor, `${dividend} / ${divisor}: ${answer}`)
      }
      t.equal(await quotient(null, 0), null, 'no value: NULL')
    })

    t.test('loading: relations of a level at the same time on a pool only', async (t) => {
      t.equal(written.loadsConcurrently, !onSqlite)
    })

    t.test("the driver's own errors, classified", async (t) => {
      const failureOf = async (statement: (db: Kysely<any>) => Promise<unknown>) => {
        try {
          await statement(db)
        } catch (error) {
          return databaseFailureKind(error)
        }
        return 'no error'
      }
      t.equal(await failureOf((db) => sql`select * from no_such_table`.execute(db)), undefined, "the statement's failure: none")
      const refused = async (statement: (db: Kysely<any>) => Promise<unknown>) => await statement(db).then(() => 'no error', refusedForItsText)
      // Refused for its text, as it would be again: what a combined statement learns from (PostgreSQL's alone combines).
      t.equal(await refused((db) => sql`select * from no_such_table`.execute(db)), !onSqlite && !onMariadb, 'a table it does not know')
      if (onSqlite) return
      if (onMariadb) {
        t.equal(await failureOf((db) => db.insertInto('items').values({ id: 9, name: '', at: '2021-01-01', day: '2021-01-01', n: 2 ** 31 }).execute()),
          'unstorable value', 'ER_WARN_DATA_OUT_OF_RANGE')
        t.equal(await failureOf((db) => sql`set statement max_statement_time = 0.01 for select sleep(1) from items`.execute(db)),
          'unavailable', "MariaDB's ER_STATEMENT_TIMEOUT, which mysql2 names no code for")
        t.equal(await failureOf((db) => db.transaction().execute(async (holder) => {
          await sql`select id from items where id = 1 for update`.execute(holder)
          await db.transaction().execute(async (waiter) => {
            await sql`set innodb_lock_wait_timeout = 1`.execute(waiter)
            await sql`select id from items where id = 1 for update`.execute(waiter)
          })
        })), 'unavailable', 'ER_LOCK_WAIT_TIMEOUT')
        return
      }
      t.equal(await failureOf((db) => sql`select cast(${'abc'} as integer)`.execute(db)), 'unstorable value', '22P02')
      t.equal(await refused((db) => sql`select cast(${'abc'} as integer)`.execute(db)), false, '22P02: a value, never refused for the text')
      t.equal(await failureOf((db) => db.selectFrom('items').select('id').where('n', '=', 2 ** 31).execute()), 'unstorable value', '22003')
      t.equal(await failureOf((db) => db.transaction().execute(async (trx) => {
        await sql`set local statement_timeout = 10`.execute(trx)
        await sql`select pg_sleep(1)`.execute(trx)
      })), 'unavailable', '57014: the statement timeout')
      t.equal(await failureOf((db) => db.connection().execute(async (first) => {
        await sql`begin isolation level repeatable read`.execute(first)
        try {
          await sql`select n from items where id = 1`.execute(first)
          // Another connection updates the row (to the value it holds) and commits after the first one's snapshot.
          await sql`update items set n = n where id = 1`.execute(db)
          await sql`update items set n = n where id = 1`.execute(first)
        } finally {
          await sql`rollback`.execute(first)
        }
      })), 'unavailable', '40001: a serialization failure, which a retry may not meet')
    })
  })
}

t.test('driver errors by code and message, whichever database raised them', async (t) => {
  const cases: Array<[unknown, string | undefined]> = [
    [{ code: 'SQLITE_BUSY' }, 'unavailable'],
    [{ code: 'SQLITE_LOCKED' }, 'unavailable'],
    [{ code: 'SQLITE_CONSTRAINT' }, undefined],
    [{ code: 'ECONNREFUSED' }, 'unavailable'],
    [{ code: 'EAI_AGAIN' }, 'unavailable'],
    [{ code: '08006' }, 'unavailable'],
    [{ code: '57P01' }, 'unavailable'],
    [{ code: '53300' }, 'unavailable'],
    [{ code: '57014' }, 'unavailable'],
    [{ code: '40001' }, 'unavailable'],
    [{ code: '40P01' }, 'unavailable'],
    [{ code: '40002' }, undefined],
    [{ code: '22P02' }, 'unstorable value'],
    [{ code: '22003' }, 'unstorable value'],
    [{ code: '23505' }, undefined],
    [{ code: '42P01', message: 'relation "x" does not exist' }, undefined],
    [{ message: 'Connection terminated unexpectedly' }, 'unavailable'],
    [{ message: 'timeout exceeded when trying to connect' }, 'unavailable'],
    [{ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 }, 'unavailable'],
    [{ code: 'PROTOCOL_CONNECTION_LOST' }, 'unavailable'],
    [{ code: 'ER_CON_COUNT_ERROR' }, 'unavailable'],
    [{ errno: 1969, message: 'Query execution was interrupted (max_statement_time exceeded)' }, 'unavailable'],
    [{ code: 'ER_SOMETHING', errno: 1969 }, undefined],
    [{ message: 'Pool is closed.' }, 'unavailable'],
    [{ code: 'ER_WARN_DATA_OUT_OF_RANGE', errno: 1264 }, 'unstorable value'],
    [{ code: 'ER_TRUNCATED_WRONG_VALUE' }, 'unstorable value'],
    [{ code: 'ER_DUP_ENTRY', errno: 1062 }, undefined],
    [{ code: 'ER_NO_SUCH_TABLE', errno: 1146 }, undefined],
    [{ code: 7, message: 42 }, undefined],
    [new Error('anything else'), undefined],
    ['08006', undefined],
    [null, undefined],
  ]
  for (const [error, kind] of cases) t.equal(databaseFailureKind(error), kind, JSON.stringify(error) ?? String(error))
})

t.test("a Kysely whose executor is hidden: PostgreSQL's forms, its statements one after another", async (t) => {
  const [sqlite] = dialects()
  const { db, close } = await sqlite!.open()
  t.teardown(close)
  const hidden = new Proxy(db, { get: (target, name) => name === 'getExecutor' ? undefined : Reflect.get(target, name, target) })
  const unseen = dialectOf(hidden)
  t.not(unseen, sqliteDialect)
  t.equal(unseen.loadsConcurrently, false)
  t.equal(unseen.contains, postgresDialect.contains)
  t.equal(unseen.firstRowsPerParent, postgresDialect.firstRowsPerParent)
})

t.test("MariaDB/MySQL: the SQL each member writes, through Kysely's MysqlDialect without a server", async (t) => {
  // mysql2's pool connects on its first query only: compiling needs no server.
  const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool({}) }) })
  t.teardown(() => db.destroy())
  const written = dialectOf(db)
  t.equal(written, mysqlDialect, "Kysely's MySQL adapter tells the dialect")
  t.equal(written.name, 'mysql')
  t.equal(written.loadsConcurrently, true, 'a pool')
  const items = () => db.selectFrom('items').select('id') as AnySelect

  const children = db.selectFrom('children').select(sql.lit(1).as('found')).whereRef('children.parent', '=', 'items.id') as AnySelect
  t.same(compiled(items().where((eb) => eb.exists(written.correlatedSubquery(children)))), [
    'select `id` from `items` where exists (select 1 as `found` from `children` where `children`.`parent` = `items`.`id` having 1)', [],
  ], 'HAVING: a subquery neither MariaDB nor MySQL turns into a semi-join')

  const { condition, value } = written.contains('items.name', '50%_off\\')
  t.same(compiled(items().where(() => condition)), [
    'select `id` from `items` where instr(cast(lower(`items`.`name`) as binary), cast(lower(?) as binary)) > 0', ['50%_off\\'],
  ])
  t.equal(value, '50%_off\\', 'the text itself: instr has no pattern')

  const instant = written.filterValue(dateTime, '2021-01-01T01:00:00.25+01:00')
  t.same([instant.item, instant.cast], ['2021-01-01 00:00:00.250', undefined], "a date-time as its instant's UTC wall-clock time")
  t.same(compiled(items().where((eb) => eb(written.filterColumn(dateTime, 'items.at'), '>', instant.expression))),
    ['select `id` from `items` where `items`.`at` > ?', ['2021-01-01 00:00:00.250']])
  t.equal(written.filterValue(dateTime, 'not a date-time').item, 'not a date-time', 'a text of no instant: as it is')
  t.equal(written.filterValue(dateTime, 7).item, 7)
  t.same([written.filterValue(integer, 2 ** 31).item, written.filterValue(integer, 2 ** 31).cast], [2 ** 31, undefined], 'numbers: never a cast')
  t.equal(written.filterValue(date, '2021-03-04').item, '2021-03-04', 'a date: as it is')

  t.same(compiled(db.selectFrom('items').select((eb) => [
    written.cursorKey(eb, date, 'items.day').as('k0'),
    written.cursorKey(eb, integer, 'items.id').as('k1'),
  ])), ['select cast(`items`.`day` as char) as `k0`, `items`.`id` as `k1` from `items`', []])
  t.same(compiled(items().where(() => written.rowComparison(['items.n', 'items.id'], '>', [3, 2]).condition)),
    ['select `id` from `items` where (`items`.`n` >= ? and (`items`.`n`, `items`.`id`) > (?, ?))', [3, 3, 2]],
    'the bound on the first key MariaDB enters an index at, then the row comparison')
  t.same(compiled(items().where(() => written.rowComparison(['items.n', 'items.id'], '<', [5, 3]).condition)),
    ['select `id` from `items` where (`items`.`n` <= ? and (`items`.`n`, `items`.`id`) < (?, ?))', [5, 5, 3]])
  t.same(written.rowComparison(['items.id'], '>', [2]).values, [2], 'one key: its comparison alone, nothing bound twice')
  t.same(compiled(db.selectFrom('items').select(written.asText('items.id').as('id'))),
    ['select cast(`items`.`id` as char) as `id` from `items`', []], 'a key as its text: MySQL casts to char, not text')
  t.same(compiled(written.orderBy(items(), 'items.n', 'desc', 'last')),
    ['select `id` from `items` order by `items`.`n` is null asc, `items`.`n` desc', []], 'no NULLS LAST: `is null` first')
  t.same(compiled(written.orderBy(items(), 'items.n', 'asc', 'first')),
    ['select `id` from `items` order by `items`.`n` is null desc, `items`.`n` asc', []], 'nor NULLS FIRST')
  t.same(compiled(written.limit(items(), 3)), ['select `id` from `items` limit 3', []])
  t.equal(written.firstRowsPerParent, postgresDialect.firstRowsPerParent, 'row_number(), as PostgreSQL writes it')
  t.equal(written.firstRowsBindKeysFirst, false)
  t.same(written.numberCasts, { integer: 'signed', double: 'double' }, "the names MySQL's CAST reads, and MariaDB's")
})

t.test('MariaDB: each difference run on a server', { skip: process.env.MARIADB_URL ? false : 'MariaDB not set up: set MARIADB_URL (e.g. mysql://expand:expand@127.0.0.1:3307/expand after `bash .ci/mariadb.sh start`) to run them' }, async (t) => {
  t.ok(dialects().some((dialect) => dialect.name === 'mariadb'), 'run above, as one of the dialects')
})
