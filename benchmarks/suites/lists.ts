import { setImmediate as turnOfEventLoop } from 'node:timers/promises'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../test/helpers/app.js'
import { defineResource } from '../../plugin/index.js'
import { expandOfDepth, pageRows } from '../baselines/hand-written.js'
import { Company, Person, PetStore, Toy, createPetsDatabase, defaultSize, kyselyOver } from '../domain/pets-db.js'
import { createPeopleAndPets } from '../domain/people-pets.js'
import { Person as RelatedPerson, relationListResources } from '../../test/fixtures/relation-lists.js'
import { assertSameText, type BenchCase, type Contender, type Mode, type Suite } from '../runner.js'

export const firstCursorName = 'cursor page: the first'
export const deepCursorName = 'cursor page: deep in the table'
export const deepOffsetName = 'offset page: as deep'
export const unfilteredName = 'sort=-born, unfiltered'
export const filteredName = 'filter[species]=cat&sort=-born'
export const cursorCaseName = 'cursor vs offset pages'
export const filterCaseName = 'filtered and sorted page'
export const relationCaseName = 'pages through relations'
export const plainPeopleName = 'people, unfiltered'
export const toManyFilterName = 'filter[pets.species]=cat'
export const relatedSortName = 'sort=employer.name'

const expand = expandOfDepth[2]
const fullRows = 200_000
const quickRows = 5_000
/** People in the relation case: each with 0 to 3 pets, most with an employer among 200 companies. */
const fullPeople = 100_000
const quickPeople = 5_000

/** The benchmark domain's Pet with a date of birth to sort by (`born`, a column the suite adds). */
const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    species: Type.String(),
    born: Type.String({ format: 'date' }),
    owner: Type.Integer(),
    sold_from: Type.Union([Type.Integer(), Type.Null()]),
    toys: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'species', 'born', 'owner', 'sold_from', 'toys'],
  expandable: {
    owner: [Person, { column: 'owner_id' }],
    sold_from: [PetStore, { column: 'sold_from_id', fields: ['id', 'name'] }],
    toys: [Toy, { many: true, omit: ['secret'], through: { table: 'pet_toys', from: 'pet_id', to: 'toy_id' } }],
  },
})

/** How deep the deep pages are: 95% of the table (190,000 rows of 200,000), a whole number of pages. */
const depthOf = (rows: number) => Math.floor((rows * 0.95) / pageRows) * pageRows

interface Page { data: Array<{ id: number }>; next?: string | null }

async function page (app: FastifyInstance, url: string): Promise<{ body: string; parsed: Page }> {
  const response = await app.inject({ method: 'GET', url })
  if (response.statusCode !== 200) throw new Error(`${url}: status ${response.statusCode}: ${response.body.slice(0, 300)}`)
  return { body: response.body, parsed: JSON.parse(response.body) as Page }
}

const records = (body: string) => JSON.stringify((JSON.parse(body) as Page).data)

/** A request timed as one contender, a turn of the event loop after each, as on a server (see the end-to-end suite). */
export function timedOn (app: FastifyInstance, name: string, url: string): Contender {
  return {
    name,
    op: async () => {
      const response = await app.inject({ method: 'GET', url })
      await turnOfEventLoop()
      return response
    },
  }
}

/**
 * The relation case: people with pets and employers, filtered through the to-many relation and sorted
 * through the to-one one, each page checked against the statement a user would write by hand.
 */
