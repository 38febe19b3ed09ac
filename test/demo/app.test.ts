import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'
import { buildApp } from '../../demo/app.js'
import { connect, type DemoDatabase, type DemoTables } from '../../demo/database.js'
import { countRows, generateRows, seedCounts, seedIfEmpty } from '../../demo/seed.js'
import { dialects } from '../fixtures/dialects.js'
import { startDemoServer } from '../helpers/demo-server.js'

const orderedTables: Array<[keyof DemoTables, string]> = [
  ['companies', 'id'], ['people', 'id'], ['pet_stores', 'id'], ['toys', 'id'], ['vets', 'id'],
  ['pets', 'id'], ['pet_toys', 'pet_id, toy_id'], ['visits', 'id'],
]

async function digest (db: DemoDatabase): Promise<string> {
  const hash = createHash('sha256')
  for (const [table, order] of orderedTables) {
    let query = db.selectFrom(table).selectAll()
    for (const column of order.split(', ')) query = query.orderBy(column as never)
    const rows = await query.execute()
    hash.update(`${table}:${JSON.stringify(rows)}\n`)
  }
  return hash.digest('hex')
}

test('the seed writes at least 50,000 rows, the same ones every time', async (t) => {
  const first = connect({ sqliteFile: ':memory:' })
  const second = connect({ sqliteFile: ':memory:' })
  t.teardown(async () => { await first.destroy(); await second.destroy() })

  const started = performance.now()
  t.equal(await seedIfEmpty(first), true, 'an empty database is seeded')
  t.ok(performance.now() - started < 5000, 'seeding an in-memory database takes seconds at most')
  t.equal(await seedIfEmpty(second), true)

  const counts = await countRows(first)
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0)
  t.ok(total >= 50_000, `${total} rows`)
  t.same({ ...counts, pet_toys: undefined }, { ...seedCounts, pet_toys: undefined }, 'each table holds its planned count')
  t.equal(counts.pet_toys, generateRows().pet_toys.length)
  t.same(await countRows(second), counts, 'two builds hold as many rows')
  t.equal(await digest(second), await digest(first), 'two builds hold the same rows')

  t.equal(await seedIfEmpty(first), false, 'a seeded database is left as it is')
  t.same(await countRows(first), counts)
})

test('the generated rows are deterministic and consistent', async (t) => {
  const rows = generateRows()
  // Compared as text: a structural comparison of 60,000 rows is far slower.
  const text = JSON.stringify(rows)
  t.equal(JSON.stringify(generateRows()), text, 'the same rows on every call')
  t.not(JSON.stringify(generateRows(7)), text, 'another seed gives other rows')
  const peopleIds = new Set(rows.people.map((person) => person.id))
  t.ok(rows.pets.every((pet) => peopleIds.has(pet.owner_id)), 'every pet has an existing owner')
  t.ok(rows.people.some((person) => person.employer_id === null), 'some people have no employer')
  t.ok(rows.pets.some((pet) => pet.sold_from_id === null) && rows.pets.some((pet) => pet.sold_from_id !== null))
  const pairs = new Set(rows.pet_toys.map((link) => `${link.pet_id}:${link.toy_id}`))
  t.equal(pairs.size, rows.pet_toys.length, 'no pet has a toy twice')
})

for (const dialect of dialects()) {
  test(`${dialect.name}: the demo app`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await seedIfEmpty(database.db)
    const app = await buildApp({ db: database.db })
    t.teardown(() => app.close())

    const health = await app.inject('/health')
    t.equal(health.statusCode, 200)
    t.same(health.json(), { status: 'ok' })

    database.reset()
    const fields = await app.inject('/pets/10?expand=owner.employer&fields=name,owner.name,owner.employer.name')
    t.same(fields.json(), { name: 'Juno', owner: { name: 'Wen Costa', employer: { name: 'Nimbus Labs 147' } } })
    t.equal(database.statements.length, 3, 'pets, people, companies: toys are not shown, so not loaded')

    database.reset()
    const page = await app.inject('/people?limit=100&expand=employer')
    t.equal(page.statusCode, 200)
    t.equal(page.json().data.length, 100)
    t.equal(database.statements.length, 3, 'a page of 100 people with employers: page, count, companies')
    const everything = await app.inject('/people/8768?expand=employer,pets.toys.maker,pets.visits')
    for (const statement of database.statements) t.notMatch(statement, /password_hash|select \*|\.\*/, 'the undeclared column is never selected')
    t.notMatch(page.body + everything.body, /password_hash|scrypt\$/, 'nor shown')
    t.equal(everything.json().pets.length, 2)

    const hidden = await app.inject('/people/8768?fields=password_hash')
    t.equal(hidden.statusCode, 400)
    t.equal(hidden.json().code, 'FST_EXPAND_UNKNOWN_FIELD')

    const companies = await app.inject('/companies?expand=employees')
    t.equal(companies.json().code, 'FST_EXPAND_NOT_PERMITTED', 'an empty permit list permits nothing')
    const company = await app.inject('/companies/166?expand=employees')
    t.equal(company.json().employees.length, 19, 'the deferred to-many side of the Company/Person pair')
    t.same(Object.keys(company.json().employees[0]), ['id', 'name'])

    const docs = await app.inject('/docs/')
    t.equal(docs.statusCode, 200, 'the documentation UI is served')
  })
}

test('npm start: serves, and shuts down cleanly on SIGTERM', { timeout: 60_000 }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'fastify-expand-demo-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const sqliteFile = join(directory, 'demo.db')
  const { process: server, base, output: written, exited } = await startDemoServer({ PORT: '0', HOST: '127.0.0.1', SQLITE_FILE: sqliteFile, LOG_LEVEL: 'warn' })
  const output = written()
  t.match(output, /curl 'http:\/\/127\.0\.0\.1:\d+\/pets\/1\?expand=owner\.employer,toys'/, 'prints example requests')
  t.match(output, /\/docs/, 'prints the documentation URL')

  const health = await fetch(`${base}/health`)
  t.equal(health.status, 200)
  const pet = await (await fetch(`${base}/pets/10?fields=id,name`)).json()
  t.same(pet, { id: 10, name: 'Juno' })
  t.ok(existsSync(sqliteFile), 'the SQLite file is created')

  server.kill('SIGTERM')
  t.equal(await exited, 0, 'exits with 0')
})
