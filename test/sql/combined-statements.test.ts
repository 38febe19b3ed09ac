import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import { renumbered, type CombinedForm } from '../../plugin/sql/combined-statements.js'
import { sentTogether, StatementTemplates, waveRows } from '../../plugin/sql/statement-templates.js'
import type { Row } from '../../plugin/sql/selection.js'
import { dialects, partsOf, type TestDatabase } from '../fixtures/dialects.js'

t.test('renumbered: the placeholders outside literals and quoted names, numbered after the parts before', async (t) => {
  t.equal(renumbered('select "a$1", \'$1\' as "x" from "t" where "b" = $1 and "c" in ($2, $3)', 4),
    'select "a$1", \'$1\' as "x" from "t" where "b" = $5 and "c" in ($6, $7)')
  t.equal(renumbered('select \'it\'\'s $2\', $2, $10', 1), 'select \'it\'\'s $2\', $3, $11', 'a doubled quote stays inside the literal')
  t.equal(renumbered('select $1', 0), 'select $1')
  t.equal(renumbered('select 1 -- $1\n, $1', 2), undefined, 'a comment: not read, sent alone')
  t.equal(renumbered('select /* $1 */ $1', 2), undefined)
  t.equal(renumbered('select E\'\\\' $1\', $1', 2), undefined, 'a string with backslash escapes')
  t.equal(renumbered('select $$ $1 $$, $1', 2), undefined, 'a dollar-quoted string')
  t.equal(renumbered('select $tag$ $1 $tag$', 2), undefined)
  t.equal(renumbered('select \'open', 2), undefined, 'an unterminated literal')
  t.equal(renumbered('select price$1 from t where a = $1', 2), undefined, 'a $ inside an unquoted name: sent alone')
  t.equal(renumbered('select a_$1, $1', 2), undefined)
  t.equal(renumbered('select ($1), [$1], $1::int, $1+$2', 2), 'select ($3), [$3], $3::int, $3+$4', 'after punctuation: a placeholder')
})

/** Each column type node-postgres reads, a row of values and a row of nulls: the types combined statements know, and one they do not. */
async function createTyped (db: Kysely<any>): Promise<void> {
  await sql`create table typed (
    id int4 primary key, small int2, big int8, exact numeric, real4 float4, real8 float8, flag bool, words text,
    short varchar(10), fixed char(3), doc json, docb jsonb, uid uuid, at timestamptz, tags int4[]
  )`.execute(db)
  await sql`insert into typed values
    (1, -2, 9007199254740993, 12.50, 0.25, 0.1, true, 'a "quoted" \\ line
next', 'é', 'ab', '{"b": [1, {"c": null}], "a": "x"}', '{"b": 2, "a": [true]}', '00000000-0000-0000-0000-00000000000a',
     '2024-02-29T12:34:56.789Z', '{1,2}'),
    (2, null, null, null, null, null, false, '', null, null, 'null', null, null, null, null),
    (3, 32767, -1, -0.001, 1e30, -1.5e-300, null, 'x', 'y', 'z  ', '[]', '[]', null, null, null)`.execute(db)
}

const known = ['id', 'small', 'big', 'exact', 'real4', 'real8', 'flag', 'words', 'short', 'doc', 'docb', 'uid'] as const

