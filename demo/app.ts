import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import expandPlugin, { databaseFailure, expandOpenApi, type ExpandPluginOptions } from '../plugin/index.js'
import * as schemas from '../schemas/index.js'
import { ping, type DemoDatabase } from './database.js'
import { routeReads } from './read-replica.js'

export interface DemoAppSettings {
  db: DemoDatabase
  /** Fastify's `logger` option: `true` for pino's defaults, `false` (the default) for none. */
  logger?: FastifyServerOptions['logger']
  /**
   * Whether the process is shutting down: `/health` then answers 503
   * `{ status: 'draining' }`, so a load balancer's health check takes the
   * instance out while its requests still finish (see demo/server.ts).
   */
  draining?: () => boolean
  /**
   * The key list routes encrypt their cursors with. The default is a fixed,
   * published key, so that the walkthrough's cursors are reproducible in the
   * tests; demo/server.ts always passes one (CURSOR_SECRET, or a random key
   * of the process), as a real deployment must.
   */
  cursorSecret?: string
  /**
   * A hot standby of `db`: GET requests read from it, except a read of the
   * client's own write that it has not replayed yet (demo/read-replica.ts);
   * `/health` asks `db` alone.
   */
  replica?: DemoDatabase
  /** Called on the new app before any route: hooks of the caller's, such as the request spans of demo/tracing.ts. */
  beforeRoutes?: (app: FastifyInstance) => void
  /**
   * The resources served, schemas/index.ts's by default; test/pull/demo-parity.test.ts serves the same
   * routes over the resources `fastify-expand pull` writes for the demo's tables, edited as
   * docs/start-from-a-database.md says.
   */
  definitions?: DemoResources
}

/** The resources the demo's routes are declared on, and every resource the plugin registers. */
export type DemoResources = Pick<typeof schemas, 'Company' | 'Person' | 'PetStore' | 'Toy' | 'Vet' | 'Pet' | 'Visit' | 'resources'>

/** The cursor key of the walkthrough (docs/walkthrough.md) and the tests when none is given: published, so never served. */
export const demoCursorSecret = 'fastify-expand demo cursor key (not a secret)'

/** Where the interactive documentation is served (`/docs/json` holds the OpenAPI document). */
export const docsPath = '/docs'

/**
 * The demo API: every resource under its own prefix, a list and a detail
 * route each. List routes permit only the expansions listed here (drf-flex-fields'
 * `permit_list_expands`): a list of 100 pets may load their owners, but not
 * every visit of every pet. `/pets` and `/people` take filters and sort keys; `/visits` is
 * paged by cursor (`sort=-date` for the newest first) and shows each visit's vet unless
 * the request names its own `expand`.
 */
export async function buildApp (settings: DemoAppSettings): Promise<FastifyInstance> {
  const { db, logger = false, draining = () => false, cursorSecret = demoCursorSecret, replica, beforeRoutes } = settings
  const { Company, Person, PetStore, Toy, Vet, Pet, Visit, resources } = settings.definitions ?? schemas
  const app = Fastify({ logger })
  beforeRoutes?.(app)
  const readsFrom = replica === undefined ? db : routeReads(app, { primary: db, replica })
  const expandOptions: ExpandPluginOptions = { db: readsFrom, resources, maxDepth: 3 }
  // The list routes of app.expand.routes document their own envelope (limit, offset, total).
  const documentation = expandOpenApi(expandOptions)

  // Registered first, so its onRoute hook sees every route below.
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'fastify-expand demo',
        version: '1.0.0',
        description: 'Pets, their owners, toys and vet visits. Try `expand`, `fields` and `omit` on any route.',
      },
    },
    transform: documentation.transform,
  })
  await app.register(swaggerUi, { routePrefix: docsPath })
  await app.register(expandPlugin, expandOptions)

  const healthBody = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } as const
  app.get('/health', {
    schema: {
      description: 'Health check for load balancers: 200 `ok`; 503 `draining` while the process shuts down (take it out of rotation); ' +
        '503 `FST_EXPAND_UNAVAILABLE` while the database cannot be reached ' +
        '(every instance shares it: a balancer should keep the instance, whose answers are then the same 503)',
      response: {
        200: healthBody,
        503: {
          type: 'object',
          properties: {
            status: { type: 'string' },
            statusCode: { type: 'integer' },
            code: { type: 'string' },
            error: { type: 'string' },
            message: { type: 'string' },
          },
        },
      },
    },
  }, async (_request, reply) => {
    if (draining()) return reply.code(503).header('connection', 'close').send({ status: 'draining' })
    try {
      await ping(db)
    } catch (error) {
      throw databaseFailure(error)
    }
    return { status: 'ok' }
  })

  app.expand.routes('/companies', Company, { permitListExpands: [] })
  // pet_count is an aggregate: filtering or sorting by it joins the pets counted per person (docs/derived.md).
  app.expand.routes('/people', Person, {
    permitListExpands: ['employer'],
    filter: { pet_count: ['eq', 'gte'] },
    sort: ['pet_count', 'name'],
  })
  app.expand.routes('/pets', Pet, {
    permitListExpands: ['owner.employer', 'sold_from', 'toys', 'recent_visits'],
    filter: {
      species: ['eq', 'in'], name: ['eq', 'contains'], born: ['gte', 'lt'], sold_from: ['eq', 'null'], 'owner.employer': ['eq', 'null'],
    },
    sort: ['born', 'name', 'species'],
  })
  app.expand.routes('/pet-stores', PetStore)
  app.expand.routes('/toys', Toy, { permitListExpands: ['maker'] })
  app.expand.routes('/vets', Vet)
  app.expand.routes('/visits', Visit, {
    permitListExpands: ['pet', 'vet'],
    defaultExpand: ['vet'],
    filter: { vet: ['eq'], reason: ['eq'], date: ['gte', 'lt'], 'pet.species': ['eq'] },
    sort: ['date'],
    pagination: 'cursor',
    cursorSecret,
  })
  return app
}
