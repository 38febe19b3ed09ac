import type { FastifyRequest } from 'fastify'
import { LruMap } from 'toad-cache'
import { InvalidDefinitionError, InvalidOptionError, messages } from './errors.js'
import type { ResolvedOptions } from './options.js'
import { readExpansionQuery, type RawExpansionQuery } from './parse/query.js'
import { readRequestQuery } from './parse/request-query.js'
import { noExpandedListQuery, readExpandedListQuery } from './parse/expanded-list-query.js'
import { planExpandedLists } from './plan/expanded-list-plan.js'
import { readExpandedLists, type ExpandedListDeclarations, type ExpandedListsOption } from './routes/expanded-list-declarations.js'
import { planList, type ListTarget } from './plan/list-plan.js'
import { fullVisibility, type ExpansionPlan, type PlanTarget, type Visibility } from './plan/plan.js'
import type { RequestPlan } from './plan/request-plan.js'
import { permittedPaths } from './plan/permitted.js'
import { planExpansion } from './plan/planner.js'
import { relationName, ResourceGraph, walkRelationPath, type ResourceNode } from './graph/resource-graph.js'
import type { AnyResource } from './graph/resource.js'
import { SerializerCache, type Stringify } from './compile/serializer-cache.js'

export interface TargetSettings {
  list?: boolean
  envelope?: string
  /** Paths that may be expanded (with their prefixes); undefined permits every path. */
  permittedExpands?: readonly string[]
  /** Paths expanded when a request has no `expand` parameter at all. */
  defaultExpand?: readonly string[]
  /** The option `permittedExpands` came from, for messages (default permitListExpands). */
  permitOption?: 'permitExpands' | 'permitListExpands'
  /** The to-many relations a request may order, limit and narrow (`sort[path]`, `limit[path]`, `where[path.field]`). */
  expandedLists?: ExpandedListsOption
}

/** A place plans are made for, with an id that keys its plans in the cache. */
export interface RegisteredTarget extends PlanTarget {
  readonly id: number
  /** The last request's raw parameters and their plan: held by the target, so it goes when the target goes. */
  readonly memo: { last: LastPlan | undefined }
  /** The route's `expandedLists`, checked; undefined: its requests' `sort[...]`, `limit[...]` and `where[...]` are not read. */
  readonly expandedLists: ExpandedListDeclarations | undefined
}

interface LastPlan {
  readonly usesDefaults: boolean
  readonly expand: string
  readonly fields: string
  readonly omit: string
  readonly visibility: string
  readonly plan: RequestPlan
}

/**
 * parse -> plan -> compile, with both caches. One per plugin instance (and
 * one per registry for standalone serializers).
 */
export class ExpandEngine {
  readonly serializers: SerializerCache
  /** Request plans without a list part, by raw parameters and visibility: the expansion part is planned once per key. */
  private readonly plans: LruMap<RequestPlan>
  private nextTargetId = 0
  /** Expansion parts planned because the cache held none: what tells a traced request whether its plan was cached. */
  planMisses = 0
  /** Resources with a `fieldsFor`: asked once per request. */
  private readonly fieldRules: readonly ResourceNode[]

  constructor (readonly graph: ResourceGraph, readonly options: ResolvedOptions) {
    this.serializers = new SerializerCache(options.cacheSize, options.maxCompilesPerSecond)
    this.plans = new LruMap<RequestPlan>(options.cacheSize)
    this.fieldRules = graph.nodes.filter((node) => node.resource.fieldsFor !== undefined)
    this.checkDefinitionExpansions()
  }

