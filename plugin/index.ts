import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from 'fastify'
import type { Kysely, SelectQueryBuilder } from 'kysely'
import fp from 'fastify-plugin'
import { randomBytes } from 'node:crypto'
import { unknownKey } from './graph/checks.js'
import { ExpandEngine } from './engine.js'
import { InvalidOptionError, messages } from './errors.js'
import { loadRows } from './load/batch-loader.js'
import { createLoadContext, type LoadContext } from './load/load-context.js'
import { functionCalls, plannedCalls, type PlannedCall } from './load/function-relations.js'
import { plannedStatements } from './sql/relation-statements.js'
import { servingIndexes } from './sql/list-statements.js'
import { selectLevel, type AnyKysely, type Row } from './sql/selection.js'
import { executorPlugins, StatementTemplates } from './sql/statement-templates.js'
import { registerResourceRoutes, type ResourceRoutesOptions } from './routes/resource-routes.js'
import { resolveOptions, type ExpandPluginOptions } from './options.js'
import { plannedRequest, planRequest, type RequestPlan } from './plan/request-plan.js'
import type { ListPlan } from './plan/list-plan.js'
import type { FilterOperator } from './routes/list-declarations.js'
import type { Loaded } from './graph/expanded.js'
import type { Expansion } from './request-helpers.js'
import { ResourceGraph, type ResourceNode } from './graph/resource-graph.js'
import type { AnyResource } from './graph/resource.js'
import { prepareRoute, type ExpandableRouteOptions } from './routes/expandable-route.js'
import { armedReply, replySend, replyWriter } from './routes/reply-writer.js'
import { requestTokenKey } from './trace/channels.js'
import type { CacheStats, SerializerMechanism } from './compile/serializer-cache.js'

export interface ExpandDecorator {
  /** The compiled-serializer cache: `{ size, hits, misses, compiles }`. */
  cacheStats(): CacheStats
  /**
   * Fills the relations the request expands (and to-many id arrays) into rows
   * keyed by field name, in place, and resolves to the same array. `options.db`
   * runs the statements on another Kysely instance, such as the transaction
   * the handler wrote in.
   *
   * The rows' type cannot tell which fields the request expands: the result
   * is `Loaded<T>`, each field its own type or loaded data. Give the shape as
   * the type argument for the exact type: `load<Expanded<typeof Pet, 'owner'>>(request, rows)`.
   */
  load<Shape extends object = never, T extends object = object>(
    request: FastifyRequest,
    rows: readonly T[],
    options?: LoadOptions
  ): Promise<[Shape] extends [never] ? Array<Loaded<T>> : Shape[]>
  /**
   * Registers `GET prefix` (paginated list) and `GET prefix/:id` for a
   * table-bound resource, on the instance it is called on: under its prefix,
   * with its hooks and constraints.
   */
  routes(prefix: string, resource: AnyResource | string, options?: ResourceRoutesOptions): void
  /**
   * On an expandable route whose resource has a table: a Kysely select over
   * that table with the columns the request's plan needs and the resource's
   * scope applied. Add your own where/orderBy/limit, run it, and pass the
   * rows to `load`.
   */
  // The tables are the application's: the query is typed loosely, as the plugin's own statements are.
  select(request: FastifyRequest, options?: LoadOptions): SelectQueryBuilder<any, any, Row>
  /** What a request does: its plan, and the serializer code generated for it. */
  explain(request: FastifyRequest): ExpansionExplanation
}

export interface LoadOptions {
  /** The Kysely instance to load through instead of the plugin's `db`: a transaction, say. */
  // The plugin reads tables by name at runtime; the database type is the user's.
  db?: Kysely<any>
}

