export {
  expandOpenApi,
  openApiTransform,
  type ExpandableRouteDocumentation,
  type ExpandOpenApi,
  type ExpandOpenApiOptions,
  type SwaggerTransform,
  type SwaggerTransformInput,
} from './swagger-transform.js'
