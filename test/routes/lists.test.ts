import fc from 'fast-check'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { type ResourceRoutesOptions } from '../../plugin/index.js'
import { onDatabase } from '../fixtures/databases.js'
import { asWrittenOn, dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Animal, animals, listResources, openListTables, type AnimalRow } from '../fixtures/list-tables.js'

// Filters, sorts and pages of app.expand.routes, on every dialect: exact bodies, SQL and statement counts.

const filter: ResourceRoutesOptions['filter'] = {
  species: ['eq', 'ne', 'in'],
  born: ['gte', 'lt'],
  weight: ['gt', 'lte'],
  adopted: ['eq'],
  sold_from: ['null', 'eq'],
  name: ['contains'],
  keeper: ['eq', 'in'],
  'keeper.name': ['contains'],
  'keeper.vip': ['eq'],
  'keeper.shelter.city': ['eq'],
}
const sort = ['born', 'name', 'weight']

async function build (
  t: Test,
  database: TestDatabase,
  pluginOptions: object = {},
  extra?: (app: FastifyInstance) => void
): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: listResources, ...pluginOptions })
  app.expand.routes('/animals', Animal, { filter, sort })
  app.expand.routes('/counted', Animal, { filter, sort, total: false })
  app.expand.routes('/feed', Animal, { filter, sort, pagination: 'cursor', pageSize: 2 })
  extra?.(app)
  await app.ready()
  t.teardown(() => app.close())
  return app
}

async function get (app: FastifyInstance, database: TestDatabase, url: string, headers: Record<string, string> = {}) {
  database.reset()
  const response = await app.inject({ method: 'GET', url, headers })
  return { status: response.statusCode, body: response.json(), statements: [...database.statements] }
}

/** PostgreSQL's numbered placeholders as SQLite's, to compare one expected text. */
const plain = (statement: string) => statement.replace(/\$\d+/g, '?')
const ids = (body: { data: Array<{ id: number }> }) => body.data.map((row) => row.id)
const byId = (id: number): AnimalRow => animals.find((animal) => animal.id === id)!
const badRequest = (code: string, message: string) => ({ statusCode: 400, code, error: 'Bad Request', message })

