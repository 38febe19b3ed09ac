import type { FastifySchema, RouteOptions } from 'fastify'
import { InvalidOptionError, messages } from '../errors.js'
import type { JsonSchema } from '../graph/resource-graph.js'

export interface ExpandOpenApiOptions {
  /** Prepended to the names of the components describing resources (default none: `Pet`, `Person`). */
  componentPrefix?: string
  /** Paths listed in an `expand` enum at most (default 50); beyond, the enum stops at the last whole depth. */
  maxEnumeratedPaths?: number
  /**
   * Documented properties of list envelopes besides the array (e.g. `total`); others are admitted undocumented.
   * The list routes of `app.expand.routes` document their own envelope (`limit`, `offset`, `total`).
   */
  envelopeProperties?: Record<string, JsonSchema>
  /** Another transform to apply first (yours, or another plugin's). */
  transform?: SwaggerTransform
  /**
   * @fastify/swagger's `hiddenTag` (default `X-HIDDEN`) and `hideUntagged`
   * (default false), as given to it: it hides a route after the transform
   * has documented it, so the transform is told which routes it will hide,
   * whose components stay out of the document.
   */
  hiddenTag?: string
  hideUntagged?: boolean
}

/** What @fastify/swagger passes its `transform` option (declared here: it is not a dependency of this package). */
export interface SwaggerTransformInput {
  schema: FastifySchema
  url: string
  route: RouteOptions
  openapiObject?: { openapi?: string; components?: { schemas?: object } }
  swaggerObject?: unknown
}

export type SwaggerTransform = (input: SwaggerTransformInput) => { schema: FastifySchema; url: string }

/**
 * The most paths an `expand` enum lists by default. A client uses a few
 * paths of a route, and every enumerated path is a line of the parameter's
 * schema (a detail route of a dense schema reaches hundreds of recursive
 * paths at the default depth): past this, the enum stops at the last whole
 * depth. A route with `permitExpands` (or `permitListExpands`) lists exactly
 * its permitted paths, whatever their number.
 */
export const defaultMaxEnumeratedPaths = 50

/** The documentation options, checked, with their defaults. */
export interface DocumentationSettings {
  readonly componentPrefix: string
  readonly maxEnumeratedPaths: number
  readonly envelopeProperties: Readonly<Record<string, JsonSchema>> | undefined
  readonly transform: SwaggerTransform | undefined
  readonly hiddenTag: string
  readonly hideUntagged: boolean
}

/** `expandOpenApi`'s second argument, checked when it is called (a bad value fails at startup, not at the first document). */
export function readDocumentationOptions (options: ExpandOpenApiOptions): DocumentationSettings {
  const componentPrefix = options.componentPrefix ?? ''
  const maxEnumeratedPaths = options.maxEnumeratedPaths ?? defaultMaxEnumeratedPaths
  if (!/^[A-Za-z0-9._-]*$/.test(componentPrefix)) throw new InvalidOptionError(messages.openApiComponentPrefix)
  if (!Number.isInteger(maxEnumeratedPaths) || maxEnumeratedPaths < 1) throw new InvalidOptionError(messages.openApiMaxEnumeratedPaths)
  const hiddenTag = options.hiddenTag ?? 'X-HIDDEN'
  const hideUntagged = options.hideUntagged ?? false
  if (typeof hiddenTag !== 'string' || typeof hideUntagged !== 'boolean') throw new InvalidOptionError(messages.openApiHiding)
  const { envelopeProperties, transform } = options
  return { componentPrefix, maxEnumeratedPaths, envelopeProperties, transform, hiddenTag, hideUntagged }
}
