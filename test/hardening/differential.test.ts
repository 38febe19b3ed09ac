import { Type } from '@sinclair/typebox'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import t from 'tap'
import expandPlugin, { defineResource, type DatabaseOption, type FilterOperator } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { propertyParameters } from './support.js'

// Every database answers alike: the same app on SQLite, PostgreSQL and MariaDB, the
// process in a time zone far from UTC, answers each random request (filters of
// every type and operator with edge values, sorts, offset and cursor pages,
// expansions and sparse fields, detail routes) with the same status and the
// same bytes. The data holds non-ASCII text, integers at the edges of int4,
// nullable numbers, booleans, dates, and date-times stored as each database
// stores them without an offset (SQLite's text, PostgreSQL's `timestamp`,
// MariaDB's `datetime(6)`), some with a fraction past the millisecond. Cursors are opaque: each walk is followed on its own database
// and the pages compared. One more app, whose `db` is chosen per request among
// the same databases, answers each request on each of them as that database's
// own app does: statements compiled for one database never reach another.
//
// Differences the README names, left out here: `contains` folds non-ASCII
// letters on PostgreSQL (with a UTF-8 ctype) and not on SQLite, so contains
// values are ASCII; strings sort by code point on SQLite and by the column's
// collation on PostgreSQL (the test cluster's is C.UTF-8, code point order) and
// MariaDB (the test databases' utf8mb4_nopad_bin, the bytes of UTF-8: code point order,
// trailing spaces included).

process.env.TZ = 'Asia/Tokyo'
// As the README asks of applications on PostgreSQL (Guarantees, "Dates and times"): `timestamp` read as UTC.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, (text) => new Date(`${text.replace(' ', 'T')}Z`))

const Label = defineResource({
  name: 'Label',
  table: 'labels',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
})

const Track = defineResource({
  name: 'Track',
  table: 'tracks',
  schema: Type.Object({
    id: Type.Integer(),
    title: Type.String(),
    plays: Type.Integer(),
    rating: Type.Union([Type.Number(), Type.Null()]),
    explicit: Type.Boolean(),
    released: Type.String({ format: 'date' }),
    added_at: Type.String({ format: 'date-time' }),
    label: Type.Union([Type.Integer(), Type.Null()]),
  }),
  fields: ['id', 'title', 'plays', 'rating', 'explicit', 'released', 'added_at', 'label'],
  columns: { label: 'label_id' },
  expandable: { label: Label },
})

/** The labels again, with their tracks: a to-many relation whose array a request sorts, limits and narrows. */
const Catalog = defineResource({
  name: 'Catalog',
  table: 'labels',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    tracks: Type.Array(Type.Integer()),
    best_rated: Type.Array(Type.Integer()),
    least_rated: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'tracks', 'best_rated', 'least_rated'],
  // Ordered by a column that holds NULLs (NULL as the largest value on every database), and cut.
  expandable: {
    tracks: [Track, { many: true, foreignKey: 'label_id' }],
    best_rated: [Track, { many: true, foreignKey: 'label_id', orderBy: '-rating', limit: 2 }],
    least_rated: [Track, { many: true, foreignKey: 'label_id', orderBy: 'rating', limit: 3 }],
  },
  aggregates: { track_count: { count: 'tracks' } },
})

const titles = ['Été', 'été', 'ÉTÉ', 'ca', 'ça', 'ca ', 'ca\t', 'Ωmega', '東京', 'naïve', 'Naive', 'a%b', 'a_b', 'back\\slash', 'Zed', 'zed', '', ' lead', 'notes 🎵']
const playCounts = [0, 1, -5, 2147483647, -2147483648, 42, 7, 1000000]
const ratings = [null, 0, 4.5, -1.25, 10000000000, 3]
// Years before 100 too: a driver that builds a Date from a year's number reads them as 19xx.
const days = ['2020-12-31', '2021-01-01', '2021-01-02', '2019-06-30', '2000-02-29', '0001-01-01', '0099-12-31']
// Fractions past the millisecond as PostgreSQL's `timestamp` and MariaDB's `datetime(6)` hold them: kept to the
// millisecond, cut (as pg and JavaScript's Date read them), never rounded into the next millisecond, second or day.
const times = ['00:00:00', '09:30:00', '23:59:59', '12:00:00', '15:00:00', '06:15:00.123789', '23:59:59.999999']

const labels = [{ id: 1, name: 'Ondes' }, { id: 2, name: 'Émeraude' }, { id: 3, name: 'north' }]
const tracks = Array.from({ length: 40 }, (_row, index) => ({
  id: index + 1,
  title: titles[index % titles.length]!,
  plays: playCounts[index % playCounts.length]!,
  rating: ratings[index % ratings.length]!,
  explicit: index % 3 === 0,
  released: days[index % days.length]!,
  added_at: `${days[(index * 2) % days.length]!} ${times[index % times.length]!}`,
  label: index % 4 === 3 ? null : labels[index % labels.length]!.id,
}))