for (const dialect of dialects()) {
  t.test(`filters on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database)
    // `contains` as each dialect writes it (placeholders as SQLite's; identifiers quoted by `written`).
    const contains = (column: string) => onDatabase(dialect, {
      sqlite: `instr(lower(${column}), lower(?)) > 0`,
      postgres: `lower(${column}) like lower(?) escape '\\'`,
      mariadb: `instr(cast(lower(${column}) as binary), cast(lower(?) as binary)) > 0`,
    })
    /** A statement the tests write with double-quoted identifiers, as this dialect writes it. */
    const written = (statement: string) => asWrittenOn(dialect, statement)

    t.test('eq: the exact body, one page statement and one COUNT, both filtered', async (t) => {
      // A full page: its total needs the COUNT.
      const reply = await get(app, database, '/animals?filter[species]=cat&limit=2')
      t.same(reply.body, { data: [byId(1), byId(3)], limit: 2, offset: 0, total: 2 })
      t.same(reply.statements.map(plain).sort(), [
        'select "animals"."id" as "id", cast("animals"."name" as text) as "name", cast("animals"."species" as text) as "species", "animals"."born" as "born", "animals"."weight" as "weight", "animals"."adopted" as "adopted", "animals"."keeper_id" as "keeper", "animals"."sold_from_id" as "sold_from" from "animals" where "animals"."species" = ? order by "animals"."id" asc limit ? offset ?',
        'select count(*) as "total" from "animals" where "animals"."species" = ?',
      ].map(written).sort())
    })

    t.test('each operator', async (t) => {
      const cases: Array<[string, number[]]> = [
        ['filter[species][in]=cat,dog', [1, 2, 3, 5]],
        ['filter[species][ne]=cat', [2, 4, 5, 6]],
        ['filter[born][gte]=2020-01-01', [2, 3, 4, 6]],
        ['filter[born][lt]=2020-01-01', [1, 5]],
        ['filter[weight][gt]=4.5', [2, 5]],
        ['filter[weight][lte]=0.3', [4, 6]],
        ['filter[adopted]=true', [1, 4, 5]],
        ['filter[adopted]=false', [2, 3, 6]],
        ['filter[sold_from][null]=true', [2, 4, 6]],
        ['filter[sold_from][null]=false', [1, 3, 5]],
        ['filter[sold_from]=1', [1, 5]],
        ['filter[keeper][in]=1,3', [1, 3, 4, 6]],
        ['filter[name][contains]=ju', [1, 3, 6]],
        ['filter[name][contains]=JU', [1, 3, 6]],
        ['filter[name][contains]=', [1, 2, 3, 4, 5, 6]],
        ['filter[keeper.name][contains]=costa', [1, 2, 4, 5]],
        ['filter[keeper.vip]=true', [1, 4]],
        ['filter[keeper.shelter.city]=Porto', [2, 5]],
        ['filter[species][in]=cat,dog&filter[born][gte]=2020-01-01', [2, 3]],
        ['filter[species]=cat&filter[keeper.name][contains]=lima&filter[adopted]=false', [3]],
        ['filter[species]=horse', []],
      ]
      for (const [query, expected] of cases) {
        const reply = await get(app, database, `/animals?fields=id&${query}`)
        t.equal(reply.status, 200, query)
        t.same(reply.body, { data: expected.map((id) => ({ id })), limit: 20, offset: 0, total: expected.length }, query)
        t.equal(reply.statements.length, 1, `${query}: the page alone (shorter than its limit, it tells its total), filters through relations add no statement`)
      }
    })

    t.test('contains takes %, _ and \\ literally: an escaped LIKE on PostgreSQL, instr on SQLite and MariaDB', async (t) => {
      for (const [text, expected] of [['%', [4]], ['_', [4]], ['\\', [4]], ['0%_p', [4]], ['%_Pure\\F', [4]], ['u_o', []], ['j%r', []]] as const) {
        const reply = await get(app, database, `/animals?fields=id&filter[name][contains]=${encodeURIComponent(text)}`)
        t.same(ids(reply.body), expected, text)
      }
      const reply = await get(app, database, '/animals?fields=id&filter[name][contains]=%25')
      t.ok(plain(reply.statements[0]!).includes(written(`where ${contains('"animals"."name"')} order by`)), reply.statements[0])
    })

    t.test('a filter through relations is an IN subquery inside the page and count statements', async (t) => {
      const reply = await get(app, database, '/counted?fields=id&filter[keeper.shelter.city]=Porto')
      t.same(reply.body, { data: [{ id: 2 }, { id: 5 }], limit: 20, offset: 0 })
      t.same(reply.statements.map(plain), [
        'select "animals"."id" as "id" from "animals" where "animals"."keeper_id" in (select "keepers"."id" from "keepers" where "keepers"."shelter_id" in (select "shelters"."id" from "shelters" where "shelters"."city" = ?)) order by "animals"."id" asc limit ? offset ?',
      ].map(written))
    })

    t.test("filters through a relation carry the related resource's scope", async (t) => {
      // Tenant 1 sees keepers 1 and 3: Rui Costa (tenant 2) does not exist for it.
      // A full page: the page and its COUNT.
      const reply = await get(app, database, '/animals?fields=id&filter[keeper.name][contains]=costa&limit=2', { 'x-tenant': '1' })
      t.same(reply.body, { data: [{ id: 1 }, { id: 4 }], limit: 2, offset: 0, total: 2 })
      t.equal(reply.statements.length, 2)
      for (const statement of reply.statements) {
        t.ok(plain(statement).includes(written(`"animals"."keeper_id" in (select "keepers"."id" from "keepers" where "keepers"."tenant" = ? and ${contains('"keepers"."name"')})`)), statement)
      }
      const other = await get(app, database, '/animals?fields=id&filter[keeper.name][contains]=costa', { 'x-tenant': '2' })
      t.same(ids(other.body), [2, 5], 'the same statement, another tenant')
    })

    t.test("a scoped resource's list: its scope first, then the filters; templates serve each tenant its rows", async (t) => {
      const app = await build(t, database, {}, (app) => {
        app.expand.routes('/keepers', 'Keeper', { filter: { name: ['contains'], 'shelter.city': ['eq'], vip: ['eq'] }, sort: ['name'], pagination: 'cursor', pageSize: 1 })
      })
      for (let round = 0; round < 2; round++) {
        const one = await get(app, database, '/keepers?filter[name][contains]=a&sort=-name', { 'x-tenant': '1' })
        t.same(one.body.data, [{ id: 3, name: 'Eva Lima', vip: false }])
        t.same(one.statements.map(plain), [
          'select "keepers"."id" as "id", cast("keepers"."name" as text) as "name", "keepers"."vip" as "vip", cast("keepers"."name" as text) as "__expand_key_0", "keepers"."id" as "__expand_key_1" from "keepers" ' +
          `where "keepers"."tenant" = ? and ${contains('"keepers"."name"')} order by "keepers"."name" desc, "keepers"."id" asc limit ?`,
        ].map(written))
        const rest = await get(app, database, `/keepers?filter[name][contains]=a&sort=-name&after=${encodeURIComponent(one.body.next)}`, { 'x-tenant': '1' })
        t.same(rest.body, { data: [{ id: 1, name: 'Ana Costa', vip: true }], limit: 1, next: null, prev: rest.body.prev })
        const two = await get(app, database, '/keepers?filter[name][contains]=a&sort=-name', { 'x-tenant': '2' })
        t.same(two.body, { data: [{ id: 2, name: 'Rui Costa', vip: false }], limit: 1, next: null, prev: null })
        t.same((await get(app, database, '/keepers?filter[shelter.city]=Lisbon&filter[vip]=false', { 'x-tenant': '1' })).body.data, [{ id: 3, name: 'Eva Lima', vip: false }])
        t.same((await get(app, database, '/keepers?filter[shelter.city]=Lisbon', { 'x-tenant': '2' })).body.data, [])
      }
    })

    t.test('expansions and filters together', async (t) => {
      const reply = await get(app, database, '/animals?filter[keeper.vip]=true&expand=keeper.shelter&fields=id,keeper')
      t.same(reply.body, {
        data: [
          { id: 1, keeper: { id: 1, name: 'Ana Costa', vip: true, shelter: { id: 1, city: 'Lisbon' } } },
          { id: 4, keeper: { id: 1, name: 'Ana Costa', vip: true, shelter: { id: 1, city: 'Lisbon' } } },
        ],
        limit: 20,
        offset: 0,
        total: 2,
      })
      t.equal(reply.statements.length, 3, 'page (shorter than its limit: no count), keeper, keeper.shelter')
    })

    t.test('400 FST_EXPAND_BAD_FILTER, before any statement', async (t) => {
      const cases: Array<[string, string]> = [
        ['filter[colour]=red', "Cannot filter Animal by 'colour': filters are species, born, weight, adopted, sold_from, name, keeper, keeper.name, keeper.vip, keeper.shelter.city"],
        ['filter[species][lt]=cat', "Cannot filter Animal by 'species' with 'lt': operators for 'species' are eq, ne, in"],
        ['filter[species][like]=cat', "Cannot filter Animal by 'species' with 'like': operators for 'species' are eq, ne, in"],
        ['filter[born][gte]=2020-13-01', "'filter[born][gte]' must be a date (YYYY-MM-DD), got '2020-13-01'"],
        ['filter[born][gte]=yesterday', "'filter[born][gte]' must be a date (YYYY-MM-DD), got 'yesterday'"],
        ['filter[weight][gt]=heavy', "'filter[weight][gt]' must be a number, got 'heavy'"],
        ['filter[keeper]=1.5', "'filter[keeper]' must be an integer from -9007199254740991 to 9007199254740991, got '1.5'"],
        ['filter[keeper][in]=1,,2', "'filter[keeper][in]' must be an integer from -9007199254740991 to 9007199254740991, got ''"],
        ['filter[adopted]=yes', "'filter[adopted]' must be true or false, got 'yes'"],
        ['filter[sold_from][null]=1', "'filter[sold_from][null]' must be true or false, got '1'"],
        ['filter[species]=cat&filter[species]=dog', "'filter[species]' must be given once, as a string"],
        ['filter[species]=cat&filter[species][eq]=dog', "'filter[species][eq]' is given more than once"],
        ['filter[species]x=cat', "'filter[species]x' is not a filter: write filter[field]=value or filter[field][operator]=value"],
        ['filter[species][in][x]=cat', "'filter[species][in][x]' is not a filter: write filter[field]=value or filter[field][operator]=value"],
        ['filter[]=cat', "'filter[]' is not a filter: write filter[field]=value or filter[field][operator]=value"],
        ['filter=cat', "'filter' is not a filter: write filter[field]=value or filter[field][operator]=value"],
        ['filter[keeper.tenant]=1', "Cannot filter Animal by 'keeper.tenant': filters are species, born, weight, adopted, sold_from, name, keeper, keeper.name, keeper.vip, keeper.shelter.city"],
      ]
      for (const [query, message] of cases) {
        const reply = await get(app, database, `/animals?${query}`)
        t.same(reply.body, badRequest('FST_EXPAND_BAD_FILTER', message), query)
        t.equal(reply.statements.length, 0, `${query}: no statement`)
      }
    })

    t.test('a list without filters or sort fields refuses them rather than ignoring them', async (t) => {
      const app = await build(t, database, {}, (app) => { app.expand.routes('/plain', Animal) })
      t.same((await get(app, database, '/plain?filter[species]=cat')).body, badRequest('FST_EXPAND_BAD_FILTER', "Cannot filter Animal by 'species': this list has no filters"))
      t.same((await get(app, database, '/plain?sort=name')).body, badRequest('FST_EXPAND_BAD_SORT', "Cannot sort Animal by 'name': this list has no sort fields"))
      const plain = await get(app, database, '/plain?fields=id&limit=2&sort=')
      t.same(plain.body, { data: [{ id: 1 }, { id: 2 }], limit: 2, offset: 0, total: 6 })
    })

    t.test('a value the column cannot hold finds no row on every dialect', async (t) => {
      const reply = await get(app, database, '/animals?fields=id&filter[keeper]=3000000000')
      t.same(reply.body, { data: [], limit: 20, offset: 0, total: 0 })
      const cursor = await get(app, database, '/feed?fields=id&filter[keeper][in]=1,3000000000')
      t.same(cursor.body, { data: [{ id: 1 }, { id: 4 }], limit: 2, next: null, prev: null })
    })

    t.test('property: any filter, sort or cursor parameter is a 200, 400 or 403, never a 500', async (t) => {
      const field = fc.constantFrom('species', 'born', 'weight', 'adopted', 'sold_from', 'name', 'keeper', 'keeper.name', 'keeper.vip', 'keeper.shelter.city', 'nope', '', 'keeper.', '[x]')
      const operator = fc.constantFrom('', '[eq]', '[ne]', '[lt]', '[gte]', '[in]', '[null]', '[contains]', '[like]', '[]', '[in][x]')
      const value = fc.oneof(fc.constantFrom('cat', '1', '-1', '0.5', '1e999', '9007199254740993', '3000000000', 'true', 'false', '2020-01-01', '2020-02-30', '', ',', 'a,b', '%', '_', '\\'), fc.string({ maxLength: 6 }))
      const parameter = fc.tuple(field, operator, value).map(([field, operator, value]) => `filter[${field}]${operator}=${encodeURIComponent(value)}`)
      const sortValue = fc.array(fc.constantFrom('born', '-born', 'name', '-weight', 'species', 'id', '', '-'), { maxLength: 3 }).map((keys) => `sort=${keys.join(',')}`)
      const after = fc.constantFrom('', 'after=', 'after=abc', 'after=abc.def', 'after=e30.AAAA')
      const headers = fc.constantFrom({}, { 'x-role': 'guest' }, { 'x-tenant': '2' })
      await fc.assert(fc.asyncProperty(fc.array(parameter, { maxLength: 3 }), fc.option(sortValue), after, fc.constantFrom('/animals', '/feed', '/counted'), headers, async (filters, sortParameter, afterParameter, path, headers) => {
        const query = [...filters, sortParameter ?? '', afterParameter].filter(Boolean).join('&')
        const reply = await app.inject({ url: `${path}?${query}`, headers })
        const { code } = reply.json() as { code?: string }
        if (reply.statusCode === 200) return true
        return (reply.statusCode === 400 && ['FST_EXPAND_BAD_FILTER', 'FST_EXPAND_BAD_SORT', 'FST_EXPAND_BAD_CURSOR'].includes(code ?? '')) ||
          (reply.statusCode === 403 && code === 'FST_EXPAND_FORBIDDEN')
      }), { numRuns: 150 })
      t.pass('150 random queries')
    })

    t.test('403 FST_EXPAND_FORBIDDEN: a filter or sort on a field fieldsFor hides', async (t) => {
      const guest = { 'x-role': 'guest' }
      const forbidden = (message: string) => ({ statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message })
      t.same((await get(app, database, '/animals?filter[born][gte]=2020-01-01', guest)).body, forbidden("Cannot filter by 'born': it is not available to this request"))
      t.same((await get(app, database, '/animals?filter[keeper.vip]=true', guest)).body, forbidden("Cannot filter by 'keeper.vip': it is not available to this request"))
      t.same((await get(app, database, '/animals?sort=weight', guest)).body, forbidden("Cannot sort by 'weight': it is not available to this request"))
      const allowed = await get(app, database, '/animals?filter[keeper.name][contains]=lima&filter[species]=cat', guest)
      t.same(allowed.body, { data: [{ id: 3, name: 'Julia', species: 'cat', keeper: 3 }], limit: 20, offset: 0, total: 1 })
    })
  })

  t.test(`sort on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database)

    t.test('sort=-born,name; the primary key ends every order', async (t) => {
      const reply = await get(app, database, '/animals?fields=id&sort=-born,name')
      t.same(ids(reply.body), [6, 3, 4, 2, 1, 5], '2020-01-01 twice: by name, "100%..." before "Rex"')
      t.match(plain(reply.statements.find((statement) => statement.includes('order by'))!), asWrittenOn(dialect, 'order by "animals"."born" desc, "animals"."name" asc, "animals"."id" asc limit ? offset ?'))
      t.same(ids((await get(app, database, '/animals?fields=id&sort=born')).body), [5, 1, 2, 4, 3, 6], 'ties on born broken by id')
      t.same(ids((await get(app, database, '/animals?fields=id&sort=-weight&limit=2&offset=1')).body), [5, 1])
      t.same(ids((await get(app, database, '/animals?fields=id&sort=')).body), [1, 2, 3, 4, 5, 6], 'empty: primary key order')
      t.same(ids((await get(app, database, '/animals?fields=id&sort=born&filter[species]=dog')).body), [5, 2])
    })

    t.test('400 FST_EXPAND_BAD_SORT', async (t) => {
      const cases: Array<[string, string]> = [
        ['sort=species', "Cannot sort Animal by 'species': sort fields are born, name, weight"],
        ['sort=-nope', "Cannot sort Animal by 'nope': sort fields are born, name, weight"],
        ['sort=born,-born', "'sort' names 'born' more than once"],
        ['sort=born&sort=name', "'sort' must be given once, as a comma-separated list"],
      ]
      for (const [query, message] of cases) {
        const reply = await get(app, database, `/animals?${query}`)
        t.same(reply.body, badRequest('FST_EXPAND_BAD_SORT', message), query)
        t.equal(reply.statements.length, 0)
      }
    })
  })

  t.test(`total: false on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database)
    const reply = await get(app, database, '/counted?fields=id,name&limit=2&offset=1&sort=name')
    // By name: '100%_Pure\\Fun', 'Ajax', 'Julia', 'Juno', 'Rex', 'juniper' (binary order, upper case first).
    t.same(reply.body, { data: [{ id: 5, name: 'Ajax' }, { id: 3, name: 'Julia' }], limit: 2, offset: 1 })
    t.equal(reply.statements.length, 1, 'no COUNT statement')
    t.notMatch(reply.statements[0], /count/)
  })

  t.test(`cursor pages on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database)

    t.test('a walk visits every row once, in order, one statement per page', async (t) => {
      const seen: number[] = []
      let url: string | null = '/feed?fields=id&sort=-born,name'
      let pages = 0
      while (url !== null) {
        const reply = await get(app, database, url)
        t.equal(reply.status, 200)
        t.same(Object.keys(reply.body), ['data', 'limit', 'next', 'prev'])
        t.equal(reply.body.limit, 2)
        t.equal(reply.statements.length, 1, 'no COUNT')
        seen.push(...ids(reply.body))
        pages++
        url = reply.body.next === null ? null : `/feed?fields=id&sort=-born,name&after=${encodeURIComponent(reply.body.next as string)}`
      }
      t.same(seen, [6, 3, 4, 2, 1, 5])
      t.equal(pages, 3, 'the last page ends with next: null')
    })

    t.test('the rows of a cursor page hold the fields asked for, not the cursor columns read with them', async (t) => {
      const database = await openListTables(t, dialect)
      const seen: Array<Record<string, unknown>> = []
      const app = await build(t, database, {}, (app) => {
        app.addHook('preSerialization', async (_request: FastifyRequest, _reply: FastifyReply, payload: { data?: Array<Record<string, unknown>> }) => {
          seen.push(...(payload.data ?? []))
          return payload
        })
      })
      const first = await get(app, database, '/feed?fields=id,name&sort=-born,name')
      const second = await get(app, database, `/feed?fields=id,name&sort=-born,name&after=${encodeURIComponent(first.body.next)}`)
      t.same([...first.body.data, ...second.body.data], [6, 3, 4, 2].map((id) => ({ id, name: byId(id).name })))
      t.same(seen.map((row) => Object.keys(row)), [['id', 'name'], ['id', 'name'], ['id', 'name'], ['id', 'name']])
    })

    // PostgreSQL and MariaDB read a date key as text: the value they compare, whatever the column's type
    // (see test/issues/timestamp-cursors.test.ts).
    const bornKey = onDatabase(dialect, { sqlite: '"animals"."born"', postgres: 'cast("animals"."born" as text)', mariadb: 'cast("animals"."born" as char)' })
    const written = (statement: string) => asWrittenOn(dialect, statement)
    t.test('keyset condition: an OR of ANDs following each key direction', async (t) => {
      const first = await get(app, database, '/feed?fields=id&sort=-born,name')
      const second = await get(app, database, `/feed?fields=id&sort=-born,name&after=${encodeURIComponent(first.body.next)}`)
      t.same(second.statements.map(plain), [
        `select "animals"."id" as "id", ${bornKey} as "__expand_key_0", cast("animals"."name" as text) as "__expand_key_1", "animals"."id" as "__expand_key_2" from "animals" ` +
        'where ("animals"."born" <= ? and ("animals"."born" < ? or ("animals"."born" = ? and "animals"."name" > ?) or ("animals"."born" = ? and "animals"."name" = ? and "animals"."id" > ?))) ' +
        'order by "animals"."born" desc, "animals"."name" asc, "animals"."id" asc limit ?',
      ].map(written))
      t.same(second.body, { data: [{ id: 4 }, { id: 2 }], limit: 2, next: second.body.next, prev: second.body.prev })
    })

    t.test('keyset condition: keys all ascending (the primary key always is) compare as a row value', async (t) => {
      const row = (comparison: string) => '("animals"."born", "animals"."name", "animals"."id") ' + `${comparison} (?, ?, ?)`
      // MariaDB enters no index at a row comparison alone: the bound on the first key it implies goes in front.
      const keyset = (comparison: string) => onDatabase(dialect, {
        sqlite: row(comparison),
        postgres: row(comparison),
        mariadb: `("animals"."born" ${comparison}= ? and ${row(comparison)})`,
      })
      for (const [sort, comparison, expected] of [['born,name', '>', [4, 2]]] as const) {
        const first = await get(app, database, `/feed?fields=id&sort=${sort}`)
        const second = await get(app, database, `/feed?fields=id&sort=${sort}&after=${encodeURIComponent(first.body.next)}`)
        const direction = comparison === '>' ? 'asc' : 'desc'
        t.same(second.statements.map(plain), [
          `select "animals"."id" as "id", ${bornKey} as "__expand_key_0", cast("animals"."name" as text) as "__expand_key_1", "animals"."id" as "__expand_key_2" from "animals" ` +
          `where ${keyset(comparison)} ` +
          `order by "animals"."born" ${direction}, "animals"."name" ${direction}, "animals"."id" asc limit ?`,
        ].map(written), sort)
        t.same(ids(second.body), expected, sort)
      }
    })

    t.test('rows inserted and deleted between pages are neither skipped nor repeated', async (t) => {
      const database = await openListTables(t, dialect)
      const app = await build(t, database)
      const first = await get(app, database, '/feed?fields=id&sort=born&limit=3')
      t.same(ids(first.body), [5, 1, 2])
      // Delete a row already seen and the row the cursor points past; insert one before and one after it.
      await database.db.deleteFrom('animals').where('id', 'in', [1, 2]).execute()
      await database.db.insertInto('animals').values([
        { id: 7, name: 'Early', species: 'cat', born: '2010-01-01', weight: 1, adopted: 0, keeper_id: 1, sold_from_id: null },
        { id: 8, name: 'Late', species: 'cat', born: '2020-01-01', weight: 1, adopted: 0, keeper_id: 1, sold_from_id: null },
      ]).execute()
      const rest = await get(app, database, `/feed?fields=id&sort=born&limit=10&after=${encodeURIComponent(first.body.next)}`)
      t.same(rest.body, { data: [{ id: 4 }, { id: 8 }, { id: 3 }, { id: 6 }], limit: 10, next: null, prev: rest.body.prev }, 'after (2020-01-01, 2): 4 and the new 8, not the earlier 7')
    })

    t.test('400 FST_EXPAND_BAD_CURSOR: altered, or for another sort, filters or route', async (t) => {
      const first = await get(app, database, '/feed?fields=id&sort=name&filter[species][in]=cat,dog')
      const next = first.body.next as string
      const bad = badRequest('FST_EXPAND_BAD_CURSOR', "'after' is not a cursor of this list for this sort and these filters: ask again from the first page")
      // The cursor is nonce, encrypted values and tag (AES-256-GCM): any byte changed fails the tag.
      const bytes = Buffer.from(next, 'base64url')
      const flipped = (at: number) => {
        const copy = Buffer.from(bytes)
        copy[at] = copy[at]! ^ 1
        return copy.toString('base64url')
      }
      const cases: Array<[string, string]> = [
        ['altered nonce', `/feed?sort=name&filter[species][in]=cat,dog&after=${flipped(0)}`],
        ['altered values', `/feed?sort=name&filter[species][in]=cat,dog&after=${flipped(13)}`],
        ['altered tag', `/feed?sort=name&filter[species][in]=cat,dog&after=${flipped(bytes.length - 1)}`],
        ['truncated', `/feed?sort=name&filter[species][in]=cat,dog&after=${bytes.subarray(0, 28).toString('base64url')}`],
        ['not base64url', `/feed?sort=name&filter[species][in]=cat,dog&after=${encodeURIComponent(next + '.')}`],
        ['another sort', `/feed?sort=-name&filter[species][in]=cat,dog&after=${encodeURIComponent(next)}`],
        ['no sort', `/feed?filter[species][in]=cat,dog&after=${encodeURIComponent(next)}`],
        ['other filters', `/feed?sort=name&filter[species][in]=cat&after=${encodeURIComponent(next)}`],
        ['no filters', `/feed?sort=name&after=${encodeURIComponent(next)}`],
        ['garbage', '/feed?after=%%%'],
        ['repeated', `/feed?sort=name&filter[species][in]=cat,dog&after=${encodeURIComponent(next)}&after=${encodeURIComponent(next)}`],
      ]
      for (const [label, url] of cases) {
        const reply = await get(app, database, url)
        t.same(reply.body, bad, label)
        t.equal(reply.statements.length, 0, `${label}: no statement`)
      }
      const same = await get(app, database, `/feed?fields=id&filter[species][in]=cat,dog&sort=name&after=${encodeURIComponent(next)}`)
      t.equal(same.status, 200, 'the same sort and filters, written in another order')
      t.same(ids(same.body), [1, 2], 'Ajax, Julia | Juno, Rex')
    })

    t.test('cursors of another plugin instance are refused unless both share a cursorSecret', async (t) => {
      const cursorSecret = 'a shared secret of 32 characters'
      const apps: FastifyInstance[] = []
      for (let index = 0; index < 3; index++) {
        const other = Fastify()
        await other.register(expandPlugin, { db: database.db, resources: listResources })
        other.expand.routes('/feed', Animal, { sort, pagination: 'cursor', pageSize: 2, ...(index < 2 ? { cursorSecret } : {}) })
        await other.ready()
        t.teardown(() => other.close())
        apps.push(other)
      }
      const next = (await get(apps[0]!, database, '/feed?fields=id')).body.next as string
      const shared = await get(apps[1]!, database, `/feed?fields=id&after=${encodeURIComponent(next)}`)
      t.same(shared.body, { data: [{ id: 3 }, { id: 4 }], limit: 2, next: shared.body.next, prev: shared.body.prev })
      t.equal((await get(apps[2]!, database, `/feed?fields=id&after=${encodeURIComponent(next)}`)).body.code, 'FST_EXPAND_BAD_CURSOR', 'its own random key')
      t.equal((await get(app, database, `/feed?fields=id&after=${encodeURIComponent(next)}`)).body.code, 'FST_EXPAND_BAD_CURSOR')
    })
  })
}