export interface ExpansionExplanation {
  /** The canonical plan key: requests with the same key share a serializer. */
  key: string
  expanded: string[]
  included: string[]
  /** The source fast-json-stringify generated for this combination. */
  serializer: string
  /**
   * What writes this combination's bodies on this runtime: fast-json-stringify's
   * generated code, or a projection into the response's shape handed to
   * `JSON.stringify` (same bytes; chosen per runtime, see docs/loading.md).
   */
  mechanism: SerializerMechanism
  /** The projection's generated source, when `mechanism` is 'projection'. */
  projection: string | undefined
  /**
   * With `db` and table-bound resources: the root select and one statement
   * per relation path, and one per aggregated relation path (with the
   * aggregates it reads).
   */
  statements: Array<{ path: string; sql: string; aggregates?: readonly string[] }>
  /**
   * The relations resolved by a function (their `load` option), which run no
   * statement: one call per path, with its number of distinct keys once the
   * request has made it.
   */
  calls: PlannedCall[]
  /** On a list route of `app.expand.routes`: its page as planned for the request. */
  list?: ListExplanation
}

/** The list part of a request's plan on a list route of `app.expand.routes`. */
export interface ListExplanation {
  pagination: 'offset' | 'cursor'
  /** Each filter as it applies: its path, its operator and its value read by the field's type. */
  filters: Array<{ path: string; operator: FilterOperator; value: unknown }>
  /** The keys the rows are ordered by, the primary key last unless it is asked before. */
  order: Array<{ field: string; descending: boolean }>
  /** Rows per page, clamped to the route's maxPageSize. */
  limit: number
  /** Offset pages: the rows skipped. */
  offset?: number
  /** Cursor pages: whether the request continues after a cursor (its values are not shown). */
  after?: boolean
  /** Cursor pages: whether the request asks for the page before a cursor (its values are not shown). */
  before?: boolean
  /**
   * The indexes that serve this page's filters and order, as `table (columns)`:
   * what docs/lists.md ("Indexes") says to create, for this request.
   */
  indexes: string[]
}

declare module 'fastify' {
  interface RouteShorthandOptions {
    expandable?: ExpandableRouteOptions | false
  }
  interface FastifyContextConfig {
    expandable?: ExpandableRouteOptions | false
  }
  interface FastifyRequest {
    /**
     * What the request expands and writes, on an expandable route; null elsewhere.
     * Planned when first read, for the caller the hooks before have authenticated.
     */
    readonly expansion: Expansion | null
  }
  interface FastifyInstance {
    expand: ExpandDecorator
  }
}

const loadOptionKeys = new Set(['db'])

