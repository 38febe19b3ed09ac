import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { databaseOf, onDatabase } from '../fixtures/databases.js'
import { asWrittenOn, dialects, inComparableOrder, inOneWave, inWave, keySubqueryOf, pageAsSent, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import {
  compositeKeyResources, createCompositeKeys, Order, OrderLine, Playlist, PlaylistTrack, Shipment, Tag,
} from '../fixtures/composite-keys.js'

// Resources keyed by several columns (test/fixtures/composite-keys.ts): the
// detail route by the key's identifier ('1,3': each part in key order, joined
// by ','), lists in key order, to-one relations over several columns shown as
// the related identifier and expanded by one statement matching each key part
// by part, to-many and many-to-many relations from and to such resources with
// their id arrays of identifiers, cursor pages over both parts, the scope at
// every depth: the same bodies on every dialect, and the statements each runs.

// The orders again, with their shipments: a relation over one column whose rows hold a to-one over two columns
// (each part selected under a name with a dot, `line.0`), which a one-wave statement selects by those names.
const OrderShipments = defineResource({
  name: 'OrderShipments',
  table: 'orders',
  schema: Type.Object({ id: Type.Integer(), customer: Type.String(), shipments: Type.Array(Type.Integer()) }),
  fields: ['id', 'customer'],
  expandable: { shipments: [Shipment, { many: true, foreignKey: 'order_id' }] },
})

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...compositeKeyResources, OrderShipments] })
  app.expand.routes('/order-shipments', OrderShipments)
  app.expand.routes('/playlists', Playlist)
  app.expand.routes('/playlist-tracks', PlaylistTrack)
  app.expand.routes('/orders', Order)
  app.expand.routes('/order-lines', OrderLine, { pagination: 'cursor', cursorSecret: 'a cursor secret of 32 characters', sort: ['lineNo'] })
  app.expand.routes('/shipments', Shipment)
  app.expand.routes('/tags', Tag)
  // Rows a handler reads itself: a to-one over two columns from the columns under their names, or its identifier.
  app.get('/handler-shipments', { expandable: { resource: Shipment, list: true } }, async (request) => {
    const rows = await database.db.selectFrom('shipments').select(['id', 'carrier', 'order_id', 'line_no']).where('id', '<=', 2).orderBy('id').execute()
    return app.expand.load(request, [...rows, { id: 9, carrier: 'Given', line: '2,1' }])
  })
  app.get('/handler-shipments-without-keys', { expandable: { resource: Shipment, list: true } }, async (request) =>
    app.expand.load(request, [{ id: 1, carrier: 'Post' }]))
  await app.ready()
  return app
}

const lineColumns = '"order_lines"."order_id" as "orderId", "order_lines"."line_no" as "lineNo", ' +
  'cast("order_lines"."product" as text) as "product", "order_lines"."quantity" as "quantity"'
const shipmentColumns = '"shipments"."id" as "id", cast("shipments"."carrier" as text) as "carrier", ' +
  '"shipments"."order_id" as "line.0", "shipments"."line_no" as "line.1"'
const entryColumns = '"playlist_track"."playlist_id" as "playlistId", "playlist_track"."track_id" as "trackId", ' +
  '"playlist_track"."position" as "position"'

const ink = { orderId: 1, lineNo: 2, product: 'Ink', quantity: 1, shipments: [1, 3] }
const pad = { orderId: 2, lineNo: 1, product: 'Pad', quantity: 5, shipments: [2] }