async function relationCase (mode: Mode, timed: typeof timedOn): Promise<{ case: BenchCase; teardown: () => Promise<void> }> {
  const people = mode.quick ? quickPeople : fullPeople
  const { database, db } = await createPeopleAndPets(people)
  const app = await buildApp({ db, resources: relationListResources }, (app) => {
    app.expand.routes('/people', RelatedPerson, {
      filter: { 'pets.species': ['eq'] }, sort: ['name', 'employer.name'], total: false, maxPageSize: pageRows,
    })
  })
  const plainUrl = `/people?limit=${pageRows}`
  const filteredUrl = `/people?filter[pets.species]=cat&limit=${pageRows}`
  const sortedUrl = `/people?sort=employer.name&limit=${pageRows}`
  const ids = async (url: string) => JSON.stringify((await page(app, url)).parsed.data.map(({ id }) => id))
  const expected = (statement: string) => JSON.stringify((database.prepare(statement).all() as Array<{ id: number }>).map(({ id }) => id))
  return {
    case: {
      name: relationCaseName,
      baseline: plainPeopleName,
      contenders: [
        timed(app, plainPeopleName, plainUrl), timed(app, toManyFilterName, filteredUrl), timed(app, relatedSortName, sortedUrl),
      ],
      async check () {
        const plain = `SELECT id FROM people ORDER BY id LIMIT ${pageRows}`
        const cats = `SELECT id FROM people WHERE EXISTS (SELECT 1 FROM pets WHERE pets.owner_id = people.id AND pets.deleted = 0
          AND pets.species = 'cat') ORDER BY id LIMIT ${pageRows}`
        // NULL (no employer, or a hidden one) last, as the route orders it.
        const byEmployer = `SELECT people.id FROM people LEFT JOIN companies ON companies.id = people.employer_id AND companies.hidden = 0
          ORDER BY companies.name IS NULL, companies.name, people.id LIMIT ${pageRows}`
        assertSameText('unfiltered', expected(plain), await ids(plainUrl), 'SQL', plainPeopleName)
        assertSameText('to-many filter', expected(cats), await ids(filteredUrl), 'SQL', toManyFilterName)
        assertSameText('related sort', expected(byEmployer), await ids(sortedUrl), 'SQL', relatedSortName)
      },
    },
    async teardown () {
      await app.close()
      await db.destroy()
    },
  }
}

