import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify'
import { isPositiveInteger, unknownKey } from '../graph/checks.js'
import { InvalidOptionError, NotFoundError, messages } from '../errors.js'
import type { JsonSchema, SourceSchema } from '../graph/resource-graph.js'
import type { ExpandEngine } from '../engine.js'
import { attachedPlan, routeListTarget } from '../plan/request-plan.js'
import type { AnyResource } from '../graph/resource.js'
import { loadRows } from '../load/batch-loader.js'
import { withOneWave } from '../load/one-wave.js'
import { CursorCodec } from '../plan/cursors.js'
import { listTarget } from '../plan/list-plan.js'
import { generatedRouteConfig, type GeneratedRoute } from './generated-route.js'
import { readListPage, type ListRoute } from './list-pages.js'
import { listParameters } from './list-parameters.js'
import { readListDeclaration, type FilterDeclaration } from './list-declarations.js'
import type { ExpandedListsOption } from './expanded-list-declarations.js'
import { isUnstorableValue, rootStatement } from './route-statements.js'
import type { LoadContext } from '../load/load-context.js'
import { parameterReader } from '../parse/route-parameters.js'
import { keyColumns, selectLevel, type Row } from '../sql/selection.js'
import { compositeIdSchema, keyValues, whereKey } from './detail-keys.js'

export interface ResourceRoutesOptions {
  /** Paths a list request may expand (prefixes included); absent: every path. */
  permitListExpands?: readonly string[]
  /** Paths a detail request may expand (prefixes included); absent: every path. The detail route's `permitExpands`. */
  permitDetailExpands?: readonly string[]
  /**
   * To-many relation paths whose expanded arrays a request to either route
   * may order, limit and narrow (`sort[pets]=-born`, `limit[pets]=5`,
   * `where[pets.species]=cat`): each path's sort fields, filters and largest limit.
   */
  expandedLists?: ExpandedListsOption
  /** Paths expanded, on both routes, when the request has no `expand` parameter (list: each permitted by permitListExpands). */
  defaultExpand?: readonly string[]
  /** Rows per page when `limit` is not given (default 20). */
  pageSize?: number
  /** A larger `limit` is clamped to this (default 100). */
  maxPageSize?: number
  /**
   * The filters a client may use: field (or dot path through to-one
   * relations, `'owner.name'`) -> operators, or `{ operators, containsMaxLength }`
   * (the longest `contains` value, default 32 characters). `filter[species]=cat`,
   * `filter[born][gte]=2020-01-01`, `filter[owner.name][contains]=costa`.
   */
  filter?: Readonly<Record<string, FilterDeclaration>>
  /** The fields a client may sort by: `sort=-born,name`. The primary key always ends the order. */
  sort?: readonly string[]
  /** `'offset'` (default): `limit`/`offset`; `'cursor'`: `limit`/`after`/`before`, body `{ data, limit, next, prev }`. */
  pagination?: 'offset' | 'cursor'
  /** Offset pages: `false` leaves `total` (and its COUNT statement) out. Default true. */
  total?: boolean
  /**
   * The key cursors are encrypted and authenticated with (AES-256-GCM, under
   * keys derived from it), at least 16 characters.
   * Default: a random key made when the plugin is registered, so cursors do
   * not outlive the process: instances behind a load balancer need a shared one.
   */
  cursorSecret?: string | Buffer
  /**
   * Cursor pages: binds each cursor to the caller. Given the request, returns
   * a string that identifies the caller (a user or tenant id, as your
   * authentication decided it); a cursor made for one identity is 400
   * `FST_EXPAND_BAD_CURSOR` for any other. Without it a cursor is bound to
   * the route, the filters and the sort only.
   */
  cursorBinding?: (request: FastifyRequest) => string
  /**
   * Route options given to both routes: hooks (`onRequest`, `preHandler`, ...),
   * `config`, `constraints`, and documentation in `schema` (`tags`,
   * `summary`, `description`, `deprecated`, `security`, `hide`,
   * `externalDocs`). The routes' parameters and responses are theirs.
   */
  route?: ResourceRouteOptions
  /** Both routes' OpenAPI documents mark the default fields `required` (the plugin option of the same name). */
  openApiRequiredDefaults?: boolean
}

