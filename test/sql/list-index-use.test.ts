// The indexes docs/lists.md tells a user to create serve the list statements as the routes write them:
// a filter through a to-many relation (`filter[pets.species]=cat`, an EXISTS correlated on
// `pets.owner_id`) reads the pets by pets_owner (through two, the toys by toys_pet; `reports` exists,
// the people by people_manager), and a keyset page sorted by `name` (an `after` or `before` cursor)
// reads the people by people_name (name, id) from the cursor on. Each statement is the one the route ran (recorded by the
// test database), explained with its own parameters on enough rows, analysed, that each planner
// chooses by cost: SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN (FORMAT JSON), MariaDB's EXPLAIN FORMAT=JSON.
import Fastify, { type FastifyInstance } from 'fastify'
import { CompiledQuery } from 'kysely'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { databaseOf, type Database } from '../fixtures/databases.js'
import { dialects, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { Person, openRelationTables, relationListResources, type RelationWorld } from '../fixtures/relation-lists.js'

/**
 * MariaDB 10.11's costs favour a scan and a sort of a table of 5,000 rows
 * over reading 21 of them through an index not covering the columns
 * selected, even for its first page: it is given 50,000 rows, where it
 * chooses the index as the others do on 5,000.
 */
const peopleCounts: Record<Database, number> = { sqlite: 5000, postgres: 5000, mariadb: 50_000 }
const petCount = 12_000
const names = ['Ana', 'Bea', 'Bo', 'Bob', 'Caio', 'Dora']
const species = ['cat', 'dog', 'fish', 'newt', 'owl', 'rat']
const toyCount = 8000
const toyNames = ['ball', 'bone', 'mouse', 'rope', 'kong', 'frisbee', 'duck', 'bell']

/** Many people, each with a few pets (of many species, some deleted): a planner chooses by cost on these. */
function largeWorld (peopleCount: number): RelationWorld {
  return {
    companies: [{ id: 1, name: 'Acme', hidden: 0 }],
    people: Array.from({ length: peopleCount }, (_, index) => ({
      id: index + 1,
      name: `${names[index % names.length]!}${String(index % 997).padStart(3, '0')}`,
      born: null,
      employer_id: 1,
      // One person in 50 manages: each of them 49 others.
      manager_id: index % 50 === 0 ? null : 1 + (index - (index % 50)),
    })),
    pets: Array.from({ length: petCount }, (_, index) => ({
      id: index + 1,
      name: 'Rex',
      species: species[(index * 7) % species.length]!,
      owner_id: 1 + ((index * 7919) % peopleCount),
      deleted: index % 10 === 0 ? 1 : 0,
    })),
    toys: Array.from({ length: toyCount }, (_, index) => ({
      id: index + 1, name: toyNames[index % toyNames.length]!, pet_id: 1 + ((index * 104729) % petCount),
    })),
    tags: [],
    pet_tags: [],
  }
}

/** What the planner says of a statement: each step's text (SQLite) or the plan tree (PostgreSQL, MariaDB), and the indexes it reads. */
interface Explained { indexes: string[]; text: string }

/** The values of every `key` member of a JSON plan, at any depth: the indexes a plan tree names. */
function valuesOf (plan: unknown, key: string): string[] {
  const found: string[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk)
    else if (typeof node === 'object' && node !== null) {
      for (const [name, value] of Object.entries(node)) {
        if (name === key) found.push(String(value))
        else walk(value)
      }
    }
  }
  walk(plan)
  return found
}

/** Each database's EXPLAIN of a statement with its parameters. */
const explainers: Record<Database, (database: TestDatabase, statement: string, parameters: unknown[]) => Promise<Explained>> = {
  sqlite: async (database, statement, parameters) => {
    const { rows } = await database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement}`, parameters))
    const details = rows.map(({ detail }) => detail)
    const indexes = details.flatMap((detail) => [...detail.matchAll(/USING (?:COVERING )?INDEX (\w+)/g)].map((match) => match[1]!))
    return { indexes, text: details.join('\n') }
  },
  postgres: async (database, statement, parameters) => {
    const { rows } = await database.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${statement}`, parameters))
    const plan = rows[0]!['QUERY PLAN']
    return { indexes: valuesOf(plan, 'Index Name'), text: JSON.stringify(plan, null, 1) }
  },
  // Each table read is a "table" member: its "access_type" (ALL: a scan; range: an index entered at a bound), its "key".
  mariadb: async (database, statement, parameters) => {
    const { rows } = await database.db.executeQuery<{ EXPLAIN: string }>(CompiledQuery.raw(`explain format=json ${statement}`, parameters))
    const plan: unknown = JSON.parse(rows[0]!.EXPLAIN)
    return { indexes: valuesOf(plan, 'key'), text: JSON.stringify(plan) }
  },
}

