import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import type { Kysely } from 'kysely'
import t from 'tap'
import { compileDateTimeNormaliser } from '../../plugin/compile/date-times.js'
import { compileWriter } from '../../plugin/compile/mechanisms.js'
import { dateTimeTextOf } from '../../plugin/graph/dates.js'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { dialects, type Dialect } from '../fixtures/dialects.js'

// The same request answered differently by database. What went wrong:
// - date-time filters compared text on SQLite: a column holding SQLite's own
//   '2021-01-01 00:00:00' never equalled the bound '2021-01-01T00:00:00Z', `lt`
//   found it, and offsets ('+02:00') were ignored on both dialects;
// - `date` and `date-time` values were written as the driver returned them:
//   "2021-01-01 00:00:00" on SQLite, "2021-01-01T00:00:00.000Z" on PostgreSQL,
//   and 'not a date' was served as a date-time;
// - a value no row can hold (2147483648 for an int4, 1e39 for a real, a string
//   with NUL) answered 200 [] on SQLite and 400 on PostgreSQL.
// What must hold: a date-time filter compares instants whatever the storage form
// (SQLite: 'YYYY-MM-DD HH:MM:SS[.fff]' or RFC 3339 with 'T', with or without an
// offset, none meaning UTC; PostgreSQL: timestamp or timestamptz); each format has
// one output form on every dialect (toISOString() for date-times, YYYY-MM-DD for
// dates) and data that is not one is a 500; a value that fits the field's schema
// is compared as if the column could hold it, with the same status and body everywhere.

const Invoice = defineResource({
  name: 'Invoice',
  table: 'invoices',
  schema: Type.Object({
    id: Type.Integer(),
    customer: Type.String(),
    total: Type.Integer(),
    amount: Type.Number(),
    invoice_date: Type.String({ format: 'date-time' }),
    due: Type.String({ format: 'date' }),
  }),
  fields: ['id', 'customer', 'total', 'amount', 'invoice_date', 'due'],
})

// A table whose columns are text on every dialect, for data that is not a date.
const Note = defineResource({
  name: 'Note',
  table: 'notes',
  schema: Type.Object({ id: Type.Integer(), at: Type.String({ format: 'date-time' }), day: Type.String({ format: 'date' }) }),
  fields: ['id', 'at', 'day'],
})

/** Rows as stored: on SQLite each in another supported storage form, on PostgreSQL the UTC wall clock in a timestamp. */
const invoiceRows = [
  { id: 1, customer: 'Ana', total: 10, amount: 9.5, sqlite: '2021-01-01 00:00:00', postgres: '2021-01-01 00:00:00', due: '2021-01-31' },
  { id: 2, customer: 'Rui', total: 20, amount: 20, sqlite: '2021-01-01T12:30:00.250Z', postgres: '2021-01-01 12:30:00.25', due: '2021-02-01' },
  { id: 3, customer: 'Eva', total: 2147483647, amount: 0.5, sqlite: '2021-01-02T09:00:00+09:00', postgres: '2021-01-02 00:00:00', due: '2021-02-02' },
  { id: 4, customer: 'Zoe', total: -2147483648, amount: 100, sqlite: '2021-01-02 10:00:00.500', postgres: '2021-01-02 10:00:00.5', due: '2024-02-29' },
]

const written = [
  { id: 1, customer: 'Ana', total: 10, amount: 9.5, invoice_date: '2021-01-01T00:00:00.000Z', due: '2021-01-31' },
  { id: 2, customer: 'Rui', total: 20, amount: 20, invoice_date: '2021-01-01T12:30:00.250Z', due: '2021-02-01' },
  { id: 3, customer: 'Eva', total: 2147483647, amount: 0.5, invoice_date: '2021-01-02T00:00:00.000Z', due: '2021-02-02' },
  { id: 4, customer: 'Zoe', total: -2147483648, amount: 100, invoice_date: '2021-01-02T10:00:00.500Z', due: '2024-02-29' },
]

