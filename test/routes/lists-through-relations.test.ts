import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { expandOpenApi, type ResourceRoutesOptions } from '../../plugin/index.js'
import { onDatabase } from '../fixtures/databases.js'
import { asWrittenOn, dialects, pageAsSent, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { Person, openRelationTables, relationListResources } from '../fixtures/relation-lists.js'

// Lists filtered through to-many and many-to-many relations, sorted through to-one relations and by nullable
// fields, paged by cursor both ways (docs/lists.md): exact bodies, SQL and statement counts on every dialect.

const filter: ResourceRoutesOptions['filter'] = {
  'pets.species': ['eq', 'in'],
  'pets.name': ['contains'],
  pets: ['exists'],
  'pets.toys.name': ['eq'],
  'pets.tags.name': ['eq'],
  'reports.name': ['eq'],
  'employer.name': ['eq'],
  employer: ['exists', 'null'],
}
const sort = ['name', 'born', 'employer.name', 'manager.name', 'manager.employer.name']

async function build (t: Test, database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  const options = { db: database.db, resources: relationListResources }
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi(options).transform })
  await app.register(expandPlugin, options)
  app.expand.routes('/people', Person, { filter, sort })
  app.expand.routes('/feed', Person, { filter, sort, pagination: 'cursor', pageSize: 2 })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

interface Answer { status: number; body: any; statements: string[]; parameters: unknown[][] }

async function get (app: FastifyInstance, database: TestDatabase, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  database.reset()
  const response = await app.inject({ method: 'GET', url, headers })
  const parameters = database.parameters.map((list) => [...list])
  return { status: response.statusCode, body: response.json(), statements: [...database.statements], parameters }
}

/** PostgreSQL's numbered placeholders as SQLite's, to compare one expected text. */
const plain = (statement: string) => statement.replace(/\$\d+/g, '?')
const ids = (body: { data: Array<{ id: number }> }) => body.data.map((row) => row.id)
const page = (found: number[], total = found.length) => ({ data: found.map((id) => ({ id })), limit: 20, offset: 0, total })

/**
 * The dialect's `contains`, its NULLs-last ordering and its date cursor keys, as each writes them (placeholders as
 * SQLite's, identifiers in double quotes: `statement` quotes them as the dialect does), and the value `contains` binds.
 */
function written (dialect: Dialect) {
  const onSqliteAndMariadb = {
    ascending: (column: string) => `${column} is null asc, ${column} asc`,
    descending: (column: string) => `${column} is null desc, ${column} desc`,
  }
  return {
    statement: (text: string) => asWrittenOn(dialect, text),
    // MariaDB would read every related row for an EXISTS it turns into a semi-join: HAVING keeps it correlated.
    correlated: onDatabase(dialect, { sqlite: '', postgres: '', mariadb: ' having 1' }),
    ...onDatabase(dialect, {
      sqlite: {
        contains: (column: string) => `instr(lower(${column}), lower(?)) > 0`,
        containsValue: (text: string) => text,
        ...onSqliteAndMariadb,
        dateKey: (column: string) => column,
      },
      postgres: {
        contains: (column: string) => `lower(${column}) like lower(?) escape '\\'`,
        containsValue: (text: string) => `%${text}%`,
        ascending: (column: string) => `${column} asc nulls last`,
        descending: (column: string) => `${column} desc nulls first`,
        dateKey: (column: string) => `cast(${column} as text)`,
      },
      mariadb: {
        contains: (column: string) => `instr(cast(lower(${column}) as binary), cast(lower(?) as binary)) > 0`,
        containsValue: (text: string) => text,
        ...onSqliteAndMariadb,
        dateKey: (column: string) => `cast(${column} as char)`,
      },
    }),
  }
}

const pets = '(select "pets".* from "pets" where "pets"."deleted" = ?) as "__expand_filter_0"'
const companies = (alias: string) => `(select "companies".* from "companies" where "companies"."hidden" = ?) as "${alias}"`

