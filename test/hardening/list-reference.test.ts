import fc from 'fast-check'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource } from '../../plugin/index.js'
import { countGoesWithPage, pageRunsCount } from '../helpers/page-count.js'
import { dialects, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { Company, Person, Pet, Tag, Toy, createRelationTables, handWorld, relationListResources, seedRelationTables, type PersonRow, type RelationWorld } from '../fixtures/relation-lists.js'
import {
  birthDates, companyNames, maxPeople, personArbitrary, personNames, petNames, relationWorldArbitrary, species, tagNames, toyNames,
} from '../fixtures/relation-world-arbitrary.js'
import {
  comparePositions, forbiddenToGuest, personBody, positionOf, referenceList, shapedPerson,
  type ListFilter, type ListSortKey, type Position, type Scopes, type Shaping, type SortName,
} from './relation-list-reference.js'

// Lists through relations (docs/lists.md, "Lists through to-many relations") against the naive reading
// of relation-list-reference.ts, on random worlds and random requests, on every dialect: offset pages
// (rows, total, statements; expanded, and asked by a guest), cursor walks forward to the end and back to
// the start, walks forward and backward with rows inserted, deleted and changed between pages, and scopes
// that read the request. The dialects' offset bodies are compared byte for byte.
// FC_SEED repeats a run, FC_RUNS sets the runs of every property.

// The fixture's resources with scopes that read the request: `x-tenant: 0|1` sees the companies whose
// `hidden`, the pets whose `deleted` and the tags whose `secret` is its tenant. Statements kept as templates
// must never carry one request's scope values into another's.
const tenantOf = (request: FastifyRequest) => Number(request.headers['x-tenant'])
const TenantCompany = defineResource({
  name: 'TenantCompany',
  table: 'companies',
  schema: Company.schema,
  fields: Company.fields,
  scope: (eb, request) => eb('companies.hidden', '=', tenantOf(request)),
})
const TenantTag = defineResource({
  name: 'TenantTag',
  table: 'tags',
  schema: Tag.schema,
  fields: Tag.fields,
  scope: (eb, request) => eb('tags.secret', '=', tenantOf(request)),
})
const TenantToy = defineResource({ name: 'TenantToy', table: 'toys', schema: Toy.schema, fields: Toy.fields })
const TenantPet = defineResource({
  name: 'TenantPet',
  table: 'pets',
  schema: Pet.schema,
  fields: Pet.fields,
  columns: Pet.columns,
  expandable: {
    owner: 'TenantPerson',
    toys: [TenantToy, { many: true, foreignKey: 'pet_id' }],
    tags: [TenantTag, { many: true, through: { table: 'pet_tags', from: 'pet_id', to: 'tag_id' } }],
  },
  scope: (eb, request) => eb('pets.deleted', '=', tenantOf(request)),
})
const TenantPerson = defineResource({
  name: 'TenantPerson',
  table: 'people',
  schema: Person.schema,
  fields: Person.fields,
  columns: Person.columns,
  expandable: {
    employer: TenantCompany,
    manager: 'TenantPerson',
    pets: [TenantPet, { many: true, foreignKey: 'owner_id' }],
    reports: ['TenantPerson', { many: true, foreignKey: 'manager_id' }],
  },
})
const tenantScopes: readonly Scopes[] = [0, 1].map((tenant) => ({
  company: (company) => company.hidden === tenant,
  pet: (pet) => pet.deleted === tenant,
  tag: (tag) => tag.secret === tenant,
}))

const tables = ['pet_tags', 'tags', 'toys', 'pets', 'people', 'companies'] as const

// One seed for every dialect in this process, so that each is asked the same requests on the same worlds.
const seed = process.env.FC_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FC_SEED)
const runs = (count: number) => ({ numRuns: process.env.FC_RUNS === undefined ? count : Number(process.env.FC_RUNS), seed })
t.comment(`fast-check seed ${seed} (FC_SEED=${seed} repeats this run)`)
// Each dialect takes 20 to 40 s of walks, most of it waiting on its database: with four dialects
// this file needs more than the default 120 s when the machine is busy.
t.setTimeout(300_000)

