import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { isPositiveInteger, unknownKey } from '../checks.js'
import { DatabaseError, InvalidOptionError, NotFoundError } from '../errors.js'
import type { JsonSchema } from '../resource-graph.js'
import type { ExpandEngine } from '../engine.js'
import type { AnyResource } from '../resource.js'
import { loadRows } from './batch-loader.js'
import type { LoadContext } from './load-context.js'
import { parameterReader } from './route-parameters.js'
import { keyColumn, selectLevel, tableOf, type Row } from './selection.js'

export interface ResourceRoutesOptions {
  /** Paths a list request may expand (prefixes included); absent: every path. */
  permitListExpands?: readonly string[]
  /** Paths expanded, on both routes, when the request has no `expand` parameter (list: each permitted by permitListExpands). */
  defaultExpand?: readonly string[]
  /** Rows per page when `limit` is not given (default 20). */
  pageSize?: number
  /** A larger `limit` is clamped to this (default 100). */
  maxPageSize?: number
}

export interface ListPage<T = Row> {
  data: T[]
  limit: number
  offset: number
  total: number
}

const routesOptionKeys = new Set(['permitListExpands', 'pageSize', 'maxPageSize', 'defaultExpand'])

/** What the OpenAPI documentation needs to know of a route `routes()` registered. */
export type GeneratedRoute =
  | { readonly kind: 'list'; readonly pageSize: number; readonly maxPageSize: number }
  | { readonly kind: 'detail' }

// Keyed by the route's `expandable` setting: Fastify and the plugin pass that object on as it is.
const generatedRoutes = new WeakMap<object, GeneratedRoute>()

/** The generated route whose `expandable` setting this is; undefined for an application's own route. */
export function generatedRouteOf (setting: object): GeneratedRoute | undefined {
  return generatedRoutes.get(setting)
}

/**
 * The viewset role: `GET prefix` (paginated list, `{ data, limit, offset, total }`)
 * and `GET prefix/:id`, loading exactly what each request's plan needs.
 */
/** What the routes need of the plugin instance to load for a request. */
export interface RequestLoading {
  /** Whether the plugin has a `db` option at all. */
  readonly hasDatabase: boolean
  contextFor(request: FastifyRequest): LoadContext
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
  if (!loading.hasDatabase) fail("the plugin needs the 'db' option (a Kysely instance) to serve resource routes")
  const unknown = unknownKey(options, routesOptionKeys)
  if (unknown !== undefined) fail(`unknown option '${unknown}'`)
  const maxPageSize = options.maxPageSize ?? 100
  if (!isPositiveInteger(maxPageSize)) fail('maxPageSize must be a positive integer')
  const pageSize = options.pageSize ?? Math.min(20, maxPageSize)
  if (!isPositiveInteger(pageSize)) fail('pageSize must be a positive integer')
  if (maxPageSize < pageSize) fail('maxPageSize must be no smaller than pageSize')
  const node = engine.graph.node(resource, context)
  const table = tableOf(node)
  const primaryKeyColumn = keyColumn(node)
  const primaryKeySchema = identifierSchema(node.sourceSchemas.get(node.primaryKey))
  const countSite = {}

  const listSetting = { resource: node.resource, list: true, envelope: 'data', permitListExpands: options.permitListExpands, defaultExpand: options.defaultExpand }
  generatedRoutes.set(listSetting, { kind: 'list', pageSize, maxPageSize })
  app.get(prefix, {
    expandable: listSetting,
    schema: {
      querystring: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: pageSize, description: `Rows per page (default ${pageSize}; larger than ${maxPageSize} is clamped)` },
          offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Rows to skip' },
        },
      },
    },
    validatorCompiler: parameterReader({ integers: { limit: { minimum: 1 }, offset: { minimum: 0 } } }),
  }, async (request: FastifyRequest<{ Querystring: { limit?: number; offset?: number } }>) => {
    const limit = Math.min(request.query.limit ?? pageSize, maxPageSize)
    const offset = request.query.offset ?? 0
    const plan = request.expansion!
    const loadContext = loading.contextFor(request)
    const { db, templates } = loadContext
    // With a scope, the statements carry the request's condition first: templates per shape of that condition.
    const scope = loadContext.scope(node)
    const parts = loadContext.scopeParts(node)
    const [rows, [count]] = await Promise.all([
      templates.rows(db, plan.root, 'page', [limit, offset], ([limit, offset]) =>
        selectLevel(db, plan.root, scope).orderBy(primaryKeyColumn).limit(limit as number).offset(offset as number), false, parts),
      templates.rows(db, countSite, 'count', [], () => {
        const count = db.selectFrom(table).select((eb) => eb.fn.countAll().as('total'))
        return scope === undefined ? count : count.where(scope)
      }, false, parts),
    ])
    await loadRows(loadContext, plan.root, rows)
    return { data: rows, limit, offset, total: Number(count!.total) } satisfies ListPage
  })

  const detailSetting = { resource: node.resource, defaultExpand: options.defaultExpand }
  generatedRoutes.set(detailSetting, { kind: 'detail' })
  app.get(`${prefix}/:id`, {
    expandable: detailSetting,
    schema: primaryKeySchema === undefined ? undefined : { params: { type: 'object', properties: { id: primaryKeySchema }, required: ['id'] } },
    validatorCompiler: parameterReader({ id: primaryKeySchema }),
  }, async (request: FastifyRequest<{ Params: { id: unknown } }>) => {
    const plan = request.expansion!
    const loadContext = loading.contextFor(request)
    const { db, templates } = loadContext
    const scope = loadContext.scope(node)
    const notFound = () => new NotFoundError(`${node.name} ${String(request.params.id)} not found`)
    let row: Row | undefined
    try {
      [row] = await templates.rows(db, plan.root, 'one', [request.params.id], ([id]) =>
        selectLevel(db, plan.root, scope).where(primaryKeyColumn, '=', id), false, loadContext.scopeParts(node))
    } catch (error) {
      if (isUnstorableValue(error)) throw notFound()
      throw error
    }
    if (row === undefined) throw notFound()
    await loadRows(loadContext, plan.root, [row])
    return row
  })
}

/**
 * The schema of the `:id` parameter: the primary key's. An integer key is
 * bounded to the integers JavaScript holds exactly, so that a longer number
 * is a 400 rather than a rounded lookup.
 */
function identifierSchema (schema: TSchema | undefined): JsonSchema | undefined {
  if (schema === undefined) return undefined
  const plain = JSON.parse(JSON.stringify(schema)) as JsonSchema
  if (plain.type !== 'integer') return plain
  return {
    ...plain,
    minimum: Math.max(typeof plain.minimum === 'number' ? plain.minimum : -Infinity, Number.MIN_SAFE_INTEGER),
    maximum: Math.min(typeof plain.maximum === 'number' ? plain.maximum : Infinity, Number.MAX_SAFE_INTEGER),
  }
}

/**
 * A lookup by a value its column cannot hold (PostgreSQL's data exceptions,
 * SQLSTATE class 22: an int4 key asked for 2147483648, a uuid key asked for
 * 'abc') finds no row. SQLite, which stores any value in any column, simply
 * finds none: both answer 404.
 */
function isUnstorableValue (error: unknown): boolean {
  if (!(error instanceof DatabaseError)) return false
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)
}