/** Column types per dialect where they differ: each database stores dates and date-times as its users would. */
const columnTypes: Record<string, { rating: string; released: string; added_at: string }> = {
  postgres: { rating: 'double precision', released: 'date', added_at: 'timestamp' },
  mariadb: { rating: 'double', released: 'date', added_at: 'datetime(6)' },
}
const sqliteColumns = { rating: 'real', released: 'text', added_at: 'text' }

async function createTables (db: Kysely<any>, dialect: string): Promise<void> {
  const types = columnTypes[dialect] ?? sqliteColumns
  await db.schema.createTable('labels').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('tracks').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('plays', 'integer', (c) => c.notNull())
    .addColumn('rating', sql.raw(types.rating))
    .addColumn('explicit', 'boolean', (c) => c.notNull())
    .addColumn('released', sql.raw(types.released), (c) => c.notNull())
    .addColumn('added_at', sql.raw(types.added_at), (c) => c.notNull())
    .addColumn('label_id', 'integer')
    .execute()
  await db.insertInto('labels').values(labels).execute()
  await db.insertInto('tracks').values(tracks.map(({ label, explicit, ...rest }) => ({ ...rest, explicit: explicit ? 1 : 0, label_id: label }))).execute()
}

const operators: Record<string, FilterOperator[]> = {
  title: ['eq', 'ne', 'lt', 'gte', 'in', 'contains'],
  plays: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in'],
  rating: ['eq', 'lt', 'gt', 'null'],
  explicit: ['eq', 'ne'],
  released: ['eq', 'lt', 'gte', 'in'],
  added_at: ['eq', 'lt', 'lte', 'gt', 'gte'],
  label: ['eq', 'null', 'in'],
  'label.name': ['eq', 'contains'],
}
const sortable = ['title', 'plays', 'explicit', 'released', 'added_at']
/**
 * A list's sort keys may hold NULL (a nullable field, a path through a to-one relation that may be missing):
 * NULL sorts as the largest value.
 */
const listSortable = [...sortable, 'rating', 'label.name']
/** An expanded list's filters are the related resource's own fields: a track's, without the path through its label. */
const trackListFilters = Object.fromEntries(Object.entries(operators).filter(([field]) => !field.includes('.')))

async function build (db: DatabaseOption): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db, resources: [Label, Track, Catalog] })
  app.expand.routes('/tracks', Track, { filter: operators, sort: listSortable })
  app.expand.routes('/feed', Track, { filter: operators, sort: listSortable, pagination: 'cursor', pageSize: 4, cursorSecret: 'differential test cursor key' })
  app.expand.routes('/catalogs', Catalog, { expandedLists: { tracks: { sort: sortable, maxLimit: 5, filter: trackListFilters } } })
  await app.ready()
  return app
}

// Values per field type, valid and not: the edges of int4 and of JavaScript's integers, dates that do not exist,
// date-times with offsets and without, text with the characters LIKE treats specially.
const valuesOf: Record<string, readonly string[]> = {
  title: [...titles, 'É', 'zz', '\u0000', 'a'.repeat(40)],
  plays: ['0', '-1', '42', '2147483647', '2147483648', '-2147483649', '9007199254740991', '9007199254740992', '1.5', 'abc', ''],
  rating: ['0', '4.5', '-1.25', '1e10', '3.0', '1e400', 'NaN', '-0'],
  explicit: ['true', 'false', '1', 'TRUE'],
  released: ['2021-01-01', '2020-12-31', '2000-02-29', '2021-02-30', '2021-01-01T00:00:00Z', '20210101'],
  added_at: [
    '2021-01-01T00:00:00Z', '2021-01-01T09:30:00+09:00', '2020-12-31T23:59:59Z', '2021-01-01T00:00:00.000Z', '2020-12-31T15:00:00-09:00',
    '2021-01-01 00:00:00Z', '2021-01-01', '2021-01-01T00:00:00', '2020-12-31T23:59:59.5Z',
  ],
  label: ['1', '2', '4', '0', '2147483648', 'x'],
  'label.name': ['Ondes', 'north', 'Émeraude', 'x'],
}
const containsValues = ['a', 'E', 'ZED', '%', '_', '\\', '', ' ', 'on', 'b']