for (const dialect of dialects()) {
  t.test(`filters through relations on ${dialect.name}`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const app = await build(t, database)
    const { contains, containsValue, correlated, statement } = written(dialect)

    t.test('conditions on one to-many path hold on the same related row: one EXISTS, in the page statement', async (t) => {
      const both = await get(app, database, '/people?fields=id&filter[pets.species]=cat&filter[pets.name][contains]=ga')
      t.same(both.body, page([1]), "Ana's Gato is a cat whose name holds 'ga'; Bea's Garfield is deleted, outside the pet scope")
      t.same(both.statements.map(plain), [
        `select "people"."id" as "id" from "people" where exists (select 1 as "found" from ${pets} ` +
        'where "__expand_filter_0"."owner_id" = "people"."id" and "__expand_filter_0"."species" = ? and ' +
        `${contains('"__expand_filter_0"."name"')}${correlated}) order by "people"."id" asc limit ? offset ?`,
      ].map(statement), 'one statement: the page tells its own total')
      t.same(both.parameters, [[0, 'cat', containsValue('ga'), 20, 0]])
      const apart = await get(app, database, '/people?fields=id&filter[pets.species]=cat&filter[pets.name][contains]=rex')
      t.same(apart.body, page([]), 'Ana has a cat and a dog named Rex, but no pet is both')
    })

    t.test('a parent appears once, total counts parents, expanded arrays are not narrowed', async (t) => {
      const found = await get(app, database, '/people?expand=pets&fields=id,pets.name&filter[pets.species][in]=cat&filter[pets.toys.name]=mouse&limit=1')
      t.same(found.body, { data: [{ id: 1, pets: [{ name: 'Gato' }, { name: 'Rex' }] }], limit: 1, offset: 0, total: 1 })
      t.equal(found.statements.length, 3, 'the page, its COUNT, the pets')
      const twice = await get(app, database, '/people?fields=id&filter[pets.species][in]=cat,dog&limit=2')
      t.same(twice.body, { data: [{ id: 1 }, { id: 3 }], limit: 2, offset: 0, total: 3 }, 'Ana has a cat and a dog: once')
      const count = statement('select count(*) as "total" from "people" where exists (select 1 as "found" from (select "pets".* from "pets"')
      // After the page; in one wave, the pets' statement (sent with the page) may end before or after it.
      const counted = found.statements.map(plain).find((text) => text.startsWith(statement('select count(*)')))
      t.equal(counted?.slice(0, count.length), count, 'the COUNT, the same EXISTS')
    })

    t.test('exists and not exists, in the related scope', async (t) => {
      t.same((await get(app, database, '/people?fields=id&filter[pets][exists]=true')).body, page([1, 2, 3, 5]))
      const none = await get(app, database, '/people?fields=id&filter[pets][exists]=false')
      t.same(none.body, page([4]), "Bea's only visible pet is Goldie: Dora alone has none")
      t.same(none.statements.map(plain), [
        `select "people"."id" as "id" from "people" where not exists (select 1 as "found" from ${pets} ` +
        `where "__expand_filter_0"."owner_id" = "people"."id"${correlated}) order by "people"."id" asc limit ? offset ?`,
      ].map(statement))
      const noEmployer = await get(app, database, '/people?fields=id&filter[employer][exists]=false')
      t.same(noEmployer.body, page([3, 4]), "Caio's employer is hidden: for this request it does not exist; Dora has none")
      t.same((await get(app, database, '/people?fields=id&filter[employer][null]=true')).body, page([4]), 'the key itself is still the row\'s data')
      t.same((await get(app, database, '/people?fields=id&filter[employer][exists]=true')).body, page([1, 2, 5]))
    })

    t.test('deeper paths: to-many then to-many, to-many then many-to-many, a relation to the same table', async (t) => {
      const toys = await get(app, database, '/people?fields=id&filter[pets.toys.name]=ball')
      t.same(toys.body, page([1]), "Rex's ball; Garfield's ball belongs to a deleted pet")
      t.same(toys.statements.map(plain), [
        `select "people"."id" as "id" from "people" where exists (select 1 as "found" from ${pets} ` +
        'where "__expand_filter_0"."owner_id" = "people"."id" and exists (select 1 as "found" from "toys" as "__expand_filter_1" ' +
        `where "__expand_filter_1"."pet_id" = "__expand_filter_0"."id" and "__expand_filter_1"."name" = ?${correlated})${correlated}) order by "people"."id" asc limit ? offset ?`,
      ].map(statement))
      const tags = await get(app, database, '/people?fields=id&filter[pets.tags.name]=calm')
      t.same(tags.body, page([1, 5]))
      t.same(tags.statements.map(plain), [
        `select "people"."id" as "id" from "people" where exists (select 1 as "found" from ${pets} ` +
        'where "__expand_filter_0"."owner_id" = "people"."id" and exists (select 1 as "found" from "pet_tags" as "__expand_filter_1_through" ' +
        'inner join (select "tags".* from "tags" where "tags"."secret" = ?) as "__expand_filter_1" on "__expand_filter_1"."id" = "__expand_filter_1_through"."tag_id" ' +
        `where "__expand_filter_1_through"."pet_id" = "__expand_filter_0"."id" and "__expand_filter_1"."name" = ?${correlated})${correlated}) ` +
        'order by "people"."id" asc limit ? offset ?',
      ].map(statement))
      t.same((await get(app, database, '/people?fields=id&filter[pets.tags.name]=vip')).body, page([]), 'a secret tag matches no request')
      const reports = await get(app, database, '/people?fields=id&filter[reports.name]=Edu')
      t.same(reports.body, page([3]), 'Edu reports to Caio: the related people are read under an alias, not as the outer row')
      t.same(reports.statements.map(plain), [
        'select "people"."id" as "id" from "people" where exists (select 1 as "found" from "people" as "__expand_filter_0" ' +
        `where "__expand_filter_0"."manager_id" = "people"."id" and "__expand_filter_0"."name" = ?${correlated}) order by "people"."id" asc limit ? offset ?`,
      ].map(statement))
      t.same((await get(app, database, '/people?fields=id&filter[employer.name]=Shadow')).body, page([]), 'a hidden company matches nothing')
    })

    t.test('what the caller may not name, and what the route does not declare', async (t) => {
      const guest = { 'x-role': 'guest' }
      t.same((await get(app, database, '/people?filter[pets.species]=cat', guest)).body, {
        statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message: "Cannot filter by 'pets.species': it is not available to this request",
      })
      t.equal((await get(app, database, '/people?filter[pets.toys.name]=ball', guest)).status, 200, 'a path of visible fields')
      const undeclared = await get(app, database, '/people?filter[pets.toys.name][contains]=b')
      t.equal(undeclared.status, 400)
      t.equal(undeclared.body.code, 'FST_EXPAND_BAD_FILTER')
      t.equal((await get(app, database, '/people?filter[reports]=1')).body.code, 'FST_EXPAND_BAD_FILTER')
      t.same((await get(app, database, '/people?filter[pets][exists]=yes')).body, {
        statusCode: 400, code: 'FST_EXPAND_BAD_FILTER', error: 'Bad Request', message: "'filter[pets][exists]' must be true or false, got 'yes'",
      })
    })
  })

  t.test(`sort through to-one relations and by nullable fields on ${dialect.name}`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const app = await build(t, database)
    const { ascending, descending, statement } = written(dialect)
    // Employers: Ana Zeta, Bea Acme, Caio Shadow (hidden: NULL), Dora none (NULL), Edu Acme.
    const employer = await get(app, database, '/people?fields=id&sort=employer.name')
    t.same(ids(employer.body), [2, 5, 1, 3, 4], 'NULL after every value ascending, the primary key breaking ties')
    // A page without filters: in one wave its statement reads its COUNT (its answer dropped, the page is short).
    const page = (text: string) => pageAsSent(dialect, text, 'select count(*) as "total" from "people"')
    t.same(employer.statements.map(plain), [
      page(`select "people"."id" as "id" from "people" left join ${companies('__expand_sort_0')} on "__expand_sort_0"."id" = "people"."employer_id" ` +
        `order by ${ascending('"__expand_sort_0"."name"')}, "people"."id" asc limit ? offset ?`),
    ].map(statement))
    t.same(employer.parameters, [[0, 20, 0]], 'the joined scope binds first (after the count\'s, which has no values)')
    t.same(ids((await get(app, database, '/people?fields=id&sort=-employer.name')).body), [3, 4, 1, 2, 5], 'NULL before every value descending')
    const born = await get(app, database, '/people?fields=id&sort=-born')
    t.same(ids(born.body), [2, 5, 1, 4, 3])
    t.same(born.statements.map(plain), [page(`select "people"."id" as "id" from "people" order by ${descending('"people"."born"')}, "people"."id" asc limit ? offset ?`)].map(statement))
    t.same(ids((await get(app, database, '/people?fields=id&sort=born')).body), [3, 1, 4, 2, 5])
    // Managers' employers: Bea->Ana Zeta, Caio->Ana Zeta, Dora->Bea Acme, Edu->Caio hidden, Ana none.
    const chain = await get(app, database, '/people?fields=id&sort=manager.employer.name,-name')
    t.same(ids(chain.body), [4, 3, 2, 5, 1])
    t.same(chain.statements.map(plain), [
      page('select "people"."id" as "id" from "people" left join "people" as "__expand_sort_1" on "__expand_sort_1"."id" = "people"."manager_id" ' +
        `left join ${companies('__expand_sort_2')} on "__expand_sort_2"."id" = "__expand_sort_1"."employer_id" ` +
        `order by ${ascending('"__expand_sort_2"."name"')}, "people"."name" desc, "people"."id" asc limit ? offset ?`),
    ].map(statement), 'one join per relation on the path, a relation to the same table under its alias')
    t.same((await get(app, database, '/people?fields=id&sort=born', { 'x-role': 'guest' })).body, {
      statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message: "Cannot sort by 'born': it is not available to this request",
    })
    t.same(ids((await get(app, database, '/people?fields=id&sort=employer.name', { 'x-role': 'guest' })).body), [2, 5, 1, 3, 4])
  })

  t.test(`cursor pages both ways on ${dialect.name}`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const app = await build(t, database)
    const { ascending, descending, dateKey, statement } = written(dialect)
    const walk = async (query: string) => {
      const pages: Array<{ ids: number[]; next: string | null; prev: string | null }> = []
      let url: string | undefined = `/feed?fields=id&${query}`
      while (url !== undefined) {
        const { body } = await get(app, database, url)
        pages.push({ ids: ids(body), next: body.next, prev: body.prev })
        url = body.next === null ? undefined : `/feed?fields=id&${query}&after=${body.next}`
      }
      const back: number[][] = [pages[pages.length - 1]!.ids]
      let before = pages[pages.length - 1]!.prev
      while (before !== null) {
        const { body } = await get(app, database, `/feed?fields=id&${query}&before=${before}`)
        back.unshift(ids(body))
        before = body.prev
      }
      return { forward: pages.map((one) => one.ids), back, prevs: pages.map((one) => one.prev === null) }
    }
    for (const [query, expected] of [
      ['sort=-born', [[2, 5], [1, 4], [3]]],
      ['sort=born', [[3, 1], [4, 2], [5]]],
      ['sort=employer.name', [[2, 5], [1, 3], [4]]],
      ['sort=-employer.name,-name', [[4, 3], [1, 5], [2]]],
      ['sort=manager.name&filter[pets][exists]=true', [[2, 3], [5, 1]]],
    ] as const) {
      const { forward, back, prevs } = await walk(query)
      t.same(forward, expected, `${query}: forward`)
      t.same(back, expected, `${query}: back from the last page, the same pages`)
      t.same(prevs, expected.map((_page, index) => index === 0), `${query}: prev is null on the first page only`)
    }

    const first = await get(app, database, '/feed?fields=id&sort=-born')
    t.same(first.statements.map(plain), [
      `select "people"."id" as "id", ${dateKey('"people"."born"')} as "__expand_key_0", "people"."id" as "__expand_key_1" from "people" ` +
      `order by ${descending('"people"."born"')}, "people"."id" asc limit ?`,
    ].map(statement))
    const second = await get(app, database, `/feed?fields=id&sort=-born&after=${first.body.next}`)
    t.same(second.statements.map(plain), [
      `select "people"."id" as "id", ${dateKey('"people"."born"')} as "__expand_key_0", "people"."id" as "__expand_key_1" from "people" ` +
      'where ("people"."born" is not null or ("people"."born" is null and "people"."id" > ?)) ' +
      `order by ${descending('"people"."born"')}, "people"."id" asc limit ?`,
    ].map(statement), 'after the last NULL of a descending key: every value, then the NULLs past the key')
    t.same(second.parameters, [[5, 3]])
    const back = await get(app, database, `/feed?fields=id&sort=-born&before=${second.body.prev}`)
    t.same(back.body, { data: [{ id: 2 }, { id: 5 }], limit: 2, next: back.body.next, prev: null })
    t.same(back.statements.map(plain), [
      `select "people"."id" as "id", ${dateKey('"people"."born"')} as "__expand_key_0", "people"."id" as "__expand_key_1" from "people" ` +
      'where (("people"."born" > ? or "people"."born" is null) or ("people"."born" = ? and "people"."id" < ?)) ' +
      `order by ${ascending('"people"."born"')}, "people"."id" desc limit ?`,
    ].map(statement), 'the page before Ana (1990-01-01, 1) is the page after her in the reversed order, NULL the largest value, read backwards')
    t.same(back.parameters, [['1990-01-01', '1990-01-01', 1, 3]])
    t.same((await get(app, database, `/feed?fields=id&sort=-born&after=${back.body.next}`)).body.data, [{ id: 1 }, { id: 4 }])

    t.same((await get(app, database, `/feed?after=${first.body.next}&before=${first.body.next}&sort=-born`)).body, {
      statusCode: 400, code: 'FST_EXPAND_BAD_CURSOR', error: 'Bad Request', message: "'after' and 'before' together: a page follows one cursor, give one of them",
    })
    t.equal((await get(app, database, `/feed?sort=born&before=${first.body.next}`)).body.code, 'FST_EXPAND_BAD_CURSOR', 'another sort')

    // Rows removed between requests: the page after the cursor is empty, and still leads back.
    const start = await get(app, database, '/feed?fields=id&sort=name')
    t.same(ids(start.body), [1, 2])
    await database.db.deleteFrom('people').where('id', '>', 2).execute()
    const empty = await get(app, database, `/feed?fields=id&sort=name&after=${start.body.next}`)
    t.same(empty.body, { data: [], limit: 2, next: null, prev: empty.body.prev })
    t.type(empty.body.prev, 'string')
    const again = await get(app, database, `/feed?fields=id&sort=name&before=${empty.body.prev}`)
    t.same(again.body, { data: [{ id: 1 }, { id: 2 }], limit: 2, next: again.body.next, prev: null }, 'the cursor\'s own row comes back')
  })
}

