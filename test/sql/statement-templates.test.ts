import SQLite from 'better-sqlite3'
import { Kysely, OperationNodeTransformer, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, PrimitiveValueListNode, SqliteDialect, ValueNode, WithSchemaPlugin, type KyselyPlugin, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely'
import t from 'tap'
import { executorPlugins, largestTemplateKeys, padKeys, reusesStatements, StatementTemplates } from '../../plugin/sql/statement-templates.js'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'

interface Tables { pets: { id: number; name: string } }

async function petsDatabase (plugins: KyselyPlugin[] = []): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }), plugins })
  await db.schema.createTable('pets').addColumn('id', 'integer', (column) => column.primaryKey()).addColumn('name', 'text').execute()
  await db.insertInto('pets').values(Array.from({ length: 20 }, (_, index) => ({ id: index + 1, name: `Pet ${index + 1}` }))).execute()
  return db
}

t.test('padKeys repeats the last key up to a power of two', async (t) => {
  t.same(padKeys([]), [])
  t.same(padKeys([7]), [7])
  t.same(padKeys([1, 2]), [1, 2])
  t.same(padKeys([1, 2, 3]), [1, 2, 3, 3])
  t.same(padKeys([5, 4, 3, 2, 1]), [5, 4, 3, 2, 1, 1, 1, 1])
  t.equal(padKeys(Array.from({ length: 100 }, (_, index) => index)).length, 128)
  const exact = [1, 2, 3, 4]
  t.equal(padKeys(exact), exact, 'a power of two is used as it is')
})

t.test('key lists: one Kysely build per site and padded length, the right rows every time', async (t) => {
  const db = await petsDatabase()
  t.teardown(() => db.destroy())
  const templates = new StatementTemplates()
  const site = {}
  let builds = 0
  const byIds = (ids: readonly unknown[], bound = 100) => templates.rowsByKeys(db, site, ids, bound, (keys) => {
    builds++
    return db.selectFrom('pets').select(['id', 'name']).where('id', 'in', keys as number[]).orderBy('id').limit(sql.lit(bound))
  })
  t.same(await byIds([3, 1, 2]), [{ id: 1, name: 'Pet 1' }, { id: 2, name: 'Pet 2' }, { id: 3, name: 'Pet 3' }])
  t.same(await byIds([9, 10, 11, 12]), [9, 10, 11, 12].map((id) => ({ id, name: `Pet ${id}` })), 'four keys: the same padded length')
  t.equal(builds, 1)
  t.same(await byIds([5, 6, 7, 8, 20]), [5, 6, 7, 8, 20].map((id) => ({ id, name: `Pet ${id}` })), 'five keys: padded to eight')
  t.equal(builds, 2)
  t.same(await byIds([99]), [], 'a key with no row')
  t.same(await templates.rowsByKeys(db, {}, [4], 1, (keys) => db.selectFrom('pets').select('name').where('id', 'in', keys as number[]).limit(sql.lit(1))),
    [{ name: 'Pet 4' }], 'another site has statements of its own')
})

t.test('key lists: the bound is a literal of the text, one template per bound', async (t) => {
  const db = await petsDatabase()
  t.teardown(() => db.destroy())
  const templates = new StatementTemplates()
  const site = {}
  let builds = 0
  const texts = new Set<string>()
  const byIds = async (ids: readonly unknown[], bound: number) => (await templates.rowsByKeys(db, site, ids, bound, (keys) => {
    builds++
    const query = db.selectFrom('pets').select('id').where('id', 'in', keys as number[]).orderBy('id').limit(sql.lit(bound))
    texts.add(query.compile().sql)
    return query
  })).map((row) => row.id)
  t.same(await byIds([1, 2, 3, 4], 4), [1, 2, 3, 4], 'a bound equal to a key: a literal, so never taken for it')
  t.same(await byIds([5, 6, 7, 8], 2), [5, 6])
  t.same(await byIds([9, 10, 11, 12], 3), [9, 10, 11])
  t.equal(builds, 3, 'a template per bound')
  t.same(await byIds([3, 2, 1, 1], 3), [1, 2, 3], 'repeated keys under a bound seen before: its template')
  t.equal(builds, 3)
  t.same(await byIds([13, 14, 15, 16], 100), [13, 14, 15, 16])
  t.same([...texts].map((text) => text.replace(/.* limit /, 'limit ')), ['limit 4', 'limit 2', 'limit 3', 'limit 100'])
})

