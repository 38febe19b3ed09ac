import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Animal, animalColumns, createListTables, keepers, listResources, seedListTables, type AnimalRow } from '../fixtures/list-tables.js'
import { countGoesWithPage, pageRunsCount } from '../helpers/page-count.js'

// Random filters, sorts, offset pages and cursor walks (with rows inserted and
// deleted between pages) against an in-memory reference, on every dialect.

type Row = AnimalRow
type Key = 'born' | 'name' | 'weight'
interface Filter { query: string; keep: (row: Row, tenant: number | undefined) => boolean }
interface Sort { query: string; keys: Array<{ key: Key; descending: boolean }> }

const names = ['Ab', 'ab', 'aB%', 'b_c', 'B\\c', 'ca', 'Cab', 'a%b']
const species = ['cat', 'dog', 'bird']
const dates = ['2019-01-01', '2020-01-01', '2020-06-30', '2021-12-31']
const weights = [0, 0.5, 1, 2.5, 4]

const row = (id: number) => fc.record({
  id: fc.constant(id),
  name: fc.constantFrom(...names),
  species: fc.constantFrom(...species),
  born: fc.constantFrom(...dates),
  weight: fc.constantFrom(...weights),
  adopted: fc.boolean(),
  keeper: fc.constantFrom(1, 2, 3),
  sold_from: fc.constantFrom(null, 1, 2),
})
const rowsArbitrary = fc.array(fc.nat({ max: 1_000_000 }), { minLength: 24, maxLength: 24 })
  .chain((seeds) => fc.tuple(...seeds.map((_seed, index) => row(index + 1))))

const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0)
const text = fc.stringMatching(/^[abcABC%_\\]{0,3}$/)

const filterArbitrary: fc.Arbitrary<Filter> = fc.oneof(
  fc.constantFrom(...species).map((value) => ({ query: `filter[species]=${value}`, keep: (row: Row) => row.species === value })),
  fc.constantFrom(...species).map((value) => ({ query: `filter[species][ne]=${value}`, keep: (row: Row) => row.species !== value })),
  fc.subarray(species, { minLength: 1 }).map((values) => ({ query: `filter[species][in]=${values.join(',')}`, keep: (row: Row) => values.includes(row.species) })),
  fc.constantFrom(...dates).map((value) => ({ query: `filter[born][gte]=${value}`, keep: (row: Row) => row.born >= value })),
  fc.constantFrom(...dates).map((value) => ({ query: `filter[born][lt]=${value}`, keep: (row: Row) => row.born < value })),
  fc.constantFrom(...weights).map((value) => ({ query: `filter[weight][gt]=${value}`, keep: (row: Row) => row.weight > value })),
  fc.constantFrom(...weights).map((value) => ({ query: `filter[weight][lte]=${value}`, keep: (row: Row) => row.weight <= value })),
  fc.boolean().map((value) => ({ query: `filter[adopted]=${value}`, keep: (row: Row) => row.adopted === value })),
  fc.boolean().map((value) => ({ query: `filter[sold_from][null]=${value}`, keep: (row: Row) => (row.sold_from === null) === value })),
  fc.constantFrom(1, 2).map((value) => ({ query: `filter[sold_from]=${value}`, keep: (row: Row) => row.sold_from === value })),
  text.map((value) => ({ query: `filter[name][contains]=${encodeURIComponent(value)}`, keep: (row: Row) => row.name.toLowerCase().includes(value.toLowerCase()) })),
  fc.constantFrom('costa', 'LIMA', 'a').map((value) => ({
    query: `filter[keeper.name][contains]=${value}`,
    keep: (row: Row, tenant: number | undefined) => {
      const keeper = keepers.find((candidate) => candidate.id === row.keeper)!
      return (tenant === undefined || keeper.tenant === tenant) && keeper.name.toLowerCase().includes(value.toLowerCase())
    },
  }))
)

// Filters on distinct field/operator pairs: a pair given twice is a 400.
const filtersArbitrary = fc.uniqueArray(filterArbitrary, { maxLength: 3, selector: (filter) => filter.query.replace(/=.*$/, '') })
const sortArbitrary: fc.Arbitrary<Sort> = fc.uniqueArray(fc.record({ key: fc.constantFrom<Key>('born', 'name', 'weight'), descending: fc.boolean() }), { maxLength: 3, selector: (key) => key.key })
  .map((keys) => ({ query: keys.map(({ key, descending }) => `${descending ? '-' : ''}${key}`).join(','), keys }))
const tenantArbitrary = fc.constantFrom(undefined, 1, 2)

/** The reference order: the sort keys, then the id ascending. */
function order (sort: Sort): (a: Row, b: Row) => number {
  return (a, b) => {
    for (const { key, descending } of sort.keys) {
      const result = compare(a[key], b[key])
      if (result !== 0) return descending ? -result : result
    }
    return a.id - b.id
  }
}