async function explain (dialect: Dialect, database: TestDatabase, statement: string, parameters: readonly unknown[]): Promise<Explained> {
  return explainers[databaseOf(dialect)](database, statement, [...parameters])
}

/**
 * How each plan says it sorts rows the index did not give in order, and that
 * it enters people_name at a cursor: after it, before it, or (keys in mixed
 * directions) at the bound on the name.
 */
const plans: Record<Database, { sortStep: RegExp; after: RegExp; before: RegExp; atName: RegExp }> = {
  sqlite: {
    sortStep: /TEMP B-TREE/,
    after: /SEARCH people USING (COVERING )?INDEX people_name/,
    before: /SEARCH people USING (COVERING )?INDEX people_name/,
    atName: /SEARCH people USING (COVERING )?INDEX people_name \(name<\?\)/,
  },
  postgres: {
    sortStep: /"Node Type": "Sort"/,
    after: /"Index Cond": "\(ROW\(name, id\) > /,
    before: /"Index Cond": "\(ROW\(name, id\) < /,
    atName: /"Index Cond": "\(name <= /,
  },
  // The range read of people_name, its bound the cursor's name (`name >= ?` or `name <= ?` before the row comparison).
  mariadb: {
    sortStep: /"filesort"/,
    after: /"table_name":"people","access_type":"range",("possible_keys":\[[^\]]*\],)?"key":"people_name",[^}]*people\.`name` >= '/,
    before: /"table_name":"people","access_type":"range",("possible_keys":\[[^\]]*\],)?"key":"people_name",[^}]*people\.`name` <= '/,
    atName: /"table_name":"people","access_type":"range",("possible_keys":\[[^\]]*\],)?"key":"people_name",[^}]*people\.`name` <= '/,
  },
}

/** The one page statement a request ran (its COUNT aside): its text and parameters. */
interface PageStatement { statement: string; parameters: readonly unknown[]; body: any }

async function pageStatement (app: FastifyInstance, database: TestDatabase, url: string): Promise<PageStatement> {
  database.reset()
  const reply = await app.inject(url)
  if (reply.statusCode !== 200) throw new Error(`${url}: ${reply.statusCode} ${reply.body}`)
  const pages = database.statements.flatMap((statement, index) => /order by/i.test(statement) ? [index] : [])
  if (pages.length !== 1) throw new Error(`${url}: ${pages.length} page statements in ${JSON.stringify(database.statements)}`)
  return { statement: database.statements[pages[0]!]!, parameters: database.parameters[pages[0]!]!, body: reply.json() }
}