t.test('route options are passed to both routes; a hook that asks finds the request planned', async (t) => {
  const database = await openListTables(t, dialects()[0]!)
  const seen: string[] = []
  const requireToken = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers.authorization !== 'Bearer good') await reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'token needed' })
  }
  const app = await build(t, database, {}, (app) => {
    app.expand.routes('/guarded', Animal, {
      filter: { species: ['eq'] },
      route: {
        onRequest: requireToken,
        preHandler: [async (request) => {
          const { rateLimit } = request.routeOptions.config as { rateLimit?: number }
          seen.push(`${request.routeOptions.url}: ${request.expansion === null ? 'unplanned' : 'planned'}, rateLimit ${rateLimit}`)
        }],
        config: { rateLimit: 5 } as never, // a plugin's setting, as @fastify/rate-limit reads it
        schema: { tags: ['animals'], summary: 'Animals', description: 'The shelter animals' },
      },
    })
    app.get('/open', async () => 'open')
  })
  const unauthorized = { statusCode: 401, error: 'Unauthorized', message: 'token needed' }
  t.same((await get(app, database, '/guarded')).body, unauthorized)
  t.same((await get(app, database, '/guarded/1')).body, unauthorized)
  t.equal(database.statements.length, 0, 'refused before anything runs')
  const headers = { authorization: 'Bearer good' }
  t.same((await get(app, database, '/guarded?fields=id&filter[species]=dog', headers)).body, { data: [{ id: 2 }, { id: 5 }], limit: 20, offset: 0, total: 2 })
  t.same((await get(app, database, '/guarded/2?fields=id,name', headers)).body, { id: 2, name: 'Rex' })
  t.same(seen, ['/guarded: planned, rateLimit 5', '/guarded/:id: planned, rateLimit 5'], 'the request is planned when a hook first asks; config reaches both routes')
  t.equal((await app.inject('/open')).statusCode, 200, 'other routes are not guarded')
})

