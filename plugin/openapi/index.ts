export {
  expandOpenApi,
  openApiTransform,
  type ExpandableRouteDocumentation,
  type ExpandOpenApi,
  type ExpandOpenApiOptions,
  type RouteDocumentationContext,
  type SwaggerTransform,
  type SwaggerTransformInput,
} from './swagger-transform.js'
