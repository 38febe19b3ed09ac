export { expandOpenApi, type ExpandOpenApi } from './expand-openapi.js'
export type { ExpandOpenApiOptions, SwaggerTransform, SwaggerTransformInput } from './documentation-options.js'
export type { ExpandableRouteDocumentation, RouteDocumentationContext } from './route-documentation.js'