t.test('positional values: a template only from values that tell their positions apart', async (t) => {
  const db = await petsDatabase()
  t.teardown(() => db.destroy())
  const templates = new StatementTemplates()
  const site = {}
  let builds = 0
  const page = (limit: number, offset: number) => templates.rows(db, site, 'page', [limit, offset], ([limit, offset]) => {
    builds++
    return db.selectFrom('pets').select('id').orderBy('id').limit(limit as number).offset(offset as number)
  })
  const ids = async (limit: number, offset: number) => (await page(limit, offset)).map((row) => row.id)
  t.same(await ids(2, 2), [3, 4])
  t.same(await ids(3, 3), [4, 5, 6])
  t.equal(builds, 2, 'limit equal to offset: built every time')
  t.same(await ids(2, 5), [6, 7])
  t.same(await ids(4, 1), [2, 3, 4, 5], 'the template keeps limit and offset apart')
  t.same(await ids(1, 1), [2])
  t.equal(builds, 3, 'built once more, for the template')
})

t.test('a condition written twice: one template where `distinct` names each of its values once', async (t) => {
  const db = await petsDatabase()
  t.teardown(() => db.destroy())
  const templates = new StatementTemplates()
  let builds = 0
  // A page that reads its count under the same condition (as plugin/routes/list-pages.ts writes it): the condition's values twice.
  const page = async (site: object, hidden: string, limit: number, offset: number, distinct: boolean) => {
    const scope = { key: 'name <> ?|name <> ?', values: [hidden, hidden], ...(distinct ? { distinct: [hidden] } : {}) }
    return await templates.rows(db, site, 'page and total', [limit, offset], ([limit, offset]) => {
      builds++
      return db.selectFrom('pets').select((eb) => ['id', eb.selectFrom('pets').select(eb.fn.countAll().as('total')).where('name', '<>', hidden).as('total')])
        .where('name', '<>', hidden).orderBy('id').limit(limit as number).offset(offset as number)
    }, false, scope)
  }
  const told = {}
  t.same(await page(told, 'Pet 1', 2, 0, true), [{ id: 2, total: 19 }, { id: 3, total: 19 }])
  t.same(await page(told, 'Pet 3', 2, 1, true), [{ id: 2, total: 19 }, { id: 4, total: 19 }], 'the template: the other value in both places')
  t.same(await page(told, 'Pet 30', 1, 19, true), [{ id: 20, total: 20 }])
  t.equal(builds, 1, 'built once')
  builds = 0
  const untold = {}
  await page(untold, 'Pet 1', 2, 0, false)
  await page(untold, 'Pet 3', 2, 1, false)
  t.equal(builds, 2, 'without `distinct`, equal values cannot tell their positions: built every time')
})

t.test('key lists longer than largestTemplateKeys: built every time, not padded', async (t) => {
  const db = await petsDatabase()
  t.teardown(() => db.destroy())
  const templates = new StatementTemplates()
  const site = {}
  const texts: string[] = []
  const keys = Array.from({ length: largestTemplateKeys + 1 }, (_, index) => index + 1)
  for (let run = 0; run < 2; run++) {
    const rows = await templates.rowsByKeys(db, site, keys, 100, (keys) => {
      const query = db.selectFrom('pets').select('id').where('id', 'in', keys as number[]).limit(sql.lit(100))
      texts.push(query.compile().sql)
      return query
    })
    t.equal(rows.length, 20)
  }
  t.equal(texts.length, 2, 'built on each run')
  t.equal(texts[0]!.match(/\?/g)?.length, largestTemplateKeys + 1, 'the keys as they are (the bound is a literal)')
})

/** Rewrites every value, as a plugin that encodes values would: compiled parameters are not the values given. */
class NumbersAsText extends OperationNodeTransformer {
  protected override transformValue (node: ValueNode): ValueNode {
    return typeof node.value === 'number' ? ValueNode.create(String(node.value)) : node
  }