async function createTables (db: Kysely<any>, dialect: Dialect): Promise<void> {
  const postgres = dialect.name === 'postgres'
  await db.schema.createTable('invoices').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('customer', 'text', (c) => c.notNull()).addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('amount', 'real', (c) => c.notNull())
    // MariaDB's date-times are DATETIME (UTC wall clock, as PostgreSQL's timestamp here): it reads no offset in a text.
    .addColumn('invoice_date', postgres ? 'timestamp' : dialect.name === 'mariadb' ? 'datetime(3)' : 'text', (c) => c.notNull())
    .addColumn('due', postgres || dialect.name === 'mariadb' ? 'date' : 'text', (c) => c.notNull()).execute()
  await db.insertInto('invoices').values(invoiceRows.map(({ sqlite, postgres: stored, ...row }) => ({ ...row, invoice_date: postgres || dialect.name === 'mariadb' ? stored : sqlite }))).execute()
  await db.schema.createTable('notes').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull()).addColumn('day', 'text', (c) => c.notNull()).execute()
  await db.insertInto('notes').values([
    { id: 1, at: '2021-01-01 00:00:00', day: '2021-01-01' },
    { id: 2, at: 'not a date', day: '2021-01-01' },
    { id: 3, at: '2021-01-01T00:00:00+01:00', day: 'not a date' },
    { id: 4, at: '2021-01-01T00:00:00Z', day: '2021-02-30' },
  ]).execute()
}

const operators = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in'] as const