const values = <T extends string> (...choices: readonly T[]) => fc.constantFrom(...choices)
const booleans = values('true', 'false')
const subsetOf = (choices: readonly string[]) => fc.subarray([...choices], { minLength: 1 }).map((chosen) => chosen.join(','))
const filterOf = (path: string, operator: ListFilter['operator'], raw: fc.Arbitrary<string>): fc.Arbitrary<ListFilter> =>
  raw.map((value) => ({ path, operator, raw: value }))

// Each declared filter with values that match some rows, and values that match none ('Zed', 'newt', 'kite', ...).
const filterArbitrary: fc.Arbitrary<ListFilter> = fc.oneof(
  filterOf('name', 'eq', values(...personNames, 'Zed')),
  filterOf('name', 'in', subsetOf([...personNames, 'Zed'])),
  filterOf('name', 'contains', values('a', 'BO', 'o', 'x', 'Ca')),
  filterOf('born', 'null', booleans),
  filterOf('born', 'gte', values(...birthDates, '1970-01-01', '2030-01-01')),
  filterOf('born', 'lt', values(...birthDates)),
  filterOf('born', 'ne', values(...birthDates)),
  filterOf('employer', 'exists', booleans),
  filterOf('employer.name', 'eq', values(...companyNames, 'Nope')),
  filterOf('employer.name', 'ne', values(...companyNames)),
  filterOf('manager', 'exists', booleans),
  filterOf('manager.name', 'eq', values(...personNames, 'Zed')),
  filterOf('manager.name', 'contains', values('a', 'o', 'x')),
  filterOf('manager.employer.name', 'eq', values(...companyNames)),
  filterOf('pets', 'exists', booleans),
  filterOf('pets.species', 'eq', values(...species, 'newt')),
  filterOf('pets.species', 'in', subsetOf([...species, 'newt'])),
  filterOf('pets.species', 'ne', values(...species)),
  filterOf('pets.name', 'eq', values(...petNames, 'Nemo')),
  filterOf('pets.name', 'contains', values('o', 'T', 'x')),
  filterOf('pets.toys.name', 'eq', values(...toyNames, 'kite')),
  filterOf('pets.tags.name', 'eq', values(...tagNames, 'none')),
  filterOf('pets.owner.name', 'eq', values(...personNames)),
  filterOf('reports', 'exists', booleans),
  filterOf('reports.name', 'eq', values(...personNames)),
  filterOf('manager.pets.species', 'eq', values(...species)),
  filterOf('pets.tags', 'exists', booleans),
  filterOf('pets.toys', 'exists', booleans),
  filterOf('reports.pets.species', 'eq', values(...species))
)
/** The routes' `filter` option: every path and operator filterArbitrary writes. */
const declaredFilters = {
  name: ['eq', 'in', 'contains'],
  born: ['null', 'gte', 'lt', 'ne'],
  employer: ['exists'],
  'employer.name': ['eq', 'ne'],
  manager: ['exists'],
  'manager.name': ['eq', 'contains'],
  'manager.employer.name': ['eq'],
  pets: ['exists'],
  'pets.species': ['eq', 'in', 'ne'],
  'pets.name': ['eq', 'contains'],
  'pets.toys.name': ['eq'],
  'pets.tags.name': ['eq'],
  'pets.owner.name': ['eq'],
  reports: ['exists'],
  'reports.name': ['eq'],
  'manager.pets.species': ['eq'],
  'pets.tags': ['exists'],
  'pets.toys': ['exists'],
  'reports.pets.species': ['eq'],
} as const
const sortNames: readonly SortName[] = ['name', 'born', 'employer.name', 'manager.name', 'manager.employer.name']

// A path and operator given twice is a 400: each at most once.
const filtersArbitrary = fc.uniqueArray(filterArbitrary, { maxLength: 3, size: 'small', selector: ({ path, operator }) => `${path}[${operator}]` })
const sortArbitrary = fc.uniqueArray(fc.record({ name: fc.constantFrom(...sortNames), descending: fc.boolean() }), {
  maxLength: 3, selector: ({ name }) => name,
})
const limitArbitrary = fc.integer({ min: 1, max: 5 })