t.test('startup errors name the mistake', async (t) => {
  const [sqlite] = dialects()
  const database = await openRelationTables(t, sqlite!)
  const attempt = async (options: ResourceRoutesOptions) => {
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: relationListResources })
    try {
      app.expand.routes('/people', Person, options)
      return 'registered'
    } catch (error) {
      return (error as Error).message
    } finally {
      await app.close()
    }
  }
  t.equal(await attempt({ sort: ['pets.name'] }), "expand.routes('/people'): sort: 'pets.name' goes through 'pets', a to-many relation: " +
    'a row has many related rows, so none of their values orders it (sort through to-one relations only)')
  t.equal(await attempt({ filter: { name: ['exists'] } }), "expand.routes('/people'): filter 'name': 'exists' needs a relation to a table whose keys the plugin knows, and 'name' is not one")
  t.equal(await attempt({ filter: { pets: ['eq'] } }), "expand.routes('/people'): filter 'pets': 'pets' is not a column of Person's table")
  t.equal(await attempt({ filter: { 'name.x': ['eq'] } }), "expand.routes('/people'): filter 'name.x': 'name' is not a relation of Person to a table " +
    'whose keys the plugin knows (a to-one column, a to-many foreignKey, or through)')
  t.equal(await attempt({ sort: ['employer.nope'] }), "expand.routes('/people'): sort: Company has no field 'employer.nope'")
  t.equal(await attempt({ filter: { 'pets.toys': ['exists'], 'employer.name': ['eq'] }, sort: ['manager.manager.born'] }), 'registered')
})