t.test('route options the generated routes cannot take are refused at startup', async (t) => {
  const database = await openListTables(t, dialects()[0]!)
  const cases: Array<[string, ResourceRoutesOptions, RegExp]> = [
    ['querystring', { route: { schema: { querystring: { type: 'object' } } } as never }, /route\.schema\.querystring: the generated routes own their parameters and responses; route\.schema takes documentation only/],
    ['response', { route: { schema: { response: { 200: {} } } } as never }, /route\.schema\.response/],
    ['params', { route: { schema: { params: {} } } as never }, /route\.schema\.params/],
    ['handler', { route: { handler: () => ({}) } as never }, /route: 'handler' is not passed on to the generated routes/],
    ['url', { route: { url: '/x' } as never }, /route: 'url' is not passed on/],
    ['hook not a function', { route: { onRequest: 'auth' } as never }, /route\.onRequest must be a function or an array of functions/],
    ['config.expandable', { route: { config: { expandable: false } } as never }, /route\.config\.expandable/],
    ['unknown filter field', { filter: { colour: ['eq'] } }, /filter 'colour': Animal has no field 'colour'/],
    ['unknown operator', { filter: { species: ['like' as never] } }, /filter 'species': unknown operator 'like'/],
    ['contains on a number', { filter: { weight: ['contains'] } }, /filter 'weight': 'contains' needs a string field/],
    ['lt on a boolean', { filter: { adopted: ['lt'] } }, /filter 'adopted': 'lt' does not apply to a boolean field/],
    ['through a field that is no relation', { filter: { 'name.x': ['eq'] } }, /filter 'name.x': 'name' is not a relation of Animal/],
    ['no operators', { filter: { species: [] } }, /filter 'species': give an array of operators/],
    ['sort through a field that is no relation', { sort: ['name.x'] }, /sort: 'name.x': 'name' is not a relation of Animal/],
    ['unknown sort', { sort: ['colour'] }, /sort: Animal has no field 'colour'/],
    ['pagination', { pagination: 'pages' as never }, /pagination must be 'offset' or 'cursor'/],
    ['total with cursors', { pagination: 'cursor', total: false }, /total applies to offset pages only/],
    ['short secret', { pagination: 'cursor', cursorSecret: 'short' }, /cursorSecret must be a string or a Buffer of at least 16/],
  ]
  for (const [label, options, message] of cases) {
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: listResources })
    t.throws(() => app.expand.routes('/animals', Animal, options), { code: 'FST_EXPAND_INVALID_OPTION', message }, label)
    await app.close()
  }
})