const filterArbitrary = fc.constantFrom(...Object.keys(operators)).chain((field) => fc.tuple(
  fc.constant(field),
  fc.constantFrom(...operators[field]!),
  fc.constantFrom(...valuesOf[field]!),
  fc.constantFrom(...containsValues),
  fc.subarray([...valuesOf[field]!], { minLength: 1, maxLength: 3 }),
  fc.constantFrom('true', 'false')
).map(([field, operator, value, contained, several, flag]) => {
  const written = operator === 'eq' ? `filter[${field}]` : `filter[${field}][${operator}]`
  const raw = operator === 'contains' ? contained : operator === 'in' ? several.join(',') : operator === 'null' ? flag : value
  return `${written}=${encodeURIComponent(raw)}`
}))

const requestArbitrary = fc.record({
  route: fc.constantFrom('/tracks', '/feed', '/tracks/:id'),
  filters: fc.uniqueArray(filterArbitrary, { maxLength: 3, selector: (filter) => filter.slice(0, filter.indexOf('=')) }),
  sort: fc.subarray(listSortable, { maxLength: 2 }).chain((keys) => fc.tuple(...keys.map((key) => fc.constantFrom(key, `-${key}`)))),
  limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  offset: fc.option(fc.integer({ min: 0, max: 45 }), { nil: undefined }),
  id: fc.constantFrom('1', '17', '40', '41', '0', '2147483648', 'x'),
  expand: fc.boolean(),
  fields: fc.option(fc.subarray(['id', 'title', 'rating', 'released', 'added_at', 'label'], { minLength: 1 }), { nil: undefined }),
})

/**
 * A request of the labels' expanded tracks: `sort[tracks]`, `limit[tracks]` and `where[tracks.field]`, written as
 * the list filters above are (valid values and not), with sparse fields below and the count beside.
 */
