import type Database from 'better-sqlite3'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../../test/helpers/app.js'
import { DerivedPerson, derivedResources } from '../../test/fixtures/derived.js'
import { pageRows } from '../baselines/hand-written.js'
import { createPeopleAndPets } from '../domain/people-pets.js'
import type { StatementCounter } from '../domain/pets-db.js'
import { assertSameText, type Mode, type Suite } from '../runner.js'
import { timedOn } from './lists.js'

export const aggregatesName = 'expand=pet_count,last_pet'
export const plainName = 'the same page without them'
export const handAggregatesName = 'hand-written LEFT JOIN + GROUP BY + JSON.stringify'
export const aggregatesCaseName = `${pageRows} people with two aggregates over their pets`
const fullPeople = 20_000
const quickPeople = 2_000

/**
 * The page with its aggregates written by hand: one statement, the page of people as a subquery LEFT JOINed to
 * their pets under the pets' scope (`deleted = 0`, as the plugin applies it) and grouped by person; Fastify's
 * default JSON.stringify writes the envelope the plugin's list route writes with `total: false`. Its limit and
 * offset are bound `+?`, so that SQLite prepares it once (a bare `?` LIMIT is planned for its value: see
 * plugin/sql/dialects/sqlite-values.ts).
 */
async function handWrittenAggregatesApp (database: Database.Database, counter: StatementCounter): Promise<FastifyInstance> {
  const page = database.prepare(`
    SELECT people.id, people.name, count(pets.id) AS pet_count, max(pets.name) AS last_pet
    FROM (SELECT id, name FROM people ORDER BY id LIMIT +? OFFSET +?) AS people
    LEFT JOIN pets ON pets.owner_id = people.id AND pets.deleted = 0
    GROUP BY people.id ORDER BY people.id`)
  const app = Fastify()
  app.get('/people', {
    schema: {
      querystring: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: pageRows, default: 20 },
          offset: { type: 'integer', minimum: 0, default: 0 },
        },
      },
    },
  }, async (request) => {
    const { limit, offset } = request.query as { limit: number; offset: number }
    counter.count++
    return { data: page.all(limit, offset), limit, offset }
  })
  await app.ready()
  return app
}

export const derivedSuite: Suite = {
  id: 'derived',
  title: 'Derived data: aggregates',
  description: [
    `Pages of ${pageRows} people of the derived-data fixture (test/fixtures/derived.ts: the lists-through-relations domain with aggregates)`,
    `in an in-memory SQLite database of ${fullPeople.toLocaleString('en-US')} people (${quickPeople.toLocaleString('en-US')} in --quick runs),`,
    'each with 0 to 3 pets (1 in 20 deleted, outside the pets\' scope), the fixture\'s index on pets(owner_id), ANALYZE.',
    'Requests go through app.inject one after another; figure: median latency.',
    `${aggregatesName}: the page of an app.expand.routes route (\`total: false\`) with a count and a max over the pets named`,
    '(the page statement, then one grouped statement over the page\'s keys);',
    `${plainName}: the same route and page, no aggregate named (the page statement alone);`,
    `${handAggregatesName} (the baseline): a plain Fastify route running one prepared better-sqlite3 statement,`,
    'the page as a subquery LEFT JOINed to the visible pets and grouped by person',
    '(its limit and offset bound `+?`, as the plugin binds values, so that SQLite prepares it once), its rows written by JSON.stringify.',
    'The baseline and the aggregates page are checked to write the same bytes before timing. Statements are counted per request.',
  ].join(' '),
  // A few seconds each: three processes cost little and steady the ratios on a shared machine (see the end-to-end suite).
  processes: 3,
  async setup (mode: Mode) {
    const counter: StatementCounter = { count: 0 }
    const { database, db } = await createPeopleAndPets(mode.quick ? quickPeople : fullPeople, { counter })
    const app = await buildApp({ db, resources: derivedResources }, (app) => {
      app.expand.routes('/people', DerivedPerson, { total: false, maxPageSize: pageRows })
    })
    const hand = await handWrittenAggregatesApp(database, counter)

    const aggregatesUrl = `/people?limit=${pageRows}&expand=pet_count,last_pet`
    const plainUrl = `/people?limit=${pageRows}`
    const handUrl = `/people?limit=${pageRows}`
    const statementsOf = (target: FastifyInstance, url: string) => async () => {
      counter.count = 0
      await target.inject({ method: 'GET', url })
      return { statements: counter.count }
    }
    const contenders = [
      { ...timedOn(app, aggregatesName, aggregatesUrl), facts: statementsOf(app, aggregatesUrl) },
      { ...timedOn(app, plainName, plainUrl), facts: statementsOf(app, plainUrl) },
      { ...timedOn(hand, handAggregatesName, handUrl), facts: statementsOf(hand, handUrl) },
    ]
    return {
      cases: [{
        name: aggregatesCaseName,
        baseline: handAggregatesName,
        contenders,
        async check () {
          const expected = await hand.inject({ method: 'GET', url: handUrl })
          const actual = await app.inject({ method: 'GET', url: aggregatesUrl })
          if (expected.statusCode !== 200 || actual.statusCode !== 200) throw new Error(`status ${expected.statusCode} and ${actual.statusCode}: ${actual.body.slice(0, 300)}`)
          assertSameText('derived aggregates', expected.body, actual.body, handAggregatesName, aggregatesName)
          const rows = (JSON.parse(actual.body) as { data: Array<{ pet_count: number; last_pet: string | null }> }).data
          if (rows.length !== pageRows) throw new Error(`${aggregatesName}: ${rows.length} rows`)
          // The page holds both cases of each aggregate: people without a visible pet (0, null) and with several.
          if (!rows.some((row) => row.pet_count === 0 && row.last_pet === null) || !rows.some((row) => row.pet_count > 1)) {
            throw new Error(`${aggregatesName}: the page lacks a person without pets or one with several`)
          }
        },
      }],
      async teardown () {
        await app.close()
        await hand.close()
        await db.destroy()
      },
    }
  },
}