export const listsSuite: Suite = {
  id: 'lists',
  title: 'Lists: filters, sort, cursor pages',
  description: [
    `The list options of app.expand.routes on an in-memory SQLite table of ${fullRows.toLocaleString('en-US')} pets (${quickRows.toLocaleString('en-US')} in --quick runs)`,
    'with the indexes a user would create for them: pets(born, id) for the sort and its keyset, pets(species) for the filter,',
    'and pets(species, born, id) for the filtered and sorted page (no ANALYZE).',
    'Requests go through app.inject one after another; figure: median latency.',
    `${cursorCaseName}: pages of ${pageRows} pets sorted by born (no expand): the first cursor page (the baseline), a cursor page after 95% of the table`,
    '(its cursor found by following `next` from the first page), and an offset page at the same offset on a route with `total: false`;',
    'the three bodies are checked against each other.',
    `${filterCaseName}: a page of ${pageRows} with \`expand=${expand}\` sorted by \`-born\`, filtered by species (about 1 pet in 7) and unfiltered (the baseline), on an offset route with \`total: false\`;`,
    'the filtered page is checked to hold only cats, in order.',
    `${relationCaseName}: the lists-through-relations domain of the tests (test/fixtures/relation-lists.ts)`,
    `in a second in-memory SQLite database, ${fullPeople.toLocaleString('en-US')} people (${quickPeople.toLocaleString('en-US')} in --quick runs),`,
    'each with 0 to 3 pets (1 pet in 20 deleted, 1 in 5 a cat), 9 in 10 with an employer among 200 companies',
    '(1 in 10 hidden by the companies\' scope), with the fixture\'s indexes (pets_owner, people_name) and ANALYZE:',
    `pages of ${pageRows} people on an offset route with \`total: false\`: unfiltered in primary key order (the baseline),`,
    'filtered through the to-many relation (`filter[pets.species]=cat`, an EXISTS per person read by pets_owner),',
    'and sorted through the to-one relation (`sort=employer.name`, a LEFT JOIN under the companies\' scope, NULL last:',
    'every person is joined and sorted, no index gives that order); each page is checked against a hand-written statement.',
  ].join(' '),
  async setup (mode: Mode) {
    const rows = mode.quick ? quickRows : fullRows
    const database = createPetsDatabase({ ...defaultSize, pets: rows, people: Math.max(defaultSize.people, rows / 20) })
    // A date of birth spread over 25 years, many pets per day: the id breaks ties.
    database.exec(`
      ALTER TABLE pets ADD COLUMN born TEXT NOT NULL DEFAULT '';
      UPDATE pets SET born = printf('%04d-%02d-%02d', 2000 + (id * 7919) % 25, 1 + (id * 31) % 12, 1 + (id * 17) % 28);
      CREATE INDEX pets_born_id ON pets(born, id);
      CREATE INDEX pets_species ON pets(species);
      CREATE INDEX pets_species_born_id ON pets(species, born, id);
    `)
    const db = kyselyOver(database)
    const resources = [Company, Person, PetStore, Toy, Pet]
    const app = await buildApp({ db, resources }, (app) => {
      app.expand.routes('/feed', Pet, { sort: ['born'], pagination: 'cursor', maxPageSize: pageRows })
      app.expand.routes('/pets', Pet, { sort: ['born'], filter: { species: ['eq'] }, total: false, maxPageSize: pageRows })
    })

    const depth = depthOf(rows)
    const firstUrl = `/feed?sort=born&limit=${pageRows}`
    // Follow the cursors to the deep page (fields=id: the cursor is bound to the sort and filters only).
    let cursor: string | null | undefined
    for (let skipped = 0; skipped < depth; skipped += pageRows) {
      const { parsed } = await page(app, `/feed?sort=born&limit=${pageRows}&fields=id${cursor === undefined ? '' : `&after=${cursor}`}`)
      cursor = parsed.next
      if (typeof cursor !== 'string') throw new Error(`the cursor pages ended after ${skipped + pageRows} rows`)
    }
    const deepUrl = `/feed?sort=born&limit=${pageRows}&after=${cursor!}`
    const offsetUrl = `/pets?sort=born&limit=${pageRows}&offset=${depth}`
    const unfilteredUrl = `/pets?sort=-born&limit=${pageRows}&expand=${expand}`
    const filteredUrl = `/pets?filter[species]=cat&sort=-born&limit=${pageRows}&expand=${expand}`

    const timed = (name: string, url: string) => timedOn(app, name, url)
    const cursorCase: BenchCase = {
      name: cursorCaseName,
      baseline: firstCursorName,
      contenders: [timed(firstCursorName, firstUrl), timed(deepCursorName, deepUrl), timed(deepOffsetName, offsetUrl)],
      async check () {
        const first = await page(app, firstUrl)
        const firstOffset = await page(app, `/pets?sort=born&limit=${pageRows}&offset=0`)
        assertSameText('first page', records(firstOffset.body), records(first.body), 'offset 0', firstCursorName)
        const deep = await page(app, deepUrl)
        const offset = await page(app, offsetUrl)
        if (deep.parsed.data.length !== pageRows) throw new Error(`${deepCursorName}: ${deep.parsed.data.length} rows`)
        assertSameText('deep page', records(offset.body), records(deep.body), deepOffsetName, deepCursorName)
      },
    }
    const filterCase: BenchCase = {
      name: filterCaseName,
      baseline: unfilteredName,
      contenders: [timed(unfilteredName, unfilteredUrl), timed(filteredName, filteredUrl)],
      async check () {
        const unfiltered = JSON.parse((await page(app, unfilteredUrl)).body) as { data: Array<{ species: string; born: string }> }
        const filtered = JSON.parse((await page(app, filteredUrl)).body) as { data: Array<{ species: string; born: string }> }
        for (const [name, body] of [[unfilteredName, unfiltered], [filteredName, filtered]] as const) {
          if (body.data.length !== pageRows) throw new Error(`${name}: ${body.data.length} rows`)
          if (body.data.some((row, index) => index > 0 && row.born > body.data[index - 1]!.born)) throw new Error(`${name}: not sorted by -born`)
        }
        if (!filtered.data.every((row) => row.species === 'cat')) throw new Error(`${filteredName}: a pet that is not a cat`)
      },
    }
    const relation = await relationCase(mode, timedOn)
    return {
      cases: [cursorCase, filterCase, relation.case],
      async teardown () {
        await app.close()
        await db.destroy()
        await relation.teardown()
      },
    }
  },
}