for (const dialect of dialects()) {
  t.test(`${dialect.name}: list statements use the indexes made for them`, async (t) => {
    const database = await openRelationTables(t, dialect, largeWorld(peopleCounts[databaseOf(dialect)]))
    // Statistics, so that each planner weighs the index against a scan with the real row counts.
    const analyze = { sqlite: 'analyze', postgres: 'analyze', mariadb: 'analyze table people, pets, toys' } satisfies Record<Database, string>
    await database.db.executeQuery(CompiledQuery.raw(analyze[databaseOf(dialect)]))
    const { sortStep, after, before, atName } = plans[databaseOf(dialect)]
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: relationListResources })
    const filter = { 'pets.species': ['eq'], 'pets.toys.name': ['eq'], reports: ['exists'] } as const
    app.expand.routes('/people', Person, { filter, sort: ['name'] })
    app.expand.routes('/feed', Person, { filter, sort: ['name'], pagination: 'cursor' })
    await app.ready()
    t.teardown(() => app.close())

    t.test('a filter through a to-many relation: the EXISTS reads pets by pets_owner', async (t) => {
      const { statement, parameters, body } = await pageStatement(app, database, '/people?filter[pets.species]=cat&limit=20')
      t.equal(body.data.length, 20, 'a full page of people with a cat')
      t.match(statement, /exists/, 'the statement is the EXISTS form')
      const plan = await explain(dialect, database, statement, parameters)
      t.ok(plan.indexes.includes('pets_owner'), `pets_owner is read\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`)
    })

    t.test('a filter through two to-many relations: pets by pets_owner, their toys by toys_pet', async (t) => {
      const { statement, parameters, body } = await pageStatement(app, database, '/people?filter[pets.toys.name]=ball&limit=20')
      t.equal(body.data.length, 20, 'a full page of people with a pet with a ball')
      const plan = await explain(dialect, database, statement, parameters)
      const found = `\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`
      t.ok(plan.indexes.includes('pets_owner'), `pets_owner is read${found}`)
      t.ok(plan.indexes.includes('toys_pet'), `toys_pet is read${found}`)
    })

    t.test('exists through a relation of the table to itself: the reports read by people_manager', async (t) => {
      const { statement, parameters, body } = await pageStatement(app, database, '/people?filter[reports][exists]=true&limit=20')
      t.equal(body.data.length, 20, 'a full page of managers')
      const plan = await explain(dialect, database, statement, parameters)
      t.ok(plan.indexes.includes('people_manager'), `people_manager is read\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`)
    })

    t.test('a keyset page sorted by name and filtered through pets: people_name from the cursor on, pets by pets_owner', async (t) => {
      const first = await pageStatement(app, database, '/feed?sort=name&filter[pets.species]=cat&limit=20')
      const url = `/feed?sort=name&filter[pets.species]=cat&limit=20&after=${encodeURIComponent(first.body.next)}`
      const { statement, parameters, body } = await pageStatement(app, database, url)
      t.equal(body.data.length, 20, 'a full page after the first')
      const plan = await explain(dialect, database, statement, parameters)
      const found = `\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`
      t.ok(plan.indexes.includes('people_name'), `people_name is read${found}`)
      t.ok(plan.indexes.includes('pets_owner'), `pets_owner is read${found}`)
      t.notMatch(plan.text, sortStep, 'no sort step: the index gives the order')
    })

    t.test('a keyset page sorted by name: people read by people_name from the cursor on', async (t) => {
      const first = await pageStatement(app, database, '/feed?sort=name&limit=20')
      const { statement, parameters, body } = await pageStatement(app, database, `/feed?sort=name&limit=20&after=${encodeURIComponent(first.body.next)}`)
      t.equal(body.data.length, 20, 'a full page after the first')
      const plan = await explain(dialect, database, statement, parameters)
      t.ok(plan.indexes.includes('people_name'), `people_name is read\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`)
      t.notMatch(plan.text, sortStep, 'no sort step: the index gives the order')
      t.match(plan.text, after, 'the index is entered at the cursor')
    })

    /** The `next` cursor after `pages` pages of 100 rows in the order `sort`: a position deep in the list. */
    const deepCursor = async (sort: string, pages: number): Promise<string> => {
      let after = ''
      for (let page = 0; page < pages; page++) {
        const reply = await app.inject(`/feed?sort=${sort}&limit=100${after === '' ? '' : `&after=${encodeURIComponent(after)}`}`)
        after = (reply.json() as { next: string }).next
      }
      return after
    }

    t.test('the page before a cursor deep in the list sorted by name: people_name read backwards from the cursor', async (t) => {
      const deep = await deepCursor('name', 30)
      const page = await pageStatement(app, database, `/feed?sort=name&limit=20&after=${encodeURIComponent(deep)}`)
      const { statement, parameters, body } = await pageStatement(app, database, `/feed?sort=name&limit=20&before=${encodeURIComponent(page.body.prev)}`)
      t.equal(body.data.length, 20, 'a full page before it')
      const plan = await explain(dialect, database, statement, parameters)
      t.ok(plan.indexes.includes('people_name'), `people_name is read\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`)
      t.notMatch(plan.text, sortStep, 'no sort step: the index gives the order')
      t.match(plan.text, before, 'the index is entered at the cursor')
    })

    // Keys in mixed directions (name descending, the id ascending) are compared as an OR, `name < ? or (name = ?
    // and id > ?)`, which neither planner turns into a range of the index: the bound on the first key written in
    // front of it (`name <= ? and (...)`) is where each enters the index.
    t.test('a keyset page deep in the list sorted by name descending (the id ascending ends it)', async (t) => {
      const deep = await deepCursor('-name', 30)
      const { statement, parameters } = await pageStatement(app, database, `/feed?sort=-name&limit=20&after=${encodeURIComponent(deep)}`)
      const plan = await explain(dialect, database, statement, parameters)
      t.ok(plan.indexes.includes('people_name'), `people_name is read\n${statement}\n${JSON.stringify(parameters)}\n${plan.text}`)
      t.match(plan.text, atName, `the index is entered at the cursor\n${plan.text}`)
    })
  })
}