for (const dialect of dialects()) {
  t.test(`composite keys on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createCompositeKeys(database.db, databaseOf(dialect))
    const app = await build(database)
    t.teardown(() => app.close())
    const get = async (url: string, headers: Record<string, string> = {}) => {
      database.reset()
      const response = await app.inject({ url, headers })
      return {
        status: response.statusCode,
        body: response.json() as unknown,
        statements: inComparableOrder(dialect, database.statements),
      }
    }
    /** A short page of `table`'s route, which reads its COUNT in one wave (`pageAsSent`). */
    const pageOf = (page: string, table: string) => pageAsSent(dialect, page, `select count(*) as "total" from "${table}"`)
    /** Expected statements written with double quotes and `?`: as the dialect writes them (numbered placeholders on PostgreSQL). */
    const written = (statements: string[]) =>
      inComparableOrder(dialect, statements.map((statement) => numbered(dialect, asWrittenOn(dialect, statement))))

    /**
     * A relation's statement as sent: `levelByLevel` where it waits for its parents' rows (its keys bound), else
     * `keyed` (keyed by its parents' statement, `keySubqueryOf`) in one wave (`inWave`), a composite key part by part.
     */
    const sent = (levelByLevel: string, keyed: string) => (inOneWave(dialect) ? inWave(dialect, keyed) : levelByLevel)
    const lineKey = ['"order_lines"."order_id"', '"order_lines"."line_no"']

    t.test('a detail by its identifier, with its to-one relations expanded', async (t) => {
      const entry = `select ${entryColumns}, "playlist_track"."playlist_id" as "playlist", "playlist_track"."track_id" as "track" ` +
        'from "playlist_track" where "playlist_track"."playlist_id" = ? and "playlist_track"."track_id" = ?'
      const related = (table: string, column: string) => {
        const statement = `select ${table}."id" as "id", cast(${table}."name" as text) as "name" from ${table} where ${table}."id" in ` +
          `(${inOneWave(dialect) ? keySubqueryOf(entry, column) : '?'})`
        return inOneWave(dialect) ? inWave(dialect, statement) : statement
      }
      t.strictSame(await get('/playlist-tracks/1,3?expand=playlist,track'), {
        status: 200,
        body: { playlistId: 1, trackId: 3, position: 1, playlist: { id: 1, name: 'Late' }, track: { id: 3, name: 'Sinnerman' } },
        statements: written([
          entry,
          // In one wave, keyed by the entry's statement: its to-one relations hold one column each.
          related('"playlists"', '"playlist_track"."playlist_id"'),
          related('"tracks"', '"playlist_track"."track_id"'),
        ]),
      })
    })

    t.test('an identifier of the wrong form is a 400, before any statement; an absent key a 404', async (t) => {
      const message = "params/id must be playlistId,trackId: Composite key: playlistId, trackId, joined by ','"
      for (const id of ['1', '1,x', '1,3,4', '1,99999999999999999999', ',', '1,', '1.0,3']) {
        t.strictSame(await get(`/playlist-tracks/${id}`), {
          status: 400,
          body: { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message },
          statements: [],
        }, id)
      }
      t.strictSame((await get('/playlist-tracks/9,9')).body, {
        statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'PlaylistTrack 9,9 not found',
      })
    })

    t.test('a list in key order: every part of the key', async (t) => {
      t.strictSame(await get('/playlist-tracks'), {
        status: 200,
        body: {
          data: [
            { playlistId: 1, trackId: 1, position: 2 },
            { playlistId: 1, trackId: 3, position: 1 },
            { playlistId: 2, trackId: 1, position: 1 },
          ],
          limit: 20,
          offset: 0,
          total: 3,
        },
        statements: written([
          pageOf(`select ${entryColumns} from "playlist_track" order by "playlist_track"."playlist_id", "playlist_track"."track_id" limit ? offset ?`,
            'playlist_track'),
        ]),
      })
    })

    t.test('a to-one relation over two columns: its identifier, or null; expanded by one statement', async (t) => {
      const shipments = [
        { id: 1, carrier: 'Post', line: '1,2' }, { id: 2, carrier: 'Courier', line: '2,1' },
        { id: 3, carrier: 'Post', line: '1,2' }, { id: 4, carrier: 'Pigeon', line: null },
      ]
      t.strictSame(await get('/shipments'), {
        status: 200,
        body: { data: shipments, limit: 20, offset: 0, total: 4 },
        statements: written([pageOf(`select ${shipmentColumns} from "shipments" order by "shipments"."id" limit ? offset ?`, 'shipments')]),
      })
      const expanded = await get('/shipments?expand=line')
      const page = `select ${shipmentColumns} from "shipments" order by "shipments"."id" limit ? offset ?`
      const lines = `select ${lineColumns} from "order_lines" where ("order_lines"."order_id", "order_lines"."line_no") in ` +
        `(${keySubqueryOf(page, ['"shipments"."order_id"', '"shipments"."line_no"'])})`
      const shipmentIds = 'select "shipments"."id" as "id", "shipments"."order_id" as "__expand_parent.0", "shipments"."line_no" as "__expand_parent.1" ' +
        'from "shipments" where '
      const shipmentOrder = ' order by "shipments"."order_id", "shipments"."line_no", "shipments"."id" limit 16384'
      t.strictSame(expanded, {
        status: 200,
        body: {
          data: [{ ...shipments[0], line: ink }, { ...shipments[1], line: pad }, { ...shipments[2], line: ink }, shipments[3]],
          limit: 20,
          offset: 0,
          total: 4,
        },
        statements: written([
          pageOf(page, 'shipments'),
          sent(`select ${lineColumns} from "order_lines" where (("order_lines"."order_id" = ? and "order_lines"."line_no" = ?) ` +
            'or ("order_lines"."order_id" = ? and "order_lines"."line_no" = ?))', lines),
          sent(`${shipmentIds}(("shipments"."order_id" = ? and "shipments"."line_no" = ?) ` +
            `or ("shipments"."order_id" = ? and "shipments"."line_no" = ?))${shipmentOrder}`,
          `${shipmentIds}("shipments"."order_id", "shipments"."line_no") in (${keySubqueryOf(lines, lineKey)})${shipmentOrder}`),
        ]),
      }, 'each distinct key once, matched part by part; in one wave, keyed by the parts of their parents\' keys')
      // In one wave no key is bound: each statement binds the page's limit and offset alone.
      t.strictSame(database.parameters.filter((values) => values.length === 4), inOneWave(dialect) ? [] : [[1, 2, 2, 1], [1, 2, 2, 1]])
      if (inOneWave(dialect)) t.strictSame(database.parameters, [[20, 0], [20, 0], [20, 0]])
      t.strictSame((await get('/shipments/2?expand=line', { 'x-no-pads': '1' })).body, { ...shipments[1], line: null }, 'under the scope')
    })

    t.test('a to-many relation to a resource with a composite key: identifiers as ids, rows expanded', async (t) => {
      const order = 'select "orders"."id" as "id", cast("orders"."customer" as text) as "customer" from "orders" where "orders"."id" = ?'
      const lineIds = 'select "order_lines"."order_id" as "id.0", "order_lines"."line_no" as "id.1", "order_lines"."order_id" as "__expand_parent" ' +
        'from "order_lines" where "order_lines"."order_id" in '
      const lineOrder = ' order by "order_lines"."order_id", "order_lines"."line_no" limit 16384'
      t.strictSame(await get('/orders/1'), {
        status: 200,
        body: { id: 1, customer: 'Ada', lines: ['1,1', '1,2'] },
        statements: written([
          order,
          // Its parents' keys have one column: in one wave, matched as any other relation's.
          sent(`${lineIds}(?)${lineOrder}`, `${lineIds}(${keySubqueryOf(order, '"orders"."id"')})${lineOrder}`),
        ]),
      })
      const expanded = await get('/orders?expand=lines&fields=id,lines.product', { 'x-no-pads': '1' })
      t.strictSame(expanded.body, {
        data: [{ id: 1, lines: [{ product: 'Pen' }, { product: 'Ink' }] }, { id: 2, lines: [] }], limit: 20, offset: 0, total: 2,
      }, 'under the related scope')
      const orders = 'select "orders"."id" as "id" from "orders" order by "orders"."id" limit ? offset ?'
      const lineRows = 'select "order_lines"."order_id" as "orderId", "order_lines"."line_no" as "lineNo", ' +
        'cast("order_lines"."product" as text) as "product", "order_lines"."order_id" as "__expand_parent" from "order_lines" ' +
        'where "order_lines"."product" <> ? and "order_lines"."order_id" in '
      t.strictSame(expanded.statements, written([
        pageOf(orders, 'orders'),
        sent(`${lineRows}(?, ?)${lineOrder}`, `${lineRows}(${keySubqueryOf(orders, '"orders"."id"')})${lineOrder}`),
      ]))
    })

    t.test('relations from a resource with a composite key: to-many over two columns, many-to-many through them', async (t) => {
      const line = `select ${lineColumns} from "order_lines" where "order_lines"."order_id" = ? and "order_lines"."line_no" = ?`
      const shipmentIds = 'select "shipments"."id" as "id", "shipments"."order_id" as "__expand_parent.0", "shipments"."line_no" as "__expand_parent.1" ' +
        'from "shipments" where '
      const shipmentOrder = ' order by "shipments"."order_id", "shipments"."line_no", "shipments"."id" limit 16384'
      const tags = 'select "tags"."id" as "id", cast("tags"."name" as text) as "name", "line_tags"."order_id" as "__expand_parent.0", ' +
        '"line_tags"."line_no" as "__expand_parent.1" from "tags" inner join "line_tags" on "line_tags"."tag_id" = "tags"."id" where '
      const tagOrder = ' order by "line_tags"."order_id", "line_tags"."line_no", "line_tags"."tag_id" limit 16384'
      const tagsKeyed = `${tags}("line_tags"."order_id", "line_tags"."line_no") in (${keySubqueryOf(line, lineKey)})${tagOrder}`
      const tagLineIds = 'select "line_tags"."order_id" as "id.0", "line_tags"."line_no" as "id.1", "line_tags"."tag_id" as "__expand_parent" ' +
        'from "line_tags" inner join "order_lines" on "line_tags"."order_id" = "order_lines"."order_id" ' +
        'and "line_tags"."line_no" = "order_lines"."line_no" where "line_tags"."tag_id" in '
      const tagLineOrder = ' order by "line_tags"."tag_id", "line_tags"."order_id", "line_tags"."line_no" limit 16384'
      t.strictSame(await get('/order-lines/1,2?expand=tags'), {
        status: 200,
        body: { ...ink, tags: [{ id: 1, name: 'fragile', lines: ['1,2'] }, { id: 2, name: 'gift', lines: ['1,2', '2,1'] }] },
        statements: written([
          line,
          sent(`${shipmentIds}("shipments"."order_id" = ? and "shipments"."line_no" = ?)${shipmentOrder}`,
            `${shipmentIds}("shipments"."order_id", "shipments"."line_no") in (${keySubqueryOf(line, lineKey)})${shipmentOrder}`),
          sent(`${tags}("line_tags"."order_id" = ? and "line_tags"."line_no" = ?)${tagOrder}`, tagsKeyed),
          // Keyed by the tags' statement, itself keyed by the line's parts.
          sent(`${tagLineIds}(?, ?)${tagLineOrder}`, `${tagLineIds}(${keySubqueryOf(tagsKeyed, '"tags"."id"')})${tagLineOrder}`),
        ]),
      })
      t.strictSame((await get('/order-lines/1,2?expand=shipments.line&fields=lineNo,shipments.id,shipments.line.product')).body, {
        lineNo: 2, shipments: [{ id: 1, line: { product: 'Ink' } }, { id: 3, line: { product: 'Ink' } }],
      }, 'and back through the to-one over both columns')
      t.strictSame((await get('/tags/2', { 'x-no-pads': '1' })).body, { id: 2, name: 'gift', lines: ['1,2'] }, 'ids under the related scope')
      const hidden = { 'x-no-line-numbers': '1' }
      t.strictSame((await get('/orders/1', hidden)).body, { id: 1, customer: 'Ada' }, 'no identifiers where a part is hidden by fieldsFor')
      t.strictSame((await get('/orders/1?expand=lines&fields=id,lines.product,lines.lineNo', hidden)).body, {
        statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message: "Field 'lines.lineNo' in 'fields' is not available to this request",
      }, 'a hidden part asked for')
      t.strictSame((await get('/orders/1?expand=lines&fields=id,lines.product', hidden)).body, {
        id: 1, lines: [{ product: 'Pen' }, { product: 'Ink' }],
      }, 'the rows, without the hidden part')
    })

    t.test('a relation over one column whose rows hold a to-one over two columns: the same answer, in one wave too', async (t) => {
      const reply = await get('/order-shipments/1?expand=shipments.line')
      t.strictSame(reply.body, {
        id: 1,
        customer: 'Ada',
        shipments: [{ id: 1, carrier: 'Post', line: ink }, { id: 3, carrier: 'Post', line: ink }],
      })
      t.equal(reply.statements.length, 4, 'the order, its shipments, their lines, the lines\' shipment ids')
      t.equal(reply.statements.filter((statement) => statement.startsWith('with ')).length, inOneWave(dialect) ? 3 : 0,
        'in one wave: all three sent with the order\'s row')
      t.strictSame((await get('/order-shipments/1?expand=shipments')).body, {
        id: 1, customer: 'Ada', shipments: [{ id: 1, carrier: 'Post', line: '1,2' }, { id: 3, carrier: 'Post', line: '1,2' }],
      }, 'the to-one shown as its identifier')
    })

    t.test('rows a handler gives: the columns of a to-one over two columns, or its identifier', async (t) => {
      t.strictSame((await get('/handler-shipments?fields=id,line')).body, [{ id: 1, line: '1,2' }, { id: 2, line: '2,1' }, { id: 9, line: '2,1' }])
      t.strictSame((await get('/handler-shipments?fields=id,line.product&expand=line')).body, [
        { id: 1, line: { product: 'Ink' } }, { id: 2, line: { product: 'Pad' } }, { id: 9, line: { product: 'Pad' } },
      ])
      t.strictSame((await get('/handler-shipments-without-keys')).body, {
        statusCode: 500,
        code: 'FST_EXPAND_INVALID_DATA',
        error: 'Internal Server Error',
        message: "Shipment rows given to load lack 'line' or its columns 'order_id', 'line_no', which hold the OrderLine of 'line'",
      })
    })

    t.test('many-to-many through a join table that is also a resource', async (t) => {
      t.strictSame((await get('/playlists/1?expand=entries,tracks')).body, {
        id: 1,
        name: 'Late',
        entries: [{ playlistId: 1, trackId: 1, position: 2 }, { playlistId: 1, trackId: 3, position: 1 }],
        tracks: [{ id: 1, name: 'So What' }, { id: 3, name: 'Sinnerman' }],
      })
    })

    t.test('cursor pages over both parts of the key, both ways', async (t) => {
      type Page = { data: unknown[], limit: number, next: string | null, prev: string | null }
      const page = async (url: string) => (await get(url)).body as Page
      const first = await page('/order-lines?limit=2&fields=orderId,lineNo')
      t.strictSame([first.data, first.prev], [[{ orderId: 1, lineNo: 1 }, { orderId: 1, lineNo: 2 }], null])
      database.reset()
      const second = await page(`/order-lines?limit=2&fields=orderId,lineNo&after=${encodeURIComponent(first.next!)}`)
      t.strictSame([second.data, second.next], [[{ orderId: 2, lineNo: 1 }], null], 'after (1, 2): (2, 1), then the end')
      // MariaDB's keyset bounds its first column too (rowComparison in sql/dialects/mysql.ts), for its range over the index.
      const keyset = onDatabase(dialect, {
        sqlite: '("order_lines"."order_id", "order_lines"."line_no") > (?, ?)',
        postgres: '("order_lines"."order_id", "order_lines"."line_no") > (?, ?)',
        mariadb: '("order_lines"."order_id" >= ? and ("order_lines"."order_id", "order_lines"."line_no") > (?, ?))',
      })
      t.strictSame(database.statements, [numbered(dialect, asWrittenOn(dialect,
        'select "order_lines"."order_id" as "orderId", "order_lines"."line_no" as "lineNo", "order_lines"."order_id" as "__expand_key_0", ' +
        `"order_lines"."line_no" as "__expand_key_1" from "order_lines" where ${keyset} ` +
        'order by "order_lines"."order_id" asc, "order_lines"."line_no" asc limit ?'))], 'a keyset over both parts')
      const back = await page(`/order-lines?limit=1&fields=orderId,lineNo&before=${encodeURIComponent(second.prev!)}`)
      t.strictSame([back.data, back.next !== null], [[{ orderId: 1, lineNo: 2 }], true], 'and back before (2, 1)')
      const further = await page(`/order-lines?limit=1&fields=orderId,lineNo&before=${encodeURIComponent(back.prev!)}`)
      t.strictSame([further.data, further.prev], [[{ orderId: 1, lineNo: 1 }], null], 'to the first row')
      const sorted = await page('/order-lines?limit=5&fields=orderId,lineNo&sort=-lineNo')
      t.strictSame(sorted.data, [{ orderId: 1, lineNo: 2 }, { orderId: 1, lineNo: 1 }, { orderId: 2, lineNo: 1 }], 'a sort by one part: the key after it')
    })
  })
}

/** `?` placeholders numbered `$1`, `$2`, ... on PostgreSQL. */
function numbered (dialect: Dialect, statement: string): string {
  let count = 0
  return dialect.name === 'postgres' ? statement.replace(/\?/g, () => `$${++count}`) : statement
}
