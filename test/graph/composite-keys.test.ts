import { Type, type TSchema } from '@sinclair/typebox'
import Fastify from 'fastify'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource, type RelationOptions } from '../../plugin/index.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { identifierDescription, identifierOf, identifierPattern, partsOf } from '../../plugin/graph/identifiers.js'
import { OrderLine, Order, Shipment, Tag } from '../fixtures/composite-keys.js'

// Composite primary keys as definitions declare them (`primaryKey` a list of
// fields, relation key columns a list of columns in the key's order), each
// mistake named at startup; and their identifier: the parts in key order,
// integers in decimal and strings percent-encoded, joined by ','.

const lineSchema = Type.Object({ orderId: Type.Integer(), lineNo: Type.Integer(), note: Type.String(), done: Type.Boolean() })

t.test('defineResource: a composite key is two or more fields of the schema, integers or strings', async (t) => {
  const define = (primaryKey: unknown) => () => defineResource({
    name: 'Line', table: 'lines', schema: lineSchema, fields: ['orderId'], primaryKey: primaryKey as 'orderId',
  })
  t.strictSame(define(['orderId', 'lineNo'])().primaryKey, ['orderId', 'lineNo'])
  t.ok(Object.isFrozen(define(['orderId', 'note'])().primaryKey), 'a key of an integer and a string, frozen')
  t.throws(define(['orderId']), { code: 'FST_EXPAND_INVALID_DEFINITION', message: /^Resource 'Line': primaryKey \[orderId\] must be one field, or the fields of a composite key: two or more field names, each once$/ })
  t.throws(define(['orderId', 'orderId']), { message: /primaryKey \[orderId, orderId\] must be one field/ })
  t.throws(define(['orderId', 7]), { message: /primaryKey \[orderId, 7\] must be one field/ })
  t.throws(define(['orderId', 'missing']), { message: /^Resource 'Line': primaryKey 'missing' is not in its schema$/ })
  t.throws(define(['orderId', 'done']), {
    message: /^Resource 'Line': primaryKey part 'done' must be an integer or a string field: a composite key's identifier writes each part's value$/,
  })
})

t.test('defineResource: a relation\'s key columns are one column or two and more', async (t) => {
  const define = (options: RelationOptions) => () => defineResource({
    name: 'Note',
    table: 'notes',
    schema: Type.Object({ id: Type.Integer(), line: Type.String() }),
    fields: ['id', 'line'],
    expandable: { line: [OrderLine, options] },
  })
  t.throws(define({ column: ['order_id'] }), {
    message: /^Resource 'Note': expandable field 'line': column must be a column name, or the columns of a composite key \(two or more\)$/,
  })
  t.throws(define({ column: ['order_id', 'line no'] }), { message: /column 'line no' must be a column name/ })
  t.throws(define({ column: ['order_id', 'line_no'], load: async () => new Map() }), {
    message: /a relation over a composite key does not take load yet/,
  })
})

