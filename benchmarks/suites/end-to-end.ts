import type Database from 'better-sqlite3'
import { existsSync } from 'node:fs'
import { setImmediate as turnOfEventLoop } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import type { Kysely } from 'kysely'
import type { Pool } from 'pg'
import { buildApp } from '../../test/helpers/app.js'
import { graphqlApp, petsPageQuery } from '../baselines/graphql-app.js'
import { postgresWrittenBodyApp } from '../baselines/postgres-body.js'
import {
  expandOfDepth, handWrittenMariadbPage, handWrittenPageLoader, handWrittenPostgresPage, pageRows,
} from '../baselines/hand-written.js'
import { defineResource, isResource, type AnyResource, type RelationDefinition, type RelationOptions } from '../../plugin/index.js'
import { createPetsDatabase, kyselyOver, petResources } from '../domain/pets-db.js'
import { copyPetsToMariadb, mariadbUrl } from '../domain/pets-mysql.js'
import { latencyProxy } from '../domain/latency-proxy.js'
import { copyPetsToPostgres, poolSize, postgresUrl } from '../domain/pets-pg.js'
import { assertSameText, type BenchCase, type Suite } from '../runner.js'
import { tracingCostCase } from './tracing-cost.js'

export const routesName = 'app.expand.routes'
export const routesScopedName = 'app.expand.routes, a scope on every resource'
const routesUncachedName = "app.expand.routes (Kysely's own SQLite driver)"
export const handName = 'hand-written JOIN + JSON.stringify'
const mercuriusName = 'mercurius (loaders)'
export const mercuriusJitName = 'mercurius + graphql-jit (loaders)'
export const drizzleSchemaName = "Drizzle's relational query (response schema)"
export const drizzleStringifyName = "Drizzle's relational query (JSON.stringify)"
export const drizzleUnpreparedName = "Drizzle's relational query, built per request (JSON.stringify)"
export const postgresCaseName = `${pageRows} rows, expand=${expandOfDepth[2]}, PostgreSQL`
export const postgresRoutesName = 'app.expand.routes on PostgreSQL'
export const postgresNamedName = 'app.expand.routes on PostgreSQL (namePreparedStatements)'
export const postgresLevelName = 'app.expand.routes on PostgreSQL, level by level (loadsInOneWave: false)'
/** Milliseconds the proxy of the away case holds each chunk, each way. */
const awayDelay = 1
export const postgresAwayCaseName = `${pageRows} rows, expand=${expandOfDepth[2]}, PostgreSQL ${awayDelay} ms away each way`
export const postgresHandName = 'hand-written single statement on PostgreSQL'
export const postgresWrittenName = 'PostgreSQL writes the body (one named statement, the limit)'
export const postgraphileName = 'PostGraphile 5 (Amber preset, grafserv on Fastify 5)'
const postgresDrizzleSchemaName = "Drizzle's relational query on PostgreSQL (response schema)"
const postgresDrizzleStringifyName = "Drizzle's relational query on PostgreSQL (JSON.stringify)"
export const mariadbCaseName = `${pageRows} rows, expand=${expandOfDepth[2]}, MariaDB`
export const mariadbRoutesName = 'app.expand.routes on MariaDB'
export const mariadbPreparedName = 'app.expand.routes on MariaDB (prepareMysqlStatements)'
export const mariadbHandName = 'hand-written single statement on MariaDB'
export const tracingCaseName = `${pageRows} rows, expand=${expandOfDepth[2]}, tracing channels`
const expand = expandOfDepth[2]

const routesApp = (db: Kysely<any>, resources: readonly AnyResource[] = petResources) =>
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

type ServerPage = (limit: number, offset: number) => Promise<{ data: unknown[]; total: number }>

/**
 * A page route on a database server written by hand: `page` runs one statement (the count in it) and shapes
 * its rows by hand (handWrittenPostgresPage, handWrittenMariadbPage); Fastify's JSON.stringify writes them.
 */
