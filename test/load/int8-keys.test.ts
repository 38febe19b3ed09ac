import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'

// Keys past 2^53, as a distributed engine speaking PostgreSQL makes them
// (unique_rowid() and the like give int8 values near 2^60): declared as
// strings, they are written, looked up, matched between parent and child and
// paged by cursor exactly, on PostgreSQL, whose driver returns an int8 as its
// decimal text. 2^53 and 2^53 + 1 are one JavaScript number, and two keys here.

const Account = defineResource({
  name: 'Account',
  table: 'accounts',
  schema: Type.Object({ id: Type.String(), name: Type.String(), orders: Type.Array(Type.String()) }),
  fields: ['id', 'name', 'orders'],
  expandable: { orders: [(): AnyResource => Order, { many: true, foreignKey: 'account_id' }] },
})

const Order = defineResource({
  name: 'Order',
  table: 'orders',
  schema: Type.Object({ id: Type.String(), total: Type.Integer(), account: Type.String() }),
  fields: ['id', 'total', 'account'],
  columns: { account: 'account_id' },
  expandable: { account: Account },
})

const twoTo53 = '9007199254740992'
const twoTo53Plus1 = '9007199254740993'
const near60 = ['1152921504606846977', '1152921504606846978', '1152921504606846979']

/** Two accounts keyed 2^53 and 2^53 + 1, and three orders keyed near 2^60: the odd account has two. */
async function createAccounts (db: Kysely<any>): Promise<void> {
  await sql`create table accounts (id bigint primary key, name text not null)`.execute(db)
  await sql`create table orders (id bigint primary key, total integer not null, account_id bigint not null references accounts (id))`.execute(db)
  await sql`insert into accounts (id, name) values (${twoTo53}, 'Even'), (${twoTo53Plus1}, 'Odd')`.execute(db)
  await sql`insert into orders (id, total, account_id) values
    (${near60[0]}, 10, ${twoTo53Plus1}), (${near60[1]}, 20, ${twoTo53}), (${near60[2]}, 30, ${twoTo53Plus1})`.execute(db)
}

const postgres = process.env.DATABASE_URL ? dialects().find((dialect) => dialect.name === 'postgres') : undefined

/** An app over a PostgreSQL database of its own holding the accounts, with the routes `routes` adds. */
async function accountsApp (
  t: Test, routes: (app: FastifyInstance) => void, resources: AnyResource[] = [Account, Order]
): Promise<{ app: FastifyInstance; database: TestDatabase }> {
  const database = await postgres!.open()
  t.teardown(() => database.close())
  await createAccounts(database.db)
  const app: FastifyInstance = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  routes(app)
  await app.ready()
  t.teardown(() => app.close())
  return { app, database }
}

t.test('int8 keys past 2^53, declared as strings, on PostgreSQL', { skip: postgres === undefined ? 'needs PostgreSQL: set DATABASE_URL' : false }, async (t) => {
  const { app } = await accountsApp(t, (app) => {
    app.expand.routes('/accounts', Account, { pagination: 'cursor', cursorSecret: 'a cursor secret of 32 characters' })
    app.expand.routes('/orders', Order)
  })
  const get = async (url: string) => {
    const response = await app.inject(url)
    return { status: response.statusCode, body: response.json() as unknown }
  }

  const odd = { id: twoTo53Plus1, name: 'Odd', orders: [near60[0], near60[2]] }
  const even = { id: twoTo53, name: 'Even', orders: [near60[1]] }
  t.strictSame(await get(`/accounts/${twoTo53Plus1}`), { status: 200, body: odd }, 'a detail by a key past 2^53, with its own children only')
  t.strictSame(await get(`/accounts/${twoTo53}`), { status: 200, body: even }, 'and its neighbour, one JavaScript number with it')
  t.strictSame(await get(`/orders/${near60[1]}?expand=account`), {
    status: 200,
    body: { id: near60[1], total: 20, account: even },
  }, 'a to-one through an int8 column')
  t.strictSame(await get(`/accounts/${twoTo53Plus1}?expand=orders&fields=id,orders.id,orders.total`), {
    status: 200,
    body: { id: twoTo53Plus1, orders: [{ id: near60[0], total: 10 }, { id: near60[2], total: 30 }] },
  }, 'a to-many through an int8 foreign key')
  t.strictSame(await get('/accounts/9007199254740994'), {
    status: 404,
    body: { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'Account 9007199254740994 not found' },
  })

  // Cursor pages by the key, both ways: each page continues from the exact key at its edge.
  type Page = { data: unknown[], limit: number, next: string | null, prev: string | null }
  const page = async (url: string) => (await get(url)).body as Page
  const first = await page('/accounts?limit=1&fields=id')
  t.strictSame(first.data, [{ id: twoTo53 }])
  t.equal(first.prev, null)
  const second = await page(`/accounts?limit=1&fields=id&after=${encodeURIComponent(first.next!)}`)
  t.strictSame([second.data, second.next], [[{ id: twoTo53Plus1 }], null], 'the second key, then the end')
  const back = await page(`/accounts?limit=1&fields=id&before=${encodeURIComponent(second.prev!)}`)
  t.strictSame(back.data, [{ id: twoTo53 }], 'and back before it')
})

