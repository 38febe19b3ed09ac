import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'

// An average of doubles over their whole range: PostgreSQL's own avg of double precision also sums the squares
// of the values (for the variance its state serves), which overflow past about 1.3e154 and fail the statement,
// where SQLite's and MariaDB's answer. The plugin averages as sum / count: the same quotient on every database.
const Reading = defineResource({
  name: 'Reading',
  table: 'readings',
  schema: Type.Object({ id: Type.Integer(), value: Type.Union([Type.Number(), Type.Null()]) }),
  fields: ['id', 'value'],
})
const Sensor = defineResource({
  name: 'Sensor',
  table: 'sensors',
  schema: Type.Object({ id: Type.Integer(), readings: Type.Array(Type.Integer()) }),
  fields: ['id'],
  expandable: { readings: [Reading, { many: true, foreignKey: 'sensor_id' }] },
  aggregates: {
    mean: { avg: ['readings', 'value'] },
    large_mean: { avg: ['readings', 'value'], where: (eb) => eb('readings.value', '>', 1) },
  },
})

for (const dialect of dialects()) {
  t.test(`an average of doubles past 1e154 on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const { db } = database
    await db.schema.createTable('sensors').addColumn('id', 'integer', (column) => column.primaryKey()).execute()
    await db.schema.createTable('readings').addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('sensor_id', 'integer', (column) => column.notNull()).addColumn('value', 'double precision').execute()
    await db.insertInto('sensors').values([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }]).execute()
    await db.insertInto('readings').values([
      { id: 1, sensor_id: 1, value: 1e200 }, { id: 2, sensor_id: 1, value: 1 },
      { id: 3, sensor_id: 2, value: 3 }, { id: 4, sensor_id: 2, value: null }, { id: 5, sensor_id: 2, value: 4 },
      { id: 6, sensor_id: 3, value: null },
    ]).execute()
    const app = Fastify()
    await app.register(expandPlugin, { db, resources: [Reading, Sensor] })
    app.expand.routes('/sensors', Sensor, { sort: ['mean'], filter: { mean: ['null', 'gt'] } })
    await app.ready()
    t.teardown(() => app.close())

    const expanded = await app.inject('/sensors?expand=mean,large_mean')
    t.equal(expanded.statusCode, 200)
    t.equal(expanded.body, JSON.stringify({
      data: [
        { id: 1, mean: 5e199, large_mean: 1e200 },
        { id: 2, mean: 3.5, large_mean: 3.5 },
        { id: 3, mean: null, large_mean: null },
        { id: 4, mean: null, large_mean: null },
      ],
      limit: 20,
      offset: 0,
      total: 4,
    }), 'NULLs left out of the count; no value, or no row: null')
    const sorted = await app.inject('/sensors?sort=-mean&fields=id&filter[mean][null]=false')
    t.equal(sorted.statusCode, 200)
    t.same(sorted.json().data, [{ id: 1 }, { id: 2 }], 'sorted and filtered by it')
    const above = await app.inject('/sensors?filter[mean][gt]=1e100&expand=mean')
    t.same(above.json().data, [{ id: 1, mean: 5e199 }])
  })
}
