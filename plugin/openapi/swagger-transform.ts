import type { FastifySchema, RouteOptions } from 'fastify'
import {
  accessErrorCodes,
  InvalidOptionError,
  listErrorCodes,
  loadingErrorCodes,
  messages,
  requestErrorCodes,
  serverErrorCodes,
  unavailableErrorCodes,
} from '../errors.js'
import { generatedRouteOf, type GeneratedRoute } from '../routes/resource-routes.js'
import { resolveOptions, type ExpandPluginOptions, type ResolvedOptions } from '../options.js'
import { permittedPaths } from '../plan/permitted.js'
import { clientFieldNames, ResourceGraph, type JsonSchema, type ResourceNode } from '../graph/resource-graph.js'
import type { AnyResource } from '../graph/resource.js'
import type { ExpandableRouteOptions } from '../routes/expandable-route.js'
import { ComponentSchemas, defaultExample, restrictedLevelSchema } from './documentation-schemas.js'
import { enumerateExpansionPaths, type PathEnumeration } from './expansion-paths.js'
import { toOpenApi30 } from './openapi-version.js'

export interface ExpandOpenApiOptions {
  /** Prepended to the names of the components describing resources (default none: `Pet`, `Person`). */
  componentPrefix?: string
  /** Paths listed in an `expand` enum at most (default 200); beyond, the enum stops at the last whole depth. */
  maxEnumeratedPaths?: number
  /**
   * Documented properties of list envelopes besides the array (e.g. `total`); others are admitted undocumented.
   * The list routes of `app.expand.routes` document their own envelope (`limit`, `offset`, `total`).
   */
  envelopeProperties?: Record<string, JsonSchema>
  /** Another transform to apply first (yours, or another plugin's). */
  transform?: SwaggerTransform
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

/** The documentation of one expandable route, as pieces of a Fastify route schema. */
export interface ExpandableRouteDocumentation {
  /**
   * `expand`, `fields` and `omit` (under their configured names), as querystring properties.
   * `expand` is left out where the route can expand nothing.
   */
  querystring: Record<string, JsonSchema>
  /**
   * 200: the success body, the resource with every relation as identifier or
   * object (the transform files it under 200 for GET and `2XX` for other
   * methods); 400: the expansion errors; 403: a field `fieldsFor` hides (where
   * a resource the route can show has `fieldsFor`); 404: a detail route of
   * `app.expand.routes` without the row; 414: a path parameter longer than
   * Fastify's `maxParamLength`; 500: the plugin's server errors; 503: the
   * database cannot be reached (with Retry-After).
   */
  response: { 200: JsonSchema; 400: JsonSchema; 403?: JsonSchema; 404?: JsonSchema; 414?: JsonSchema; 500: JsonSchema; 503: JsonSchema }
  /**
   * Where the route opted in to `openApiRequiredDefaults`: what `required`
   * means in its response schema, for the route's description.
   */
  description?: string
}

/** What describeRoute needs to know of the route beyond its `expandable` setting. */
export interface RouteDocumentationContext {
  /** The route validates some part of the request (Fastify's 400 `FST_ERR_VALIDATION`). */
  validated?: boolean
  /** The route is one of `app.expand.routes`: its pages, its 404. Found by the transform. */
  generated?: GeneratedRoute
  /** The route's URL has path parameters (Fastify's 414 `FST_ERR_MAX_PARAM_LENGTH`). */
  pathParameters?: boolean
}

export interface ExpandOpenApi {
  /** For @fastify/swagger's `transform` option (OpenAPI mode). */
  transform: SwaggerTransform
  /** The pieces for one route setting; `$ref`s in them point at `components()`. */
  describeRoute(setting: ExpandableRouteOptions, context?: RouteDocumentationContext): ExpandableRouteDocumentation
  /** The named resource schemas the descriptions so far refer to, for `components.schemas`. */
  components(version?: string): Record<string, JsonSchema>
}

/**
 * OpenAPI documentation of expandable routes, from the same options the
 * plugin is registered with (its `resources` and parameter names, limits):
 *
 * ```ts
 * const expandOptions = { db, resources }
 * await app.register(swagger, { openapi: { info }, transform: expandOpenApi(expandOptions).transform })
 * await app.register(expandPlugin, expandOptions)
 * ```
 *
 * Only the documentation sees these schemas: Fastify keeps serializing
 * expandable routes with the compiled per-request serializers.
 */
export function expandOpenApi (pluginOptions: ExpandPluginOptions, documentationOptions: ExpandOpenApiOptions = {}): ExpandOpenApi {
  const options = resolveOptions(pluginOptions)
  const componentPrefix = documentationOptions.componentPrefix ?? ''
  const maxEnumeratedPaths = documentationOptions.maxEnumeratedPaths ?? 200
  if (!/^[A-Za-z0-9._-]*$/.test(componentPrefix)) throw new InvalidOptionError(messages.openApiComponentPrefix)
  if (!Number.isInteger(maxEnumeratedPaths) || maxEnumeratedPaths < 1) throw new InvalidOptionError(messages.openApiMaxEnumeratedPaths)

  // Built on first use, as the plugin resolves references at ready(): resources may still be defined until then.
  let state: { graph: ResourceGraph; components: ComponentSchemas } | undefined
  const current = () => {
    if (state === undefined) {
      const graph = new ResourceGraph(pluginOptions.resources ?? [])
      const naming = { prefix: componentPrefix, refBase: '#/components/schemas/', requiredDefaults: options.openApiRequiredDefaults }
      state = { graph, components: new ComponentSchemas(graph.nodes, naming) }
    }
    return state
  }

  const describeRoute: ExpandOpenApi['describeRoute'] = (setting, context = {}) => {
    const { graph, components } = current()
    const node = graph.node(setting.resource as AnyResource | string, 'expandOpenApi')
    const list = setting.list === true
    const permitted = list && setting.permitListExpands !== undefined ? permittedPaths(setting.permitListExpands) : undefined
    const maxDepth = node.maxDepth ?? options.maxDepth
    // A restricted route's paths are few: enumerated whole, they are exactly what it may expand.
    const enumeration = enumerateExpansionPaths(node, {
      maxDepth,
      allowRecursive: options.allowRecursive,
      permitted,
      limit: permitted === undefined ? maxEnumeratedPaths : Number.MAX_SAFE_INTEGER,
    })
    const requestable = new Set(enumeration.paths)
    const requiredDefaults = setting.openApiRequiredDefaults ?? options.openApiRequiredDefaults
    let item: JsonSchema
    if (permitted === undefined) item = components.root(node, requiredDefaults)
    else item = restrictedLevelSchema(node, (path) => requestable.has(path), requiredDefaults)
    // The relations this route can show at the top level: every one, or on a restricted list the permitted ones.
    const showable = (field: string) => permitted === undefined || requestable.has(field)
    const generated = context.generated
    const response: ExpandableRouteDocumentation['response'] = {
      200: responseSchema(node, item, list, setting.envelope, generated, documentationOptions.envelopeProperties),
      400: requestErrorSchema(context.validated === true, generated?.kind === 'list' ? listCodes(generated) : []),
      500: serverErrorSchema(generated !== undefined),
      503: unavailableSchema(),
    }
    if (generated?.kind === 'detail') response[404] = notFoundSchema(node)
    if (reachesFieldRules(node)) response[403] = forbiddenSchema()
    if (context.pathParameters === true || generated?.kind === 'detail') response[414] = uriTooLongSchema()
    const querystring = expansionParameters(
      node, enumeration, permitted !== undefined, maxDepth, showable, options, setting.defaultExpand, requiredDefaults)
    return { querystring, response, ...(requiredDefaults ? { description: requiredDefaultsNote } : {}) }
  }

  const componentsFor = (version = '3.1.0'): Record<string, JsonSchema> => {
    const schemas = Object.fromEntries(current().components.schemas)
    if (!version.startsWith('3.0')) return schemas
    return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, toOpenApi30(schema)]))
  }

  const transform: SwaggerTransform = (input) => {
    const previous = documentationOptions.transform?.(input) ?? { schema: input.schema, url: input.url }
    const route = input.route
    const setting = route.expandable ?? (route.config as { expandable?: ExpandableRouteOptions | false } | undefined)?.expandable
    if (setting === undefined || setting === false) return previous
    const document = input.openapiObject
    if (document === undefined) throw new InvalidOptionError(messages.openApiVersion)
    const schema = (previous.schema ?? {}) as FastifySchema & Record<string, unknown>
    const validated = ['querystring', 'params', 'body', 'headers'].some((key) => schema[key] !== undefined)
    const described = describeRoute(setting, { validated, generated: generatedRouteOf(setting), pathParameters: /[:{]/.test(route.url) })
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
      response: { ...successResponses(response, described.response[200], route.method), ...errorResponses(response, described.response) },
    }

    const components = (document.components ??= {})
    const schemas = (components.schemas ??= {}) as Record<string, unknown>
    for (const [name, component] of Object.entries(componentsFor(document.openapi))) {
      if (Object.hasOwn(schemas, name) && !isOurs(schemas[name], component)) {
        throw new InvalidOptionError(messages.openApiComponent(name))
      }
      schemas[name] = component
    }
    return { schema: documented, url: previous.url }
  }

  return { transform, describeRoute, components: componentsFor }
}