t.test('int8 keys declared as strings, in one statement on PostgreSQL: each relation reads its parents\' keys as their columns hold them', { skip: postgres === undefined ? 'needs PostgreSQL: set DATABASE_URL' : false }, async (t) => {
  const { app, database } = await accountsApp(t, (app) => app.expand.routes('/accounts', Account))

  // The keys are read as text (declared strings); in the combined statement each relation reads its parents' keys
  // from their source as the column holds them (int8), beside their text, so the key columns' indexes serve and
  // PostgreSQL compares int8 with int8: one statement on every request, each relation read through its source.
  const url = '/accounts?expand=orders.account&fields=id,orders.id,orders.account.name'
  const even = { name: 'Even' }
  const odd = { name: 'Odd' }
  const data = [
    { id: twoTo53, orders: [{ id: near60[1], account: even }] },
    { id: twoTo53Plus1, orders: [{ id: near60[0], account: odd }, { id: near60[2], account: odd }] },
  ]
  const body = { data, limit: 20, offset: 0, total: 2 }
  const keys = (source: number, name: string) =>
    `any(array(select distinct "__expand_source_${source}"."__expand_native_${name}" as "key" from "__expand_source_${source}"))`
  // Each key beside its text as its column holds it, read by the level below; never among the part's values.
  const sources = [
    'select cast("accounts"."id" as text) as "id", "accounts"."id" as "__expand_native_id" from "accounts" order by "accounts"."id" limit $1 offset $2',
    'select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "account", ' +
      'cast("orders"."account_id" as text) as "__expand_parent", "orders"."account_id" as "__expand_native_account" from "orders" ' +
      `where "orders"."account_id" = ${keys(0, 'id')} order by "orders"."account_id", "orders"."id" limit 16384`,
    `select cast("accounts"."id" as text) as "id", cast("accounts"."name" as text) as "name" from "accounts" where "accounts"."id" = ${keys(1, 'account')}`,
  ]
  const opening = `with ${sources.map((source, index) => `"__expand_source_${index}" as (${source})`).join(', ')} select `
  for (const request of [1, 2, 3]) {
    database.reset()
    const response = await app.inject(url)
    t.strictSame([response.statusCode, response.json()], [200, body], `request ${request}: the same body`)
    t.equal(database.sent.length, 1, `request ${request}: one statement`)
    t.equal(database.sent[0]!.slice(0, opening.length), opening, 'each relation read through its source')
    t.notMatch(database.sent[0], /"__expand_part"\."__expand_native_/, 'the parts: their values alone')
    t.equal(database.statements.length, 3)
  }
})

t.test('int8 keys declared as strings, in one statement on PostgreSQL: ids and aggregates read their keys as their columns hold them', { skip: postgres === undefined ? 'needs PostgreSQL: set DATABASE_URL' : false }, async (t) => {
  const Tally = defineResource({
    name: 'Tally',
    table: 'accounts',
    schema: Type.Object({ id: Type.String(), orders: Type.Array(Type.String()) }),
    fields: ['id', 'orders'],
    expandable: { orders: [Order, { many: true, foreignKey: 'account_id' }] },
    aggregates: { order_count: { count: 'orders' } },
  })
  const { app, database } = await accountsApp(t, (app) => app.expand.routes('/tallies', Tally), [Account, Order, Tally])
  const data = [{ id: twoTo53, orders: [near60[1]], order_count: 1 }, { id: twoTo53Plus1, orders: [near60[0], near60[2]], order_count: 2 }]
  for (const request of [1, 2]) {
    database.reset()
    const response = await app.inject('/tallies?fields=id,orders,order_count')
    t.strictSame([response.statusCode, response.json()], [200, { data, limit: 20, offset: 0, total: 2 }], `request ${request}: the same body`)
    t.equal(database.sent.length, 1, `request ${request}: one statement`)
    t.match(database.sent[0], /^with "__expand_source_0" as \(select cast\("accounts"\."id" as text\) as "id", "accounts"\."id" as "__expand_native_id" from/)
    t.equal(database.sent[0]!.split('"__expand_source_0"."__expand_native_id"').length, 3, 'the ids\' and the count\'s keys, as their column holds them')
  }
})

t.test('uuid keys declared as strings, in one statement on PostgreSQL', { skip: postgres === undefined ? 'needs PostgreSQL: set DATABASE_URL' : false }, async (t) => {
  const Team = defineResource({
    name: 'Team',
    table: 'teams',
    schema: Type.Object({ id: Type.String(), name: Type.String(), members: Type.Array(Type.String()) }),
    fields: ['id', 'name', 'members'],
    expandable: { members: [(): AnyResource => Member, { many: true, foreignKey: 'team_id' }] },
  })
  const Member = defineResource({
    name: 'Member',
    table: 'members',
    schema: Type.Object({ id: Type.String(), name: Type.String(), team: Type.String() }),
    fields: ['id', 'name', 'team'],
    columns: { team: 'team_id' },
    expandable: { team: Team },
  })
  const database = await postgres!.open()
  t.teardown(() => database.close())
  const { db } = database
  await sql`create table teams (id uuid primary key, name text not null)`.execute(db)
  await sql`create table members (id uuid primary key, name text not null, team_id uuid not null references teams (id))`.execute(db)
  const teams = ['0b7e4c1a-5d2f-4e8a-9c3b-1f2e3d4c5b6a', 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b']
  const members = ['11111111-2222-4333-8444-555555555555', '66666666-7777-4888-8999-aaaaaaaaaaaa', 'bbbbbbbb-cccc-4ddd-8eee-ffffffffffff']
  await sql`insert into teams (id, name) values (${teams[0]}, 'Blue'), (${teams[1]}, 'Red')`.execute(db)
  await sql`insert into members (id, name, team_id) values
    (${members[0]}, 'Ann', ${teams[0]}), (${members[1]}, 'Bob', ${teams[1]}), (${members[2]}, 'Cy', ${teams[1]})`.execute(db)
  const app: FastifyInstance = Fastify()
  await app.register(expandPlugin, { db, resources: [Team, Member] })
  app.expand.routes('/teams', Team)
  await app.ready()
  t.teardown(() => app.close())

  const url = '/teams?expand=members.team&fields=name,members.name,members.team.name'
  const data = [
    { name: 'Blue', members: [{ name: 'Ann', team: { name: 'Blue' } }] },
    { name: 'Red', members: [{ name: 'Bob', team: { name: 'Red' } }, { name: 'Cy', team: { name: 'Red' } }] },
  ]
  for (const request of [1, 2, 3]) {
    database.reset()
    const response = await app.inject(url)
    t.strictSame([response.statusCode, response.json()], [200, { data, limit: 20, offset: 0, total: 2 }], `request ${request}: the same body`)
    t.equal(database.sent.length, 1, `request ${request}: one statement`)
    t.match(database.sent[0], /^with "__expand_source_0" as /, 'read through the sources')
  }
})

t.test('int8 keys declared as strings below a relation with a limit, on PostgreSQL: in one statement, and in the wave\'s statements sent apart', { skip: postgres === undefined ? 'needs PostgreSQL: set DATABASE_URL' : false }, async (t) => {
  const Ledger = defineResource({
    name: 'Ledger',
    table: 'accounts',
    schema: Type.Object({ id: Type.String(), latest: Type.Array(Type.String()) }),
    fields: ['id', 'latest'],
    expandable: { latest: [Order, { many: true, foreignKey: 'account_id', orderBy: '-id', limit: 1 }] },
  })
  const { app, database } = await accountsApp(t, (app) => app.expand.routes('/ledgers', Ledger), [Account, Order, Ledger])

  // The orders come numbered per account from a derived table; the key the level below reads (the order's account)
  // goes through that table as its column holds it, so that the accounts' statement compares int8 with int8.
  const url = '/ledgers?expand=latest.account&fields=id,latest.id,latest.account.name'
  const data = [
    { id: twoTo53, latest: [{ id: near60[1], account: { name: 'Even' } }] },
    { id: twoTo53Plus1, latest: [{ id: near60[2], account: { name: 'Odd' } }] },
  ]
  const numbered = 'select "__expand_numbered"."id" as "id", "__expand_numbered"."account" as "account", ' +
    '"__expand_numbered"."__expand_parent" as "__expand_parent", "__expand_numbered"."__expand_native_account" as "__expand_native_account" from ' +
    '(select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "account", ' +
    'cast("orders"."account_id" as text) as "__expand_parent", "orders"."account_id" as "__expand_native_account", ' +
    'row_number() over(partition by "orders"."account_id" order by "orders"."id" desc, "orders"."id") as "__expand_row" from "orders" ' +
    'where "orders"."account_id" = any(array(select distinct "__expand_source_0"."__expand_native_id" as "key" from "__expand_source_0"))) ' +
    'as "__expand_numbered" where "__expand_numbered"."__expand_row" <= 1 ' +
    'order by "__expand_numbered"."__expand_parent", "__expand_numbered"."__expand_row" limit 16384'
  const accounts = 'select cast("accounts"."id" as text) as "id", cast("accounts"."name" as text) as "name" from "accounts" ' +
    'where "accounts"."id" = any(array(select distinct "__expand_source_1"."__expand_native_account" as "key" from "__expand_source_1"))'
  for (const request of [1, 2, 3]) {
    database.reset()
    const response = await app.inject(url)
    t.strictSame([response.statusCode, response.json()], [200, { data, limit: 20, offset: 0, total: 2 }], `request ${request}: the same body`)
    t.equal(database.sent.length, 1, `request ${request}: one statement, none refused before it`)
    t.ok(database.sent[0]!.includes(`"__expand_source_1" as (${numbered}), "__expand_source_2" as (${accounts})`),
      'the numbered orders carry their account as int8, which the accounts\' statement reads')
    t.notMatch(database.sent[0], /"__expand_part"\."__expand_native_/, 'the parts: their values alone')
  }
  // The wave's statements sent apart (a Kysely instance with plugins never combines them): the accounts' statement
  // reads its keys from the orders' numbered rows by name, the one the orders' statement selects as the column holds it.
  const apart: FastifyInstance = Fastify()
  const withPlugin = database.db.withPlugin({ transformQuery: ({ node }) => node, transformResult: async ({ result }) => result })
  await apart.register(expandPlugin, { db: withPlugin, resources: [Account, Order, Ledger] })
  apart.expand.routes('/ledgers', Ledger)
  await apart.ready()
  t.teardown(() => apart.close())
  for (const request of [1, 2]) {
    database.reset()
    const response = await apart.inject(url)
    t.strictSame([response.statusCode, response.json()], [200, { data, limit: 20, offset: 0, total: 2 }], `sent apart, request ${request}: the same body`)
    t.equal(database.sent.length, 3, `sent apart, request ${request}: the page, the orders and the accounts, none refused`)
    // Sent at once on the pool, they are logged in the order they answer.
    const accounts = database.sent.filter((statement) => statement.startsWith('with "__expand_wave_keys" as (select distinct "__expand_key_rows"."__expand_native_account" as "key" from ' +
      '(select "__expand_numbered"."id" as "id", "__expand_numbered"."account" as "account", "__expand_numbered"."__expand_parent" as "__expand_parent", ' +
      '"__expand_numbered"."__expand_wave_join" as "__expand_wave_join", "__expand_numbered"."__expand_wave_row" as "__expand_wave_row", ' +
      '"__expand_numbered"."__expand_native_account" as "__expand_native_account" from (select cast("orders"."id" as text) as "id", ' +
      'cast("orders"."account_id" as text) as "account", cast("orders"."account_id" as text) as "__expand_parent", ' +
      '"orders"."account_id" as "__expand_native_account", '))
    t.equal(accounts.length, 1, 'the accounts\' keys: the orders\' account as int8, out of their numbered rows')
    t.equal(database.sent.filter((statement) => statement.includes('__expand_native_')).length, 1, 'the orders\' own statement: their values alone')
  }
})