t.test('the key columns of each relation against the key they hold, at startup', async (t) => {
  const note = (line: AnyResource | [AnyResource, RelationOptions], schema: TSchema = Type.String()) => defineResource({
    name: 'Note', table: 'notes', schema: Type.Object({ id: Type.Integer(), line: schema }), fields: ['id', 'line'], expandable: { line },
  })
  const graph = (resource: AnyResource) => () => new ResourceGraph([resource], { loadsFromDatabase: true })
  t.throws(graph(note(OrderLine)), {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: "Resource 'Note', field 'line': column names 1 column (line), but OrderLine's primary key has 2 parts (orderId, lineNo): " +
      "name one column per part, in the key's order",
  })
  t.throws(graph(note([Order, { column: ['order_id', 'line_no'] }], Type.Integer())), {
    message: "Resource 'Note', field 'line': column names 2 columns (order_id, line_no), but Order's primary key has 1 part (id): " +
      "name one column per part, in the key's order",
  })
  const lines = Type.Array(Type.String())
  t.throws(graph(note([OrderLine, { many: true, through: { table: 'note_lines', from: 'note_id', to: 'order_id' } }], lines)), {
    message: /field 'line': through\.to names 1 column \(order_id\), but OrderLine's primary key has 2 parts/,
  })
  t.throws(graph(note([OrderLine, { many: true, through: { table: 'note_lines', from: ['a', 'b'], to: ['order_id', 'line_no'] } }], lines)), {
    message: /field 'line': through\.from names 2 columns \(a, b\), but Note's primary key has 1 part \(id\)/,
  })
  const Part = defineResource({
    name: 'Part',
    table: 'parts',
    primaryKey: ['orderId', 'lineNo'],
    schema: Type.Object({ orderId: Type.Integer(), lineNo: Type.Integer(), notes: Type.Array(Type.Integer()) }),
    fields: ['orderId'],
    expandable: { notes: [Shipment, { many: true, foreignKey: 'part_id' }] },
  })
  t.throws(graph(Part), { message: /field 'notes': foreignKey names 1 column \(part_id\), but Part's primary key has 2 parts \(orderId, lineNo\)/ })
  t.throws(graph(note([OrderLine, { many: true, foreignKey: 'note_id', limit: 2 }], lines)), {
    message: "Resource 'Note', field 'line': a relation over a composite key does not take limit yet",
  })
  t.throws(graph(note([OrderLine, { load: async () => new Map() }])), {
    message: "Resource 'Note', field 'line': a relation over a composite key does not take load yet",
  })
  const Counted = defineResource({
    name: 'Counted',
    table: 'counted',
    schema: Type.Object({ id: Type.Integer(), lines: Type.Array(Type.String()) }),
    fields: ['id'],
    expandable: { lines: [OrderLine, { many: true, foreignKey: 'counted_id' }] },
    aggregates: { lineCount: { count: 'lines' } },
  })
  t.throws(graph(Counted), {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: "Resource 'Counted', aggregates.lineCount: 'lines' reads a composite key, which aggregates do not follow yet",
  })
})

t.test('lists do not follow a relation over a composite key yet: filters, sorts and expanded lists say so', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })
  await app.register(expandPlugin, { db, resources: [Order, OrderLine, Shipment, Tag] })
  t.throws(() => app.expand.routes('/shipments', Shipment, { filter: { 'line.product': ['eq'] } }), {
    code: 'FST_EXPAND_INVALID_OPTION', message: "filter 'line.product': 'line' reads a composite key, which list filters do not follow yet",
  })
  t.throws(() => app.expand.routes('/orders', Order, { filter: { 'lines.product': ['eq'] } }), {
    message: "filter 'lines.product': 'lines' reads a composite key, which list filters do not follow yet",
  })
  t.throws(() => app.expand.routes('/orders', Order, { filter: { lines: ['exists'] } }), {
    message: "filter 'lines': 'lines' reads a composite key, which list filters do not follow yet",
  })
  t.throws(() => app.expand.routes('/shipments', Shipment, { sort: ['line.product'] }), {
    code: 'FST_EXPAND_INVALID_OPTION',
    message: "sort: 'line.product' goes through 'line', a to-one relation over a composite key, which list sorts do not follow yet",
  })
  t.throws(() => app.expand.routes('/orders', Order, { expandedLists: { lines: { sort: ['lineNo'] } } }), {
    message: /Order\.lines reads a composite key, which expanded lists do not follow yet/,
  })
})

t.test('the identifier: parts in key order, strings percent-encoded, joined by a comma', async (t) => {
  t.equal(identifierOf([1, 5]), '1,5')
  t.equal(identifierOf([-1, 9007199254740993n]), '-1,9007199254740993')
  t.equal(identifierOf(['a,b', '50%', 3]), 'a%2Cb,50%25,3')
  t.equal(identifierOf([1, null]), null, 'a null part: no key')
  t.equal(identifierOf([1, undefined]), undefined, 'an absent part: no value')
  t.strictSame(partsOf('a%2Cb,50%25,3', ['string', 'string', 'integer']), ['a,b', '50%', 3])
  t.strictSame(partsOf(',', ['string', 'string']), ['', ''])
  t.equal(identifierPattern(['string', 'integer']), '^[^,]*,-?[0-9]+$')
  t.equal(identifierDescription(['label', 'version'], ['string', 'integer']),
    "Composite key: label, version, joined by ',' (string parts percent-encoded)")
  for (const text of ['1', '1,2,3', '1,x', '1,1e3', '1,99999999999999999', '%E0%A4%A,1']) {
    t.equal(partsOf(text, ['string', 'integer']), undefined, text)
  }
})