t.test('the document lists the new parameters with their types', async (t) => {
  const [sqlite] = dialects()
  const database = await openRelationTables(t, sqlite!)
  const app = await build(t, database)
  const doc = app.swagger() as Record<string, any>
  const parameter = (path: string, name: string) => doc.paths[path].get.parameters.find((one: any) => one.in === 'query' && one.name === name)
  t.same(parameter('/people', 'filter[pets][exists]').schema, { type: 'boolean' })
  t.equal(parameter('/people', 'filter[pets][exists]').description, 'true: at least one pets row this caller may see; false: none')
  t.same(parameter('/people', 'filter[pets.species]').schema, { type: 'string', maxLength: 1000 })
  t.equal(parameter('/feed', 'before').schema.type, 'string')
  t.equal(parameter('/people', 'before'), undefined, 'offset pages take no cursor')
  const sortPattern = new RegExp(parameter('/people', 'sort').schema.pattern)
  t.ok(sortPattern.test('-employer.name,manager.employer.name'))
  t.notOk(sortPattern.test('employerXname'), 'the dots of a path are literal')
  const cursorPage = doc.paths['/feed'].get.responses['200'].content['application/json'].schema
  t.same(cursorPage.required, ['data', 'limit', 'next', 'prev'])
  t.same(cursorPage.properties.prev.type, ['string', 'null'])
})

