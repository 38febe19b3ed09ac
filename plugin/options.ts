import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import { isPositiveInteger, unknownKey } from './graph/checks.js'
import { InvalidOptionError, messages } from './errors.js'
import type { AnyResource } from './graph/resource.js'

export interface ExpandPluginOptions {
  /** The registry: every resource a route or a lazy reference may name. */
  resources?: readonly AnyResource[]
  /**
   * A Kysely instance, for `app.expand.load`, `app.expand.select` and
   * `app.expand.routes`; or a function giving the one of each request (a
   * transaction of its own, a read replica), called when the request loads.
   */
  db?: DatabaseOption
  expandParam?: string
  fieldsParam?: string
  omitParam?: string
  /** Tokens meaning "every field at this level"; `null` disables wildcards. */
  wildcards?: readonly string[] | null
  onInvalidExpand?: 'error' | 'ignore'
  maxDepth?: number
  allowRecursive?: boolean
  /** Characters over all values of one of the three parameters. */
  maxParamLength?: number
  /** Paths in one parameter, and expanded relations in one plan. */
  maxPaths?: number
  /** Compiled serializers kept (LRU); plans are cached with the same bound. */
  cacheSize?: number
  /** Objects one loaded response may hold, counting each time a shared row is written. */
  maxObjects?: number
  /**
   * Serializers compiled a second at most (a burst of as many): past it, a
   * combination not in the cache is written by the generic writer, with the
   * same bytes and nothing compiled.
   */
  maxCompilesPerSecond?: number
  /**
   * The OpenAPI document (`expandOpenApi`) marks the default response's fields
   * `required`, although `fields`/`omit` (and `fieldsFor`) can leave them out:
   * for a typed client that wants the default shape. Default false: only what
   * every response holds is required. A route's `openApiRequiredDefaults`
   * (or `routes()` option) overrides it; each such route's description says so.
   */
  openApiRequiredDefaults?: boolean
}

// The plugin reads tables by name at runtime; the database type is the user's.
export type DatabaseOption = Kysely<any> | ((request: FastifyRequest) => Kysely<any>)

export interface ResolvedOptions {
  readonly expandParam: string
  readonly fieldsParam: string
  readonly omitParam: string
  readonly wildcards: ReadonlySet<string>
  readonly onInvalidExpand: 'error' | 'ignore'
  readonly maxDepth: number
  readonly allowRecursive: boolean
  readonly maxParamLength: number
  readonly maxPaths: number
  readonly cacheSize: number
  readonly maxObjects: number
  readonly maxCompilesPerSecond: number
  readonly openApiRequiredDefaults: boolean
}

export const defaultOptions: ResolvedOptions = Object.freeze({
  expandParam: 'expand',
  fieldsParam: 'fields',
  omitParam: 'omit',
  wildcards: new Set(['*', '~all']),
  onInvalidExpand: 'error',
  maxDepth: 5,
  allowRecursive: true,
  maxParamLength: 2000,
  maxPaths: 100,
  cacheSize: 1000,
  maxObjects: 10_000,
  maxCompilesPerSecond: 100,
  openApiRequiredDefaults: false,
})

const knownOptions = new Set([
  'resources', 'db', 'expandParam', 'fieldsParam', 'omitParam', 'wildcards', 'onInvalidExpand',
  'maxDepth', 'allowRecursive', 'maxParamLength', 'maxPaths', 'cacheSize', 'maxObjects', 'maxCompilesPerSecond',
  'openApiRequiredDefaults',
])

/** Checks the plugin options once, at registration; a bad option names itself. */
export function resolveOptions (options: ExpandPluginOptions = {}): ResolvedOptions {
  const fail = (message: string): never => { throw new InvalidOptionError(message) }
  if (typeof options !== 'object' || options === null) fail(messages.pluginOptionsNotObject)
  const unknown = unknownKey(options, knownOptions)
  if (unknown !== undefined) fail(messages.unknownPluginOption(unknown))
  const param = (key: 'expandParam' | 'fieldsParam' | 'omitParam'): string => {
    const value = options[key] ?? defaultOptions[key]
    if (typeof value !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(value)) fail(messages.notAParameterName(key))
    return value
  }
  const positive = (key: 'maxDepth' | 'maxParamLength' | 'maxPaths' | 'cacheSize' | 'maxObjects' | 'maxCompilesPerSecond'): number => {
    const value = options[key] ?? defaultOptions[key]
    if (!isPositiveInteger(value)) fail(messages.notAPositiveInteger(key))
    return value
  }
  let wildcards: ReadonlySet<string> = defaultOptions.wildcards
  if (options.wildcards === null) wildcards = new Set()
  else if (options.wildcards !== undefined) {
    if (!Array.isArray(options.wildcards) || !options.wildcards.every((token) => typeof token === 'string' && /^[^.,\s]+$/.test(token))) {
      fail(messages.badWildcards)
    }
    wildcards = new Set(options.wildcards)
  }
  const onInvalidExpand = options.onInvalidExpand ?? 'error'
  if (onInvalidExpand !== 'error' && onInvalidExpand !== 'ignore') fail(messages.badOnInvalidExpand)
  const allowRecursive = options.allowRecursive ?? true
  if (typeof allowRecursive !== 'boolean') fail(messages.badAllowRecursive)
  const openApiRequiredDefaults = options.openApiRequiredDefaults ?? false
  if (typeof openApiRequiredDefaults !== 'boolean') fail(messages.badOpenApiRequiredDefaults('fastify-expand'))
  checkResources(options.resources)
  if (options.db !== undefined && typeof options.db !== 'function' &&
    (typeof options.db !== 'object' || options.db === null || typeof (options.db as { selectFrom?: unknown }).selectFrom !== 'function')) {
    fail(messages.badDb)
  }
  const resolved: ResolvedOptions = Object.freeze({
    expandParam: param('expandParam'),
    fieldsParam: param('fieldsParam'),
    omitParam: param('omitParam'),
    wildcards,
    onInvalidExpand,
    maxDepth: positive('maxDepth'),
    allowRecursive,
    maxParamLength: positive('maxParamLength'),
    maxPaths: positive('maxPaths'),
    cacheSize: positive('cacheSize'),
    maxObjects: positive('maxObjects'),
    maxCompilesPerSecond: positive('maxCompilesPerSecond'),
    openApiRequiredDefaults,
  })
  if (new Set([resolved.expandParam, resolved.fieldsParam, resolved.omitParam]).size !== 3) {
    fail(messages.sameParameterNames)
  }
  return resolved
}

/** The `resources` option (of the plugin, or of `createSerializer`), checked before a registry is built from it. */
export function checkResources (resources: unknown): void {
  if (resources !== undefined && !Array.isArray(resources)) throw new InvalidOptionError(messages.badResources)
}
