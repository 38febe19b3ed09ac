import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'

// An average of doubles over their whole range: PostgreSQL's own avg of double precision also sums the squares
// of the values (for the variance its state serves), which overflow past about 1.3e154 and fail the statement,
// where SQLite's and MariaDB's answer. The plugin averages as sum / count: the same quotient on every database.
// Down at the subnormal doubles too: PostgreSQL refuses a quotient that rounds to 0 from a sum that is not 0
// ("value out of range: underflow"), where IEEE division (SQLite, MariaDB, JavaScript) gives 0.
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
    await db.insertInto('sensors').values([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }, { id: 6 }]).execute()
    await db.insertInto('readings').values([
      { id: 1, sensor_id: 1, value: 1e200 }, { id: 2, sensor_id: 1, value: 1 },
      { id: 3, sensor_id: 2, value: 3 }, { id: 4, sensor_id: 2, value: null }, { id: 5, sensor_id: 2, value: 4 },
      { id: 6, sensor_id: 3, value: null },
      { id: 7, sensor_id: 5, value: 5e-324 }, { id: 8, sensor_id: 5, value: 0 },
      { id: 9, sensor_id: 6, value: 1e-322 }, { id: 10, sensor_id: 6, value: 0 },
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
        // 2.5e-324 rounds to 0; 5e-323 is a subnormal double.
        { id: 5, mean: 0, large_mean: null },
        { id: 6, mean: 5e-323, large_mean: null },
      ],
      limit: 20,
      offset: 0,
      total: 6,
    }), 'NULLs left out of the count; no value, or no row: null')
    const sorted = await app.inject('/sensors?sort=-mean&fields=id&filter[mean][null]=false')
    t.equal(sorted.statusCode, 200)
    t.same(sorted.json().data, [{ id: 1 }, { id: 2 }, { id: 6 }, { id: 5 }], 'sorted and filtered by it')
    const tiny = await app.inject('/sensors?filter[mean][gt]=0&fields=id,mean&sort=mean')
    t.equal(tiny.statusCode, 200)
    t.same(tiny.json().data, [{ id: 6, mean: 5e-323 }, { id: 2, mean: 3.5 }, { id: 1, mean: 5e199 }], 'the quotient rounded to 0 is 0')
    const above = await app.inject('/sensors?filter[mean][gt]=1e100&expand=mean')
    t.same(above.json().data, [{ id: 1, mean: 5e199 }])
  })
}
