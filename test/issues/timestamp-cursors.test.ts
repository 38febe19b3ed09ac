import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import pg from 'pg'
import t from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'

// Cursor pages over a PostgreSQL `timestamp` (without time zone) outside UTC.
// What went wrong: pg reads a `timestamp` as a Date in the process's time zone;
// the cursor carried that Date's UTC text, and PostgreSQL, casting the text back
// to `timestamp`, dropped the `Z`: with TZ=Asia/Tokyo a walk over 140 invoices
// yielded 163 rows, 23 of them repeated (rows skipped where times were not midnight).
// What must hold, in every time zone and on every dialect: a walk yields each row
// once, in order, whatever pg's reading of `timestamp`; with `timestamp` read as
// UTC (the README's type parser), each date-time written is the stored instant and
// a value copied from a response finds its own row.

const Invoice = defineResource({
  name: 'Invoice',
  table: 'invoices',
  schema: Type.Object({ id: Type.Integer(), invoice_date: Type.String({ format: 'date-time' }) }),
  fields: ['id', 'invoice_date'],
})

/** 140 invoices over 40 days: some at midnight, most not, several sharing an instant. */
const stored = Array.from({ length: 140 }, (_, index) => {
  const id = index + 1
  const day = 1 + (index * 7) % 40
  const time = index % 5 === 0 ? '00:00:00' : `${String((index * 5) % 24).padStart(2, '0')}:${String((index * 13) % 60).padStart(2, '0')}:0${index % 3}`
  return { id, text: `2021-${day > 31 ? '02' : '01'}-${String(day > 31 ? day - 31 : day).padStart(2, '0')} ${time}` }
})
const instantOf = (text: string) => new Date(`${text.replace(' ', 'T')}Z`).toISOString()
const ascending = [...stored].sort((a, b) => a.text.localeCompare(b.text) || a.id - b.id).map(({ id }) => id)
const descending = [...stored].sort((a, b) => b.text.localeCompare(a.text) || a.id - b.id).map(({ id }) => id)
const zones = ['UTC', 'Asia/Tokyo', 'America/New_York']
const defaultTimestampParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMP)
/** The README's parser: a `timestamp` (stored without an offset) is UTC. */
const utcTimestampParser = (text: string) => new Date(`${text.replace(' ', 'T')}Z`)

for (const dialect of dialects()) {
  t.test(`cursor walks over date-times in several time zones on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    // MariaDB's date-times are DATETIME (UTC wall clock, as PostgreSQL's timestamp here): it reads no offset in a text.
    await database.db.schema.createTable('invoices').addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('invoice_date', dialect.name === 'postgres' ? 'timestamp' : dialect.name === 'mariadb' ? 'datetime(6)' : 'text', (c) => c.notNull()).execute()
    await database.db.insertInto('invoices').values(stored.map(({ id, text }) => ({ id, invoice_date: text }))).execute()
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: [Invoice] })
    app.expand.routes('/invoices', Invoice, { pagination: 'cursor', pageSize: 9, filter: { invoice_date: ['eq'] }, sort: ['invoice_date'] })
    t.teardown(() => app.close())
    await app.ready()
    const zone = process.env.TZ
    t.teardown(() => {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
      pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, defaultTimestampParser)
    })

    const walk = async (sort: string) => {
      const rows: Array<{ id: number; invoice_date: string }> = []
      let after: string | null = ''
      for (let page = 0; after !== null && page < 40; page++) {
        const response = await app.inject(`/invoices?sort=${sort}${after === '' ? '' : `&after=${encodeURIComponent(after)}`}`)
        t.equal(response.statusCode, 200)
        const body = response.json() as { data: Array<{ id: number; invoice_date: string }>; next: string | null }
        rows.push(...body.data)
        after = body.next
      }
      return rows
    }

    for (const parser of ['pg default', 'UTC'] as const) {
      pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, parser === 'UTC' ? utcTimestampParser : defaultTimestampParser)
      for (const name of zones) {
        process.env.TZ = name
        t.equal(new Date(2021, 0, 1).getTimezoneOffset(), { UTC: 0, 'Asia/Tokyo': -540, 'America/New_York': 300 }[name], `${name} is in force`)
        const forward = await walk('invoice_date')
        t.same(forward.map(({ id }) => id), ascending, `${parser} parser, TZ=${name}: each row once, in order`)
        const backward = await walk('-invoice_date')
        t.same(backward.map(({ id }) => id), descending, `${parser} parser, TZ=${name}: descending, each row once`)
        // SQLite returns the text: the written instant never depends on the parser or the zone there.
        if (parser === 'pg default' && dialect.name === 'postgres') continue
        t.same(forward, ascending.map((id) => ({ id, invoice_date: instantOf(stored[id - 1]!.text) })), `${parser} parser, TZ=${name}: the stored instants`)
        for (const row of [forward[0]!, forward[17]!, forward[139]!]) {
          const found = await app.inject(`/invoices?fields=id&filter[invoice_date]=${row.invoice_date}`)
          t.same(found.json().data.map(({ id }: { id: number }) => id).includes(row.id), true, `TZ=${name}: ${row.invoice_date} copied from a response finds its row`)
        }
      }
    }
  })
}
