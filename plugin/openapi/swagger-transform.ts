import type { FastifySchema, RouteOptions } from 'fastify'
import { InvalidOptionError, messages } from '../errors.js'
import type { ResolvedOptions } from '../options.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import type { ExpandableRouteOptions } from '../routes/expandable-route.js'
import { generatedRouteOf } from '../routes/generated-route.js'
import { expandableSetting } from '../routes/route-declarations.js'
import type { SwaggerTransform } from './documentation-options.js'
import type { DocumentedRoute, ExpandableRouteDocumentation } from './route-documentation.js'

/** What the transform builds each route's documentation with. */
export interface TransformSources {
  readonly options: ResolvedOptions
  /** Applied first, as the documentation option `transform`. */
  readonly previous: SwaggerTransform | undefined
  describe(setting: ExpandableRouteOptions, route: DocumentedRoute): ExpandableRouteDocumentation
  /** Adds the resource components `documented` refers to (and those they refer to) to the document being built. */
  addComponents(document: NonNullable<Parameters<SwaggerTransform>[0]['openapiObject']>, documented: unknown): void
  /** Whether @fastify/swagger leaves a route with this schema out of the document (its `hiddenTag`, `hideUntagged`). */
  hides(schema: FastifySchema & Record<string, unknown>): boolean
}

/**
 * @fastify/swagger's `transform`: an expandable route's schema, documented.
 * Everything comes from the route's options as @fastify/swagger hands them
 * over: its `expandable` setting (the route option or `config.expandable`,
 * read as the plugin reads it), the description `app.expand.routes` put into
 * its `config`, and its own querystring schema, whose properties (a generated
 * list's `limit`, `offset`, `after`, `sort` and `filter[...]`) are documented
 * as the very objects the route validates with.
 */
export function swaggerTransform (sources: TransformSources): SwaggerTransform {
  const { options } = sources
  return (input) => {
    const previous = sources.previous?.(input) ?? { schema: input.schema, url: input.url }
    const route = input.route
    const setting = expandableSetting(route)
    if (setting === undefined || setting === false) return previous
    const document = input.openapiObject
    if (document === undefined) throw new InvalidOptionError(messages.openApiVersion)
    const schema = (previous.schema ?? {}) as FastifySchema & Record<string, unknown>
    const validated = ['querystring', 'params', 'body', 'headers'].some((key) => schema[key] !== undefined)
    const described = sources.describe(setting, { validated, generated: generatedRouteOf(route), pathParameters: /[:{]/.test(route.url) })
    const routeName = `${String(route.method)} ${route.url}`

    const querystring = (schema.querystring ?? { type: 'object' }) as JsonSchema
    // The plugin declares the bracketed forms (`expand[]`) for validation; the documented parameters are the plain names.
    const bracketed = new Set([options.expandParam, options.fieldsParam, options.omitParam].map((name) => `${name}[]`))
    const ownProperties = Object.fromEntries(Object.entries((querystring.properties ?? {}) as Record<string, unknown>)
      .filter(([key]) => !bracketed.has(key) && !(key === options.expandParam && described.querystring[key] === undefined)))
    // @fastify/swagger reads `style` and `explode` from the querystring schema and writes them on
    // every query parameter of the route. Form style, exploded, is what expand/fields/omit take
    // (`expand=a&expand=b`; each value may also hold a comma list), and it is also OpenAPI's
    // default for any query parameter, so it is true of the route's other parameters as well.
    // A querystring schema that declares another style (through an earlier transform: Fastify's
    // validator refuses the keyword in a route schema) cannot document both: refused.
    if ((querystring.style !== undefined && querystring.style !== 'form') || querystring.explode === false) {
      const style = String(querystring.style ?? 'form')
      const explode = querystring.explode !== false
      throw new InvalidOptionError(
        messages.openApiQuerystringStyle(routeName, style, explode, options.expandParam, options.fieldsParam, options.omitParam))
    }
    const response = (schema.response ?? {}) as Record<string, unknown>
    const description = described.description === undefined
      ? {}
      : { description: typeof schema.description === 'string' && schema.description !== '' ? `${schema.description}\n\n${described.description}` : described.description }
    const documented = {
      ...schema,
      ...description,
      querystring: {
        ...querystring,
        type: 'object',
        style: 'form',
        explode: true,
        properties: { ...ownProperties, ...described.querystring },
      },
      response: {
        ...successResponses(response, described.response[200], route.method),
        ...undocumentedErrors(response, described.response),
      },
    }
    // @fastify/swagger hides a route after its transform: a hidden route's components would be in the document alone.
    if (!sources.hides(documented)) sources.addComponents(document, documented)
    return { schema: documented, url: previous.url }
  }
}

/**
 * The status a success body is documented under. An expandable route's
 * handler may answer any 2xx, and Fastify's response schema (which would
 * say which) is refused on these routes, so only what the documentation was
 * told counts: a 2xx status an earlier transform declared (e.g. `201` on a
 * POST) receives the body schema. Otherwise GET (and HEAD) answer 200, as
 * Fastify does unless the handler says otherwise; for other methods 201,
 * 200 or 202 are all plausible, so the body is documented under `2XX`, which
 * OpenAPI defines as any 2xx status and @fastify/swagger keeps as it is.
 * Not `default`: that is the response of any status not listed, and typed
 * clients (openapi-fetch among them) treat it as the error body, so a
 * success documented there would be typed as an error.
 */
function successResponses (response: Record<string, unknown>, body: JsonSchema, method: RouteOptions['method']): Record<string, unknown> {
  const declared = Object.keys(response).filter((status) => /^2(\d\d|xx)$/i.test(status))
  if (declared.length === 0) {
    const methods = (Array.isArray(method) ? method : [method]).map((name) => String(name).toUpperCase())
    const status = methods.every((name) => name === 'GET' || name === 'HEAD') ? '200' : '2XX'
    return { [status]: body, ...response }
  }
  // A declaration without a body schema (a description, headers) gets ours; one with a body keeps its own.
  return Object.fromEntries(Object.entries(response).map(([status, value]) => [
    status,
    declared.includes(status) && isBodyless(value) ? { ...body, ...(value as JsonSchema) } : value,
  ]))
}

function isBodyless (value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  return Object.keys(value).every((key) => key === 'description' || key === 'headers' || key === 'x-response-description')
}

/** The error responses the route may answer with that the route does not document itself. */
function undocumentedErrors (
  response: Record<string, unknown>, described: ExpandableRouteDocumentation['response']
): Record<string, unknown> {
  const added: Record<string, unknown> = {}
  for (const status of ['400', '403', '404', '414', '500', '503'] as const) {
    const schema = described[status]
    if (schema !== undefined && response[status] === undefined) added[status] = schema
  }
  return added
}