  /** Prepares a route (or a standalone serializer) at startup; `context` names it in errors. */
  target (resource: AnyResource | string, settings: TargetSettings, context: string): RegisteredTarget {
    const node = this.graph.node(resource, context)
    const list = settings.list === true
    let permitted: ReadonlySet<string> | undefined
    if (settings.permittedExpands !== undefined) {
      for (const path of settings.permittedExpands) this.checkPath(node, path, `${context}: permitted expansions`)
      permitted = permittedPaths(settings.permittedExpands)
    }
    const target = {
      node,
      list,
      envelope: list ? settings.envelope : undefined,
      permitted,
      maxDepth: node.maxDepth ?? this.options.maxDepth,
    }
    let defaultExpand: Array<readonly string[]> | undefined
    if (settings.defaultExpand !== undefined) {
      defaultExpand = []
      for (const path of settings.defaultExpand) {
        this.checkPath(node, path, `${context}: default expansions`)
        if (permitted !== undefined && !permitted.has(path)) {
          throw new InvalidDefinitionError(messages.defaultNotPermitted(context, path, settings.permittedExpands!, settings.permitOption))
        }
        // Planned as a request would ask for it: the route's permitted paths, its depth, recursion.
        try {
          planExpansion(target, { expand: path, fields: '', omit: '' }, { ...this.options, onInvalidExpand: 'error' })
        } catch (error) {
          throw new InvalidDefinitionError(messages.defaultNotPlanned(context, path, (error as Error).message))
        }
        defaultExpand.push(Object.freeze(path.split('.')))
      }
    }
    // A declared path the route does not permit is no mistake: routes() declares one set for its list and detail routes.
    const expandedLists = readExpandedLists(node, settings.expandedLists, context, (message) => { throw new InvalidOptionError(message) })
    // An empty list expands nothing, as no list does: one plan for an absent and an empty expand.
    return Object.freeze({
      ...target,
      id: this.nextTargetId++,
      memo: { last: undefined },
      expandedLists,
      defaultExpand: defaultExpand === undefined || defaultExpand.length === 0 ? undefined : Object.freeze(defaultExpand),
    })
  }

  /**
   * The plan of one request of a route: its query read once, as it is now
   * (a hook may have replaced it), the expansion part found by one lookup by
   * the raw values and what the request may see (parsed and validated only
   * on a miss), the list part (on a generated list route) resolved for the
   * same visibility. On any other route the cached plan itself is the
   * request's: nothing is made per request.
   */
  planRequest (target: RegisteredTarget, request: FastifyRequest, list: ListTarget | undefined): RequestPlan {
    // fieldsFor is asked first, whatever the query holds: once per request (see plan/request-plan.ts).
    const visibility = this.visibilityFor(request)
    if (list === undefined) {
      const planned = this.expansionOnly(target, readRequestQuery(request.query, this.options, undefined).expansion, visibility)
      return this.withExpandedLists(target, planned, request.query)
    }
    const query = readRequestQuery(request.query, this.options, list)
    const planned = this.expansionOnly(target, query.expansion, visibility)
    return this.withExpandedLists(target, {
      expansion: planned.expansion, list: planList(list, query.list, request, visibility), expandedLists: undefined,
    }, request.query)
  }

  /**
   * `plan` with the expanded-list part of the request's query, on a route
   * declaring `expandedLists`: the request's own (the expansion part stays
   * the shared one); `plan` itself when the request asks none.
   */
  private withExpandedLists (target: RegisteredTarget, plan: RequestPlan, query: unknown): RequestPlan {
    if (target.expandedLists === undefined || typeof query !== 'object' || query === null) return plan
    const asked = readExpandedListQuery(query as Record<string, unknown>)
    if (asked === noExpandedListQuery) return plan
    const caller = { ignoreHidden: this.options.onInvalidExpand === 'ignore', maxObjects: this.options.maxObjects }
    return { ...plan, expandedLists: planExpandedLists(target.expandedLists, asked, plan.expansion, caller) }
  }

  /** The expansion plan of a query given in code (standalone serializers, tests), for every field. */
  planFor (target: RegisteredTarget, query: unknown): ExpansionPlan {
    return this.planForRaw(target, readExpansionQuery(query, this.options))
  }

  planForRaw (target: RegisteredTarget, raw: RawExpansionQuery, visibility: Visibility = fullVisibility): ExpansionPlan {
    return this.expansionOnly(target, raw, visibility).expansion
  }

  /** The cached request plan of these raw values and this visibility: an expansion part, no list part. */
  private expansionOnly (target: RegisteredTarget, raw: RawExpansionQuery, visibility: Visibility): RequestPlan {
    // An absent expand (the route's defaults) and an empty one (none) are different plans.
    const usesDefaults = raw.expandAbsent === true && target.defaultExpand !== undefined
    // Requests to a route mostly repeat one combination: comparing the raw strings with the last request's costs
    // less than joining them into a key and hashing it (about half of a hit when the parameters are long).
    const last = target.memo.last
    if (last !== undefined && last.usesDefaults === usesDefaults && last.expand === raw.expand && last.fields === raw.fields &&
      last.omit === raw.omit && last.visibility === visibility.key) {
      return last.plan
    }
    // Each raw value after its length: a value holding the separator (`%00` decodes to it) cannot shift the next.
    const { expand, fields, omit } = raw
    const key = `${target.id}\u0000${usesDefaults ? '' : `${expand.length}=${expand}`}\u0000${fields.length}=${fields}\u0000${omit.length}=${omit}\u0000${visibility.key}`
    let plan = this.plans.get(key)
    if (plan === undefined) {
      this.planMisses++
      plan = Object.freeze({ expansion: planExpansion(target, raw, this.options, visibility), list: undefined, expandedLists: undefined })
      this.plans.set(key, plan)
    }
    target.memo.last = { usesDefaults, expand: raw.expand, fields: raw.fields, omit: raw.omit, visibility: visibility.key, plan }
    return plan
  }