interface ListRequest { filters: ListFilter[]; sort: ListSortKey[]; limit: number }
const requestArbitrary: fc.Arbitrary<ListRequest> = fc.record({ filters: filtersArbitrary, sort: sortArbitrary, limit: limitArbitrary })

function queryOf ({ filters, sort, limit }: ListRequest): string {
  const parts = filters.map(({ path, operator, raw }) => `filter[${path}]${operator === 'eq' ? '' : `[${operator}]`}=${encodeURIComponent(raw)}`)
  if (sort.length > 0) parts.push(`sort=${sort.map(({ name, descending }) => `${descending ? '-' : ''}${name}`).join(',')}`)
  parts.push(`limit=${limit}`)
  return parts.join('&')
}

interface CursorBody { data: Array<Record<string, unknown>>; limit: number; next: string | null; prev: string | null }

async function openApp (t: Test, dialect: Dialect): Promise<{ app: FastifyInstance; database: TestDatabase }> {
  const database = await dialect.open()
  t.teardown(() => database.close())
  await createRelationTables(database.db)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: relationListResources })
  const options = { filter: declaredFilters, sort: sortNames, maxPageSize: 50 }
  app.expand.routes('/people', Person, options)
  app.expand.routes('/feed', Person, { ...options, pagination: 'cursor' })
  await app.ready()
  t.teardown(() => app.close())
  return { app, database }
}

/** A world in place of the last, in one transaction: one commit per world rather than one per statement. */
async function load (database: TestDatabase, world: RelationWorld): Promise<void> {
  await database.db.transaction().execute(async (transaction) => {
    for (const table of tables) await transaction.deleteFrom(table).execute()
    await seedRelationTables(transaction, world)
  })
}

async function get<T> (app: FastifyInstance, url: string): Promise<{ body: T; raw: string }> {
  const reply = await app.inject(url)
  if (reply.statusCode !== 200) throw new Error(`${url}: ${reply.statusCode} ${reply.body}`)
  return { body: reply.json() as T, raw: reply.body }
}

const sameJson = (label: string, actual: unknown, expected: unknown) => {
  const [a, b] = [JSON.stringify(actual), JSON.stringify(expected)]
  if (a !== b) throw new Error(`${label}:\n  got      ${a}\n  expected ${b}`)
}

t.test('the reference reads the hand-written world as worked out by hand', async (t) => {
  const listed = (filters: ListFilter[], sort: ListSortKey[] = []) => referenceList(handWorld, filters, sort).map(({ id }) => id)
  const cats: ListFilter = { path: 'pets.species', operator: 'eq', raw: 'cat' }
  // Garfield, Bea's cat, is deleted: out of the pets' scope.
  t.same(listed([cats]), [1, 5])
  t.same(listed([cats, { path: 'pets.name', operator: 'contains', raw: 'ga' }]), [1], 'Gato is a cat named ga')
  t.same(listed([{ path: 'pets.species', operator: 'eq', raw: 'dog' }, { path: 'pets.name', operator: 'contains', raw: 'ga' }]), [],
    "Ana's dog is Rex, her Gato a cat: no one pet is both")
  t.same(listed([{ path: 'pets', operator: 'exists', raw: 'false' }]), [4])
  t.same(listed([{ path: 'pets.tags.name', operator: 'eq', raw: 'vip' }]), [], 'vip is secret')
  t.same(listed([{ path: 'pets.toys.name', operator: 'eq', raw: 'ball' }]), [1], "Garfield's ball is a deleted pet's")
  t.same(listed([{ path: 'employer', operator: 'exists', raw: 'false' }]), [3, 4], 'Shadow is hidden')
  t.same(listed([], [{ name: 'employer.name', descending: false }]), [2, 5, 1, 3, 4], 'NULL (missing or hidden) last ascending')
  t.same(listed([], [{ name: 'employer.name', descending: true }]), [3, 4, 1, 2, 5], 'NULL first descending, ties by id')
  t.same(listed([], [{ name: 'manager.employer.name', descending: false }]), [4, 2, 3, 1, 5])
})

