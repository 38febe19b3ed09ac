import { LruMap } from 'toad-cache'
import { ExpandEngine, type RegisteredTarget } from './engine.js'
import { checkResources, resolveOptions, type ExpandPluginOptions } from './options.js'
import type { ExpandedBy } from './graph/expanded.js'
import { rawFromInput, type PathListInput } from './parse/query.js'
import type { Expansion } from './request-helpers.js'
import { ResourceGraph } from './graph/resource-graph.js'
import type { AnyResource } from './graph/resource.js'

export interface SerializerOptions {
  expand?: PathListInput
  fields?: PathListInput
  omit?: PathListInput
  /** drf-flex-fields' `permitted_expands`: only these paths (and their prefixes) may be expanded. */
  permittedExpands?: readonly string[]
  /** The data is an array of the resource. */
  list?: boolean
  /** The registry for lazy string references; default: the resources reachable from `resource`. */
  resources?: readonly AnyResource[]
  /** Plugin options (limits, wildcards, onInvalidExpand) for this serializer. */
  options?: Omit<ExpandPluginOptions, 'resources' | 'db'>
}

/** `Shape`: the data's type under these settings, `Expanded` of the resource (an array of it with `list: true`). */
export interface Serializer<Shape = unknown> {
  /** The JSON text of `data`, written by the compiled function of this combination. */
  stringify(data: unknown): string
  /** The object that JSON text stands for. */
  shape(data: unknown): Shape
  /** What this combination expands and writes, as `request.expansion` says it for a route. */
  readonly expansion: Expansion
}

// One engine (registry, plan and serializer caches) per registry and resource, reused across calls: its graph is
// built from both, so a resource of the same name (a public and an admin view) or one the registry does not hold
// never answers for another.
const engines = new WeakMap<object, WeakMap<AnyResource, ExpandEngine>>()
// Targets reused across calls, so a repeated combination is one plan-cache lookup, not a new parse.
const targetsByEngine = new WeakMap<ExpandEngine, LruMap<RegisteredTarget>>()

/**
 * The serializer role without Fastify (drf-flex-fields' mixin): the same
 * planning, validation and compiled cache. Invalid options throw here, with
 * the code the HTTP API would answer 400 with.
 */
export function createSerializer<R extends AnyResource, const Settings extends SerializerOptions = {}> (
  resource: R,
  settings: Settings = {} as Settings
): Serializer<ExpandedBy<R, Settings>> {
  checkResources(settings.resources)
  const registryKey: object = settings.resources ?? resource
  let byResource = engines.get(registryKey)
  let engine = settings.options === undefined ? byResource?.get(resource) : undefined
  if (engine === undefined) {
    const resources = settings.resources === undefined ? [resource] : [...settings.resources, resource]
    engine = new ExpandEngine(new ResourceGraph(resources), resolveOptions(settings.options ?? {}))
    if (settings.options === undefined) {
      if (byResource === undefined) {
        byResource = new WeakMap()
        engines.set(registryKey, byResource)
      }
      byResource.set(resource, engine)
    }
  }
  const target = targetFor(engine, resource, settings)
  const plan = engine.planForRaw(target, rawFromInput(settings, engine.options))
  const stringify = engine.serializerFor(plan)
  return {
    expansion: plan.expansion,
    stringify,
    shape: (data) => JSON.parse(stringify(data)),
  }
}

function targetFor (engine: ExpandEngine, resource: AnyResource, settings: SerializerOptions): RegisteredTarget {
  let targets = targetsByEngine.get(engine)
  if (targets === undefined) {
    targets = new LruMap<RegisteredTarget>(engine.options.cacheSize)
    targetsByEngine.set(engine, targets)
  }
  const key = JSON.stringify([resource.namespace, resource.name, settings.list === true, settings.permittedExpands ?? null])
  let target = targets.get(key)
  if (target === undefined) {
    target = engine.target(resource, { list: settings.list, permittedExpands: settings.permittedExpands }, `Serializer of ${resource.name}`)
    targets.set(key, target)
  }
  return target
}
