import Fastify, { type FastifyInstance } from 'fastify'
import type { KyselyPlugin } from 'kysely'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources } from '../fixtures/tables.js'
import { recordEvents } from './events.js'

/*
 * No parameter value and no row data is ever published on the tracing
 * channels (docs/observability.md): a subscriber to every event of the three
 * channels sees, serialized as deeply as anything can read it (errors with
 * their own properties and causes, cycles cut), neither a filter value, nor
 * a route parameter, nor a value of a row the request loaded, nor what a
 * driver's error quotes, on a request that succeeds, a statement that fails
 * and a body that does not fit its schema.
 */

const filterSecret = 'filter-secret-4b7a'
const rowSecret = 'row-secret-9d2e'
const personSecret = 'person-secret-51c0'
const secretId = 777_123

/** Every property of every object reachable from `value`, errors' own non-enumerable ones (message, stack, cause) too. */
function deepText (value: unknown): string {
  const seen = new WeakSet<object>()
  return JSON.stringify(value, function replacer (_key, item: unknown) {
    if (typeof item === 'bigint') return String(item)
    if (typeof item !== 'object' || item === null) return item
    if (seen.has(item)) return '[cycle]'
    seen.add(item)
    if (Array.isArray(item)) return item
    const all: Record<string, unknown> = {}
    for (const name of Object.getOwnPropertyNames(item)) all[name] = (item as Record<string, unknown>)[name]
    return all
  }) ?? ''
}

/** A driver that quotes what it was given, as some do in their errors: every statement reading `people` fails. */
const quotingFailure: KyselyPlugin = {
  transformQuery: ({ node }) => node,
  transformResult: async ({ result }) => {
    if (JSON.stringify(result.rows).includes(personSecret)) {
      throw new Error(`value ${filterSecret} / ${rowSecret} / ${personSecret} / ${secretId} is out of range`)
    }
    return result
  },
}

async function build (database: TestDatabase, failing: boolean): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: failing ? database.db.withPlugin(quotingFailure) : database.db, resources })
  app.expand.routes('/pets', Pet, { filter: { name: ['ne'] } })
  // A handler whose rows do not fit the resource's schema: the data check refuses them, naming what it read.
  app.get('/unfit', { expandable: { resource: Pet } }, async () => ({ id: rowSecret, name: rowSecret }))
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`nothing secret on the channels on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    await database.db.insertInto('people').values({ id: 90, name: personSecret, hobbies: personSecret, employer_id: null, password_hash: 'x' }).execute()
    await database.db.insertInto('pets').values({ id: secretId, name: rowSecret, species: rowSecret, owner_id: 90, sold_from_id: null }).execute()
    const recorder = recordEvents()
    t.teardown(recorder.stop)

    const working = await build(database, false)
    t.teardown(() => working.close())
    const list = await working.inject(`/pets?expand=owner,toys,sold_from&filter[name][ne]=${filterSecret}&limit=100`)
    t.equal(list.statusCode, 200)
    t.ok(list.body.includes(rowSecret) && list.body.includes(personSecret), 'the body holds the secret rows')
    const detail = await working.inject(`/pets/${secretId}?expand=owner`)
    t.equal(detail.statusCode, 200)
    t.ok(detail.body.includes(personSecret))
    const unfit = await working.inject('/unfit')
    t.equal(unfit.statusCode, 500)

    const failing = await build(database, true)
    t.teardown(() => failing.close())
    const failed = await failing.inject(`/pets?expand=owner&filter[name][ne]=${filterSecret}&limit=100`)
    t.equal(failed.statusCode, 500)

    const kinds = new Set(recorder.events.map(({ channel, event }) => `${channel} ${event}`))
    for (const kind of ['load error', 'serialize error', 'plan end', 'load asyncEnd', 'serialize end']) t.ok(kinds.has(kind), `${kind} was published`)
    const published = deepText(recorder.events.map(({ original }) => original))
    t.ok(published.includes('FST_EXPAND_DATABASE_ERROR') && published.includes('FST_EXPAND_INVALID_DATA'), 'the errors are published by code')
    for (const secret of [filterSecret, rowSecret, personSecret, String(secretId)]) {
      t.notOk(published.includes(secret), `${secret} is not published`)
    }
  })
}