/** What `routes()` passes on to both routes it registers. */
export type ResourceRouteOptions = Pick<RouteShorthandOptions,
  | 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend'
  | 'onResponse' | 'onError' | 'onTimeout' | 'onRequestAbort' | 'config' | 'constraints'
> & {
  schema?: {
    tags?: readonly string[]
    summary?: string
    description?: string
    deprecated?: boolean
    security?: ReadonlyArray<Record<string, readonly string[]>>
    hide?: boolean
    externalDocs?: { url: string; description?: string }
  }
}

const routesOptionKeys = new Set([
  'permitListExpands', 'pageSize', 'maxPageSize', 'filter', 'sort', 'pagination', 'total', 'cursorSecret', 'cursorBinding', 'route',
  'defaultExpand', 'openApiRequiredDefaults', 'permitDetailExpands', 'expandedLists',
])
const routeHookKeys = [
  'onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization',
  'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort',
] as const
const routeOptionKeys = new Set<string>([...routeHookKeys, 'config', 'constraints', 'schema'])
const documentationKeys = new Set(['tags', 'summary', 'description', 'deprecated', 'security', 'hide', 'externalDocs'])

/**
 * The viewset role: `GET prefix` (paginated list, `{ data, limit, offset, total }`)
 * and `GET prefix/:id`, loading exactly what each request's plan needs.
 */
/** What the routes need of the plugin instance to load for a request. */
export interface RequestLoading {
  /** Whether the plugin has a `db` option at all. */
  readonly hasDatabase: boolean
  contextFor(request: FastifyRequest): LoadContext
  /** The key cursors are encrypted and authenticated with when a route has no `cursorSecret`: random, per plugin instance. */
  readonly cursorSecret: Buffer
}