async function handWrittenServerApp (page: ServerPage): Promise<FastifyInstance> {
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
    const { data, total } = await page(limit, offset)
    return { data, limit, offset, total }
  })
  await app.ready()
  return app
}

/** The Drizzle contenders' module (benchmarks/contenders), when `npm run bench` has installed drizzle-orm there. */
interface DrizzleModule {
  drizzleApp(source: { sqlite: Database.Database } | { pool: Pool }, responseSchema: boolean, prepared?: boolean): Promise<FastifyInstance>
}
const contendersDir = fileURLToPath(new URL('../contenders/', import.meta.url))

async function drizzleModule (): Promise<DrizzleModule | undefined> {
  if (!existsSync(`${contendersDir}node_modules/drizzle-orm/package.json`)) {
    console.log('# Drizzle ORM not installed: its contenders are left out ' +
      '(`npm run bench` installs it; or `node benchmarks/contenders/install.mjs`)')
    return undefined
  }
  // A specifier TypeScript does not follow: the module is type-checked with benchmarks/contenders/tsconfig.json,
  // where drizzle-orm is installed.
  const specifier = '../contenders/drizzle-app.js'
  return await import(specifier) as DrizzleModule
}

/** The PostGraphile contender's module (benchmarks/contenders), on Node 22+ once `npm run bench` has installed it. */
interface PostgraphileModule {
  postgraphilePageQuery: string
  postgraphileRecords(body: string): { records: string; total: number }
  postgraphileApp(url: string, schema: string, poolSize: number): Promise<{ app: FastifyInstance; close(): Promise<void> }>
}

async function postgraphileModule (): Promise<PostgraphileModule | undefined> {
  const major = Number(process.versions.node.split('.')[0])
  if (major < 22) {
    console.log(`# PostGraphile left out: it needs Node 22 or later (this is ${process.version})`)
    return undefined
  }
  if (!existsSync(`${contendersDir}node_modules/postgraphile/package.json`)) {
    console.log('# PostGraphile not installed: its contender is left out ' +
      '(`npm run bench` installs it; or `node benchmarks/contenders/install.mjs`)')
    return undefined
  }
  // Grafast runs in production mode unless told otherwise; said here, it does not print that it does.
  process.env.GRAPHILE_ENV ??= 'production'
  // Type-checked with benchmarks/contenders/tsconfig.json, as the Drizzle module is.
  const specifier = '../contenders/postgraphile-app.js'
  return await import(specifier) as PostgraphileModule
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

interface PageContender {
  name: string
  app: FastifyInstance
  request: InjectOptions
  records: (body: string, contender: string) => string
  /** Another contender of the case whose whole body this one's must equal, byte for byte (envelope and headers' content type too). */
  sameBodyAs?: string
}

const pageRequest: InjectOptions = { url: `/pets?limit=${pageRows}&offset=0&expand=${expand}` }

/**
 * A case timing `contenders` one request after another, once their records
 * are checked byte-identical to `expected` (the SQLite hand-written route's).
 */
function pageCase (name: string, baseline: string, contenders: PageContender[], expected: () => Promise<string>): BenchCase {
  const respond = async (contender: PageContender) => {
    const response = await contender.app.inject(contender.request)
    if (response.statusCode !== 200) throw new Error(`${contender.name}: status ${response.statusCode}: ${response.body.slice(0, 300)}`)
    return { body: response.body, contentType: String(response.headers['content-type']) }
  }
  return {
    name,
    baseline,
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
      const records = await expected()
      if (JSON.parse(records).length !== pageRows) throw new Error(`${handName}: expected ${pageRows} records`)
      // Twice: the second graphql-jit request runs the compiled query.
      for (let round = 0; round < 2; round++) {
        for (const contender of contenders) {
          const own = await respond(contender)
          assertSameText('end-to-end records', records, contender.records(own.body, contender.name), handName, contender.name)
          if (contender.sameBodyAs === undefined) continue
          const theirs = await respond(contenders.find((candidate) => candidate.name === contender.sameBodyAs)!)
          assertSameText('end-to-end body', theirs.body, own.body, contender.sameBodyAs, contender.name)
          assertSameText('end-to-end content type', theirs.contentType, own.contentType, contender.sameBodyAs, contender.name)
        }
      }
    },
  }
}

