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

  // A sum of integers declared numbers (a bigint column read as doubles): each database adds them exactly and rounds
  // the sum once, and an average is that sum over the count. Past 2^63 - 1, PostgreSQL and MariaDB go on (numeric,
  // decimal); SQLite's sum of integers refuses ("integer overflow"), a 500 (docs/derived.md).
  t.test(`sums and averages of integers past 2^53 and 2^63 on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const { db } = database
    await db.schema.createTable('meters').addColumn('id', 'integer', (column) => column.primaryKey()).execute()
    await db.schema.createTable('counts').addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('meter_id', 'integer', (column) => column.notNull()).addColumn('value', 'bigint', (column) => column.notNull()).execute()
    await db.insertInto('meters').values([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }]).execute()
    await db.insertInto('counts').values([
      { id: 1, meter_id: 1, value: '9223372036854775807' }, { id: 2, meter_id: 1, value: '9223372036854775807' },
      // Exact, then rounded once: 9007199254740994, where adding the two as doubles gives 9007199254740992.
      { id: 3, meter_id: 2, value: '9007199254740993' }, { id: 4, meter_id: 2, value: '1' },
      { id: 5, meter_id: 3, value: '-9223372036854775808' }, { id: 6, meter_id: 3, value: '-9223372036854775808' }, { id: 7, meter_id: 3, value: '5' },
      // Added as doubles, 1e16 + 1 is 1e16 (PostgreSQL and MariaDB) or, with SQLite's compensated sum, 1e16 + 1: exactly, 1.
      { id: 8, meter_id: 5, value: '10000000000000000' }, { id: 9, meter_id: 5, value: '1' }, { id: 10, meter_id: 5, value: '-10000000000000000' },
    ]).execute()
    const Count = defineResource({
      name: 'Count', table: 'counts', schema: Type.Object({ id: Type.Integer(), value: Type.Number() }), fields: ['id', 'value'],
    })
    const Meter = defineResource({
      name: 'Meter',
      table: 'meters',
      schema: Type.Object({ id: Type.Integer(), counts: Type.Array(Type.Integer()) }),
      fields: ['id'],
      expandable: { counts: [Count, { many: true, foreignKey: 'meter_id' }] },
      aggregates: {
        total: { sum: ['counts', 'value'] },
        small: { sum: ['counts', 'value'], where: (eb) => eb('counts.value', '<', 10) },
        mean: { avg: ['counts', 'value'] },
      },
    })
    const app = Fastify()
    await app.register(expandPlugin, { db, resources: [Count, Meter] })
    app.expand.routes('/meters', Meter, { sort: ['total'], filter: { total: ['gt'], id: ['in'] } })
    await app.ready()
    t.teardown(() => app.close())

    // The double nearest an integer's exact decimal text.
    const exact = (text: string) => Number(text)
    const withinInt64 = await app.inject('/meters?filter[id][in]=2,4,5&expand=total,small,mean')
    t.equal(withinInt64.statusCode, 200)
    t.equal(withinInt64.body, JSON.stringify({
      data: [
        { id: 2, total: 9007199254740994, small: 1, mean: 9007199254740994 / 2 },
        { id: 4, total: null, small: null, mean: null },
        { id: 5, total: 1, small: exact('-9999999999999999'), mean: 1 / 3 },
      ],
      limit: 20,
      offset: 0,
      total: 3,
    }), 'each sum exact, then rounded to a double once; each average that sum over the count')

    const everyMeter = await app.inject('/meters?expand=total,small,mean&sort=total')
    const filtered = await app.inject('/meters?filter[total][gt]=1e18&fields=id')
    if (dialect.name.startsWith('sqlite')) {
      for (const refused of [everyMeter, filtered]) {
        t.equal(refused.statusCode, 500)
        t.equal(refused.json().code, 'FST_EXPAND_DATABASE_ERROR', "SQLite's sum of integers stops at 2^63 - 1")
      }
      return
    }
    t.equal(everyMeter.statusCode, 200)
    t.same(everyMeter.json().data, [
      { id: 3, total: exact('-18446744073709551611'), small: exact('-18446744073709551611'), mean: exact('-18446744073709551611') / 3 },
      { id: 5, total: 1, small: exact('-9999999999999999'), mean: 1 / 3 },
      { id: 2, total: 9007199254740994, small: 1, mean: 9007199254740994 / 2 },
      { id: 1, total: exact('18446744073709551614'), small: null, mean: exact('18446744073709551614') / 2 },
      { id: 4, total: null, small: null, mean: null },
    ], 'past 2^63 - 1 on PostgreSQL and MariaDB')
    t.equal(filtered.statusCode, 200)
    t.same(filtered.json().data, [{ id: 1 }])
  })
}