t.test('explain names the indexes that serve a page', async (t) => {
  const [sqlite] = dialects()
  const database = await openRelationTables(t, sqlite!)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: relationListResources })
  const seen: unknown[] = []
  app.expand.routes('/people', Person, {
    filter: { ...filter, name: ['eq', 'contains'], id: ['in'] },
    sort,
    pagination: 'cursor',
    route: { preHandler: async (request) => { seen.push(app.expand.explain(request).list?.indexes) } },
  })
  await app.ready()
  t.teardown(() => app.close())
  for (const [query, indexes] of [
    ['filter[pets.species]=cat&sort=name', ['pets (owner_id)', 'pets (species)', 'people (name, id)']],
    ['filter[pets.tags.name]=calm&filter[pets][exists]=true', ['pets (owner_id)', 'pet_tags (pet_id, tag_id)', 'tags (name)']],
    ['filter[reports.name]=Edu&filter[name][contains]=a&filter[id][in]=1,2', ['people (manager_id)', 'people (name)']],
    ['filter[employer.name]=Acme&sort=-employer.name', ['companies (name)']],
    ['', []],
  ] as const) {
    seen.length = 0
    t.equal((await app.inject(`/people?${query}`)).statusCode, 200, query)
    t.same(seen, [indexes], query)
  }
})
