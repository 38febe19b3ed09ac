// The statements of relations over a composite key read the key's index on every database: a to-one
// relation over (order_id, line_no) finds the order lines by their primary key, and the shipments of
// some order lines are read by shipments_line (order_id, line_no), each key matched part by part
// (`(a = ? and b = ?) or ...`, sql/composite-keys.ts; on PostgreSQL in one wave, `(a, b) in (select ...)` over
// the parts of the parents' keys). Each statement is the one the route ran, explained with its own parameters on
// enough rows, analysed, that each planner chooses by cost.
import Fastify from 'fastify'
import { CompiledQuery, sql } from 'kysely'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { databaseOf, onDatabase, type Database } from '../fixtures/databases.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { compositeKeyResources, compositeKeyTables, OrderLine, Shipment } from '../fixtures/composite-keys.js'

const orderCount = 5000
const linesPerOrder = 4

async function fill (database: TestDatabase, name: Database): Promise<void> {
  const { db } = database
  for (const statement of compositeKeyTables(name)) await sql.raw(statement).execute(db)
  await sql.raw('create index shipments_line on shipments (order_id, line_no)').execute(db)
  const orders = Array.from({ length: orderCount }, (_, index) => ({ id: index + 1, customer: `c${index}` }))
  const lines = orders.flatMap(({ id }) => Array.from({ length: linesPerOrder }, (_, line) => ({
    order_id: id, line_no: line + 1, product: 'Pen', quantity: line,
  })))
  const shipments = lines.map((line, index) => ({ id: index + 1, carrier: 'Post', order_id: line.order_id, line_no: line.line_no }))
  for (const [table, rows] of [['orders', orders], ['order_lines', lines], ['shipments', shipments]] as const) {
    for (let start = 0; start < rows.length; start += 500) {
      await db.insertInto(table).values(rows.slice(start, start + 500) as never).execute()
    }
  }
  const analyse = { sqlite: 'analyze', postgres: 'analyze', mariadb: 'analyze table orders, order_lines, shipments' } as const
  await sql.raw(analyse[name]).execute(db)
}

/** What each database's plan says of a statement, as text. */
async function planOf (database: TestDatabase, name: Database, statement: string, parameters: readonly unknown[]): Promise<string> {
  const explain = { sqlite: 'explain query plan', postgres: 'explain (format json)', mariadb: 'explain format=json' } as const
  const { rows } = await database.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`${explain[name]} ${statement}`, [...parameters]))
  if (name === 'sqlite') return rows.map((row) => String(row.detail)).join('\n')
  return name === 'postgres' ? JSON.stringify(rows[0]!['QUERY PLAN']) : JSON.stringify(JSON.parse(String(rows[0]!.EXPLAIN)))
}

for (const dialect of dialects()) {
  t.test(`${dialect.name}: relations over a composite key read its index`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const name = databaseOf(dialect)
    await fill(database, name)
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(expandPlugin, { db: database.db, resources: compositeKeyResources })
    app.expand.routes('/shipments', Shipment)
    app.expand.routes('/order-lines', OrderLine)
    await app.ready()
    const statementOf = async (url: string, table: string) => {
      database.reset()
      const reply = await app.inject(url)
      t.equal(reply.statusCode, 200, url)
      const index = database.statements.findIndex((statement) => statement.includes(`from ${table}`) || statement.includes(`from "${table}"`) ||
        statement.includes(`from \`${table}\``))
      return planOf(database, name, database.statements[index]!, database.parameters[index]!)
    }

    const toOne = await statementOf('/shipments?expand=line&offset=4000&limit=20&fields=id,line.product', 'order_lines')
    t.match(toOne, onDatabase(dialect, {
      sqlite: /MULTI-INDEX OR[\s\S]*SEARCH order_lines USING (COVERING )?INDEX sqlite_autoindex_order_lines_1 \(order_id=\? AND line_no=\?\)/,
      postgres: /"Index Name":"order_lines_pkey"/,
      mariadb: /"table_name":"order_lines","access_type":"range",("possible_keys":\[[^\]]*\],)?"key":"PRIMARY"/,
    }), 'a to-one over both columns: the primary key')
    t.notMatch(toOne, onDatabase(dialect, { sqlite: /SCAN order_lines/, postgres: /"Seq Scan"/, mariadb: /"access_type":"ALL"/ }), 'no scan')

    const toMany = await statementOf('/order-lines?expand=shipments&offset=4000&limit=20&fields=lineNo,shipments.id', 'shipments')
    t.match(toMany, onDatabase(dialect, {
      sqlite: /MULTI-INDEX OR[\s\S]*SEARCH shipments USING (COVERING )?INDEX shipments_line \(order_id=\? AND line_no=\?\)/,
      postgres: /"Index Name":"shipments_line"/,
      mariadb: /"table_name":"shipments","access_type":"range",("possible_keys":\[[^\]]*\],)?"key":"shipments_line"/,
    }), 'a to-many over both columns: their index')
    t.notMatch(toMany, onDatabase(dialect, { sqlite: /SCAN shipments/, postgres: /"Seq Scan"/, mariadb: /"access_type":"ALL"/ }), 'no scan')
  })
}
