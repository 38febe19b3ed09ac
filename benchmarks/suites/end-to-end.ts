import type Database from 'better-sqlite3'
import { setImmediate as turnOfEventLoop } from 'node:timers/promises'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { buildApp } from '../../test/helpers/app.js'
import { graphqlApp, petsPageQuery } from '../baselines/graphql-app.js'
import { expandOfDepth, handWrittenPageLoader, pageRows } from '../baselines/hand-written.js'
import { defineResource, isResource, type AnyResource, type RelationDefinition, type RelationOptions } from '../../plugin/index.js'
import { createPetsDatabase, kyselyOver, petResources } from '../domain/pets-db.js'
import { assertSameText, type BenchCase, type Suite } from '../runner.js'

export const routesName = 'app.expand.routes'
export const routesScopedName = 'app.expand.routes, a scope on every resource'
const routesUncachedName = "app.expand.routes (Kysely's own SQLite driver)"
export const handName = 'hand-written JOIN + JSON.stringify'
const mercuriusName = 'mercurius (loaders)'
export const mercuriusJitName = 'mercurius + graphql-jit (loaders)'
const expand = expandOfDepth[2]

const routesApp = (db: ReturnType<typeof kyselyOver>, resources: readonly AnyResource[] = petResources) =>
  buildApp({ db, resources }, (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: pageRows }))

/**
 * The same resources, each with a scope that every row passes (its primary
 * key is above -1, a value no key or page parameter takes): what a per-request condition costs, with identical bodies.
 * Relations name their targets, so they resolve to the scoped copies.
 */
function withScopes (resources: readonly AnyResource[]): AnyResource[] {
  const byName = (reference: unknown): string => {
    const resource = typeof reference === 'function' && !isResource(reference)
      ? (reference as () => AnyResource)()
      : reference as AnyResource
    return typeof reference === 'string' ? reference : resource.name
  }
  const relations = (map: AnyResource['expandable']): Record<string, RelationDefinition> =>
    Object.fromEntries(Object.entries(map ?? {}).map(([field, definition]) =>
      [field, Array.isArray(definition) ? [byName(definition[0]), definition[1] as RelationOptions] as const : byName(definition)]))
  return resources.map((resource) => {
    const { kind: _kind, ...definition } = resource
    return defineResource({
      ...definition,
      expandable: relations(resource.expandable),
      nested: relations(resource.nested),
      scope: (eb) => eb(`${resource.table!}.${resource.primaryKey}`, '>', -1),
    })
  })
}

/** A page route written by hand: the best single statement, shaped by hand, Fastify's default JSON.stringify. */
async function handWrittenApp (database: Database.Database): Promise<FastifyInstance> {
  const page = handWrittenPageLoader(database, 2)
  const count = database.prepare('SELECT count(*) FROM pets').pluck()
  const app = Fastify()
  app.get('/pets', {
    schema: {
      querystring: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          offset: { type: 'integer', minimum: 0, default: 0 },
        },
      },
    },
  }, async (request) => {
    const { limit, offset } = request.query as { limit: number; offset: number }
    return { data: page(limit, offset), limit, offset, total: count.get() as number }
  })
  await app.ready()
  return app
}

function envelopeRecords (body: string, contender: string): string {
  const end = body.lastIndexOf('],"limit":')
  if (!body.startsWith('{"data":[') || end < 0) throw new Error(`${contender}: unexpected body ${body.slice(0, 120)}`)
  return body.slice('{"data":'.length, end + 1)
}

function graphqlRecords (body: string, contender: string): string {
  if (!body.startsWith('{"data":{"pets":[') || !body.endsWith(']}}')) throw new Error(`${contender}: unexpected body ${body.slice(0, 120)}`)
  return body.slice('{"data":{"pets":'.length, -2)
}