for (const dialect of dialects().filter((dialect) => dialect.name === 'postgres')) {
  const open = async (t: Test): Promise<TestDatabase> => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createTyped(database.db)
    database.reset()
    return database
  }

  /**
   * A parents' statement, its rows as a source, and a relation statement of `columns` in the two forms a wave's
   * relation has (plugin/load/one-wave.ts): in a combined statement, its keys read from the source by name; sent
   * alone, the same rows read with its parents' statement written within it.
   */
  const withForm = (db: Kysely<any>, columns: readonly string[]) => {
    const parents = db.selectFrom('typed').select(['id', 'small']).where('id', '>', 1).orderBy('id')
    const related = (keys: any) => db.selectFrom('typed').select([...columns] as any).where('id', 'in', keys).orderBy('id', 'desc')
    return {
      parents,
      source: { name: '__expand_source_0', compiled: parents.compile() },
      children: related(db.selectFrom('__expand_source_0' as any).select('__expand_source_0.id' as any)).compile(),
      alone: related(db.selectFrom(parents.as('p')).select('p.id' as any)).compile(),
    }
  }

  /** The rows of each of `statements` run together (`sentTogether`), as the wave's statements are. */
  const together = async (templates: StatementTemplates, db: Kysely<any>, statements: ReadonlyArray<{ site: object; build: () => any }>) =>
    await Promise.all(sentTogether(templates, db, () =>
      statements.map(({ site, build }) => templates.rows(db, site, 'typed', [], build))))

  t.test(`on ${dialect.name}: statements run together go out as one, each read back as the driver reads it alone`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    const statements = [
      { site: {}, build: () => db.selectFrom('typed').select([...known]).orderBy('id', 'desc') },
      { site: {}, build: () => db.selectFrom('typed').select(['id', 'words as text', 'flag']).where('id', '>', 1).orderBy('id') },
      { site: {}, build: () => db.selectFrom('typed').select(['id']).where('id', '<', 0) },
    ]
    const alone = await Promise.all(statements.map(async ({ build }) => (await build().execute()) as Row[]))
    t.equal(alone[0]!.length, 3)
    t.same(alone[0]![2], {
      id: 1,
      small: -2,
      big: '9007199254740993',
      exact: '12.50',
      real4: 0.25,
      real8: 0.1,
      flag: true,
      words: 'a "quoted" \\ line\nnext',
      short: 'é',
      doc: { b: [1, { c: null }], a: 'x' },
      docb: { a: [true], b: 2 },
      uid: '00000000-0000-0000-0000-00000000000a',
    }, 'the driver\'s values, as the statements read back must give them')
    database.reset()
    const first = await together(templates, db, statements)
    t.strictSame(first, alone, 'the first time (each value as its text, and its type): the same rows, value for value')
    t.equal(database.sent.length, 1, 'one statement sent')
    t.match(database.sent[0], /^select \(select cast\(json_build_array\(json_agg\(json_build_array\(cast\("__expand_part"\."id" as text\), /)
    t.strictSame(database.statements, alone.map((_, index) => statements[index]!.build().compile().sql), 'its parts: the statements as sent alone')
    database.reset()
    const second = await together(templates, db, statements)
    t.strictSame(second, alone, 'once known (a column as JSON itself where that is the driver\'s value): the same rows')
    t.equal(database.sent.length, 1)
    const typesOf = (names: readonly string[]) => `json_build_array(${names.map((name) => `min(pg_typeof("__expand_part"."${name}")::oid)::int4`).join(', ')})`
    const expected = 'select (select cast(json_build_array(json_agg(json_build_array(' +
      '"__expand_part"."id", "__expand_part"."small", cast("__expand_part"."big" as text), cast("__expand_part"."exact" as text), ' +
      'cast("__expand_part"."real4" as text), cast("__expand_part"."real8" as text), "__expand_part"."flag", "__expand_part"."words", ' +
      '"__expand_part"."short", "__expand_part"."doc", "__expand_part"."docb", ' +
      `cast("__expand_part"."uid" as text))), ${typesOf(known)}) as text) from (select "id", "small", "big", "exact", "real4", "real8", "flag", "words", ` +
      '"short", "doc", "docb", "uid" from "typed" order by "id" desc) as "__expand_part") as "__expand_part_0", ' +
      '(select cast(json_build_array(json_agg(json_build_array("__expand_part"."id", "__expand_part"."text", "__expand_part"."flag")), ' +
      `${typesOf(['id', 'text', 'flag'])}) as text) ` +
      'from (select "id", "words" as "text", "flag" from "typed" where "id" > $1 order by "id") as "__expand_part") as "__expand_part_1", ' +
      '(select cast(json_build_array(json_agg(json_build_array(cast("__expand_part"."id" as text))), ' +
      'json_build_array(min(pg_typeof("__expand_part"."id")::oid)::int4)) as text) ' +
      'from (select "id" from "typed" where "id" < $2) as "__expand_part") as "__expand_part_2", '
    t.equal(database.sent[0]!.slice(0, expected.length), expected,
      'each part a subquery of its rows as JSON arrays, in its own order, and its columns\' types; a part with no rows yet: its types still to learn')
    t.match(database.sent[0]!.slice(expected.length), /^cast\('true' as bool\) as "__expand_probe_16", /, 'then the driver\'s probes')
  })

  t.test(`on ${dialect.name}: a column of a type read otherwise, or a driver that reads a type otherwise: each statement alone`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    // A timestamp (a Date), an array, and char(n), whose text as a cast drops its padding.
    const dated = { site: {}, build: () => db.selectFrom('typed').select(['id', 'at', 'tags', 'fixed']).orderBy('id') }
    const plain = { site: {}, build: () => db.selectFrom('typed').select(['id', 'big']).orderBy('id') }
    const alone = [(await dated.build().execute()) as Row[], (await plain.build().execute()) as Row[]]
    t.ok(alone[0]![0]!.at instanceof Date, 'a timestamp: a Date of the driver\'s')
    t.equal(alone[0]![2]!.fixed, 'z  ')
    database.reset()
    t.strictSame(await together(templates, db, [dated, plain]), alone, 'the same rows')
    t.equal(database.sent.length, 3, 'sent as one, then each alone: the timestamp\'s type is not one read back from its text')
    database.reset()
    t.strictSame(await together(templates, db, [dated, plain]), alone)
    t.equal(database.sent.length, 2, 'from then on, the statement with it goes alone (and so does the other: one is left)')
    t.strictSame(database.sent, database.statements)

    // An application's parser for int8 (a number in place of the text): found by the probes, every statement alone.
    const types = {
      getTypeParser: (oid: number, format?: any) => (oid === 20 ? (text: string) => Number(text) : pg.types.getTypeParser(oid, format)),
    }
    const [{ schema }] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows
    const sent: string[] = []
    const parsed = new Kysely<any>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, options: `-c search_path=${schema}`, types }) }),
      log: (event) => { if (event.level === 'query') sent.push(event.query.sql) },
    })
    t.teardown(() => parsed.destroy())
    const small = { site: {}, build: () => parsed.selectFrom('typed').select(['id', 'small']).orderBy('id') }
    const big = { site: {}, build: () => parsed.selectFrom('typed').select(['id', 'big']).orderBy('id') }
    const expected = [(await small.build().execute()) as Row[], (await big.build().execute()) as Row[]]
    t.equal(expected[1]![0]!.big, 9007199254740992, 'the application\'s parser: a number')
    sent.length = 0
    t.strictSame(await together(new StatementTemplates(), parsed, [small, big]), expected)
    t.equal(sent.length, 3, 'sent as one, its probes read otherwise: each sent again alone')
  })

  t.test(`on ${dialect.name}: a driver whose parsers agree with node-postgres's on some values only: each statement alone`, async (t) => {
    const database = await open(t)
    const [{ schema }] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows
    // A number where it is exact, else the text; objects' keys in camel case: both read one value of the type as the default does.
    const safeInt8 = (text: string): unknown => Number.isSafeInteger(Number(text)) ? Number(text) : text
    const camelCase = (text: string): unknown => JSON.parse(text, (_key, value: unknown) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.replace(/_(.)/g, (_match, letter: string) => letter.toUpperCase()), inner]))
        : value)
    const dateStrings = (text: string): unknown => JSON.parse(text, (_key, value: unknown) =>
      typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) ? new Date(value) : value)
    for (const [name, oid, parser] of [['int8', 20, safeInt8], ['jsonb', 3802, camelCase], ['json', 114, dateStrings]] as const) {
      const types = { getTypeParser: (type: number, format?: any) => (type === oid ? parser : pg.types.getTypeParser(type, format)) }
      const sent: string[] = []
      const parsed = new Kysely<any>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, options: `-c search_path=${schema}`, types }) }),
        log: (event) => { if (event.level === 'query') sent.push(event.query.sql) },
      })
      t.teardown(() => parsed.destroy())
      await sql`update typed set docb = '{"first_name": "x"}', doc = '{"at": "2024-02-29T12:34:56.789Z"}' where id = 3`.execute(parsed)
      const statements = [
        { site: {}, build: () => parsed.selectFrom('typed').select(['id', 'big', 'doc', 'docb']).orderBy('id') },
        { site: {}, build: () => parsed.selectFrom('typed').select(['id']).orderBy('id') },
      ]
      const alone = await Promise.all(statements.map(async ({ build }) => (await build().execute()) as Row[]))
      sent.length = 0
      t.strictSame(await together(new StatementTemplates(), parsed, statements), alone, `${name}: the rows the driver gives alone`)
      t.equal(sent.length, 3, `${name}: sent as one, its probes read otherwise: each sent again alone`)
    }
  })

  t.test(`on ${dialect.name}: an answer that cannot be read (a parser for text the probes miss): each statement alone`, async (t) => {
    const database = await open(t)
    const [{ schema }] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows
    // Reads the probes' short texts as the default does, and cuts every longer one short.
    const cutShort = (text: string): string => text.slice(0, 8)
    const types = { getTypeParser: (type: number, format?: any) => (type === 25 ? cutShort : pg.types.getTypeParser(type, format)) }
    const sent: string[] = []
    const parsed = new Kysely<any>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, options: `-c search_path=${schema}`, types }) }),
      log: (event) => { if (event.level === 'query') sent.push(event.query.sql) },
    })
    t.teardown(() => parsed.destroy())
    const statements = [
      { site: {}, build: () => parsed.selectFrom('typed').select(['id', 'small']).orderBy('id') },
      { site: {}, build: () => parsed.selectFrom('typed').select(['id']).orderBy('id') },
    ]
    const alone = await Promise.all(statements.map(async ({ build }) => (await build().execute()) as Row[]))
    const templates = new StatementTemplates()
    for (const [request, count] of [[1, 3], [2, 2]] as const) {
      sent.length = 0
      t.strictSame(await together(templates, parsed, statements), alone, `request ${request}: the rows sent alone`)
      t.equal(sent.length, count, request === 1 ? 'sent as one, its answer unread: each sent again alone' : 'then each alone')
    }
  })

  t.test(`on ${dialect.name}: a statement of more than 100 columns (a function's arguments at most): that statement alone`, async (t) => {
    const database = await open(t)
    const { db } = database
    const columns = Array.from({ length: 101 }, (_, index) => `c${index}`)
    await sql.raw(`create table wide (id int4 primary key, ${columns.map((column) => `${column} int4`).join(', ')})`).execute(db)
    await sql`insert into wide (id, c100) values (1, 7)`.execute(db)
    const statements = [
      { site: {}, build: () => db.selectFrom('wide').select(['id', ...columns]) },
      { site: {}, build: () => db.selectFrom('typed').select(['id']).orderBy('id') },
      { site: {}, build: () => db.selectFrom('typed').select(['id', 'small']).orderBy('id') },
    ]
    const alone = await Promise.all(statements.map(async ({ build }) => (await build().execute()) as Row[]))
    const templates = new StatementTemplates()
    for (const request of [1, 2]) {
      database.reset()
      t.strictSame(await together(templates, db, statements), alone, `request ${request}: the rows sent alone`)
      t.equal(database.sent.length, 2, `request ${request}: the wide statement alone, the others as one`)
      t.ok(database.sent.includes(statements[0]!.build().compile().sql), 'the wide one as it is')
    }
  })

  t.test(`on ${dialect.name}: a combined statement that fails: each part sent again alone, answering its own rows or error`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    const results = await Promise.allSettled(sentTogether(templates, db, () => [
      templates.rows(db, {}, 'typed', [], () => db.selectFrom('typed').select(['id']).orderBy('id')),
      templates.rows(db, {}, 'typed', [], () => db.selectFrom('typed').select((eb) => sql<number>`1 / (${eb.ref('id')} - 1)`.as('ratio'))),
    ]))
    t.same(results[0], { status: 'fulfilled', value: [{ id: 1 }, { id: 2 }, { id: 3 }] }, 'the first part\'s rows, as when sent alone')
    t.equal(results[1]!.status, 'rejected')
    const error = (results[1] as PromiseRejectedResult).reason as Error & { code: string; cause: Error }
    t.equal(error.code, 'FST_EXPAND_DATABASE_ERROR')
    t.equal(error.cause.message, 'division by zero', 'the database\'s error, as the cause')
    t.equal(database.sent.length, 1, 'the two parts sent alone after the combined statement (whose error Kysely logs as an error)')
  })

  t.test(`on ${dialect.name}: a statement with a form of its own in a combined statement: read through it, its sources once each`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    const { parents, source, children, alone: childrenAlone } = withForm(db, ['id', 'words'])
    const send = (form: CombinedForm) => sentTogether(templates, db, () => [
      templates.rows(db, {}, 'parents', [], () => parents),
      waveRows(db, childrenAlone, form, undefined),
      waveRows(db, children, { sources: [source], compiled: children, isSource: false }, undefined),
    ])
    const [rows, read, again] = await Promise.all(send({ sources: [source], compiled: children, isSource: false }))
    t.same(rows, [{ id: 2, small: null }, { id: 3, small: 32767 }])
    t.strictSame(read, { rows: [{ id: 3, words: 'x' }, { id: 2, words: '' }], combined: true }, 'its rows, read through its form')
    t.strictSame(again, read)
    t.equal(database.sent.length, 1)
    const part = (index: number, from: string) => '(select cast(json_build_array(json_agg(json_build_array(' +
      `cast("__expand_part"."id" as text), cast("__expand_part"."${index === 0 ? 'small' : 'words'}" as text))), ` +
      `json_build_array(min(pg_typeof("__expand_part"."id")::oid)::int4, min(pg_typeof("__expand_part"."${index === 0 ? 'small' : 'words'}")::oid)::int4)) as text) ` +
      `from ${from} as "__expand_part") as "__expand_part_${index}"`
    const expected = 'with "__expand_source_0" as (select "id", "small" from "typed" where "id" > $1 order by "id") select ' +
      `${part(0, '(select "id", "small" from "typed" where "id" > $2 order by "id")')}, ` +
      `${part(1, '(select "id", "words" from "typed" where "id" in (select "__expand_source_0"."id" from "__expand_source_0") order by "id" desc)')}, ` +
      `${part(2, '(select "id", "words" from "typed" where "id" in (select "__expand_source_0"."id" from "__expand_source_0") order by "id" desc)')}, `
    t.equal(database.sent[0]!.slice(0, expected.length), expected, 'the source once, each part after it')
    t.same(database.statements.slice(1), [
      'select "id", "words" from "typed" where "id" in (select "p"."id" from (select "id", "small" from "typed" where "id" > $1 order by "id") as "p") order by "id" desc',
      children.sql,
    ], 'its parts, each as sent alone')

    database.reset()
    // A source that fails (its statement, not the parts sent alone): each part sent again alone, in the form it has alone.
    const failing = { name: '__expand_source_0', compiled: db.selectFrom('typed').select((eb) => sql<number>`1 / (${eb.ref('id')} - 1)`.as('id')).compile() }
    const alone = await Promise.allSettled(sentTogether(templates, db, () => [
      templates.rows(db, {}, 'parents', [], () => parents),
      waveRows(db, childrenAlone, { sources: [failing], compiled: children, isSource: false }, undefined),
    ]))
    t.same(alone[1], { status: 'fulfilled', value: { rows: [{ id: 3, words: 'x' }, { id: 2, words: '' }], combined: false } }, 'as sent alone')
    // Sent at once on the pool, they answer in any order.
    t.same([...database.sent].sort(), [
      parents.compile().sql,
      'select "id", "words" from "typed" where "id" in (select "p"."id" from (select "id", "small" from "typed" where "id" > $1 order by "id") as "p") order by "id" desc',
    ].sort(), 'each part alone, in the form it has alone, after the combined statement (whose error Kysely logs as an error)')
  })

  t.test(`on ${dialect.name}: a form PostgreSQL refuses for its text: each part alone, then the form never used again`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    const { parents, source, alone } = withForm(db, ['id', 'words'])
    // Its keys read as text and compared with an integer column: \`integer = text\`, refused as the text it is (42883).
    const refused = db.selectFrom('typed').select(['id', 'words'])
      .where('id', 'in', db.selectFrom('__expand_source_0' as any).select(sql<string>`cast("__expand_source_0"."id" as text)`.as('id')))
      .orderBy('id', 'desc').compile()
    const send = async () => await Promise.all(sentTogether(templates, db, () => [
      templates.rows(db, {}, 'parents', [], () => parents),
      waveRows(db, alone, { sources: [source], compiled: refused, isSource: false }, undefined),
    ]))
    const rows = [{ id: 2, small: null }, { id: 3, small: 32767 }]
    const children = { rows: [{ id: 3, words: 'x' }, { id: 2, words: '' }], combined: false }
    t.strictSame(await send(), [rows, children], 'the rows, as sent alone')
    t.same([...database.sent].sort(), [parents.compile().sql, alone.sql].sort(), 'each part alone, after the refused statement')
    for (const request of [2, 3]) {
      database.reset()
      t.strictSame(await send(), [rows, children], `request ${request}: the same rows`)
      t.equal(database.sent.length, 1, `request ${request}: one statement, the form not tried again`)
      t.notOk(database.sent[0]!.includes('cast("__expand_source_0"."id" as text)'), 'the part in the form it has alone')
      t.same(database.statements, [parents.compile().sql, alone.sql])
    }
  })

  t.test(`on ${dialect.name}: a statement with a form of its own and a column of a type not read back: alone from its next request`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    // A timestamp: the driver's Date, not read back from a text.
    const { parents, source, children, alone } = withForm(db, ['id', 'at'])
    const expected = (await db.executeQuery(alone)).rows
    for (const [request, count] of [[1, 3], [2, 2], [3, 2]] as const) {
      database.reset()
      const [, read] = await Promise.all(sentTogether(templates, db, () => [
        templates.rows(db, {}, 'parents', [], () => parents),
        waveRows(db, alone, { sources: [source], compiled: children, isSource: false }, undefined),
      ]))
      t.strictSame(read, { rows: expected, combined: false }, `request ${request}: its rows as sent alone`)
      t.equal(database.sent.length, count, request === 1 ? 'sent as one, then each alone' : 'each alone: the statement with it is not sent as one again')
    }
  })

  t.test(`on ${dialect.name}: a column whose type changed since it was learnt: the statement sent alone, its types learnt again`, async (t) => {
    const database = await open(t)
    const { db } = database
    const templates = new StatementTemplates()
    const statements = [
      { site: {}, build: () => db.selectFrom('typed').select(['id', 'small']).orderBy('id') },
      { site: {}, build: () => db.selectFrom('typed').select(['id', 'words']).orderBy('id') },
    ]
    await together(templates, db, statements)
    await together(templates, db, statements)
    await sql`alter table typed alter column small type int8`.execute(db)
    const alone = await Promise.all(statements.map(async ({ build }) => (await build().execute()) as Row[]))
    t.equal(alone[0]![0]!.small, '-2', 'an int8: a string of the driver\'s')
    database.reset()
    t.strictSame(await together(templates, db, statements), alone, 'read as its new type')
    t.equal(database.sent.length, 3, 'sent as one (the types learnt before), then each alone: a type not the one learnt')
    database.reset()
    t.strictSame(await together(templates, db, statements), alone)
    t.equal(database.sent.length, 1, 'one statement again, its types learnt again')
    t.match(database.sent[0], /cast\("__expand_part"\."small" as text\)/)
  })

  t.test(`on ${dialect.name}: a name PostgreSQL cuts short, or __proto__: that statement alone`, async (t) => {
    const database = await open(t)
    const { db } = database
    const long = 'a'.repeat(64)
    for (const name of [long, '__proto__']) {
      const statements = [
        { site: {}, build: () => db.selectFrom('typed').select(['id', `words as ${name}`]).orderBy('id') },
        { site: {}, build: () => db.selectFrom('typed').select(['id']).orderBy('id') },
      ]
      const alone = await Promise.all(statements.map(async ({ build }) => (await build().execute()) as Row[]))
      database.reset()
      t.strictSame(await together(new StatementTemplates(), db, statements), alone, name)
      t.equal(database.sent.length, 2, `${name}: each alone`)
    }
  })
}

t.test('partsOf (the tests\' reading of a statement sent): a statement that combines none is itself', async (t) => {
  const query = CompiledQuery.raw('select 1', [1])
  t.same(partsOf(query), [{ sql: 'select 1', parameters: [1] }])
})
