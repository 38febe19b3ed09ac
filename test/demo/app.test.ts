import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'
import { buildApp } from '../../demo/app.js'
import { connect, type DemoDatabase, type DemoTables } from '../../demo/database.js'
import { countRows, generateRows, seedCounts, seedIfEmpty } from '../../demo/seed.js'
import { fakePriceService, priceServiceLatencyMs } from '../../schemas/price-service.js'
import { dialects, inOneWave } from '../fixtures/dialects.js'
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

  t.equal(await seedIfEmpty(first), true, 'an empty database is seeded')
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
    t.equal(database.statements.length, inOneWave(dialect) ? 2 : 3,
      'a page of 100 people with employers: page (reading its count in one wave), count (after a full page elsewhere), companies')
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

  test(`${dialect.name}: the demo's derived data: a count, a computed field, a relation resolved by the pricing service`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await seedIfEmpty(database.db)
    const app = await buildApp({ db: database.db })
    const explained: Array<Record<string, unknown>> = []
    app.addHook('onSend', async (request) => { explained.push(app.expand.explain(request) as unknown as Record<string, unknown>) })
    t.teardown(() => app.close())

    database.reset()
    const person = await app.inject('/people/8768?expand=pets.toys.price&fields=id,pet_count,pets.label,pets.toys.price')
    const price = (toy: number, cents: number, onSale: boolean) => ({ price: { toy, cents, currency: 'EUR', on_sale: onSale } })
    t.same(person.json(), {
      id: 8768,
      pets: [
        { toys: [price(1388, 1826, true)], label: 'Juno the parrot' },
        { toys: [price(396, 856, true), price(934, 3005, false), price(1029, 1553, false)], label: 'Tofu the rabbit' },
      ],
      pet_count: 2,
    })
    t.equal(database.statements.length, 4, 'the person, the grouped count of pets, the pets (label in their statement), their toys')
    t.equal(database.statements.filter((statement) => /group by/.test(statement)).length, 1, 'the count: one grouped statement')
    t.equal(database.statements.filter((statement) => /concat\(/.test(statement)).length, 1, 'the label: an expression of the pets statement')
    t.same(explained.at(-1)?.calls, [{ path: 'pets.toys.price', kind: 'function', relation: 'Toy.price', keys: 4 }],
      'the pricing service: one call with the four distinct toy ids of both pets')

    const sorted = await app.inject('/people?sort=-pet_count,name&limit=2&fields=id,name,pet_count')
    t.same(sorted.json().data, [{ id: 7473, name: 'Ada Okafor', pet_count: 9 }, { id: 9718, name: 'Grace Nakamura', pet_count: 7 }],
      'sorted by the count, then by name')
    const filtered = await app.inject('/people?filter[pet_count][gte]=7&fields=id,pet_count')
    t.same(filtered.json(), {
      data: [{ id: 4242, pet_count: 7 }, { id: 7473, pet_count: 9 }, { id: 9718, pet_count: 7 }], limit: 20, offset: 0, total: 3,
    })
    const absent = await app.inject('/pets/5?expand=toys')
    t.notOk(['label', 'price'].some((field) => absent.body.includes(`"${field}"`)), 'derived data is deferred: absent unless named')
  })
}

test('the fake pricing service answers every key at once, after its latency, and stops waiting when aborted', async (t) => {
  const started = performance.now()
  const quotes = await fakePriceService([4, 5, '6', null], new AbortController().signal)
  t.ok(performance.now() - started >= priceServiceLatencyMs - 1, 'it takes its latency')
  t.same([...quotes], [
    [4, { toy: 4, cents: 2455, currency: 'EUR', on_sale: true }],
    [5, { toy: 5, cents: 1386, currency: 'EUR', on_sale: false }],
    [6, { toy: 6, cents: 4504, currency: 'EUR', on_sale: false }],
  ], 'a key that is not a toy id has no price')
  t.same(await fakePriceService([4], new AbortController().signal), new Map([[4, quotes.get(4)]]), 'the same answer on every call')

  const aborted = new AbortController()
  aborted.abort()
  await t.rejects(fakePriceService([1], aborted.signal), { name: 'AbortError' }, 'an aborted signal: no answer')
  const leaving = new AbortController()
  const pending = fakePriceService([1], leaving.signal)
  leaving.abort()
  await t.rejects(pending, { name: 'AbortError' }, 'the client goes away while it waits: it stops waiting')
})

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