export const endToEndSuite: Suite = {
  id: 'end-to-end',
  title: 'End to end (in process)',
  description: [
    `A ${pageRows}-row page of pets with \`expand=${expand}\` (pets, people, companies, toys through pet_toys) on in-memory SQLite,`,
    'requested through app.inject one after another; figure: requests per second (1 / median latency).',
    `${routesName} is the plugin's list route (4 statements + 1 count) on a Kysely instance over \`cachePreparedStatements\`, as the README recommends;`,
    `${routesScopedName} is that route with a scope on each of its resources that every row passes (each statement then carries its request's condition and is compiled for it);`,
    `${routesUncachedName} is the same route on Kysely's SqliteDialect given the database itself, which prepares every statement again;`,
    `${handName} is one prepared statement shaped by hand plus the count (the baseline);`,
    'mercurius answers the equivalent GraphQL query with per-request loaders, with and without graphql-jit (`jit: 1`).',
    'The JSON of the records is checked byte-identical across all of them before timing.',
  ].join(' '),
  async setup () {
    const database = createPetsDatabase()
    const db = kyselyOver(database)
    const uncachedDb = kyselyOver(database, { uncached: true })
    const expandApp = await routesApp(db)
    const scopedApp = await routesApp(db, withScopes(petResources))
    const uncachedApp = await routesApp(uncachedDb)
    const handApp = await handWrittenApp(database)
    const mercuriusApp = await graphqlApp(database, 0)
    const mercuriusJitApp = await graphqlApp(database, 1)

    const graphqlRequest: InjectOptions = {
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: petsPageQuery, variables: { limit: pageRows, offset: 0 } }),
    }
    const contenders = [
      { name: routesName, app: expandApp, request: { url: `/pets?limit=${pageRows}&offset=0&expand=${expand}` } as InjectOptions, records: envelopeRecords },
      { name: routesScopedName, app: scopedApp, request: { url: `/pets?limit=${pageRows}&offset=0&expand=${expand}` } as InjectOptions, records: envelopeRecords },
      { name: routesUncachedName, app: uncachedApp, request: { url: `/pets?limit=${pageRows}&offset=0&expand=${expand}` } as InjectOptions, records: envelopeRecords },
      { name: handName, app: handApp, request: { url: `/pets?limit=${pageRows}&offset=0` } as InjectOptions, records: envelopeRecords },
      { name: mercuriusName, app: mercuriusApp, request: graphqlRequest, records: graphqlRecords },
      { name: mercuriusJitName, app: mercuriusJitApp, request: graphqlRequest, records: graphqlRecords },
    ]
    const body = async (contender: typeof contenders[number]) => {
      const response = await contender.app.inject(contender.request)
      if (response.statusCode !== 200) throw new Error(`${contender.name}: status ${response.statusCode}: ${response.body.slice(0, 300)}`)
      return response.body
    }

    const benchCase: BenchCase = {
      name: `${pageRows} rows, expand=${expand}`,
      baseline: handName,
      asRate: true,
      // Each request ends with a turn of the event loop, as on a server: app.inject leaves setImmediate
      // callbacks behind, and a loop of awaits alone would pile them up (~10 KB each) until the heap swells.
      contenders: contenders.map((contender) => ({
        name: contender.name,
        op: async () => {
          const response = await contender.app.inject(contender.request)
          await turnOfEventLoop()
          return response
        },
      })),
      async check () {
        const expected = envelopeRecords(await body(contenders.find((contender) => contender.name === handName)!), handName)
        if (JSON.parse(expected).length !== pageRows) throw new Error(`${handName}: expected ${pageRows} records`)
        // Twice: the second graphql-jit request runs the compiled query.
        for (let round = 0; round < 2; round++) {
          for (const contender of contenders) {
            const records = contender.records(await body(contender), contender.name)
            assertSameText('end-to-end records', expected, records, handName, contender.name)
          }
        }
      },
    }
    return {
      cases: [benchCase],
      async teardown () {
        for (const app of [expandApp, scopedApp, uncachedApp, handApp, mercuriusApp, mercuriusJitApp]) await app.close()
        await uncachedDb.destroy()
        await db.destroy()
      },
    }
  },
}