  protected override transformPrimitiveValueList (node: PrimitiveValueListNode): PrimitiveValueListNode {
    return PrimitiveValueListNode.create(node.values.map((value) => typeof value === 'number' ? String(value) : value))
  }
}
const numbersAsText: KyselyPlugin = {
  transformQuery: (args: { node: RootOperationNode }) => new NumbersAsText().transformNode(args.node),
  transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => args.result,
}

/** Pet names by ids through one site of new templates, with how many times the statement was built. */
function namesByIds (db: Kysely<Tables>): { byIds: (ids: number[]) => Promise<unknown[]>; builds: () => number } {
  const templates = new StatementTemplates()
  const site = {}
  let builds = 0
  const byIds = (ids: number[]) => templates.rowsByKeys(db, site, ids, 100, (keys) => {
    builds++
    return db.selectFrom('pets').select('name').where('id', 'in', keys as number[]).orderBy('id').limit(sql.lit(100))
  })
  return { byIds, builds: () => builds }
}

t.test('on a Kysely instance with plugins every statement is built and compiled: values rewritten', async (t) => {
  const db = await petsDatabase([numbersAsText])
  t.teardown(() => db.destroy())
  const { byIds, builds } = namesByIds(db)
  t.same(await byIds([1, 2]), [{ name: 'Pet 1' }, { name: 'Pet 2' }])
  t.same(await byIds([3, 4]), [{ name: 'Pet 3' }, { name: 'Pet 4' }])
  t.equal(builds(), 2)
})

t.test('on a Kysely instance with plugins every statement is built and compiled: SQL written from the request', async (t) => {
  // One schema per tenant, chosen per request: the SQL differs although the query does not.
  const raw = new SQLite(':memory:')
  raw.exec("attach ':memory:' as tenant_a; attach ':memory:' as tenant_b")
  for (const tenant of ['tenant_a', 'tenant_b']) raw.exec(`create table ${tenant}.pets (id integer primary key, name text); insert into ${tenant}.pets values (1, '${tenant} secret')`)
  let tenant = 'tenant_a'
  const perTenant: KyselyPlugin = {
    transformQuery: (args) => new WithSchemaPlugin(tenant).transformQuery(args),
    transformResult: async (args) => args.result,
  }
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: raw }), plugins: [perTenant] })
  t.teardown(() => db.destroy())
  const templates = new StatementTemplates()
  const site = {}
  const names = async () => (await templates.rowsByKeys(db, site, [1], 100, (keys) =>
    db.selectFrom('pets').select('name').where('id', 'in', keys as number[]).limit(sql.lit(100)))).map((row) => row.name)
  t.same(await names(), ['tenant_a secret'])
  tenant = 'tenant_b'
  t.same(await names(), ['tenant_b secret'], "the second tenant's rows, not the first's")
})

/**
 * A Kysely instance as a release that changed its internals would show it:
 * `hide` names what is missing. Every other member is the real one, bound to
 * the real instance (Kysely keeps its state in private fields).
 */
function withoutInternals (db: Kysely<Tables>, hide: 'getExecutor' | 'plugins'): Kysely<Tables> {
  const bound = <T extends object>(target: T, replace: (name: string | symbol) => unknown) => new Proxy(target, {
    get (target, name) {
      const replaced = replace(name)
      if (replaced !== bound) return replaced
      const value = Reflect.get(target, name, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return bound(db, (name) => {
    if (name !== 'getExecutor') return bound
    if (hide === 'getExecutor') return undefined
    return () => bound(db.getExecutor(), (inner) => inner === 'plugins' ? undefined : bound)
  })
}

for (const hide of ['getExecutor', 'plugins'] as const) {
  t.test(`a Kysely without ${hide === 'getExecutor' ? 'getExecutor()' : "its executor's plugins"}: every statement is built, rows still right`, async (t) => {
    const real = await petsDatabase()
    t.teardown(() => real.destroy())
    t.same(executorPlugins(real), [], 'the Kysely in use exposes the internal')
    t.equal(reusesStatements(real), true)
    const db = withoutInternals(real, hide)
    t.equal(executorPlugins(db), undefined)
    t.equal(reusesStatements(db), false)
    const { byIds, builds } = namesByIds(db)
    t.same(await byIds([1, 2]), [{ name: 'Pet 1' }, { name: 'Pet 2' }])
    t.same(await byIds([3, 4]), [{ name: 'Pet 3' }, { name: 'Pet 4' }])
    t.same(await byIds([5, 6]), [{ name: 'Pet 5' }, { name: 'Pet 6' }])
    t.equal(builds(), 3, 'built every time: no template is kept')
  })
}

t.test('the plugin warns at startup when its Kysely lacks the internal, and still answers', async (t) => {
  const real = await petsDatabase()
  t.teardown(() => real.destroy())
  const warnings: string[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { warnings.push(JSON.parse(line).msg) } } } })
  t.teardown(() => app.close())
  const Pet = defineResource({ name: 'Pet', table: 'pets', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
  await app.register(expandPlugin, { db: withoutInternals(real, 'getExecutor'), resources: [Pet] })
  app.expand.routes('/pets', Pet)
  await app.ready()
  t.match(warnings, [/getExecutor\(\)\.plugins.*built for every request/])
  for (let run = 0; run < 2; run++) {
    const reply = await app.inject('/pets/2')
    t.equal(reply.body, '{"id":2,"name":"Pet 2"}')
  }
})

t.test('no startup warning on the Kysely in use', async (t) => {
  const db = await petsDatabase()
  t.teardown(() => db.destroy())
  const warnings: string[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { warnings.push(line) } } } })
  t.teardown(() => app.close())
  await app.register(expandPlugin, { db, resources: [] })
  await app.ready()
  t.same(warnings, [])
})