function select (rows: readonly Row[], filters: readonly Filter[], sort: Sort, tenant: number | undefined): Row[] {
  return rows.filter((row) => filters.every((filter) => filter.keep(row, tenant))).sort(order(sort))
}

const headersOf = (tenant: number | undefined): Record<string, string> => (tenant === undefined ? {} : { 'x-tenant': String(tenant) })

for (const dialect of dialects()) {
  t.test(`lists against a reference on ${dialect.name}`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createListTables(database.db)
    await seedListTables(database.db, [])
    const app: FastifyInstance = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: listResources })
    const filter = {
      species: ['eq', 'ne', 'in'],
      born: ['gte', 'lt'],
      weight: ['gt', 'lte'],
      adopted: ['eq'],
      sold_from: ['null', 'eq'],
      name: ['contains'],
      'keeper.name': ['contains'],
    } as const
    app.expand.routes('/animals', Animal, { filter, sort: ['born', 'name', 'weight'], maxPageSize: 50 })
    app.expand.routes('/feed', Animal, { filter, sort: ['born', 'name', 'weight'], pagination: 'cursor' })
    await app.ready()
    t.teardown(() => app.close())

    const load = async (rows: readonly Row[]) => {
      await database.db.deleteFrom('animals').execute()
      await database.db.insertInto('animals').values(rows.map(animalColumns)).execute()
    }

    const pageArbitrary = [fc.integer({ min: 1, max: 30 }), fc.nat({ max: 26 })] as const
    const requestArbitrary = fc.tuple(filtersArbitrary, sortArbitrary, tenantArbitrary, ...pageArbitrary)
    await fc.assert(fc.asyncProperty(rowsArbitrary, fc.array(requestArbitrary, { minLength: 1, maxLength: 6 }), async (rows, requests) => {
      await load(rows)
      for (const [filters, sort, tenant, limit, offset] of requests) {
        const expected = select(rows, filters, sort, tenant)
        const query = [...filters.map((filter) => filter.query), `sort=${sort.query}`, `limit=${limit}`, `offset=${offset}`, 'fields=id'].join('&')
        database.reset()
        const reply = await app.inject({ url: `/animals?${query}`, headers: headersOf(tenant) })
        const data = expected.slice(offset, offset + limit).map(({ id }) => ({ id }))
        t.same(reply.json(), { data, limit, offset, total: expected.length }, query)
        const wanted = pageRunsCount(data.length, limit, offset, countGoesWithPage(dialect, filters.length > 0)) ? 2 : 1
        if (database.statements.length !== wanted) t.fail(`${query}: ${database.statements.length} statements, not ${wanted === 2 ? 'page and count' : 'the page alone'}`)
      }
    }), { numRuns: 20 })

    let nextId = 1000
    await fc.assert(fc.asyncProperty(
      rowsArbitrary,
      filtersArbitrary,
      sortArbitrary,
      tenantArbitrary,
      fc.integer({ min: 1, max: 6 }),
      fc.array(
        fc.tuple(fc.array(row(0), { maxLength: 2 }), fc.array(fc.nat({ max: 40 }), { maxLength: 2 })),
        { minLength: 12, maxLength: 12 }
      ),
      async (rows, filters, sort, tenant, limit, changes) => {
        await load(rows)
        let current: Row[] = [...rows]
        let last: Row | undefined
        let next: string | null | undefined
        const query = [...filters.map((filter) => filter.query), `sort=${sort.query}`, `limit=${limit}`, 'fields=id'].join('&')
        const byOrder = order(sort)
        for (let page = 0; page < 40 && next !== null; page++) {
          const url = next === undefined ? `/feed?${query}` : `/feed?${query}&after=${encodeURIComponent(next)}`
          database.reset()
          const reply = await app.inject({ url, headers: headersOf(tenant) })
          const remaining = select(current, filters, sort, tenant).filter((row) => last === undefined || byOrder(row, last) > 0)
          const expected = remaining.slice(0, limit)
          const body = reply.json() as { data: Array<{ id: number }>; limit: number; next: string | null }
          t.same(body.data, expected.map(({ id }) => ({ id })), `${url}: page ${page}`)
          t.equal(body.next === null, remaining.length <= limit, `${url}: next is null exactly on the last page`)
          if (database.statements.length !== 1) t.fail(`${url}: ${database.statements.length} statements`)
          last = expected[expected.length - 1] ?? last
          next = body.next
          // Between pages: insert new rows and delete some, in the database and the reference alike.
          const [inserted, deleted] = changes[page % changes.length]!
          const added = inserted.map((candidate) => ({ ...candidate, id: nextId++ }))
          if (added.length > 0) await database.db.insertInto('animals').values(added.map(animalColumns)).execute()
          const gone = deleted.map((index) => current[index % Math.max(current.length, 1)]?.id)
            .filter((id): id is number => id !== undefined)
          if (gone.length > 0) await database.db.deleteFrom('animals').where('id', 'in', gone).execute()
          current = [...current.filter((candidate) => !gone.includes(candidate.id)), ...added]
        }
      }
    ), { numRuns: 15 })
  })
}