export function registerResourceRoutes (
  app: FastifyInstance,
  engine: ExpandEngine,
  loading: RequestLoading,
  prefix: string,
  resource: AnyResource | string,
  options: ResourceRoutesOptions = {}
): void {
  const context = `expand.routes('${prefix}')`
  const fail = (message: string): never => { throw new InvalidOptionError(`${context}: ${message}`) }
  if (!loading.hasDatabase) fail(messages.routesNeedDb)
  const unknown = unknownKey(options, routesOptionKeys)
  if (unknown !== undefined) fail(messages.unknownRoutesOption(unknown))
  const maxPageSize = options.maxPageSize ?? 100
  if (!isPositiveInteger(maxPageSize)) fail(messages.pageSizeNotPositive('maxPageSize'))
  const pageSize = options.pageSize ?? Math.min(20, maxPageSize)
  if (!isPositiveInteger(pageSize)) fail(messages.pageSizeNotPositive('pageSize'))
  if (maxPageSize < pageSize) fail(messages.pageSizeAboveMax)
  const node = engine.graph.node(resource, context)
  // A composite key: its columns, and the identifier's schema (graph/identifiers.ts); see detail-keys.ts.
  const primaryKeyColumns = keyColumns(node)
  const primaryKeySchema = node.key.kind === 'composite'
    ? compositeIdSchema(node.key)
    : identifierSchema(node.sourceSchemas.get(node.primaryKey))

  const pagination = options.pagination ?? 'offset'
  if (pagination !== 'offset' && pagination !== 'cursor') fail(messages.badPagination)
  const withTotal = options.total ?? true
  if (typeof withTotal !== 'boolean') fail(messages.badTotal)
  if (pagination === 'cursor' && options.total !== undefined) fail(messages.totalWithCursor)
  const cursors = pagination === 'cursor'
  if (options.cursorSecret !== undefined &&
    !(typeof options.cursorSecret === 'string' && options.cursorSecret.length >= 16) &&
    !(Buffer.isBuffer(options.cursorSecret) && options.cursorSecret.length >= 16)) {
    fail(messages.shortCursorSecret)
  }
  const secret = options.cursorSecret === undefined ? loading.cursorSecret : Buffer.from(options.cursorSecret)
  const declaration = readListDeclaration(node, options, new CursorCodec(secret), fail)
  const cursorBinding = options.cursorBinding
  if (cursorBinding !== undefined && typeof cursorBinding !== 'function') fail(messages.badCursorBinding)
  if (cursorBinding !== undefined && !cursors) fail(messages.cursorBindingWithOffset)
  const shared = sharedRouteOptions(options.route, fail)
  const ignoreHidden = engine.options.onInvalidExpand === 'ignore'
  // Checked by the route's own check of its setting.
  const requiredDefaults = options.openApiRequiredDefaults === undefined ? {} : { openApiRequiredDefaults: options.openApiRequiredDefaults }
  // Checked by each route's own check of its setting, as the list route's and the detail route's.
  const expandedLists = options.expandedLists === undefined ? {} : { expandedLists: options.expandedLists }
  const permitDetail = options.permitDetailExpands === undefined ? {} : { permitExpands: options.permitDetailExpands }

  const listSetting = {
    resource: node.resource,
    list: true,
    envelope: 'data',
    permitListExpands: options.permitListExpands,
    defaultExpand: options.defaultExpand,
    ...expandedLists,
    ...requiredDefaults,
  }
  const pages: ListRoute = { node, primaryKeyColumns, withTotal, cursors, declaration, countSite: {} }
  // What the route is, carried in its config for whatever reads its options (the OpenAPI transform).
  const listRoute: GeneratedRoute = Object.freeze({
    kind: 'list', pageSize, maxPageSize, pagination, total: !cursors && withTotal, declaration,
  })
  const limitSchema = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: pageSize, description: `Rows per page (default ${pageSize}; larger than ${maxPageSize} is clamped)` }
  // The list part of each request's plan is made with its expansion part (routes/expandable-route.ts reads this).
  const listConfig = {
    ...shared.hooks.config,
    [routeListTarget]: listTarget({ declaration, pagination, pageSize, maxPageSize, ignoreHidden, cursorBinding, prefix }),
  }
  app.get<{ Querystring: { limit?: number; offset?: number } }>(prefix, {
    ...shared.hooks,
    config: generatedRouteConfig(listConfig, listRoute),
    expandable: listSetting,
    schema: {
      ...shared.documentation,
      querystring: {
        type: 'object',
        properties: {
          limit: limitSchema,
          ...(cursors
            ? {
                after: {
                  type: 'string',
                  description: "The previous page's `next`: the rows after its last one, in the same sort and with the same filters",
                },
                before: {
                  type: 'string',
                  description: "A page's `prev`: the rows before its first one, same sort and filters (never with `after`)",
                },
              }
            : { offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Rows to skip' } }),
          ...listParameters(declaration),
        },
      },
    },
    validatorCompiler: parameterReader({
      integers: cursors ? { limit: { minimum: 1 } } : { limit: { minimum: 1 }, offset: { minimum: 0 } },
      // Every list reads filter[...] and sort, so that one it does not declare is a 400, never ignored.
      list: { cursors },
    }),
  }, async (request: FastifyRequest<{ Querystring: { limit?: number; offset?: number } }>) => {
    // Everything about the request was read and resolved when it was planned (before this handler, after its
    // route's hooks, or when a hook first asked): its fieldsFor answers, its query as it was then.
    const { expansion: plan, list } = attachedPlan(request, 'list')
    return await readListPage(pages, loading.contextFor(request), plan, list)
  })

  const detailSetting = {
    resource: node.resource, defaultExpand: options.defaultExpand, ...permitDetail, ...expandedLists, ...requiredDefaults,
  }
  const detailRoute: GeneratedRoute = Object.freeze({ kind: 'detail' })
  app.get<{ Params: { id: unknown } }>(`${prefix}/:id`, {
    ...shared.hooks,
    config: generatedRouteConfig(shared.hooks.config, detailRoute),
    expandable: detailSetting,
    schema: primaryKeySchema === undefined
      ? (shared.documentation === undefined ? undefined : { ...shared.documentation })
      : { ...shared.documentation, params: { type: 'object', properties: { id: primaryKeySchema }, required: ['id'] } },
    validatorCompiler: parameterReader({ id: primaryKeySchema, key: node.key }),
  }, async (request: FastifyRequest<{ Params: { id: unknown } }>) => {
    const { expansion: plan } = attachedPlan(request, 'expansion')
    const loadContext = loading.contextFor(request)
    const { db, templates } = loadContext
    const scope = loadContext.scope(node)
    const notFound = () => new NotFoundError(messages.notFound(node.name, String(request.params.id)))
    const one = (values: readonly unknown[]) => whereKey(selectLevel(db, plan.root, scope), primaryKeyColumns, values)
    const values = keyValues(node.key, request.params.id)
    const parts = loadContext.scopeParts(node)
    const statement = { build: () => one(values), values, purpose: 'one', scope: parts }
    const [row, wave] = await withOneWave(loadContext, plan.root, statement, async () => {
      let row: Row | undefined
      try {
        [row] = await templates.rows(db, plan.root, 'one', values, one, false, parts, rootStatement(loadContext, 'one'))
      } catch (error) {
        if (isUnstorableValue(error)) throw notFound()
        throw error
      }
      if (row === undefined) throw notFound()
      return row
    })
    await loadRows(loadContext, plan.root, [row], wave)
    return row
  })
}

/**
 * The `route` option, checked: hooks, `config` and `constraints` as Fastify
 * takes them, and the documentation part of a schema. The routes' own
 * hooks are added by the plugin when each route is prepared.
 */
function sharedRouteOptions (
  route: ResourceRouteOptions | undefined, fail: (message: string) => never
): { hooks: RouteShorthandOptions; documentation: Record<string, unknown> | undefined } {
  if (route === undefined) return { hooks: {}, documentation: undefined }
  if (typeof route !== 'object' || route === null || Array.isArray(route)) fail(messages.routeNotObject)
  const unknown = unknownKey(route, routeOptionKeys)
  if (unknown !== undefined) {
    fail(messages.unknownRouteOptionKey(unknown, [...routeOptionKeys]))
  }
  const hooks: Record<string, unknown> = {}
  for (const key of routeHookKeys) {
    const hook = route[key]
    if (hook === undefined) continue
    const isHook = typeof hook === 'function' || (Array.isArray(hook) && hook.every((item) => typeof item === 'function'))
    if (!isHook) fail(messages.badRouteHook(key))
    hooks[key] = Array.isArray(hook) ? [...hook] : hook
  }
  if (route.config !== undefined) {
    if (typeof route.config !== 'object' || route.config === null) fail(messages.routeConfigNotObject)
    if (Object.hasOwn(route.config, 'expandable')) fail(messages.routeConfigExpandable)
    hooks.config = { ...route.config }
  }
  if (route.constraints !== undefined) hooks.constraints = route.constraints
  let documentation: Record<string, unknown> | undefined
  if (route.schema !== undefined) {
    if (typeof route.schema !== 'object' || route.schema === null) fail(messages.routeSchemaNotObject)
    for (const key of Object.keys(route.schema)) {
      if (!documentationKeys.has(key)) {
        fail(messages.routeSchemaNotDocumentation(key, [...documentationKeys]))
      }
    }
    documentation = { ...route.schema }
  }
  return { hooks: hooks as RouteShorthandOptions, documentation }
}

/**
 * The schema of the `:id` parameter: the primary key's. An integer key is
 * bounded to the integers JavaScript holds exactly, so that a longer number
 * is a 400 rather than a rounded lookup.
 */
function identifierSchema (schema: SourceSchema | undefined): JsonSchema | undefined {
  if (schema === undefined) return undefined
  const plain = JSON.parse(JSON.stringify(schema)) as JsonSchema
  if (plain.type !== 'integer') return plain
  return {
    ...plain,
    minimum: Math.max(typeof plain.minimum === 'number' ? plain.minimum : -Infinity, Number.MIN_SAFE_INTEGER),
    maximum: Math.min(typeof plain.maximum === 'number' ? plain.maximum : Infinity, Number.MAX_SAFE_INTEGER),
  }
}