interface Change {
  inserted: Array<Omit<PersonRow, 'id'>>
  deleted: number[]
  rest: boolean
  species: [number, string] | undefined
  /** A company hidden or shown: the sort keys through it turn NULL or back. */
  company: number | undefined
}

/** A change between two pages of a walk: people inserted and deleted, a pet's species changed, a company hidden or shown. */
const changeArbitrary: fc.Arbitrary<Change> = fc.record({
  inserted: fc.array(personArbitrary(maxPeople, 4), { maxLength: 2 }),
  deleted: fc.array(fc.nat({ max: maxPeople }), { maxLength: 2 }),
  // Now and then every row the walk has still to read goes: the next page comes back empty.
  rest: fc.integer({ min: 0, max: 9 }).map((draw) => draw === 0),
  species: fc.option(fc.tuple(fc.nat({ max: 60 }), fc.constantFrom<string>(...species)), { nil: undefined }),
  company: fc.option(fc.nat({ max: 3 }), { nil: undefined, freq: 3 }),
})
const changesArbitrary = fc.array(changeArbitrary, { minLength: 12, maxLength: 12 })
let insertedId = 1000

/** Applies `change` to the database and returns the world it leaves; `ahead`: the rows the walk has still to read (`rest` deletes them). */
async function applyChange (
  database: TestDatabase, world: RelationWorld, change: Change, ahead: readonly PersonRow[]
): Promise<RelationWorld> {
  const { inserted, deleted, rest, species: changed } = change
  const added: PersonRow[] = inserted.map((row) => ({ ...row, id: insertedId++ }))
  if (added.length > 0) await database.db.insertInto('people').values(added).execute()
  const gone = deleted.map((index) => world.people[index % Math.max(world.people.length, 1)]?.id).filter((id) => id !== undefined)
  if (rest) gone.push(...ahead.map(({ id }) => id))
  if (gone.length > 0) await database.db.deleteFrom('people').where('id', 'in', gone).execute()
  let changedWorld = { ...world, people: [...world.people.filter(({ id }) => !gone.includes(id)), ...added] }
  const pet = changed === undefined ? undefined : changedWorld.pets[changed[0] % Math.max(changedWorld.pets.length, 1)]
  if (pet !== undefined) {
    await database.db.updateTable('pets').set({ species: changed![1] }).where('id', '=', pet.id).execute()
    changedWorld = { ...changedWorld, pets: changedWorld.pets.map((row) => (row.id === pet.id ? { ...row, species: changed![1] } : row)) }
  }
  const { companies } = changedWorld
  const company = change.company === undefined ? undefined : companies[change.company % Math.max(companies.length, 1)]
  if (company !== undefined) {
    const hidden = 1 - company.hidden
    await database.db.updateTable('companies').set({ hidden }).where('id', '=', company.id).execute()
    changedWorld = { ...changedWorld, companies: changedWorld.companies.map((row) => (row.id === company.id ? { ...row, hidden } : row)) }
  }
  return changedWorld
}

/**
 * The rows selected in `start`, with their positions, less those that leave (deleted, no longer selected,
 * moved) as the walk's world changes: those left at the end existed unchanged during the whole walk.
 */
function unchangedRows (start: RelationWorld, filters: readonly ListFilter[], sort: readonly ListSortKey[]) {
  const unchanged = new Map(referenceList(start, filters, sort).map((row) => [row.id, positionOf(start, row, sort)]))
  return {
    unchanged,
    observe (world: RelationWorld) {
      const selected = new Map(referenceList(world, filters, sort).map((row) => [row.id, row]))
      for (const [id, position] of unchanged) {
        const row = selected.get(id)
        if (row === undefined || comparePositions(sort, positionOf(world, row, sort), position) !== 0) unchanged.delete(id)
      }
    },
  }
}

/** The offset bodies of each dialect, in the order asked (the same on every dialect: one seed). */
const offsetBodies = new Map<string, string[]>()

