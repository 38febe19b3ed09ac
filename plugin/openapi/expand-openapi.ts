import { resolveOptions, type ExpandPluginOptions } from '../options.js'
import { ResourceGraph, type JsonSchema } from '../graph/resource-graph.js'
import type { ExpandableRouteOptions } from '../routes/expandable-route.js'
import { ComponentSchemas } from './component-schemas.js'
import { addComponents, componentsFor, hiddenBySwagger } from './document-components.js'
import { readDocumentationOptions, type ExpandOpenApiOptions, type SwaggerTransform } from './documentation-options.js'
import {
  describeExpandableRoute,
  type DocumentedResources,
  type ExpandableRouteDocumentation,
  type RouteDocumentationContext,
} from './route-documentation.js'
import { swaggerTransform } from './swagger-transform.js'

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
  const settings = readDocumentationOptions(documentationOptions)

  // Built on first use, as the plugin resolves references at ready(): resources may still be defined until then.
  let resources: DocumentedResources | undefined
  const current = (): DocumentedResources => {
    if (resources === undefined) {
      const graph = new ResourceGraph(pluginOptions.resources ?? [])
      const naming = {
        prefix: settings.componentPrefix,
        refBase: '#/components/schemas/',
        requiredDefaults: options.openApiRequiredDefaults,
      }
      resources = { graph, components: new ComponentSchemas(graph.nodes, naming) }
    }
    return resources
  }

  return {
    transform: swaggerTransform({
      options,
      previous: settings.transform,
      describe: (setting, route) => describeExpandableRoute(current(), options, settings, setting, route),
      addComponents: (document, documented) => addComponents(document, current().components, documented),
      hides: (schema) => hiddenBySwagger(schema, settings),
    }),
    // An application's route: what `app.expand.routes` routes carry is read by the transform from the route itself.
    describeRoute: (setting, context = {}) => describeExpandableRoute(current(), options, settings, setting, {
      validated: context.validated,
      pathParameters: context.pathParameters,
    }),
    components: (version) => componentsFor(current().components, version),
  }
}
