// Type tests (tstyche): a composite key's identifier, where a relation holds one.
import { Type } from '@sinclair/typebox'
import { expect, test } from 'tstyche'
import { defineResource, type Expanded, type FieldName } from '../plugin/index.js'

const OrderLine = defineResource({
  name: 'OrderLine',
  table: 'order_lines',
  primaryKey: ['orderId', 'lineNo'],
  schema: Type.Object({ orderId: Type.Integer(), lineNo: Type.Integer(), product: Type.String() }),
  fields: ['orderId', 'lineNo', 'product'],
})
const Labelled = defineResource({
  name: 'Labelled',
  table: 'labelled',
  primaryKey: ['label', 'version'],
  schema: Type.Object({ label: Type.String(), version: Type.Integer() }),
  fields: ['label', 'version'],
})
const Shipment = defineResource({
  name: 'Shipment',
  table: 'shipments',
  schema: Type.Object({
    id: Type.Integer(),
    line: Type.Union([Type.String(), Type.Null()]),
    lines: Type.Array(Type.String()),
    labelled: Type.String(),
  }),
  fields: ['id', 'line', 'lines', 'labelled'],
  expandable: {
    line: [OrderLine, { column: ['order_id', 'line_no'] }],
    lines: [OrderLine, { many: true, through: { table: 'shipment_lines', from: 'shipment_id', to: ['order_id', 'line_no'] } }],
    labelled: [Labelled, { column: ['label', 'version'] }],
  },
})

test('a composite key is kept as declared', () => {
  expect(OrderLine.primaryKey).type.toBe<readonly ['orderId', 'lineNo']>()
  const One = defineResource({ name: 'One', schema: Type.Object({ id: Type.Integer() }), fields: ['id'], primaryKey: 'id' })
  expect(One.primaryKey).type.toBe<'id'>()
  expect(Shipment.primaryKey).type.toBe<FieldName<typeof Shipment.schema> | readonly FieldName<typeof Shipment.schema>[]>()
})

test('a relation to a resource with a composite key holds its identifier when not expanded', () => {
  expect<Expanded<typeof Shipment>>().type.toBe<{
    id: number
    line: `${number},${number}` | null
    lines: Array<`${number},${number}`>
    labelled: `${string},${number}`
  }>()
})

test('expanded, the related row', () => {
  expect<Expanded<typeof Shipment, 'line', 'id,line'>>().type.toBe<{
    id: number
    line: { orderId: number, lineNo: number, product: string } | null
  }>()
})

test('a composite key names fields of the schema', () => {
  expect(defineResource).type.not.toBeCallableWith({
    name: 'Bad', table: 'bad', primaryKey: ['orderId', 'missing'], schema: Type.Object({ orderId: Type.Integer() }), fields: ['orderId'],
  })
})