export const endToEndSuite: Suite = {
  id: 'end-to-end',
  title: 'End to end (in process)',
  // On Node 26 here, one process measured the page at 0.83x the hand-written route and the next, alone, at 1.02x,
  // and the scoped route above or below the unscoped one from process to process: a figure is read over three.
  processes: 3,
  description: [
    `A ${pageRows}-row page of pets with \`expand=${expand}\` (pets, people, companies, toys through pet_toys) on in-memory SQLite,`,
    'requested through app.inject one after another, each contender warmed first (1,000 requests or 2 s, whichever ends first),',
    'then all of them alternating in rounds of 25 requests; figure: requests per second (1 / median latency of a request in its round).',
    `${routesName} is the plugin's list route (4 statements + 1 count) on a Kysely instance over \`cachePreparedStatements\`, as the README's first example;`,
    `${routesScopedName} is that route with a scope on each of its resources that every row passes (each statement then carries its request's condition and is compiled for it);`,
    `${routesUncachedName} is the same route on Kysely's SqliteDialect given the database itself, which prepares every statement again;`,
    `${handName} is one prepared statement shaped by hand plus the count (the baseline; its limit and offset bound \`+?\`, as the plugin binds values on SQLite, so that it is prepared once);`,
    'mercurius answers the equivalent GraphQL query with per-request loaders, with and without graphql-jit (`jit: 1`);',
    'Drizzle ORM (benchmarks/contenders, installed by `npm run bench`) answers with its relational query ' +
      '`db.query.pets.findMany({ with })` and a count,',
    'prepared once (limit and offset placeholders, as its documentation advises), its rows renamed to the API\'s fields, ' +
      'written by a response schema or by JSON.stringify;',
    'and, without a response schema, built per request, as its first examples write it.',
    `With DATABASE_URL set, the same page on PostgreSQL (the same rows copied into a schema of their own, a pool of ${poolSize}): the plugin's route on Kysely's PostgresDialect`,
    '(over the pool itself, and over `namePreparedStatements`, which makes the statements that run again named prepared statements;',
    'both send the page and its relations\' statements as one statement, in one wave), the same route loading level by level',
    '(each level\'s statements once its parents\' rows are in, as on SQLite and MariaDB:',
    'a Kysely instance resolved to PostgreSQL\'s dialect with `loadsInOneWave: false`)',
    'against one hand-written named statement holding the count (the baseline of that case), and Drizzle\'s relational query.',
    `Two anchors of that case: ${postgresWrittenName}, a plain Fastify route returning the string that one named statement has`,
    'PostgreSQL write (row_to_json and array_to_json write compact JSON), byte-identical to the plugin\'s body and content type,',
    'the floor of the page;',
    `and ${postgraphileName} (benchmarks/contenders, Node 22 or later, left out with the reason printed otherwise) answering`,
    'the GraphQL query of the same page over the same tables (the relations declared as its smart tags, the toys through the join',
    'table\'s connection, the count as totalCount), its records lifted into the API\'s shape and written by JSON.stringify for the check.',
    `The case "${postgresAwayCaseName}" runs the PostgreSQL page through a TCP proxy in a process of its own that holds each chunk`,
    `${awayDelay} ms (Node's timers: a little more) in each direction, a database a network away: the plugin in one wave and level by level,`,
    'the hand-written statement and the limit.',
    'With MARIADB_URL set, the same page on MariaDB (the same rows copied into a database of their own, collation utf8mb4_nopad_bin,',
    `a mysql2 pool of ${poolSize} set as the tests set theirs):`,
    "the plugin's route on Kysely's MysqlDialect (over the pool itself, and over `prepareMysqlStatements`,",
    "which runs statements with parameters as prepared statements) against one hand-written prepared statement (mysql2's `execute`)",
    'holding the count, each pet\'s toys aggregated by JSON_ARRAYAGG (the baseline of that case).',
    'Drizzle\'s relational query is not run there: in both its MySQL modes the statement refers to the outer row from inside',
    'a derived table (or a LATERAL join), which MariaDB 10.11 refuses (`Unknown column \'pets.owner_id\' in \'WHERE\'`).',
    'The JSON of the records is checked byte-identical across all of them before timing.',
    `The case "${tracingCaseName}" times ${routesName}'s page on SQLite with nothing subscribed to the tracing channels (the baseline),`,
    'with a subscriber that does nothing on every event of the three channels, and with fastify-expand/otel enabled',
    '(spans to an in-memory exporter, metrics to a reader never read, no request span): what observability costs per request.',
  ].join(' '),
  async setup () {
    const database = createPetsDatabase()
    const db = kyselyOver(database)
    const uncachedDb = kyselyOver(database, { uncached: true })
    const drizzle = await drizzleModule()
    const postgraphile = postgresUrl === undefined ? undefined : await postgraphileModule()
    const apps: FastifyInstance[] = []
    const closers: Array<() => Promise<void>> = []
    const track = async (app: Promise<FastifyInstance>) => {
      const ready = await app
      apps.push(ready)
      return ready
    }

    const graphqlRequest: InjectOptions = {
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: petsPageQuery, variables: { limit: pageRows, offset: 0 } }),
    }
    const handRequest: InjectOptions = { url: `/pets?limit=${pageRows}&offset=0` }
    const handApp = await track(handWrittenApp(database))
    const contenders: PageContender[] = [
      { name: routesName, app: await track(routesApp(db)), request: pageRequest, records: envelopeRecords },
      { name: routesScopedName, app: await track(routesApp(db, withScopes(petResources))), request: pageRequest, records: envelopeRecords },
      { name: routesUncachedName, app: await track(routesApp(uncachedDb)), request: pageRequest, records: envelopeRecords },
      { name: handName, app: handApp, request: handRequest, records: envelopeRecords },
      { name: mercuriusName, app: await track(graphqlApp(database, 0)), request: graphqlRequest, records: graphqlRecords },
      { name: mercuriusJitName, app: await track(graphqlApp(database, 1)), request: graphqlRequest, records: graphqlRecords },
    ]
    if (drizzle !== undefined) {
      contenders.push(
        {
          name: drizzleSchemaName,
          app: await track(drizzle.drizzleApp({ sqlite: database }, true)),
          request: handRequest,
          records: envelopeRecords,
        },
        {
          name: drizzleStringifyName,
          app: await track(drizzle.drizzleApp({ sqlite: database }, false)),
          request: handRequest,
          records: envelopeRecords,
        },
        {
          name: drizzleUnpreparedName,
          app: await track(drizzle.drizzleApp({ sqlite: database }, false, false)),
          request: handRequest,
          records: envelopeRecords,
        }
      )
    }
    const expected = async () => envelopeRecords((await handApp.inject(handRequest)).body, handName)
    const cases = [pageCase(`${pageRows} rows, expand=${expand}`, handName, contenders, expected)]
    const tracing = tracingCostCase(tracingCaseName, await track(routesApp(db)), pageRequest, envelopeRecords)
    cases.push(tracing.benchCase)

    const postgres = postgresUrl === undefined ? undefined : await copyPetsToPostgres(database, postgresUrl)
    if (postgres !== undefined) {
      /** The hand-written statement (the baseline) and the limit over `pool`, the limit's body checked against `sameBodyAs`'s. */
      const anchorsOn = async (pool: Pool, sameBodyAs: string): Promise<PageContender[]> => [
        {
          name: postgresHandName,
          app: await track(handWrittenServerApp(handWrittenPostgresPage(pool))),
          request: handRequest,
          records: envelopeRecords,
        },
        {
          name: postgresWrittenName,
          app: await track(postgresWrittenBodyApp(pool)),
          request: handRequest,
          records: envelopeRecords,
          sameBodyAs,
        },
      ]
      const onPostgres: PageContender[] = [
        { name: postgresRoutesName, app: await track(routesApp(postgres.db)), request: pageRequest, records: envelopeRecords },
        { name: postgresNamedName, app: await track(routesApp(postgres.namedDb)), request: pageRequest, records: envelopeRecords },
        { name: postgresLevelName, app: await track(routesApp(postgres.levelDb)), request: pageRequest, records: envelopeRecords },
        ...await anchorsOn(postgres.pool, postgresNamedName),
      ]
      if (postgraphile !== undefined) {
        const served = await postgraphile.postgraphileApp(postgresUrl!, postgres.schema, poolSize)
        closers.push(served.close)
        const total = database.prepare('SELECT count(*) FROM pets').pluck().get() as number
        onPostgres.push({
          name: postgraphileName,
          app: served.app,
          request: {
            ...graphqlRequest,
            payload: JSON.stringify({ query: postgraphile.postgraphilePageQuery, variables: { limit: pageRows, offset: 0 } }),
          },
          records: (body, contender) => {
            const page = postgraphile.postgraphileRecords(body)
            if (page.total !== total) throw new Error(`${contender}: totalCount ${page.total}, expected ${total}`)
            return page.records
          },
        })
      }
      if (drizzle !== undefined) {
        onPostgres.push(
          {
            name: postgresDrizzleSchemaName,
            app: await track(drizzle.drizzleApp({ pool: postgres.pool }, true)),
            request: handRequest,
            records: envelopeRecords,
          },
          {
            name: postgresDrizzleStringifyName,
            app: await track(drizzle.drizzleApp({ pool: postgres.pool }, false)),
            request: handRequest,
            records: envelopeRecords,
          }
        )
      }
      cases.push(pageCase(postgresCaseName, postgresHandName, onPostgres, expected))

      // The same page with the database a network away: what one wave saves is round trips.
      const address = new URL(postgresUrl!)
      const proxy = await latencyProxy(address.hostname, Number(address.port || 5432), awayDelay)
      const away = postgres.through(proxy.port)
      closers.push(async () => {
        await away.close()
        await proxy.close()
      })
      cases.push(pageCase(postgresAwayCaseName, postgresHandName, [
        { name: postgresRoutesName, app: await track(routesApp(away.db)), request: pageRequest, records: envelopeRecords },
        { name: postgresLevelName, app: await track(routesApp(away.levelDb)), request: pageRequest, records: envelopeRecords },
        ...await anchorsOn(away.pool, postgresRoutesName),
      ], expected))
    }

    const mariadb = mariadbUrl === undefined ? undefined : await copyPetsToMariadb(database, mariadbUrl)
    if (mariadb !== undefined) {
      const onMariadb: PageContender[] = [
        { name: mariadbRoutesName, app: await track(routesApp(mariadb.db)), request: pageRequest, records: envelopeRecords },
        { name: mariadbPreparedName, app: await track(routesApp(mariadb.preparedDb)), request: pageRequest, records: envelopeRecords },
        {
          name: mariadbHandName,
          app: await track(handWrittenServerApp(handWrittenMariadbPage(mariadb.pool))),
          request: handRequest,
          records: envelopeRecords,
        },
      ]
      cases.push(pageCase(mariadbCaseName, mariadbHandName, onMariadb, expected))
    }
    return {
      cases,
      async teardown () {
        await tracing.teardown()
        for (const app of apps) await app.close()
        for (const close of closers) await close()
        await postgres?.close()
        await mariadb?.close()
        await uncachedDb.destroy()
        await db.destroy()
      },
    }
  },
}