  /** The answers of every `fieldsFor` for one request, checked, with a key that tells them apart. */
  visibilityFor (request: FastifyRequest): Visibility {
    if (this.fieldRules.length === 0) return fullVisibility
    const visibleFields = new Map<ResourceNode, ReadonlySet<string>>()
    let key = ''
    this.fieldRules.forEach((node, index) => {
      const answer = node.resource.fieldsFor!(request)
      if (answer === undefined) return
      if (!Array.isArray(answer)) throw new InvalidDefinitionError(messages.fieldsForNotArray(node.qualifiedName))
      for (const field of answer) {
        if (!node.fieldSchemas.has(field)) throw new InvalidDefinitionError(messages.fieldsForUnknown(node.qualifiedName, String(field)))
      }
      const visible = new Set<string>(answer)
      visibleFields.set(node, visible)
      // Field names are the definitions' own, any text: written as JSON, no list of them reads as another.
      key += `${index}:${JSON.stringify([...visible].sort())};`
    })
    if (visibleFields.size === 0) return fullVisibility
    hideDerivedOfHidden(this.graph.nodes, visibleFields)
    return { key, visible: (node) => visibleFields.get(node) }
  }

  serializerFor (plan: ExpansionPlan): Stringify {
    return this.serializers.get(plan)
  }

  private checkPath (node: ResourceNode, path: string, context: string): void {
    const walk = walkRelationPath(node, path.split('.'))
    if (walk.ok) return
    throw new InvalidDefinitionError(walk.removedBy === undefined
      ? messages.notARelation(context, path, walk.segment, walk.node.qualifiedName)
      : messages.pathThroughRemoved(context, path, walk.segment, relationName(walk.removedBy)))
  }

  /** Nested fields and relation `expand` options must not expand forever: planned once each at startup. */
  private checkDefinitionExpansions (): void {
    const generous = { ...this.options, maxPaths: 10_000, onInvalidExpand: 'error' as const }
    for (const node of this.graph.nodes) {
      const target: PlanTarget = { node, list: false, envelope: undefined, permitted: undefined, maxDepth: Number.MAX_SAFE_INTEGER }
      for (const expand of ['', ...node.relations.keys()]) {
        try {
          planExpansion(target, { expand, fields: '', omit: '' }, generous)
        } catch (error) {
          if (error instanceof InvalidDefinitionError) throw error
          throw new InvalidDefinitionError(messages.alwaysExpandFails(node.qualifiedName, expand, (error as Error).message))
        }
      }
    }
  }
}

/**
 * An aggregate tells about its relation's rows, and `min`/`max`/`sum`/`avg`
 * about one field of them: hidden from a request that may not see the
 * relation, or the field on the related resource, whatever its own name's
 * visibility. Follows from the `fieldsFor` answers alone, so the
 * visibility's key, made of them, still tells requests apart.
 */
function hideDerivedOfHidden (nodes: readonly ResourceNode[], visibleFields: Map<ResourceNode, ReadonlySet<string>>): void {
  for (const node of nodes) {
    const hidden: string[] = []
    for (const derived of node.derived.values()) {
      if (derived.kind !== 'aggregate') continue
      const own = visibleFields.get(node)
      const related = visibleFields.get(derived.relation.target)
      const relationHidden = own !== undefined && !own.has(derived.relation.field)
      const fieldHidden = derived.field !== undefined && related !== undefined && !related.has(derived.field)
      if (relationHidden || fieldHidden) hidden.push(derived.name)
    }
    if (hidden.length === 0) continue
    const visible = new Set(visibleFields.get(node) ?? node.fieldSchemas.keys())
    for (const name of hidden) visible.delete(name)
    visibleFields.set(node, visible)
  }
}