/**
 * A Kysely instance that compiles as PostgreSQL and answers every statement with `rows`, recording each one it runs:
 * a second database for a plugin instance whose `db` is chosen per request.
 */
function recordingPostgres (rows: UnknownRow[], ran: Array<{ sql: string; parameters: readonly unknown[] }>): Kysely<Tables> {
  const connection = {
    async executeQuery<R> (compiled: { sql: string; parameters: readonly unknown[] }): Promise<QueryResult<R>> {
      ran.push({ sql: compiled.sql, parameters: compiled.parameters })
      return { rows: rows as R[] }
    },
    async * streamQuery (): AsyncIterableIterator<QueryResult<never>> {},
  }
  return new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => ({
        init: async () => {},
        acquireConnection: async () => connection,
        beginTransaction: async () => {},
        commitTransaction: async () => {},
        rollbackTransaction: async () => {},
        releaseConnection: async () => {},
        destroy: async () => {},
      }),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
}

t.test('one set of templates, two databases of other dialects: each runs the text written for it', async (t) => {
  const sqlite = await petsDatabase()
  t.teardown(() => sqlite.destroy())
  const ran: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const postgres = recordingPostgres([{ id: 2, name: 'Pet 2' }], ran)
  const templates = new StatementTemplates()
  const site = {}
  const byIds = (db: Kysely<Tables>, ids: readonly unknown[]) => templates.rowsByKeys(db, site, ids, 100, (keys) =>
    db.selectFrom('pets').select(['id', 'name']).where('id', 'in', keys as number[]).orderBy('id').limit(sql.lit(100)))
  const byName = (db: Kysely<Tables>, name: string) => templates.rows(db, site, 'by name', [name], ([value]) =>
    db.selectFrom('pets').select('id').where('name', '=', value as string))
  t.same(await byIds(sqlite, [1, 2]), [{ id: 1, name: 'Pet 1' }, { id: 2, name: 'Pet 2' }], 'SQLite first: its template is kept')
  t.same(await byName(sqlite, 'Pet 3'), [{ id: 3 }])
  t.same(await byIds(postgres, [2, 3]), [{ id: 2, name: 'Pet 2' }])
  t.same(await byName(postgres, 'Pet 2'), [{ id: 2, name: 'Pet 2' }])
  t.same(ran, [
    { sql: 'select "id", "name" from "pets" where "id" in ($1, $2) order by "id" limit 100', parameters: [2, 3] },
    { sql: 'select "id" from "pets" where "name" = $1', parameters: ['Pet 2'] },
  ], "PostgreSQL's numbered parameters, not the SQLite text kept under the same site")
  t.same(await byIds(sqlite, [4, 5]), [{ id: 4, name: 'Pet 4' }, { id: 5, name: 'Pet 5' }], 'and SQLite still runs its own')
  t.same(await byName(sqlite, 'Pet 6'), [{ id: 6 }])
  t.equal(ran.length, 2)
})
