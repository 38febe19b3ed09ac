import type { FastifySchema, RouteOptions } from 'fastify'
import { loadingErrorCodes, requestErrorCodes } from '../errors.js'
import { resolveOptions, type ExpandPluginOptions, type ResolvedOptions } from '../options.js'
import { permittedPaths } from '../plan/permitted.js'
import { clientFieldNames, ResourceGraph, type JsonSchema, type ResourceNode } from '../resource-graph.js'
import type { AnyResource } from '../resource.js'
import type { ExpandableRouteOptions } from '../route.js'
import { ComponentSchemas, restrictedLevelSchema } from './documentation-schemas.js'
import { enumerateExpansionPaths, type PathEnumeration } from './expansion-paths.js'
import { toOpenApi30 } from './openapi-version.js'

export interface ExpandOpenApiOptions {
  /** Prepended to the names of the components describing resources (default none: `Pet`, `Person`). */
  componentPrefix?: string
  /** Paths listed in an `expand` enum at most (default 200); beyond, the enum stops at the last whole depth. */
  maxEnumeratedPaths?: number
  /** Documented properties of list envelopes besides the array (e.g. `total`); others are admitted undocumented. */
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
  /** `expand`, `fields` and `omit` (under their configured names), as querystring properties. */
  querystring: Record<string, JsonSchema>
  /** 200: the resource with every relation as identifier or object; 400: the expansion errors. */
  response: { 200: JsonSchema; 400: JsonSchema }
}

export interface ExpandOpenApi {
  /** For @fastify/swagger's `transform` option (OpenAPI mode). */
  transform: SwaggerTransform
  /** The pieces for one route setting; `$ref`s in them point at `components()`. */
  describeRoute(setting: ExpandableRouteOptions, context?: { validated?: boolean }): ExpandableRouteDocumentation
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
  if (!/^[A-Za-z0-9._-]*$/.test(componentPrefix)) throw new TypeError('expandOpenApi: componentPrefix may hold letters, digits, dots, dashes and underscores only')
  if (!Number.isInteger(maxEnumeratedPaths) || maxEnumeratedPaths < 1) throw new TypeError('expandOpenApi: maxEnumeratedPaths must be a positive integer')

