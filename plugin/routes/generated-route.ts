import type { FastifyContextConfig } from 'fastify'
import type { ListDeclaration } from './list-declarations.js'

/**
 * What a route of `app.expand.routes` is, as the route carries it: the list
 * route's paging and the very `ListDeclaration` that serves it, or the detail
 * route. Frozen, and put into the route's `config` under `generatedRoute` by
 * `registerResourceRoutes`, so that whatever sees the route's options (the
 * OpenAPI transform, as @fastify/swagger hands it `route`) reads it from the
 * route itself, in whichever plugin context the route was registered.
 */
export type GeneratedRoute = GeneratedListRoute | GeneratedDetailRoute

export interface GeneratedListRoute {
  readonly kind: 'list'
  /** Rows per page without `limit`; a larger `limit` is clamped to `maxPageSize`. */
  readonly pageSize: number
  readonly maxPageSize: number
  readonly pagination: 'offset' | 'cursor'
  /** Offset pages count the rows of the whole list (`total`). */
  readonly total: boolean
  /** The route's filters, sort keys and cursor codec: the object its handler reads. */
  readonly declaration: ListDeclaration
}

export interface GeneratedDetailRoute {
  readonly kind: 'detail'
}

/** The key of the route's description in its `config` (a symbol: no application key can collide with it). */
export const generatedRoute = Symbol('fastify-expand generated route')

/** The route's `config`: the application's (the `route` option's), and the route's description. */
export function generatedRouteConfig (config: FastifyContextConfig | undefined, route: GeneratedRoute): FastifyContextConfig {
  return { ...config, [generatedRoute]: route } as FastifyContextConfig
}

/** The description `registerResourceRoutes` gave the route, from its options; undefined for an application's route. */
export function generatedRouteOf (route: { readonly config?: unknown }): GeneratedRoute | undefined {
  const config = route.config as { readonly [generatedRoute]?: GeneratedRoute } | undefined
  return config?.[generatedRoute]
}