for (const dialect of dialects()) {
  t.test(`dates and values on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createTables(database.db, dialect)
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: [Invoice, Note] })
    app.expand.routes('/invoices', Invoice, {
      filter: { invoice_date: operators, due: operators, total: operators, amount: operators, customer: [...operators, 'contains'] },
      sort: ['invoice_date', 'customer'],
    })
    app.expand.routes('/feed', Invoice, { pagination: 'cursor', filter: { total: operators, customer: operators }, sort: ['invoice_date'] })
    app.expand.routes('/notes', Note)
    t.teardown(() => app.close())
    await app.ready()
    const get = async (url: string) => {
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json() }
    }
    const ids = async (query: string) => {
      const { status, body } = await get(`/invoices?fields=id&${query}`)
      return status === 200 ? (body.data as Array<{ id: number }>).map(({ id }) => id) : body
    }

    t.test('one output form per format, whatever the dialect returns', async (t) => {
      t.same(await get('/invoices'), { status: 200, body: { data: written, limit: 20, offset: 0, total: 4 } })
      t.same(await get('/invoices/3'), { status: 200, body: written[2] })
      t.same(await get('/notes/1'), { status: 200, body: { id: 1, at: '2021-01-01T00:00:00.000Z', day: '2021-01-01' } })
      t.same(await get('/notes/4?fields=id,at'), { status: 200, body: { id: 4, at: '2021-01-01T00:00:00.000Z' } })
    })

    t.test('a value that is not a date or date-time is a 500, like any data that does not fit', async (t) => {
      const cases: Array<[string, string]> = [
        ['/notes/2', "Data for Note does not fit the response: 'at' is a string, expected a date-time"],
        ['/notes/3', "Data for Note does not fit the response: 'day' is a string, expected a date (YYYY-MM-DD)"],
        ['/notes/4', "Data for Note does not fit the response: 'day' is a string, expected a date (YYYY-MM-DD)"],
        ['/notes?fields=id,at', "Data for Note list item 1 does not fit the response: 'at' is a string, expected a date-time"],
      ]
      for (const [url, message] of cases) {
        t.same(await get(url), { status: 500, body: { statusCode: 500, code: 'FST_EXPAND_INVALID_DATA', error: 'Internal Server Error', message } }, url)
      }
    })

    t.test('date-time filters compare instants, offsets honoured, whatever the storage form', async (t) => {
      t.same(await ids('filter[invoice_date][gte]=2021-01-01T00:00:00Z&filter[invoice_date][lte]=2021-01-01T00:00:00Z'), [1])
      t.same(await ids('filter[invoice_date][lt]=2021-01-01T00:00:00Z'), [])
      t.same(await ids('filter[invoice_date][gt]=2021-01-01T00:00:00Z'), [2, 3, 4])
      t.same(await ids('filter[invoice_date]=2021-01-02T09:00:00%2B09:00'), [3], '+09:00 on the wire')
      t.same(await ids('filter[invoice_date]=2021-01-01T14:30:00.25%2B02:00'), [2])
      t.same(await ids('filter[invoice_date]=2021-01-01T00:00:00.000Z'), [1], 'the form the responses write')
      t.same(await ids('filter[invoice_date]=2021-01-01 00:00:00z'), [1])
      t.same(await ids('filter[invoice_date][lt]=2021-01-02T00:00:00Z'), [1, 2])
      t.same(await ids('filter[invoice_date][lte]=2021-01-02T00:00:00Z'), [1, 2, 3])
      t.same(await ids('filter[invoice_date][gte]=2021-01-01T19:00:00-05:00'), [3, 4], '-05:00 is 00:00Z the next day')
      t.same(await ids('filter[invoice_date][in]=2021-01-01T00:00:00Z,2021-01-02T05:00:00.5-05:00'), [1, 4])
      t.same(await ids('filter[invoice_date][ne]=2021-01-01T00:00:00Z'), [2, 3, 4])
      t.same(await ids('filter[due][lt]=2021-02-02'), [1, 2])
      t.same(await ids('filter[due]=2024-02-29'), [4])
    })

    t.test('a date-time filter without a time or time zone, or outside years 0001-9999, is a 400', async (t) => {
      const cases: Array<[string, string]> = [
        ['filter[invoice_date]=2021-01-01', "'filter[invoice_date]' must be a date-time (RFC 3339, with a time zone), got '2021-01-01'"],
        ['filter[invoice_date]=2021-01-01T00:00:00', "'filter[invoice_date]' must be a date-time (RFC 3339, with a time zone), got '2021-01-01T00:00:00'"],
        ['filter[invoice_date]=2021-02-30T00:00:00Z', "'filter[invoice_date]' must be a date-time (RFC 3339, with a time zone), got '2021-02-30T00:00:00Z'"],
        ['filter[invoice_date]=2021-01-01T24:00:00Z', "'filter[invoice_date]' must be a date-time (RFC 3339, with a time zone), got '2021-01-01T24:00:00Z'"],
        ['filter[invoice_date][gt]=0001-01-01T00:00:00%2B01:00', "'filter[invoice_date][gt]' must be a date-time (RFC 3339, with a time zone), got '0001-01-01T00:00:00+01:00'"],
        ['filter[due]=0000-01-01', "'filter[due]' must be a date (YYYY-MM-DD), got '0000-01-01'"],
        ['filter[invoice_date]=2021-01-01T00:00:00%2B24:00', "'filter[invoice_date]' must be a date-time (RFC 3339, with a time zone), got '2021-01-01T00:00:00+24:00'"],
        ['filter[invoice_date]=2021-01-01T00:00:00-00:60', "'filter[invoice_date]' must be a date-time (RFC 3339, with a time zone), got '2021-01-01T00:00:00-00:60'"],
      ]
      for (const [query, message] of cases) {
        t.same(await get(`/invoices?${query}`), { status: 400, body: { statusCode: 400, code: 'FST_EXPAND_BAD_FILTER', error: 'Bad Request', message } }, query)
      }
      t.same(await ids('filter[invoice_date][gt]=0001-01-01T00:00:00Z&filter[due][gt]=0050-01-01'), [1, 2, 3, 4], 'years before 100 are years')
    })

    t.test('a value no row can hold is compared by value: the same answer on every dialect', async (t) => {
      const cases: Array<[string, number[]]> = [
        ['filter[total]=2147483648', []],
        ['filter[total]=-9007199254740991', []],
        ['filter[total][in]=10,2147483648', [1]],
        ['filter[total][ne]=2147483648', [1, 2, 3, 4]],
        ['filter[total][lt]=2147483648', [1, 2, 3, 4]],
        ['filter[total][lte]=9007199254740991', [1, 2, 3, 4]],
        ['filter[total][gt]=2147483648', []],
        ['filter[total][gte]=-2147483649', [1, 2, 3, 4]],
        ['filter[total][lt]=-2147483649', []],
        ['filter[amount]=1e39', []],
        ['filter[amount][lt]=1e39', [1, 2, 3, 4]],
        ['filter[amount][gt]=-1e300', [1, 2, 3, 4]],
        ['filter[amount][in]=0.5,1e300', [3]],
        ['filter[customer]=a%00b', []],
        ['filter[customer][lt]=%00', []],
        ['filter[customer][gt]=%00', [1, 2, 3, 4]],
        ['filter[customer][gte]=Eva%00', [2, 4]],
        ['filter[customer][lte]=Eva%00x', [1, 3]],
        ['filter[customer][in]=Ana,x%00', [1]],
        ['filter[customer][in]=%00', []],
        ['filter[customer][ne]=%00', [1, 2, 3, 4]],
        ['filter[customer][contains]=%00', []],
      ]
      for (const [query, expected] of cases) {
        const { status, body } = await get(`/invoices?fields=id&limit=5&${query}`)
        const page = { data: expected.map((id) => ({ id })), limit: 5, offset: 0, total: expected.length }
        t.same({ status, body }, { status: 200, body: page }, query)
      }
      const feed = await get('/feed?fields=id&limit=2&filter[total][in]=2147483647,3000000000&filter[customer][lt]=Zoe%00')
      t.same(feed, { status: 200, body: { data: [{ id: 3 }], limit: 2, next: null, prev: null } })
      t.same(await get('/invoices?filter[total]=9007199254740992'), {
        status: 400,
        body: {
          statusCode: 400,
          code: 'FST_EXPAND_BAD_FILTER',
          error: 'Bad Request',
          message: "'filter[total]' must be an integer from -9007199254740991 to 9007199254740991, got '9007199254740992'",
        },
      }, 'the schema\'s own bound (safe integers) is a 400')
    })
  })
}

t.test('every writer writes a date-time in one form, copying the data, never changing it', async (t) => {
  const schema = {
    type: 'object',
    additionalProperties: true,
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'at', 'when', 'nested', 'history'],
          properties: {
            id: { type: 'integer' },
            at: { type: 'string', format: 'date-time' },
            when: { type: 'string', format: 'date-time', nullable: true },
            nested: { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, note: { type: 'string' } } },
            history: { type: 'array', items: { type: 'string', format: 'date-time' } },
          },
        },
      },
    },
  }
  const row = {
    id: 1,
    at: '2021-01-01 00:00:00',
    when: null,
    nested: { at: '2021-01-01T02:00:00+02:00', note: 'n' },
    history: ['2021-01-01T00:00:00.000Z', new Date(Date.UTC(2021, 0, 2)), '2021-01-01t00:00:00.1239z', '2021-12-31 23:59:59.9999'],
  }
  const canonical = { id: 2, at: new Date(0), when: '1970-01-01T00:00:00.000Z', nested: { at: new Date(0), note: 'n' }, history: [] }
  const data = { data: [row, canonical], next: null }
  const before = JSON.stringify(data)
  const expected = '{"data":[' +
    '{"id":1,"at":"2021-01-01T00:00:00.000Z","when":null,"nested":{"at":"2021-01-01T00:00:00.000Z","note":"n"},' +
    '"history":["2021-01-01T00:00:00.000Z","2021-01-02T00:00:00.000Z","2021-01-01T00:00:00.123Z","2021-12-31T23:59:59.999Z"]},' +
    '{"id":2,"at":"1970-01-01T00:00:00.000Z","when":"1970-01-01T00:00:00.000Z","nested":{"at":"1970-01-01T00:00:00.000Z","note":"n"},"history":[]}' +
    '],"next":null}'
  for (const mechanism of ['fast-json-stringify', 'projection'] as const) {
    t.equal(compileWriter(schema, mechanism).stringify(data), expected, mechanism)
  }
  t.equal(JSON.stringify(data), before, 'the data given is unchanged')
  const normalise = compileDateTimeNormaliser(schema)!
  const odd = { data: [{ ...canonical, at: 'not a date', nested: 5, history: 'x' }], next: null }
  t.equal(normalise(odd), odd, 'what is not a date-time, an object or an array is left to the data check, as it is')
  t.equal(normalise(null), null)
  t.equal(dateTimeTextOf(new Date(Date.UTC(10000, 0, 1))), undefined, 'a Date past 9999 is not a date-time of a body')
  t.equal(dateTimeTextOf(new Date(Number.NaN)), undefined)
  t.equal(dateTimeTextOf(5), undefined)
  t.equal(compileDateTimeNormaliser({ type: 'array', items: { type: 'integer' } }), undefined, 'no date-time: nothing to do')
  t.equal(compileDateTimeNormaliser({ type: 'array' }), undefined)
  t.equal(compileDateTimeNormaliser({ type: 'object' }), undefined)
  t.equal(compileWriter({ type: 'object', properties: { id: { type: 'integer' } } }, 'fast-json-stringify').stringify({ id: 1 }), '{"id":1}', 'no date-time: nothing to do')
})