const expandPluginCallback: FastifyPluginCallback<ExpandPluginOptions> = (app, pluginOptions, done) => {
  // Startup errors must reject register()/ready(): the plugin loader does not catch a synchronous throw.
  let engine: ExpandEngine
  try {
    // A context inherits its parent's decorators and onRoute hooks: the enclosing instance would prepare this one's routes.
    if (app.hasDecorator('expand')) throw new InvalidOptionError(messages.registeredAbove)
    // The options first: the registry is built from one of them.
    const options = resolveOptions(pluginOptions)
    const graph = new ResourceGraph(pluginOptions.resources ?? [], { loadsFromDatabase: pluginOptions.db !== undefined })
    engine = new ExpandEngine(graph, options)
    // Every reply's send in the plugin's scope: an expandable route's reply checks its bodies (routes/reply-writer.ts).
    // Refused (FST_ERR_DEC_ALREADY_PRESENT) where the application decorated send itself.
    app.decorateReply('send', replySend())
  } catch (error) {
    done(error as Error)
    return
  }
  const db = pluginOptions.db
  const templates = new StatementTemplates()
  if (db !== undefined && typeof db !== 'function' && executorPlugins(db) === undefined) {
    // Checked again on every statement (a transaction or a per-request instance may differ): this is the early notice.
    app.log.warn("fastify-expand: this Kysely version does not expose its executor's plugins (getExecutor().plugins): " +
      'statements are built for every request, none is reused')
  }

  // The request's plan: made now by its route's planner if no hook asked before (see plan/request-plan.ts).
  const planOf = (request: FastifyRequest): RequestPlan => {
    const plan = planRequest(request)
    if (plan === null) throw new InvalidOptionError(`Route ${request.method} ${request.url} is not expandable`)
    return plan
  }
  /** The Kysely instance a request loads through: the load option's, else the plugin's (or its function's answer). */
  const databaseFor = (request: FastifyRequest, options: LoadOptions | undefined): AnyKysely => {
    if (options !== undefined) {
      if (typeof options !== 'object' || options === null) throw new InvalidOptionError('fastify-expand: load options must be an object')
      const unknown = unknownKey(options, loadOptionKeys)
      if (unknown !== undefined) throw new InvalidOptionError(`fastify-expand: unknown load option '${unknown}'`)
      if (options.db !== undefined) return options.db
    }
    if (db === undefined) throw new InvalidOptionError("fastify-expand: loading needs the plugin's 'db' option (or a 'db' load option)")
    if (typeof db !== 'function') return db
    const database = db(request)
    if (typeof database !== 'object' || database === null || typeof database.selectFrom !== 'function') {
      throw new InvalidOptionError("fastify-expand: the 'db' function must return a Kysely instance (or a transaction)")
    }
    return database
  }
  const contextFor = (request: FastifyRequest, options?: LoadOptions): LoadContext =>
    createLoadContext(databaseFor(request, options), request, templates, engine.options.maxObjects, planRequest(request)?.expandedLists)
  const loading = {
    hasDatabase: db !== undefined,
    contextFor: (request: FastifyRequest) => contextFor(request),
    cursorSecret: randomBytes(32),
  }
  // One decorator object per instance that asks for it: routes() registers on
  // the instance it is called on (its prefix, hooks, constraints), never on the
  // one that registered the plugin.
  const decorators = new WeakMap<FastifyInstance, ExpandDecorator>()
  const decoratorFor = (instance: FastifyInstance): ExpandDecorator => ({
    cacheStats: () => engine.serializers.stats(),
    async load (request, rows, options) {
      const plan = planOf(request).expansion
      // Loading writes fields into the given objects, whatever their declared type: rows are records at runtime.
      await loadRows(contextFor(request, options), plan.root, rows as unknown as Row[])
      return rows as never
    },
    select (request, options) {
      const plan = planOf(request).expansion
      if (plan.root.node.table === undefined) {
        throw new InvalidOptionError(`fastify-expand: select needs a table: resource '${plan.root.node.qualifiedName}' has none`)
      }
      const context = contextFor(request, options)
      return selectLevel(context.db, plan.root, context.scope(plan.root.node))
    },
    routes (prefix, resource, routesOptions) {
      registerResourceRoutes(instance, engine, loading, prefix, resource, routesOptions)
    },
    explain (request) {
      const { expansion: plan, list } = planOf(request)
      const context = db === undefined || plan.root.node.table === undefined ? undefined : contextFor(request)
      const writer = engine.serializers.compiled(plan)
      return {
        key: plan.key,
        expanded: [...plan.expandedPaths],
        included: [...plan.includedPaths],
        serializer: engine.serializers.source(plan),
        mechanism: writer.mechanism,
        projection: writer.projection,
        statements: context === undefined
          ? []
          : [
              { path: '', sql: context.dialect.compile(selectLevel(context.db, plan.root, context.scope(plan.root.node))).sql },
              ...plannedStatements(context, plan.root),
            ],
        calls: plannedCalls(request, plan.root),
        ...(list === undefined ? {} : { list: explainList(plan.root.node, list) }),
      }
    },
  })
  // A getter: the request is planned when something first asks (see plan/request-plan.ts), never replaced.
  app.decorateRequest('expansion', {
    getter (this: FastifyRequest) {
      return planRequest(this)?.expansion.expansion ?? null
    },
    setter () {
      throw new InvalidOptionError(messages.expansionReplaced)
    },
  })
  app.decorateRequest(plannedRequest, null)
  app.decorateRequest(functionCalls, null)
  app.decorateRequest(armedReply, null)
  app.decorateRequest(replyWriter, false)
  app.decorateRequest(requestTokenKey, null)
  app.decorate('expand', {
    getter (this: FastifyInstance) {
      let decorator = decorators.get(this)
      if (decorator === undefined) {
        decorator = decoratorFor(this)
        decorators.set(this, decorator)
      }
      return decorator
    },
  })
  app.addHook('onRoute', (routeOptions) => prepareRoute(engine, routeOptions))
  done()
}