/** The route description's note where the default response is typed as required. */
const requiredDefaultsNote = 'The response schema types the default response (openApiRequiredDefaults): ' +
  'its `required` fields are those of a response without `fields` or `omit`; a response with them holds only the fields asked for.'

/** `openApiTransform(pluginOptions)` is `expandOpenApi(pluginOptions).transform`, for swagger's `transform` option. */
export function openApiTransform (pluginOptions: ExpandPluginOptions, documentationOptions: ExpandOpenApiOptions = {}): SwaggerTransform {
  return expandOpenApi(pluginOptions, documentationOptions).transform
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
function errorResponses (response: Record<string, unknown>, described: ExpandableRouteDocumentation['response']): Record<string, unknown> {
  const added: Record<string, unknown> = {}
  for (const status of ['400', '403', '404', '414', '500', '503'] as const) {
    const schema = described[status]
    if (schema !== undefined && response[status] === undefined) added[status] = schema
  }
  return added
}

function expansionParameters (
  node: ResourceNode,
  enumeration: PathEnumeration,
  restricted: boolean,
  maxDepth: number,
  showable: (field: string) => boolean,
  options: ResolvedOptions,
  defaultExpand: readonly string[] | undefined,
  requiredDefaults: boolean
): Record<string, JsonSchema> {
  const wildcards = [...options.wildcards]
  // A wildcard after a path is shown where the route can expand something below that path.
  const below = enumeration.paths.find((path) => enumeration.paths.some((other) => other.startsWith(`${path}.`)))
  const wildcardNote = wildcards.length > 0
    ? ` ${wildcards.map((token) => `\`${token}\``).join(' or ')} expands every ${restricted ? 'permitted ' : ''}relation of a level` +
      `${below === undefined ? '' : ` (\`${below}.${wildcards[0]}\`: every one below \`${below}\`)`}.`
    : ''
  const where = restricted ? ' This list route permits only the paths listed.' : ''
  const syntax = 'Comma-separated or repeated; dot notation reaches nested relations.'
  const parameters: Record<string, JsonSchema> = {}
  const expandable = enumeration.paths.length > 0
  // A route that can expand nothing gets no `expand` parameter: an empty enum admits no value at all.
  if (expandable) {
    const items: JsonSchema = { type: 'string' }
    let description: string
    if (enumeration.complete) {
      items.enum = [...enumeration.paths, ...wildcards]
      description = `Relations to expand (depth ${maxDepth} at most). ${syntax}${where}${wildcardNote}`
    } else {
      const shown = enumeration.paths.filter((path) => !path.includes('.'))
      description = `Relations to expand, up to ${maxDepth} levels deep: ${shown.join(', ')} and their own relations. ${syntax}${wildcardNote}`
    }
    const parameter: JsonSchema = { type: 'array', items, description }
    // The route's defaultExpand: what an absent parameter means, and the empty value that asks for none.
    if (defaultExpand !== undefined && defaultExpand.length > 0) {
      const named = defaultExpand.map((path) => `\`${path}\``).join(', ')
      parameter.description = `${description} Without this parameter, ${named} ${defaultExpand.length === 1 ? 'is' : 'are'} expanded; \`${options.expandParam}=\` (empty) expands none.`
      parameter.default = [...defaultExpand]
      if (items.enum !== undefined) items.enum = ['', ...(items.enum as string[])]
    }
    parameters[options.expandParam] = parameter
  }

  // Only names this route can show: a deferred relation a restricted list cannot expand is never in its responses.
  const shownRelations = new Set(node.defaultFields)
  const fieldNames = clientFieldNames(node).filter((name) => shownRelations.has(name) || showable(name))
  const example = dotExample(node, enumeration.paths)
  // With the opt-in, the response schemas describe the default response (documentation-schemas.ts): say where they stop holding.
  const optional = requiredDefaults
    ? 'Fields left out are absent from the response, even those its schema requires: the schema describes the default response.'
    : 'Fields left out are absent from the response.'
  const plain = fieldNames.find((name) => !node.relations.has(name))
  const nested = example === undefined
    ? ' This route expands no relation, so dot notation has nothing to reach.'
    : ` Dot notation narrows an expanded relation: \`${options.expandParam}=${example.relation}&${options.fieldsParam}=${plain === undefined ? '' : `${plain},`}${example.path}\`.`
  parameters[options.fieldsParam] = {
    type: 'array',
    items: { type: 'string' },
    description: `Only these fields (${node.name}: ${fieldNames.join(', ')}).${nested} Comma-separated or repeated. ${optional}`,
  }
  parameters[options.omitParam] = {
    type: 'array',
    items: { type: 'string' },
    description: `Leave these fields out (${node.name}: ${fieldNames.join(', ')})${example === undefined ? '' : `; dot notation reaches an expanded relation: \`${example.path}\``}. Comma-separated or repeated. ${optional}`,
  }
  return parameters
}

/** A `relation.field` example from the resource's own relations: the first one the route can expand, and a field of its level. */
function dotExample (node: ResourceNode, paths: readonly string[]): { relation: string; path: string } | undefined {
  for (const path of paths) {
    if (path.includes('.')) continue
    const relation = node.relations.get(path)
    if (relation === undefined) continue
    const target = relation.target
    const fields = relation.baseFields
    const field = fields.find((name) => name !== target.primaryKey && !target.relations.has(name)) ?? fields[0]
    if (field !== undefined) return { relation: path, path: `${path}.${field}` }
  }
  return undefined
}

function responseSchema (
  node: ResourceNode,
  item: JsonSchema,
  list: boolean,
  envelope: string | undefined,
  generated: GeneratedRoute | undefined,
  envelopeProperties: Record<string, JsonSchema> | undefined
): JsonSchema {
  const description = list ? `A list of ${node.name}` : `One ${node.name}`
  if (!list) return { description, ...item }
  const array = { type: 'array', items: item }
  // An inline item carries its example; a component's is the component's.
  const itemExample = (Array.isArray(item.examples) ? item.examples[0] : undefined) as unknown ?? defaultExample(node)
  const examples = (value: unknown) => (itemExample === undefined ? {} : { examples: [value] })
  if (envelope === undefined) return { description, ...array, ...examples([itemExample]) }
  if (generated?.kind === 'list') {
    // The envelope of app.expand.routes: exactly these properties, by the route's pagination.
    const limit = { type: 'integer', minimum: 1, maximum: generated.maxPageSize, description: `Rows per page: the limit asked for (default ${generated.pageSize}), at most ${generated.maxPageSize}` }
    if (generated.pagination === 'cursor') {
      return {
        description,
        type: 'object',
        properties: {
          [envelope]: array,
          limit,
          next: {
            type: ['string', 'null'],
            description: 'The `after` of the following page (same sort and filters); null on the last page',
          },
        },
        required: [envelope, 'limit', 'next'],
        additionalProperties: false,
        ...examples({ [envelope]: [itemExample], limit: generated.pageSize, next: null }),
      }
    }
    const total = generated.total ? { total: { type: 'integer', minimum: 0, description: 'Rows in the whole list' } } : {}
    return {
      description,
      type: 'object',
      properties: {
        [envelope]: array,
        limit,
        offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Rows skipped' },
        ...total,
      },
      required: [envelope, 'limit', 'offset', ...Object.keys(total)],
      additionalProperties: false,
      ...examples({ [envelope]: [itemExample], limit: generated.pageSize, offset: 0, ...(generated.total ? { total: 1 } : {}) }),
    }
  }
  return {
    description,
    type: 'object',
    properties: { [envelope]: array, ...envelopeProperties },
    required: [envelope],
    ...examples({ [envelope]: [itemExample] }),
  }
}

/** Fastify's error body: `{ statusCode, code, error, message }`. */
function errorBody (description: string, statusCode: number, code: JsonSchema, codeRequired: boolean): JsonSchema {
  return {
    description,
    type: 'object',
    properties: {
      statusCode: { type: 'integer', enum: [statusCode] },
      code,
      error: { type: 'string' },
      message: { type: 'string' },
    },
    required: codeRequired ? ['statusCode', 'code', 'error', 'message'] : ['statusCode', 'error', 'message'],
  }
}

function requestErrorSchema (validated: boolean, listErrors: readonly string[]): JsonSchema {
  // Any expandable route may load through app.expand.load, which bounds the response size.
  const codes: string[] = [...requestErrorCodes, ...loadingErrorCodes, ...listErrors]
  if (validated) codes.push('FST_ERR_VALIDATION')
  // Fastify's own: a URL whose percent escapes do not decode (`/toys/%`), answered before any hook of the route.
  codes.push('FST_ERR_BAD_URL')
  const summary = 'Invalid expand, fields or omit, a response over maxObjects, another invalid parameter, or a malformed URL'
  return errorBody(summary, 400, { type: 'string', enum: codes }, true)
}

/**
 * The list errors a generated list route can answer: every list reads
 * filter[...] and sort (refusing undeclared ones); cursor lists read after.
 */
function listCodes (generated: Extract<GeneratedRoute, { kind: 'list' }>): string[] {
  return generated.pagination === 'cursor' ? [...listErrorCodes] : listErrorCodes.filter((code) => code !== 'FST_EXPAND_BAD_CURSOR')
}

/** Whether the resource, or one it can reach through relations, decides per request which fields are shown. */
function reachesFieldRules (node: ResourceNode): boolean {
  const seen = new Set<ResourceNode>()
  const visit = (current: ResourceNode): boolean => {
    if (seen.has(current)) return false
    seen.add(current)
    if (current.resource.fieldsFor !== undefined) return true
    for (const relation of current.relations.values()) if (visit(relation.target)) return true
    return false
  }
  return visit(node)
}

/** Any expandable route may load through the plugin: a database out of reach is a 503 with Retry-After. */
function unavailableSchema (): JsonSchema {
  const summary = 'The database cannot be reached now: retry after the seconds of its Retry-After header'
  return errorBody(summary, 503, { type: 'string', enum: [...unavailableErrorCodes] }, true)
}

function forbiddenSchema (): JsonSchema {
  return errorBody('expand or fields names a field this request may not see', 403, { type: 'string', enum: [...accessErrorCodes] }, true)
}

/** Fastify's answer to a path parameter over its `maxParamLength` server option (default 100). */
function uriTooLongSchema (): JsonSchema {
  return errorBody('A path parameter longer than the server allows', 414, { type: 'string', enum: ['FST_ERR_MAX_PARAM_LENGTH'] }, true)
}

function notFoundSchema (node: ResourceNode): JsonSchema {
  return errorBody(`No ${node.name} with this identifier`, 404, { type: 'string', enum: ['FST_EXPAND_NOT_FOUND'] }, true)
}

/**
 * 500: data that does not fit the plan (FST_EXPAND_INVALID_DATA) or a
 * statement that failed (FST_EXPAND_DATABASE_ERROR; any route may load through
 * app.expand.load). The routes of app.expand.routes answer no other 500; an
 * application's handler may throw anything, and Fastify writes the error's
 * own code, or none, so there `code` is any string and may be absent.
 */
function serverErrorSchema (generated: boolean): JsonSchema {
  const codes = [...serverErrorCodes]
  const description = 'Data that does not fit the response, or a failed database statement'
  if (generated) return errorBody(description, 500, { type: 'string', enum: codes }, true)
  return errorBody(`${description}, or an error of the handler`, 500, {
    type: 'string',
    description: `${codes.join(' or ')} from fastify-expand; another code (or none) from the handler`,
  }, false)
}

function isOurs (existing: unknown, component: JsonSchema): boolean {
  return JSON.stringify(existing) === JSON.stringify(component)
}
