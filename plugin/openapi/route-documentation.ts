import type { ResolvedOptions } from '../options.js'
import { permittedPaths } from '../plan/permitted.js'
import type { JsonSchema, ResourceGraph } from '../graph/resource-graph.js'
import type { AnyResource } from '../graph/resource.js'
import type { ExpandableRouteOptions } from '../routes/expandable-route.js'
import { readExpandedLists } from '../routes/expanded-list-declarations.js'
import { expandedListParameters } from '../routes/expanded-list-parameters.js'
import { InvalidOptionError } from '../errors.js'
import type { GeneratedRoute } from '../routes/generated-route.js'
import type { ComponentSchemas } from './component-schemas.js'
import { restrictedLevelSchema } from './level-schemas.js'
import type { DocumentationSettings } from './documentation-options.js'
import { errorResponses, type ErrorResponses } from './error-responses.js'
import { enumerateExpansionPaths } from './expansion-paths.js'
import { expansionParameters } from './expansion-parameters.js'
import { successBody } from './success-bodies.js'

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
  response: { 200: JsonSchema } & ErrorResponses
  /**
   * Where the route opted in to `openApiRequiredDefaults`: what `required`
   * means in its response schema, for the route's description.
   */
  description?: string
}

/** What `describeRoute` needs to know of an application's route beyond its `expandable` setting. */
export interface RouteDocumentationContext {
  /** The route validates some part of the request (Fastify's 400 `FST_ERR_VALIDATION`). */
  validated?: boolean
  /** The route's URL has path parameters (Fastify's 414 `FST_ERR_MAX_PARAM_LENGTH`). */
  pathParameters?: boolean
}

/** What the transform knows of a route: the context, and the description an `app.expand.routes` route carries. */
export interface DocumentedRoute extends RouteDocumentationContext {
  generated?: GeneratedRoute
}

/** The resources the documentation describes: their graph and the components built so far. */
export interface DocumentedResources {
  readonly graph: ResourceGraph
  readonly components: ComponentSchemas
}

/** The route's `expand`/`fields`/`omit` parameters and its responses, from its setting and what the route carries. */
export function describeExpandableRoute (
  resources: DocumentedResources,
  options: ResolvedOptions,
  settings: DocumentationSettings,
  setting: ExpandableRouteOptions,
  route: DocumentedRoute
): ExpandableRouteDocumentation {
  const { graph, components } = resources
  const node = graph.node(setting.resource as AnyResource | string, 'expandOpenApi')
  const list = setting.list === true
  // permitExpands restricts any route; permitListExpands list routes only.
  const permittedList = setting.permitExpands ?? (list ? setting.permitListExpands : undefined)
  const permitted = permittedList === undefined ? undefined : permittedPaths(permittedList)
  const refuse = (message: string): never => { throw new InvalidOptionError(message) }
  const expandedLists = readExpandedLists(node, setting.expandedLists, 'expandOpenApi', refuse)
  const maxDepth = node.maxDepth ?? options.maxDepth
  // A restricted route's paths are few: enumerated whole, they are exactly what it may expand.
  const enumeration = enumerateExpansionPaths(node, {
    maxDepth,
    allowRecursive: options.allowRecursive,
    permitted,
    limit: permitted === undefined ? settings.maxEnumeratedPaths : Number.MAX_SAFE_INTEGER,
  })
  const requestable = new Set(enumeration.paths)
  const requiredDefaults = setting.openApiRequiredDefaults ?? options.openApiRequiredDefaults
  const item = permitted === undefined
    ? components.root(node, requiredDefaults)
    : restrictedLevelSchema(node, (path) => requestable.has(path), requiredDefaults)
  const generated = route.generated
  const response = {
    200: successBody(node, item, { list, envelope: setting.envelope }, generated, settings.envelopeProperties),
    ...errorResponses(node, {
      validated: route.validated === true,
      pathParameters: route.pathParameters === true,
      generated,
      expandedLists: expandedLists !== undefined,
    }),
  }
  const querystring = expansionParameters({
    node,
    enumeration,
    restricted: permitted !== undefined,
    list,
    maxDepth,
    // The relations this route can show at the top level: every one, or on a restricted list the permitted ones.
    showable: (field) => permitted === undefined || requestable.has(field),
    defaultExpand: setting.defaultExpand,
    requiredDefaults,
  }, options)
  if (expandedLists !== undefined) Object.assign(querystring, expandedListParameters(expandedLists))
  return { querystring, response, ...(requiredDefaults ? { description: requiredDefaultsNote } : {}) }
}

/** The route description's note where the default response is typed as required. */
const requiredDefaultsNote = 'The response schema types the default response (openApiRequiredDefaults): ' +
  'its `required` fields are those of a response without `fields` or `omit`; a response with them holds only the fields asked for.'