t.test('a querystring parser that nests brackets (as qs does) gives the same filters', async (t) => {
  const database = await openListTables(t, dialects()[0]!)
  let parsed = 0
  const nested = (text: string): Record<string, unknown> => {
    parsed++
    const query: Record<string, unknown> = {}
    for (const [key, value] of new URLSearchParams(text)) {
      const match = /^filter\[([^\]]+)\](?:\[([^\]]+)\])?$/.exec(key)
      if (match === null) {
        query[key] = value
        continue
      }
      const filter = (query.filter ??= {}) as Record<string, unknown>
      if (match[2] === undefined) filter[match[1]!] = value
      else filter[match[1]!] = { ...(filter[match[1]!] as object | undefined), [match[2]]: value }
    }
    return query
  }
  const app = Fastify({ routerOptions: { querystringParser: nested } })
  await app.register(expandPlugin, { db: database.db, resources: listResources })
  app.expand.routes('/animals', Animal, { filter, sort })
  await app.ready()
  t.teardown(() => app.close())
  const reply = await get(app, database, '/animals?fields=id&filter[species][in]=cat,dog&filter[born][gte]=2020-01-01&filter[adopted]=false')
  t.same(reply.body, { data: [{ id: 2 }, { id: 3 }], limit: 20, offset: 0, total: 2 })
  t.equal(parsed, 1, 'through the nesting parser')
  t.equal((await get(app, database, '/animals?filter[species][lt]=cat')).body.code, 'FST_EXPAND_BAD_FILTER')
})

t.test("onInvalidExpand: 'ignore' drops a hidden filter or sort key", async (t) => {
  const database = await openListTables(t, dialects()[0]!)
  const app = await build(t, database, { onInvalidExpand: 'ignore' })
  const reply = await get(app, database, '/animals?fields=id&filter[born][gte]=2021-01-01&filter[species]=cat&sort=-weight', { 'x-role': 'guest' })
  t.same(reply.body, { data: [{ id: 1 }, { id: 3 }], limit: 20, offset: 0, total: 2 })
})