  // Built on first use, as the plugin resolves references at ready(): resources may still be defined until then.
  let state: { graph: ResourceGraph; components: ComponentSchemas } | undefined
  const current = () => {
    if (state === undefined) {
      const graph = new ResourceGraph(pluginOptions.resources ?? [])
      state = { graph, components: new ComponentSchemas(graph.nodes, { prefix: componentPrefix, refBase: '#/components/schemas/' }) }
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
    let item: JsonSchema
    if (permitted === undefined) item = components.root(node)
    else {
      const requestable = new Set(enumeration.paths)
      item = restrictedLevelSchema(node, (path) => requestable.has(path))
    }
    return {
      querystring: expansionParameters(node, enumeration, permitted !== undefined, maxDepth, options),
      response: {
        200: responseSchema(node, item, list, setting.envelope, documentationOptions.envelopeProperties),
        400: errorSchema(context.validated === true),
      },
    }
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
    if (document === undefined) throw new TypeError("expandOpenApi: the transform documents OpenAPI 3 only; give @fastify/swagger an 'openapi' option")
    const schema = (previous.schema ?? {}) as FastifySchema & Record<string, unknown>
    const validated = ['querystring', 'params', 'body', 'headers'].some((key) => schema[key] !== undefined)
    const described = describeRoute(setting, { validated })

    const querystring = (schema.querystring ?? { type: 'object' }) as JsonSchema
    // The plugin declares the bracketed forms (`expand[]`) for validation; the documented parameters are the plain names.
    const bracketed = new Set([options.expandParam, options.fieldsParam, options.omitParam].map((name) => `${name}[]`))
    const ownProperties = Object.fromEntries(Object.entries((querystring.properties ?? {}) as Record<string, unknown>).filter(([key]) => !bracketed.has(key)))
    const response = (schema.response ?? {}) as Record<string, unknown>
    // The application's own 2xx description, if any, wins: it may know better.
    const hasSuccess = Object.keys(response).some((status) => /^2/.test(status))
    const documented = {
      ...schema,
      querystring: { ...querystring, type: 'object', properties: { ...ownProperties, ...described.querystring } },
      response: {
        ...response,
        ...(hasSuccess ? {} : { 200: described.response[200] }),
        ...(response['400'] === undefined ? { 400: described.response[400] } : {}),
      },
    }

    const components = (document.components ??= {})
    const schemas = (components.schemas ??= {}) as Record<string, unknown>
    for (const [name, component] of Object.entries(componentsFor(document.openapi))) {
      if (Object.hasOwn(schemas, name) && !isOurs(schemas[name], component)) {
        throw new TypeError(`expandOpenApi: the document already has a component '${name}'; set componentPrefix to keep the resource schemas apart`)
      }
      schemas[name] = component
    }
    return { schema: documented, url: previous.url }
  }

  return { transform, describeRoute, components: componentsFor }
}

/** `openApiTransform(pluginOptions)` is `expandOpenApi(pluginOptions).transform`, for swagger's `transform` option. */
export function openApiTransform (pluginOptions: ExpandPluginOptions, documentationOptions: ExpandOpenApiOptions = {}): SwaggerTransform {
  return expandOpenApi(pluginOptions, documentationOptions).transform
}

function expansionParameters (
  node: ResourceNode,
  enumeration: PathEnumeration,
  restricted: boolean,
  maxDepth: number,
  options: ResolvedOptions
): Record<string, JsonSchema> {
  const wildcards = [...options.wildcards]
  const wildcardNote = wildcards.length > 0 ? ` \`${wildcards[0]}\` expands every ${restricted ? 'permitted ' : ''}relation of a level.` : ''
  const where = restricted ? ' This list route permits only the paths listed.' : ''
  const syntax = 'Comma-separated or repeated; dot notation reaches nested relations.'
  const items: JsonSchema = { type: 'string' }
  let description: string
  if (enumeration.paths.length === 0) {
    description = `${node.name} has no relation this route can expand.`
    items.enum = []
  } else if (enumeration.complete) {
    items.enum = [...enumeration.paths]
    description = `Relations to expand (depth ${maxDepth} at most). ${syntax}${where}${wildcardNote}`
  } else {
    const shown = enumeration.paths.filter((path) => !path.includes('.'))
    description = `Relations to expand, up to ${maxDepth} levels deep: ${shown.join(', ')} and their own relations. ${syntax}${wildcardNote}`
  }
  const fieldNames = clientFieldNames(node).join(', ')
  return {
    [options.expandParam]: { type: 'array', items, description },
    [options.fieldsParam]: {
      type: 'array',
      items: { type: 'string' },
      description: `Only these fields (${node.name}: ${fieldNames}). Dot notation narrows an expanded relation: \`owner.name\`. Comma-separated or repeated.`,
    },
    [options.omitParam]: {
      type: 'array',
      items: { type: 'string' },
      description: `Leave these fields out (${node.name}: ${fieldNames}); dot notation reaches an expanded relation. Comma-separated or repeated.`,
    },
  }
}

function responseSchema (
  node: ResourceNode,
  item: JsonSchema,
  list: boolean,
  envelope: string | undefined,
  envelopeProperties: Record<string, JsonSchema> | undefined
): JsonSchema {
  const description = list ? `A list of ${node.name}` : `One ${node.name}`
  if (!list) return { description, ...item }
  const array = { type: 'array', items: item }
  if (envelope === undefined) return { description, ...array }
  return {
    description,
    type: 'object',
    properties: { [envelope]: array, ...envelopeProperties },
    required: [envelope],
  }
}

function errorSchema (validated: boolean): JsonSchema {
  // Any expandable route may load through app.expand.load, which bounds the response size.
  const codes: string[] = [...requestErrorCodes, ...loadingErrorCodes]
  if (validated) codes.push('FST_ERR_VALIDATION')
  return {
    description: 'Invalid expand, fields or omit, a response over maxObjects, or another invalid parameter',
    type: 'object',
    properties: {
      statusCode: { type: 'integer', enum: [400] },
      code: { type: 'string', enum: codes },
      error: { type: 'string' },
      message: { type: 'string' },
    },
    required: ['statusCode', 'code', 'error', 'message'],
  }
}

function isOurs (existing: unknown, component: JsonSchema): boolean {
  return JSON.stringify(existing) === JSON.stringify(component)
}