for (const dialect of dialects()) {
  t.test(`lists through relations against the reference on ${dialect.name}`, async (t) => {
    const { app, database } = await openApp(t, dialect)
    const bodies: string[] = []
    offsetBodies.set(dialect.name, bodies)
    const describe = (world: RelationWorld) => `world ${JSON.stringify(world)}`

    t.test('offset pages: the rows and the total, expanded or not, for a guest or not', async (t) => {
      const outcomes = { empty: 0, rows: 0, throughMany: 0, forbidden: 0, expanded: 0 }
      const offsetArbitrary = fc.nat({ max: maxPeople + 2 })
      const shapingArbitrary: fc.Arbitrary<Shaping> = fc.record({
        expand: fc.subarray(['employer', 'manager', 'pets', 'pets.tags']),
        guest: fc.integer({ min: 0, max: 4 }).map((draw) => draw === 0),
      })
      const requestsArbitrary = fc.array(fc.tuple(requestArbitrary, offsetArbitrary, shapingArbitrary), { minLength: 4, maxLength: 4 })
      await fc.assert(fc.asyncProperty(relationWorldArbitrary, requestsArbitrary, async (world, requests) => {
        await load(database, world)
        for (const [request, offset, shaping] of requests) {
          const expand = shaping.expand.length === 0 ? '' : `&expand=${shaping.expand.join(',')}`
          const url = `/people?${queryOf(request)}&offset=${offset}${expand}`
          const label = `${url}${shaping.guest ? ' (guest)' : ''} on ${describe(world)}`
          database.reset()
          const reply = await app.inject({ url, headers: shaping.guest ? { 'x-role': 'guest' } : {} })
          bodies.push(`${reply.statusCode} ${reply.body}`)
          if (shaping.guest && forbiddenToGuest(request.filters, request.sort)) {
            outcomes.forbidden++
            if (reply.statusCode !== 403 || reply.json().code !== 'FST_EXPAND_FORBIDDEN') throw new Error(`${label}: ${reply.statusCode} ${reply.body}`)
            continue
          }
          if (reply.statusCode !== 200) throw new Error(`${label}: ${reply.statusCode} ${reply.body}`)
          const expected = referenceList(world, request.filters, request.sort)
          outcomes[expected.length === 0 ? 'empty' : 'rows']++
          if (expected.length > 0 && request.filters.some(({ path }) => /^(pets|reports)[.]|^manager[.]pets/.test(path))) outcomes.throughMany++
          if (expected.length > offset && shaping.expand.length > 0) outcomes.expanded++
          // The filters run inside the page statement and its COUNT: no statement of their own.
          const page = expected.slice(offset, offset + request.limit)
          const counted = pageRunsCount(page.length, request.limit, offset, countGoesWithPage(dialect, request.filters.length > 0))
          const statements = counted ? 2 : 1
          if (shaping.expand.length === 0 && database.statements.length !== statements) {
            throw new Error(`${label}: ${database.statements.length} statements, not ${statements}: ${JSON.stringify(database.statements)}`)
          }
          sameJson(label, reply.json(), {
            data: expected.slice(offset, offset + request.limit).map((row) => shapedPerson(world, row, shaping)),
            limit: request.limit,
            offset,
            total: expected.length,
          })
        }
      }), runs(60))
      t.ok(outcomes.empty > 10 && outcomes.rows > 60 && outcomes.throughMany > 10 && outcomes.forbidden > 3 && outcomes.expanded > 15,
        `every outcome is exercised: ${JSON.stringify(outcomes)}`)
    })

    t.test('cursor pages: forward to the end, then back to the start through prev', async (t) => {
      let longWalks = 0
      const requestsArbitrary = fc.array(requestArbitrary, { minLength: 2, maxLength: 2 })
      await fc.assert(fc.asyncProperty(relationWorldArbitrary, requestsArbitrary, async (world, requests) => {
        await load(database, world)
        for (const request of requests) {
          const query = queryOf(request)
          const { limit } = request
          const expected = referenceList(world, request.filters, request.sort).map(personBody)
          const label = `/feed?${query} on ${describe(world)}`
          const forward: CursorBody[] = []
          let after: string | null | undefined
          while (after !== null) {
            if (forward.length > expected.length + 1) throw new Error(`${label}: the walk does not end`)
            const url = after === undefined ? `/feed?${query}` : `/feed?${query}&after=${encodeURIComponent(after)}`
            database.reset()
            const { body } = await get<CursorBody>(app, url)
            if (database.statements.length !== 1) throw new Error(`${url}: ${database.statements.length} statements, not 1`)
            const index = forward.length
            sameJson(`${label}: page ${index}`, body.data, expected.slice(index * limit, (index + 1) * limit))
            const last = (index + 1) * limit >= expected.length
            if ((body.next === null) !== last) throw new Error(`${label}: page ${index} next ${String(body.next)}, ${expected.length} rows`)
            if ((body.prev === null) !== (index === 0)) throw new Error(`${label}: page ${index} prev ${String(body.prev)}`)
            forward.push(body)
            after = body.next
          }
          // Back from the last page: the same pages in reverse, prev null exactly on the first.
          let page = forward.length - 1
          let before = forward[page]!.prev
          while (before !== null) {
            page--
            if (page < 0) throw new Error(`${label}: walking back goes past the first page`)
            const { body }: { body: CursorBody } = await get<CursorBody>(app, `/feed?${query}&before=${encodeURIComponent(before)}`)
            sameJson(`${label}: page ${page} walking back`, body.data, forward[page]!.data)
            if ((body.prev === null) !== (page === 0)) throw new Error(`${label}: page ${page} walking back has prev ${String(body.prev)}`)
            if (body.next === null) throw new Error(`${label}: page ${page} walking back has no next`)
            // And forward again from it: its next is the page after it.
            const { body: again } = await get<CursorBody>(app, `/feed?${query}&after=${encodeURIComponent(body.next)}`)
            sameJson(`${label}: after page ${page} read walking back`, again.data, forward[page + 1]!.data)
            before = body.prev
          }
          if (page !== 0) throw new Error(`${label}: walking back stopped at page ${page}`)
          if (forward.length >= 3) longWalks++
        }
      }), runs(40))
      t.ok(longWalks > 5, `${longWalks} walks of three pages or more`)
    })

    t.test('a forward walk with rows inserted, deleted and changed between pages', async (t) => {
      const exercised = { emptyPages: 0, unchangedRows: 0, pages: 0 }
      await fc.assert(fc.asyncProperty(relationWorldArbitrary, requestArbitrary, changesArbitrary,
        async (start, request, changes) => {
          await load(database, start)
          const query = queryOf(request)
          const { filters, sort, limit } = request
          const label = `/feed?${query} on ${describe(start)}`
          let world = start
          const { unchanged, observe } = unchangedRows(start, filters, sort)
          const seen = new Map<number, Position>()
          let at: Position | undefined
          let after: string | null | undefined
          for (let page = 0; after !== null; page++) {
            if (page > 80) throw new Error(`${label}: the walk does not end`)
            const url = after === undefined ? `/feed?${query}` : `/feed?${query}&after=${encodeURIComponent(after)}`
            const { body } = await get<CursorBody>(app, url)
            exercised.pages++
            // Exactly the rows after the last one read (at its position when read), in the current state.
            const remaining = referenceList(world, filters, sort)
              .filter((row) => at === undefined || comparePositions(sort, positionOf(world, row, sort), at) > 0)
            sameJson(`${label}: page ${page}`, body.data, remaining.slice(0, limit).map(personBody))
            if ((body.next === null) !== (remaining.length <= limit)) throw new Error(`${label}: page ${page} next ${String(body.next)}`)
            if ((body.prev === null) !== (page === 0)) throw new Error(`${label}: page ${page} prev ${String(body.prev)}`)
            // A row read again must have moved (its sort key through a relation changed): an unmoved one never repeats.
            for (const row of remaining.slice(0, limit)) {
              const position = positionOf(world, row, sort)
              const before = seen.get(row.id)
              if (before !== undefined && comparePositions(sort, before, position) === 0) throw new Error(`${label}: page ${page} repeats ${row.id}`)
              seen.set(row.id, position)
            }
            const lastRow = remaining[Math.min(limit, remaining.length) - 1]
            if (lastRow !== undefined) at = positionOf(world, lastRow, sort)
            else if (page > 0) {
              // An empty page still hands back the way back: the rows up to its cursor's position.
              if (body.prev === null) throw new Error(`${label}: empty page ${page} has no prev`)
              exercised.emptyPages++
              const { body: back } = await get<CursorBody>(app, `/feed?${query}&before=${encodeURIComponent(body.prev)}`)
              const upTo = referenceList(world, filters, sort)
                .filter((row) => comparePositions(sort, positionOf(world, row, sort), at!) <= 0)
              sameJson(`${label}: before the empty page ${page}`, back.data, upTo.slice(-limit).map(personBody))
            }
            after = body.next
            // Between pages: insert and delete people, change a pet's species, in the database and the reference alike.
            // Rows inserted at every page could keep a walk going for ever: the changes stop after the first twelve pages.
            if (page >= changes.length) continue
            world = await applyChange(database, world, changes[page]!, remaining.slice(limit))
            observe(world)
          }
          exercised.unchangedRows += unchanged.size
          for (const id of unchanged.keys()) {
            if (!seen.has(id)) throw new Error(`${label}: row ${id}, selected and unchanged during the walk, was skipped`)
          }
        }), runs(40))
      t.ok(exercised.pages > 25 && exercised.unchangedRows > 10, `no walk repeats or skips a row: ${JSON.stringify(exercised)}`)
    })

    t.test('scopes that read the request: the rows of each request under its own tenant, whatever ran before', async (t) => {
      const tenantApp = Fastify()
      await tenantApp.register(expandPlugin, { db: database.db, resources: [TenantCompany, TenantTag, TenantToy, TenantPet, TenantPerson] })
      tenantApp.expand.routes('/people', TenantPerson, { filter: declaredFilters, sort: sortNames, maxPageSize: 50 })
      await tenantApp.ready()
      t.teardown(() => tenantApp.close())
      const counts = { 0: 0, 1: 0, rows: 0 }
      const shapingArbitrary = fc.subarray(['employer', 'manager', 'pets', 'pets.tags']).map((expand) => ({ expand, guest: false }))
      const requestsArbitrary = fc.array(fc.tuple(requestArbitrary, fc.constantFrom(0, 1), shapingArbitrary), {
        minLength: 6, maxLength: 6,
      })
      await fc.assert(fc.asyncProperty(relationWorldArbitrary, requestsArbitrary, async (world, requests) => {
        await load(database, world)
        for (const [request, tenant, shaping] of requests) {
          const expand = shaping.expand.length === 0 ? '' : `&expand=${shaping.expand.join(',')}`
          const url = `/people?${queryOf(request)}${expand}`
          const reply = await tenantApp.inject({ url, headers: { 'x-tenant': String(tenant) } })
          const scopes = tenantScopes[tenant]!
          const expected = referenceList(world, request.filters, request.sort, scopes)
          counts[tenant]++
          if (expected.length > 0) counts.rows++
          const label = `${url} (tenant ${tenant}) on ${describe(world)}`
          if (reply.statusCode !== 200) throw new Error(`${label}: ${reply.statusCode} ${reply.body}`)
          sameJson(label, reply.json(), {
            data: expected.slice(0, request.limit).map((row) => shapedPerson(world, row, shaping, scopes)),
            limit: request.limit,
            offset: 0,
            total: expected.length,
          })
        }
      }), runs(40))
      t.ok(counts[0] > 50 && counts[1] > 50 && counts.rows > 50, `both tenants are asked: ${JSON.stringify(counts)}`)
    })

    t.test('a backward walk from the last page with rows inserted, deleted and changed between pages', async (t) => {
      const exercised = { emptyPages: 0, unchangedRows: 0, pages: 0 }
      await fc.assert(fc.asyncProperty(relationWorldArbitrary, requestArbitrary, changesArbitrary, async (start, request, changes) => {
        await load(database, start)
        const query = queryOf(request)
        const { filters, sort, limit } = request
        const label = `/feed?${query} walking back on ${describe(start)}`
        // The last page, reached by a walk forward in the unchanged world.
        let last: CursorBody | undefined
        for (let after: string | null | undefined; after !== null;) {
          last = (await get<CursorBody>(app, after === undefined ? `/feed?${query}` : `/feed?${query}&after=${encodeURIComponent(after)}`)).body
          after = last.next
        }
        const startList = referenceList(start, filters, sort)
        const firstRead = startList[Math.floor(Math.max(startList.length - 1, 0) / limit) * limit]
        if (last!.prev === null || firstRead === undefined) return
        let world = start
        let at = positionOf(start, firstRead, sort)
        const { unchanged, observe } = unchangedRows(start, filters, sort)
        // Rows after the last page's first one are read already: only those before it must be read walking back.
        for (const [id, position] of unchanged) if (comparePositions(sort, position, at) >= 0) unchanged.delete(id)
        const seen = new Map<number, Position>()
        let before: string | null = last!.prev
        for (let page = 0; before !== null; page++) {
          if (page > 80) throw new Error(`${label}: the walk does not end`)
          const ahead = referenceList(world, filters, sort).filter((row) => comparePositions(sort, positionOf(world, row, sort), at) < 0)
          if (page < changes.length) {
            world = await applyChange(database, world, changes[page]!, ahead)
            observe(world)
          }
          const { body }: { body: CursorBody } = await get<CursorBody>(app, `/feed?${query}&before=${encodeURIComponent(before)}`)
          exercised.pages++
          // Exactly the last `limit` rows before the first one read (at its position when read), in the current state.
          const earlier = referenceList(world, filters, sort).filter((row) => comparePositions(sort, positionOf(world, row, sort), at) < 0)
          const expected = earlier.slice(-limit)
          sameJson(`${label}: page ${page} back`, body.data, expected.map(personBody))
          if ((body.prev === null) !== (earlier.length <= limit)) throw new Error(`${label}: page ${page} back has prev ${String(body.prev)}`)
          if (body.next === null) throw new Error(`${label}: page ${page} back has no next`)
          for (const row of expected) {
            const position = positionOf(world, row, sort)
            const previous = seen.get(row.id)
            if (previous !== undefined && comparePositions(sort, previous, position) === 0) throw new Error(`${label}: page ${page} back repeats ${row.id}`)
            seen.set(row.id, position)
          }
          if (expected.length > 0) at = positionOf(world, expected[0]!, sort)
          else {
            // An empty page still hands the way forward: the rows from its cursor's position on.
            exercised.emptyPages++
            const { body: onward } = await get<CursorBody>(app, `/feed?${query}&after=${encodeURIComponent(body.next)}`)
            const from = referenceList(world, filters, sort).filter((row) => comparePositions(sort, positionOf(world, row, sort), at) >= 0)
            sameJson(`${label}: after the empty page ${page} back`, onward.data, from.slice(0, limit).map(personBody))
          }
          before = body.prev
        }
        exercised.unchangedRows += unchanged.size
        for (const id of unchanged.keys()) {
          if (!seen.has(id)) throw new Error(`${label}: row ${id}, selected and unchanged during the walk, was skipped`)
        }
      }), runs(30))
      t.ok(exercised.pages > 8 && exercised.unchangedRows > 5, `no walk back repeats or skips a row: ${JSON.stringify(exercised)}`)
    })
  })
}

t.test('every dialect answers the same offset requests with the same bytes', async (t) => {
  const [first, ...others] = [...offsetBodies.entries()]
  t.ok(first !== undefined && first[1].length > 0, 'offset bodies were recorded')
  for (const [name, bodies] of others) {
    const differing = bodies.findIndex((body, index) => body !== first![1][index])
    t.equal(differing, -1, `${name} and ${first![0]}: ${differing === -1 ? 'identical' : `request ${differing}: ${bodies[differing]} | ${first![1][differing]}`}`)
    t.equal(bodies.length, first![1].length, `${name} answered as many requests`)
  }
})