/** The list part of a request's plan as `explain` reports it. */
function explainList (root: ResourceNode, list: ListPlan): ListExplanation {
  const indexes = servingIndexes(root, list)
  const filters = list.filters.map(({ filter, operator, value }) => ({ path: filter.path, operator, value }))
  const order = list.keys.map(({ field, descending }) => ({ field: field.name, descending }))
  return list.kind === 'offset'
    ? { pagination: 'offset', filters, order, limit: list.limit, offset: list.offset, indexes }
    : {
        pagination: 'cursor',
        filters,
        order,
        limit: list.limit,
        after: list.cursor?.direction === 'after',
        before: list.cursor?.direction === 'before',
        indexes,
      }
}

const expandPlugin = fp(expandPluginCallback, { fastify: '5.x', name: 'fastify-expand' })
// The package's public surface, every export in one place (docs/README.md lists the pages that document each).
export default expandPlugin
export { expandPlugin }

export { defineResource, isResource } from './graph/resource.js'
export type { AggregateCondition, AggregateDefinition, AggregateFunction, ComputedDefinition } from './graph/derived-definitions.js'
export type { ColumnCasing } from './graph/casing.js'
export type {
  AggregateMap,
  AnyResource,
  ComputedMap,
  FieldName,
  RelationDefinition,
  RelationMap,
  LoadedRow,
  RelationKeys,
  RelationLoad,
  RelationLoadContext,
  RelationOptions,
  Resource,
  ResourceDefinition,
  ResourceReference,
  ResourceScope,
} from './graph/resource.js'
export { isExpanded, isIncluded, type Expansion, type HasExpansion } from './request-helpers.js'
export type { Expanded, ExpandedBy, Loaded, LoadedRelation, ObjectSchema, ResourceRegistry, UnresolvedResource } from './graph/expanded.js'
export { createSerializer, type Serializer, type SerializerOptions } from './standalone.js'
export type { DatabaseOption, ExpandPluginOptions } from './options.js'
export type { ExpandableRouteOptions } from './routes/expandable-route.js'
export type { ExpandedListOptions, ExpandedListsOption } from './routes/expanded-list-declarations.js'
export type { SerializerMechanism } from './compile/serializer-cache.js'
export type { CacheStats } from './compile/serializer-cache.js'
export type { PlannedCall } from './load/function-relations.js'
export type {
  LoadMessage, PlanMessage, PublishedFailure, RequestToken, SerializeMessage, StatementKind, StatementLabel, WriterKind,
} from './trace/channels.js'
export type { ResourceRoutesOptions, ResourceRouteOptions } from './routes/resource-routes.js'
export type { ListPage, CursorPage } from './routes/list-pages.js'
export { filterOperators, type FilterDeclaration, type FilterOperator } from './routes/list-declarations.js'
export type { Row } from './sql/selection.js'
export { cachePreparedStatements, type StatementCacheOptions } from './drivers/statement-cache.js'
export { namePreparedStatements, type NamedStatementOptions } from './drivers/named-statements.js'
export { prepareMysqlStatements, type PreparedMysqlStatementOptions } from './drivers/prepared-mysql-statements.js'
export { databaseFailure } from './sql/statement-templates.js'
export {
  UnknownFieldError,
  NotPermittedError,
  TooDeepError,
  RecursiveError,
  MalformedError,
  TooLargeError,
  InvalidDefinitionError,
  InvalidOptionError,
  NotFoundError,
  ForbiddenError,
  BadFilterError,
  BadSortError,
  BadCursorError,
  InvalidDataError,
  DatabaseError,
  NoPlanError,
  UnavailableError,
  RelationLoadFailedError,
  RequestAbortedError,
  requestErrorCodes,
  loadingErrorCodes,
  accessErrorCodes,
  listErrorCodes,
  serverErrorCodes,
  unavailableErrorCodes,
} from './errors.js'
export { expandOpenApi, type ExpandOpenApi } from './openapi/expand-openapi.js'
export type { ExpandOpenApiOptions, SwaggerTransform, SwaggerTransformInput } from './openapi/documentation-options.js'
export type { ExpandableRouteDocumentation, RouteDocumentationContext } from './openapi/route-documentation.js'
