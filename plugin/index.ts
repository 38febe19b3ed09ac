import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ExpandEngine } from './engine.js'
import { InvalidOptionError } from './errors.js'
import { loadRows, plannedStatements, selectLevel, type Row } from './load/batch-loader.js'
import { registerResourceRoutes, type ResourceRoutesOptions } from './load/resource-routes.js'
import { resolveOptions, type ExpandPluginOptions } from './options.js'
import type { ExpansionPlan } from './plan/plan.js'
import { ResourceGraph } from './resource-graph.js'
import type { AnyResource } from './resource.js'
import { prepareRoute, type ExpandableRouteOptions } from './route.js'
import type { CacheStats } from './compile/serializer-cache.js'

export interface ExpandDecorator {
  /** The compiled-serializer cache: `{ size, hits, misses, compiles }`. */
  cacheStats(): CacheStats
  /** Fills the relations the request expands (and to-many id arrays) into rows keyed by field name. */
  load<T extends Row>(request: FastifyRequest, rows: T[]): Promise<T[]>
  /** Registers `GET prefix` (paginated list) and `GET prefix/:id` for a table-bound resource. */
  routes(prefix: string, resource: AnyResource | string, options?: ResourceRoutesOptions): void
  /** What a request does: its plan, and the serializer code generated for it. */
  explain(request: FastifyRequest): ExpansionExplanation
}

export interface ExpansionExplanation {
  /** The canonical plan key: requests with the same key share a serializer. */
  key: string
  expanded: string[]
  included: string[]
  /** The source fast-json-stringify generated for this combination. */
  serializer: string
  /** With `db` and table-bound resources: the root select and one statement per relation path. */
  statements: Array<{ path: string; sql: string }>
}

declare module 'fastify' {
  interface RouteShorthandOptions {
    expandable?: ExpandableRouteOptions | false
  }
  interface FastifyContextConfig {
    expandable?: ExpandableRouteOptions | false
  }
  interface FastifyRequest {
    /** The validated expansion plan of an expandable route; null elsewhere. */
    expansion: ExpansionPlan | null
  }
  interface FastifyInstance {
    expand: ExpandDecorator
  }
}

const expandPluginCallback: FastifyPluginCallback<ExpandPluginOptions> = (app, pluginOptions, done) => {
  // Startup errors must reject register()/ready(): the plugin loader does not catch a synchronous throw.
  let engine: ExpandEngine
  try {
    if (app.hasDecorator('expand')) throw new InvalidOptionError('fastify-expand is already registered on this instance')
    engine = new ExpandEngine(new ResourceGraph(pluginOptions.resources ?? []), resolveOptions(pluginOptions))
  } catch (error) {
    done(error as Error)
    return
  }
  const db = pluginOptions.db

  const planOf = (request: FastifyRequest): ExpansionPlan => {
    if (request.expansion === null) throw new InvalidOptionError(`Route ${request.method} ${request.url} is not expandable`)
    return request.expansion
  }
  app.decorateRequest('expansion', null)
  app.decorate('expand', {
    cacheStats: () => engine.serializers.stats(),
    async load (request, rows) {
      if (db === undefined) throw new InvalidOptionError("fastify-expand: load needs the plugin's 'db' option")
      await loadRows(db, planOf(request).root, rows, engine.options.maxObjects)
      return rows
    },
    routes (prefix, resource, routesOptions) {
      registerResourceRoutes(app, engine, db, prefix, resource, routesOptions)
    },
    explain (request) {
      const plan = planOf(request)
      return {
        key: plan.key,
        expanded: [...plan.expandedPaths],
        included: [...plan.includedPaths],
        serializer: engine.serializers.source(plan),
        statements: db === undefined || plan.root.node.table === undefined
          ? []
          : [{ path: '', sql: selectLevel(db, plan.root).compile().sql }, ...plannedStatements(db, plan.root)],
      }
    },
  } satisfies ExpandDecorator)
  app.addHook('onRoute', (routeOptions) => prepareRoute(engine, routeOptions))
  done()
}

const expandPlugin = fp(expandPluginCallback, { fastify: '5.x', name: 'fastify-expand' })
export default expandPlugin
export { expandPlugin }

export { defineResource, isResource } from './resource.js'
export type {
  AnyResource,
  RelationDefinition,
  RelationKeys,
  RelationOptions,
  Resource,
  ResourceDefinition,
  ResourceReference,
} from './resource.js'
export { isExpanded, isIncluded, type HasExpansion } from './request-helpers.js'
export { createSerializer, type Serializer, type SerializerOptions } from './standalone.js'
export type { ExpandPluginOptions } from './options.js'
export type { ExpandableRouteOptions } from './route.js'
export type { ExpansionPlan, LevelPlan, PlannedField } from './plan/plan.js'
export type { CacheStats } from './compile/serializer-cache.js'
export type { ResourceRoutesOptions, ListPage } from './load/resource-routes.js'
export type { Row } from './load/batch-loader.js'
export { cachePreparedStatements, type StatementCacheOptions } from './load/statement-cache.js'
export {
  UnknownFieldError,
  NotPermittedError,
  TooDeepError,
  RecursiveError,
  MalformedError,
  TooLargeError,
  InvalidDefinitionError,
  InvalidOptionError,
  requestErrorCodes,
  loadingErrorCodes,
} from './errors.js'
export { NotFoundError } from './load/resource-routes.js'
export * from './openapi/index.js'
