import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { asWrittenOn, dialects, inComparableOrder, inOneWave, inWave, keySubqueryOf, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import {
  Account, Entry, NumberedAccount, NumberedOrder, Order, Tag, at53, createWideKeyTables, maxInt8, past53, wideKeyResources,
} from '../fixtures/wide-keys.js'

// Keys past 2^53 (bigint columns) declared `Type.String()` are read, matched,
// filtered, sorted and paged as their exact decimal text on every dialect:
// detail by id, relations of every kind both ways, aggregates, list filters,
// sorts and cursor pages both ways. Each such key is selected as its text
// (the dialect's `asText`), and bound back as text, which every database
// compares with its integer column exactly. A key declared a JavaScript
// integer over such a column is a 500 naming the field, never a rounded
// number, nor the relations of the row it rounds to.

/** A statement written as PostgreSQL writes it, as `dialect` writes it: `?` placeholders, and MariaDB's `char` for `text` casts. */
function writtenOn (dialect: Dialect, statement: string): string {
  return dialect.name === 'postgres' ? statement : asWrittenOn(dialect, statement.replace(/\$[0-9]+/g, '?'))
}

/** `column` ordered with its NULLs last ascending (first descending), as each dialect writes it. */
function nullsAfter (dialect: Dialect, column: string, direction: 'asc' | 'desc'): string {
  if (dialect.name === 'postgres') return `${column} ${direction} nulls ${direction === 'asc' ? 'last' : 'first'}`
  return `${column} is null ${direction}, ${column} ${direction}`
}

const cursorSecret = 'wide keys, exact'

/** A cursor page of ids, as the tests read it. */
interface Page { data: Array<{ id: string | number }>; next: string | null; prev: string | null }

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: wideKeyResources })
  app.expand.routes('/accounts', Account, {
    filter: { id: ['eq', 'in', 'gt', 'gte', 'lt', 'lte'] },
    sort: ['id', 'name'],
    pagination: 'cursor',
    cursorSecret,
    expandedLists: { orders: { sort: ['id'], filter: { id: ['eq', 'gt'] } } },
  })
  app.expand.routes('/orders', Order, {
    filter: { account: ['eq', 'in', 'null', 'gt'], 'account.id': ['eq'], 'tags.id': ['eq', 'in'] },
    sort: ['account', 'account.id', 'label'],
    pagination: 'cursor',
    cursorSecret,
  })
  app.expand.routes('/tags', Tag)
  app.expand.routes('/entries', Entry, {
    filter: { amount: ['eq', 'in', 'gt', 'lt'], quantity: ['eq', 'null'] },
    sort: ['amount', 'quantity'],
    pagination: 'cursor',
    cursorSecret,
  })
  app.expand.routes('/numbered-accounts', NumberedAccount)
  app.expand.routes('/numbered-orders', NumberedOrder)
  // A handler's own statement from app.expand.select reads the keys as the generated routes do.
  app.get('/selected-orders', { expandable: { resource: Order, list: true } }, async (request) => {
    const rows = await app.expand.select(request).where('orders.account_id', 'is not', null).orderBy('orders.id').execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

const accountRow = {
  5: { id: '5', name: 'small', orders: ['7'] },
  [at53]: { id: at53, name: 'at 2^53', orders: ['9007199254740996'] },
  [past53]: { id: past53, name: 'past 2^53', orders: ['9007199254740995', '9007199254740998'] },
  [maxInt8]: { id: maxInt8, name: 'largest', orders: ['9007199254740997'] },
} as const

for (const dialect of dialects()) {
  t.test(`wide keys on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createWideKeyTables(database.db)
    const app = await build(database)
    t.teardown(() => app.close())
    /** The status, the body as text (read as text, no number of it is rounded here), and the statements the request ran. */
    const get = async (url: string) => {
      database.reset()
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.body, statements: inComparableOrder(dialect, database.statements) }
    }
    const sqlOf = (statements: string[]) => inComparableOrder(dialect, statements.map((statement) => writtenOn(dialect, statement)))
    const ok = (body: unknown, ...statements: string[]) => ({ status: 200, body: JSON.stringify(body), statements: sqlOf(statements) })
    const bodyOf = async (url: string) => JSON.parse((await get(url)).body) as Page
    /** What a relation's statement reads its keys from: its parent statement's `column` in one wave, else the keys bound. */
    const keyed = (parent: string, column: string, keys: string) => inOneWave(dialect) ? keySubqueryOf(parent, column) : keys
    /** A relation's statement as sent: in one wave, joined from the keys it answers for. */
    const wave = (statement: string) => inOneWave(dialect) ? inWave(dialect, statement) : statement
    const accountById = 'select cast("accounts"."id" as text) as "id", cast("accounts"."name" as text) as "name" from "accounts" where "accounts"."id" = $1'
    /** Every page forward from `url`, then back from the last one: the ids of each page. */
    const walk = async (url: string) => {
      const forward: Array<Array<Page['data'][number]['id']>> = []
      let page = await bodyOf(url)
      forward.push(page.data.map(({ id }) => id))
      while (page.next !== null) {
        page = await bodyOf(`${url}&after=${page.next}`)
        forward.push(page.data.map(({ id }) => id))
      }
      const back: typeof forward = []
      while (page.prev !== null) {
        page = await bodyOf(`${url}&before=${page.prev}`)
        back.push(page.data.map(({ id }) => id))
      }
      return { forward, back }
    }

    t.test('detail by id: the key and the ids of its relations as exact text', async (t) => {
      t.same(await get(`/accounts/${past53}`), ok(
        accountRow[past53],
        accountById,
        wave('select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "__expand_parent" from "orders" ' +
          `where "orders"."account_id" in (${keyed(accountById, '"accounts"."id"', '$1')}) order by "orders"."account_id", "orders"."id" limit 16384`)
      ))
      t.same(database.parameters, [[past53], [past53]], 'bound as the text it is')
      t.same((await get(`/accounts/${at53}`)).body, JSON.stringify(accountRow[at53]), '2^53 is an account of its own')
      t.same((await get(`/accounts/${maxInt8}`)).body, JSON.stringify(accountRow[maxInt8]), 'the largest int8')
      t.same((await get('/accounts/5')).body, JSON.stringify(accountRow[5]), 'a small key: text too')
      t.equal((await get('/accounts/9007199254740994')).status, 404, 'the key next to one is not it')
      t.equal((await get('/accounts/9223372036854775808')).status, 404, 'past the largest int8: no row')
      const tagById = 'select cast("tags"."id" as text) as "id", cast("tags"."name" as text) as "name" from "tags" where "tags"."id" = $1'
      t.same(await get(`/tags/${past53}`), ok(
        { id: past53, name: 'past', orders: ['7', '9007199254740995'] },
        tagById,
        wave('select cast("order_tags"."order_id" as text) as "id", cast("order_tags"."tag_id" as text) as "__expand_parent" from "order_tags" ' +
          `inner join "orders" on "orders"."id" = "order_tags"."order_id" where "order_tags"."tag_id" in (${keyed(tagById, '"tags"."id"', '$1')}) ` +
          'order by "order_tags"."tag_id", "order_tags"."order_id" limit 16384')
      ), 'many-to-many ids through a join table of bigints')
    })

    t.test('relations expanded both ways, each child with its own parent', async (t) => {
      const pastTag = { id: past53, name: 'past', orders: ['7', '9007199254740995'] }
      const nextToLargest = { id: '9223372036854775806', name: 'next to largest', orders: ['9007199254740995'] }
      const orderById = 'select cast("orders"."id" as text) as "id", cast("orders"."label" as text) as "label", cast("orders"."account_id" as text) as "account" ' +
        'from "orders" where "orders"."id" = $1'
      const account = 'select cast("accounts"."id" as text) as "id", cast("accounts"."name" as text) as "name" from "accounts" ' +
        `where "accounts"."id" in (${keyed(orderById, '"orders"."account_id"', '$1')})`
      const tags = 'select cast("tags"."id" as text) as "id", cast("tags"."name" as text) as "name", cast("order_tags"."order_id" as text) as "__expand_parent" ' +
        `from "tags" inner join "order_tags" on "order_tags"."tag_id" = "tags"."id" where "order_tags"."order_id" in (${keyed(orderById, '"orders"."id"', '$1')}) ` +
        'order by "order_tags"."order_id", "order_tags"."tag_id" limit 16384'
      t.same(await get('/orders/9007199254740995?expand=account,tags'), ok(
        { id: '9007199254740995', label: 'past one', account: accountRow[past53], tags: [pastTag, nextToLargest] },
        orderById,
        wave(account),
        wave('select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "__expand_parent" from "orders" ' +
          `where "orders"."account_id" in (${keyed(account, '"accounts"."id"', '$1')}) order by "orders"."account_id", "orders"."id" limit 16384`),
        wave(tags),
        wave('select cast("order_tags"."order_id" as text) as "id", cast("order_tags"."tag_id" as text) as "__expand_parent" from "order_tags" ' +
          `inner join "orders" on "orders"."id" = "order_tags"."order_id" where "order_tags"."tag_id" in (${keyed(tags, '"tags"."id"', '$1, $2')}) ` +
          'order by "order_tags"."tag_id", "order_tags"."order_id" limit 16384')
      ), 'to-one and many-to-many')
      const pastOne = { id: '9007199254740995', label: 'past one', account: past53, tags: [past53, '9223372036854775806'] }
      const pastTwo = { id: '9007199254740998', label: 'past two', account: past53, tags: [] }
      const orders = 'select cast("orders"."id" as text) as "id", cast("orders"."label" as text) as "label", cast("orders"."account_id" as text) as "account", ' +
        `cast("orders"."account_id" as text) as "__expand_parent" from "orders" where "orders"."account_id" in (${keyed(accountById, '"accounts"."id"', '$1')}) ` +
        'order by "orders"."account_id", "orders"."id" limit 16384'
      t.same(await get(`/accounts/${past53}?expand=orders`), ok(
        { id: past53, name: 'past 2^53', orders: [pastOne, pastTwo] },
        accountById,
        wave(orders),
        wave('select cast("order_tags"."tag_id" as text) as "id", cast("order_tags"."order_id" as text) as "__expand_parent" from "order_tags" ' +
          `inner join "tags" on "tags"."id" = "order_tags"."tag_id" where "order_tags"."order_id" in (${keyed(orders, '"orders"."id"', '$1, $2')}) ` +
          'order by "order_tags"."order_id", "order_tags"."tag_id" limit 16384')
      ), 'to-many: the orders of 2^53 + 1 only, none of 2^53')
      t.same((await get(`/accounts/${at53}?expand=orders.account&fields=id,orders.id,orders.account.id`)).body,
        JSON.stringify({ id: at53, orders: [{ id: '9007199254740996', account: { id: at53 } }] }), 'there and back')
      t.same((await get(`/tags/${past53}?expand=orders.account&fields=id,orders.id,orders.account.name`)).body, JSON.stringify({
        id: past53,
        orders: [{ id: '7', account: { name: 'small' } }, { id: '9007199254740995', account: { name: 'past 2^53' } }],
      }), 'many-to-many the other way, then to-one: small and wide keys in one statement')
      t.same((await get('/orders?expand=account&fields=id,account.name')).body, JSON.stringify({
        data: [
          { id: '7', account: { name: 'small' } },
          { id: '8', account: null },
          { id: '9007199254740995', account: { name: 'past 2^53' } },
          { id: '9007199254740996', account: { name: 'at 2^53' } },
          { id: '9007199254740997', account: { name: 'largest' } },
          { id: '9007199254740998', account: { name: 'past 2^53' } },
        ],
        limit: 20,
        next: null,
        prev: null,
      }), 'a list: each order its own account, a NULL key none')
    })

    t.test('app.expand.select and app.expand.load: the same text keys', async (t) => {
      t.same(await get('/selected-orders?expand=account&fields=id,account.id'), ok(
        [
          { id: '7', account: { id: '5' } },
          { id: '9007199254740995', account: { id: past53 } },
          { id: '9007199254740996', account: { id: at53 } },
          { id: '9007199254740997', account: { id: maxInt8 } },
          { id: '9007199254740998', account: { id: past53 } },
        ],
        'select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "account" from "orders" ' +
          'where "orders"."account_id" is not null order by "orders"."id"',
        'select cast("accounts"."id" as text) as "id" from "accounts" where "accounts"."id" in ($1, $2, $3, $4)'
      ))
    })

    t.test("an expanded list's order and conditions over wide keys", async (t) => {
      const account = 'select cast("accounts"."id" as text) as "id" from "accounts" where "accounts"."id" = $1'
      // In one wave, keyed by the account's statement, the list's condition after it.
      t.same(await get(`/accounts/${past53}?expand=orders&fields=id,orders.id&sort[orders]=-id&where[orders.id][gt]=9007199254740994`), ok(
        { id: past53, orders: [{ id: '9007199254740998' }, { id: '9007199254740995' }] },
        account,
        wave('select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "__expand_parent" from "orders" ' +
          `where "orders"."id" > $1 and "orders"."account_id" in (${keyed(account, '"accounts"."id"', '$2')}) order by "orders"."account_id", "orders"."id" desc, "orders"."id" limit 16384`)
      ))
      t.same((await get('/accounts?expand=orders&fields=id,orders.id&where[orders.id]=9007199254740996')).body, JSON.stringify({
        data: [{ id: '5', orders: [] }, { id: at53, orders: [{ id: '9007199254740996' }] }, { id: past53, orders: [] }, { id: maxInt8, orders: [] }],
        limit: 20,
        next: null,
        prev: null,
      }), 'the one order of 2^53')
    })

    t.test("a relation limit: each wide parent's first rows", async (t) => {
      t.same((await get('/accounts?expand=latest_order&fields=id,latest_order.id&sort=id')).body, JSON.stringify({
        data: [
          { id: '5', latest_order: [{ id: '7' }] },
          { id: at53, latest_order: [{ id: '9007199254740996' }] },
          { id: past53, latest_order: [{ id: '9007199254740998' }] },
          { id: maxInt8, latest_order: [{ id: '9007199254740997' }] },
        ],
        limit: 20,
        next: null,
        prev: null,
      }), 'expanded')
      t.same((await get(`/accounts/${at53}?expand=latest_order&fields=id,latest_order.label`)).body,
        JSON.stringify({ id: at53, latest_order: [{ label: 'at one' }] }), '2^53 keeps its own')
    })

    t.test('an aggregate counted per wide parent key', async (t) => {
      const account = 'select cast("accounts"."id" as text) as "id" from "accounts" where "accounts"."id" = $1'
      t.same(await get(`/accounts/${past53}?fields=id,order_count`), ok(
        { id: past53, order_count: 2 },
        account,
        // In one wave, keyed by the account's statement: its key as the column holds it, joined to the groups' column.
        wave(`select cast("orders"."account_id" as text) as "__expand_parent", cast(count(*) as ${dialect.name === 'mariadb' ? 'signed' : 'integer'}) ` +
          `as "order_count" from "orders" where "orders"."account_id" in (${keyed(account, '"accounts"."id"', '$1')}) group by "orders"."account_id"`)
      ))
      t.same((await get('/accounts?fields=id,order_count&sort=id')).body, JSON.stringify({
        data: [
          { id: '5', order_count: 1 }, { id: at53, order_count: 1 }, { id: past53, order_count: 2 }, { id: maxInt8, order_count: 1 },
        ],
        limit: 20,
        next: null,
        prev: null,
      }), '2^53 and 2^53 + 1 counted apart')
    })

    t.test('filters compare the text with the integer column exactly', async (t) => {
      t.same(await get(`/accounts?filter[id]=${past53}&fields=id`), ok(
        { data: [{ id: past53 }], limit: 20, next: null, prev: null },
        'select cast("accounts"."id" as text) as "id", cast("accounts"."id" as text) as "__expand_key_0" from "accounts" ' +
          'where "accounts"."id" = $1 order by "accounts"."id" asc limit $2'
      ))
      t.same(database.parameters, [[past53, 21]])
      t.same(await get(`/accounts?filter[id][in]=${at53},${maxInt8}&fields=id`), ok(
        { data: [{ id: at53 }, { id: maxInt8 }], limit: 20, next: null, prev: null },
        'select cast("accounts"."id" as text) as "id", cast("accounts"."id" as text) as "__expand_key_0" from "accounts" ' +
          'where "accounts"."id" in ($1, $2) order by "accounts"."id" asc limit $3'
      ))
      const ids = async (query: string) => (await bodyOf(`/accounts?${query}&fields=id`)).data.map(({ id }) => id)
      t.same(await ids(`filter[id][gt]=${at53}`), [past53, maxInt8], 'gt 2^53')
      t.same(await ids(`filter[id][gte]=${past53}`), [past53, maxInt8], 'gte 2^53 + 1')
      t.same(await ids(`filter[id][lt]=${past53}`), ['5', at53], 'lt 2^53 + 1')
      t.same(await ids(`filter[id][lte]=${at53}`), ['5', at53], 'lte 2^53')
      const pastInt8 = await get('/accounts?filter[id][lt]=9223372036854775808&fields=id')
      t.same({ status: pastInt8.status, body: JSON.parse(pastInt8.body) as unknown }, dialect.name === 'postgres'
        ? {
            status: 400,
            body: { statusCode: 400, code: 'FST_EXPAND_BAD_FILTER', error: 'Bad Request', message: 'A filter value does not fit its column in the database' },
          }
        : { status: 200, body: { data: [{ id: '5' }, { id: at53 }, { id: past53 }, { id: maxInt8 }], limit: 20, next: null, prev: null } },
      'past the largest int8: PostgreSQL reads no int8 of it')
      t.same(await ids(`filter[id][in]=9007199254740994,${past53}&filter[id][lt]=${maxInt8}`), [past53], 'in and a range')
      const orders = async (query: string) => (await bodyOf(`/orders?${query}&fields=id`)).data.map(({ id }) => id)
      t.same(await get(`/orders?filter[account]=${past53}&filter[account.id]=${past53}&fields=id`), ok(
        { data: [{ id: '9007199254740995' }, { id: '9007199254740998' }], limit: 20, next: null, prev: null },
        'select cast("orders"."id" as text) as "id", cast("orders"."id" as text) as "__expand_key_0" from "orders" ' +
          'where "orders"."account_id" = $1 and "orders"."account_id" in (select "accounts"."id" from "accounts" where "accounts"."id" = $2) ' +
          'order by "orders"."id" asc limit $3'
      ), 'a foreign key, and through a to-one relation')
      t.same(await orders(`filter[account][in]=5,${maxInt8}`), ['7', '9007199254740997'])
      t.same(await orders(`filter[account][gt]=${at53}`), ['9007199254740995', '9007199254740997', '9007199254740998'])
      t.same(await orders('filter[account][null]=true'), ['8'])
      t.same(await orders(`filter[tags.id]=${past53}`), ['7', '9007199254740995'], 'through a many-to-many relation')
      t.same(await orders('filter[tags.id][in]=3,9223372036854775806'), ['9007199254740995', '9007199254740996'])
    })

    t.test('sorted and paged by cursor, both ways, by the exact keys', async (t) => {
      t.same(await walk('/accounts?sort=-id&limit=1&fields=id'), {
        forward: [[maxInt8], [past53], [at53], ['5']],
        back: [[at53], [past53], [maxInt8]],
      }, 'by the key, descending')
      t.same(await walk('/accounts?sort=name&limit=3&fields=id'), {
        forward: [[at53, maxInt8, past53], ['5']],
        back: [[at53, maxInt8, past53]],
      }, 'by a name, the key breaking no tie here')
      const byAccount = {
        forward: [['7', '9007199254740996'], ['9007199254740995', '9007199254740998'], ['9007199254740997', '8']],
        back: [['9007199254740995', '9007199254740998'], ['7', '9007199254740996']],
      }
      t.same(await walk('/orders?sort=account&limit=2&fields=id'), byAccount, 'by a wide foreign key, NULL last, ties broken by the wide key')
      t.same(await walk('/orders?sort=account.id&limit=2&fields=id'), byAccount, "by the related row's key")

      const first = await bodyOf('/accounts?sort=-id&limit=1&fields=id')
      const after = await get(`/accounts?sort=-id&limit=1&fields=id&after=${first.next!}`)
      t.same({ ...after, body: (JSON.parse(after.body) as { data: unknown }).data }, {
        status: 200,
        body: [{ id: past53 }],
        statements: sqlOf([
          'select cast("accounts"."id" as text) as "id", cast("accounts"."id" as text) as "__expand_key_0" from "accounts" ' +
            'where ("accounts"."id") < ($1) order by "accounts"."id" desc limit $2',
        ]),
      }, 'the cursor holds the exact key and binds it back as text')
      t.same(database.parameters, [[maxInt8, 2]])
      const second = await bodyOf('/orders?sort=account&limit=2&fields=id')
      database.reset()
      await app.inject(`/orders?sort=account&limit=2&fields=id&after=${second.next!}`)
      t.same(inComparableOrder(dialect, database.statements), sqlOf([
        'select cast("orders"."id" as text) as "id", cast("orders"."account_id" as text) as "__expand_key_0", ' +
          'cast("orders"."id" as text) as "__expand_key_1" from "orders" where (("orders"."account_id" > $1 or "orders"."account_id" is null) ' +
          'or ("orders"."account_id" = $2 and "orders"."id" > $3)) ' +
          `order by ${nullsAfter(dialect, '"orders"."account_id"', 'asc')}, "orders"."id" asc limit $4`,
      ]))
      t.same(database.parameters, [[at53, at53, '9007199254740996', 3]], 'a nullable wide key: compared one by one, each as text')
    })

    t.test('a field that is no key, over a bigint and a 32-bit integer column: read, filtered and paged as its exact text', async (t) => {
      t.same(await get('/entries/1'), ok(
        { id: 1, amount: past53, quantity: '3' },
        'select "entries"."id" as "id", cast("entries"."amount" as text) as "amount", cast("entries"."quantity" as text) as "quantity" ' +
          'from "entries" where "entries"."id" = $1'
      ))
      t.same(await get('/entries/4'), ok({ id: 4, amount: '-9223372036854775808', quantity: '-1' },
        'select "entries"."id" as "id", cast("entries"."amount" as text) as "amount", cast("entries"."quantity" as text) as "quantity" ' +
          'from "entries" where "entries"."id" = $1'), 'the smallest int8')
      const ids = async (query: string) => (await bodyOf(`/entries?${query}&fields=id`)).data.map(({ id }) => id)
      t.same(await ids(`filter[amount]=${past53}`), [1], '2^53 + 1, not 2^53')
      t.same(database.parameters, [[past53, 21]], 'bound as its text')
      t.same(await ids(`filter[amount]=${at53}`), [2], '2^53, not 2^53 + 1')
      t.same(await ids(`filter[amount][gt]=${at53}`), [1, 3])
      t.same(await ids('filter[amount][lt]=0'), [4])
      t.same(await ids(`filter[amount][in]=12,${maxInt8}`), [3, 5])
      t.same(await ids('filter[quantity]=3'), [1, 5])
      t.same(await ids('filter[quantity][null]=true'), [2])

      // Ordered by the column's integers, not by their text; the cursor carries the text and binds it back.
      t.same(await walk('/entries?sort=amount&limit=2&fields=id'), {
        forward: [[4, 5], [2, 1], [3]],
        back: [[2, 1], [4, 5]],
      }, 'by the bigint')
      t.same(await walk('/entries?sort=-quantity&limit=2&fields=id'), {
        forward: [[2, 3], [1, 5], [4]],
        back: [[1, 5], [2, 3]],
      }, 'by the 32-bit integer, descending: NULL first, ties by the key')
      const first = await bodyOf('/entries?sort=amount&limit=3&fields=id')
      const after = await get(`/entries?sort=amount&limit=3&fields=id,amount&after=${first.next!}`)
      const { data, next } = JSON.parse(after.body) as Page
      t.same({ status: after.status, data, next, statements: after.statements }, {
        status: 200,
        data: [{ id: 1, amount: past53 }, { id: 3, amount: maxInt8 }],
        next: null,
        statements: sqlOf([
          'select "entries"."id" as "id", cast("entries"."amount" as text) as "amount", cast("entries"."amount" as text) as "__expand_key_0", ' +
            '"entries"."id" as "__expand_key_1" from "entries" where ' +
            (dialect.name === 'mariadb' ? '("entries"."amount" >= $1 and ("entries"."amount", "entries"."id") > ($2, $3))' : '("entries"."amount", "entries"."id") > ($1, $2)') +
            ` order by "entries"."amount" asc, "entries"."id" asc limit $${dialect.name === 'mariadb' ? 4 : 3}`,
        ]),
      })
      t.same(database.parameters, [dialect.name === 'mariadb' ? [at53, at53, 2, 4] : [at53, 2, 4]], "the cursor's amount: 2^53 exactly, bound as its text")
    })

    t.test('a wide key declared a JavaScript integer: a 500 naming the field, never a rounded number', async (t) => {
      // SQLite's driver gives the rounded number, which the data check refuses; pg and mysql2 (with supportBigNumbers) the text.
      const rounded = dialect.name === 'sqlite' || dialect.name === 'sqlite with cached statements'
      const refused = (message: string) => ({
        status: 500,
        body: JSON.stringify({ statusCode: 500, code: 'FST_EXPAND_INVALID_DATA', error: 'Internal Server Error', message }),
      })
      const answer = async (url: string) => {
        const { status, body } = await get(url)
        return { status, body }
      }
      const what = rounded ? 'an integer past 2^53 - 1, which a number holds only rounded' : 'a string'
      t.same(await answer('/numbered-accounts?fields=id'),
        refused(`Data for NumberedAccount list item 1 does not fit the response: 'id' is ${what}, expected an integer`), 'the primary key')
      t.same(await answer('/numbered-orders?fields=id,account'),
        refused(`Data for NumberedOrder list item 2 does not fit the response: 'account' is ${what}, expected an integer or null`), 'a foreign key')
      t.same(await answer('/numbered-accounts/5'), { status: 200, body: JSON.stringify({ id: 5, name: 'small' }) }, 'a small key fits')
      // Expanded, the key is not written: the loader refuses a rounded one before it meets 2^53's account instead.
      t.same(await answer('/numbered-orders?expand=account&fields=id,account.name'), rounded
        ? refused("NumberedOrder 'account' holds a key past 2^53 - 1 as a JavaScript number, which holds it only rounded: declare 'account' Type.String() to read it as its exact text")
        : {
            status: 200,
            body: JSON.stringify({
              data: [
                { id: '7', account: { name: 'small' } },
                { id: '8', account: null },
                { id: '9007199254740995', account: { name: 'past 2^53' } },
                { id: '9007199254740996', account: { name: 'at 2^53' } },
                { id: '9007199254740997', account: { name: 'largest' } },
                { id: '9007199254740998', account: { name: 'past 2^53' } },
              ],
              limit: 20,
              offset: 0,
              total: 6,
            }),
          }, 'expanded through a rounded key: refused; through the text the driver gave: the right account')
      t.same(await answer('/numbered-accounts?expand=orders&fields=name,orders.id'), rounded
        ? refused("NumberedAccount 'id' holds a key past 2^53 - 1 as a JavaScript number, which holds it only rounded: declare 'id' Type.String() to read it as its exact text")
        : {
            status: 200,
            body: JSON.stringify({
              data: [
                { name: 'small', orders: [{ id: '7' }] },
                { name: 'at 2^53', orders: [{ id: '9007199254740996' }] },
                { name: 'past 2^53', orders: [{ id: '9007199254740995' }, { id: '9007199254740998' }] },
                { name: 'largest', orders: [{ id: '9007199254740997' }] },
              ],
              limit: 20,
              offset: 0,
              total: 4,
            }),
          }, 'the orders of a rounded parent key: refused, never those of 2^53 for 2^53 + 1')
    })
  })
}