const catalogArbitrary = fc.record({
  wheres: fc.uniqueArray(filterArbitrary.filter((filter) => !filter.startsWith('filter[label.name]')).map((filter) => filter.replace(/^filter\[/, 'where[tracks.')),
    { maxLength: 3, selector: (filter) => filter.slice(0, filter.indexOf('=')) }),
  sort: fc.subarray(sortable, { maxLength: 2 }).chain((keys) => fc.tuple(...keys.map((key) => fc.constantFrom(key, `-${key}`)))),
  limit: fc.option(fc.constantFrom('1', '2', '5', '9', '0', 'x'), { nil: undefined }),
  fields: fc.option(fc.subarray(['title', 'plays', 'rating', 'released', 'added_at', 'label'], { minLength: 1 }), { nil: undefined }),
  count: fc.boolean(),
  rated: fc.boolean(),
  one: fc.option(fc.constantFrom('1', '3', '4'), { nil: undefined }),
})

function catalogUrlOf (sample: typeof catalogArbitrary extends fc.Arbitrary<infer T> ? T : never): string {
  const query = [`expand=tracks${sample.count ? ',track_count' : ''}${sample.rated ? ',best_rated,least_rated' : ''}`, ...sample.wheres]
  if (sample.fields !== undefined) query.push(`fields=id,${sample.count ? 'track_count,' : ''}tracks.id,${sample.fields.map((field) => `tracks.${field}`).join(',')}`)
  if (sample.sort.length > 0) query.push(`sort[tracks]=${sample.sort.join(',')}`)
  if (sample.limit !== undefined) query.push(`limit[tracks]=${sample.limit}`)
  return `/catalogs${sample.one === undefined ? '' : `/${sample.one}`}?${query.join('&')}`
}

type Sample = typeof requestArbitrary extends fc.Arbitrary<infer T> ? T : never

function urlOf (sample: Sample): string {
  const query: string[] = []
  if (sample.expand) query.push('expand=label')
  if (sample.fields !== undefined) query.push(`fields=${sample.fields.join(',')}`)
  if (sample.route === '/tracks/:id') return `/tracks/${sample.id}${query.length > 0 ? `?${query.join('&')}` : ''}`
  query.push(...sample.filters)
  if (sample.sort.length > 0) query.push(`sort=${sample.sort.join(',')}`)
  if (sample.limit !== undefined) query.push(`limit=${sample.limit}`)
  if (sample.route === '/tracks' && sample.offset !== undefined) query.push(`offset=${sample.offset}`)
  return `${sample.route}?${query.join('&')}`
}

interface Answer { status: number; body: string; next: string | null }

async function answer (app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await app.inject({ url, headers })
  const page = response.statusCode === 200 && url.startsWith('/feed') ? response.json() as { next: string | null; prev: string | null } : undefined
  // Cursors are opaque (and may differ in bytes: each holds its keys as its database writes them, such as
  // MariaDB's `datetime(6)` with its six digits): compared by whether there is one, then followed on each side.
  let body = response.body
  for (const cursor of [page?.next, page?.prev]) {
    if (typeof cursor === 'string') body = body.replace(JSON.stringify(cursor), '"<cursor>"')
  }
  return { status: response.statusCode, body, next: page?.next ?? null }
}

const postgres = process.env.DATABASE_URL ? dialects().find((dialect) => dialect.name === 'postgres') : undefined
if (postgres === undefined && process.env.REQUIRE_POSTGRES) throw new Error('REQUIRE_POSTGRES is set but DATABASE_URL is not')
// SQLite answers first; every other dialect the suite runs on is compared with it.
const compared = dialects().filter((dialect) => dialect.name === 'postgres' || dialect.name === 'mariadb')

t.test(`${['SQLite', ...compared.map((dialect) => dialect.name)].join(', ')} give the same status and bytes for random requests, in Asia/Tokyo`, {
  skip: postgres === undefined ? 'needs PostgreSQL' : false,
}, async (t) => {
  t.equal(new Date(Date.UTC(2021, 0, 1)).getTimezoneOffset(), -540, 'the process runs in UTC+9')
  const sides: Array<{ name: string; database: TestDatabase; app: FastifyInstance }> = []
  for (const dialect of [dialects()[0]!, ...compared]) {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await createTables(database.db, dialect.name)
    const app = await build(database.db)
    t.teardown(() => app.close())
    sides.push({ name: dialect.name, database, app })
  }
  const shared = await build((request) => sides.find((side) => side.name === request.headers['x-database'])!.database.db)
  t.teardown(() => shared.close())
  /** The shared app's answer on `side`'s database, which must be that database's own app's. */
  const sameOnShared = async (side: (typeof sides)[number], url: string, own: Answer): Promise<void> => {
    const other = await answer(shared, url, { 'x-database': side.name })
    if (own.status !== other.status || own.body !== other.body) {
      throw new Error(`${url} on ${side.name}\n  its own app ${own.status} ${own.body}\n  the shared app ${other.status} ${other.body}`)
    }
  }
  const statuses: Record<number, number> = {}

  await fc.assert(fc.asyncProperty(requestArbitrary, async (sample) => {
    const url = urlOf(sample)
    // A cursor walk goes on with each side's own cursor, page by page.
    const urls = sides.map(() => url)
    for (let page = 1; page <= 12; page++) {
      const answers: Answer[] = []
      for (const [index, side] of sides.entries()) {
        answers.push(await answer(side.app, urls[index]!))
        await sameOnShared(side, urls[index]!, answers[index]!)
      }
      const [first, ...others] = answers as [Answer, ...Answer[]]
      statuses[first.status] = (statuses[first.status] ?? 0) + 1
      for (const [index, other] of others.entries()) {
        if (first.status !== other.status || first.body !== other.body) {
          throw new Error(`${urls[index + 1]} (page ${page})\n  sqlite ${first.status} ${first.body}\n  ${sides[index + 1]!.name} ${other.status} ${other.body}`)
        }
      }
      if (answers.some((side) => side.next === null)) break
      answers.forEach((side, index) => { urls[index] = `${url}&after=${encodeURIComponent(side.next!)}` })
    }
  }), propertyParameters(300))
  t.ok((statuses[200] ?? 0) > 100 && (statuses[400] ?? 0) > 20, `both successes and refusals are compared: ${JSON.stringify(statuses)}`)

  // Each label's tracks ordered, cut and narrowed per request: on PostgreSQL the tracks' statement (and the count's)
  // go in one wave with the labels', keyed by it; on SQLite and MariaDB they follow the labels' rows.
  const listRuns = propertyParameters(200)
  const listStatuses: Record<number, number> = {}
  let tracksShown = 0
  await fc.assert(fc.asyncProperty(catalogArbitrary, async (sample) => {
    const url = catalogUrlOf(sample)
    const answers: Answer[] = []
    for (const side of sides) {
      answers.push(await answer(side.app, url))
      await sameOnShared(side, url, answers.at(-1)!)
    }
    const [first, ...others] = answers as [Answer, ...Answer[]]
    listStatuses[first.status] = (listStatuses[first.status] ?? 0) + 1
    if (first.status === 200) tracksShown += (first.body.match(/"title"|"plays"|"rating"|"released"|"added_at"|"label"/g) ?? []).length
    for (const [index, other] of others.entries()) {
      if (first.status !== other.status || first.body !== other.body) {
        throw new Error(`${url}\n  sqlite ${first.status} ${first.body}\n  ${sides[index + 1]!.name} ${other.status} ${other.body}`)
      }
    }
  }), listRuns)
  // About a third of the requests answer 200 and half 400 (a value a field does not take): far from these floors.
  const runs = listRuns.numRuns
  t.ok((listStatuses[200] ?? 0) > runs * 0.15 && (listStatuses[400] ?? 0) > runs * 0.05 && tracksShown > runs / 2,
    `expanded lists: successes with tracks and refusals are compared: ${JSON.stringify(listStatuses)}, ${tracksShown} track fields`)
})
