import { InvalidOptionError, messages } from '../errors.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import type { ComponentSchemas } from './component-schemas.js'
import { toOpenApi30 } from './openapi-version.js'

/** The named resource schemas built so far, in the dialect of JSON Schema the document's OpenAPI version speaks. */
export function componentsFor (components: ComponentSchemas, version = '3.1.0'): Record<string, JsonSchema> {
  const schemas = Object.fromEntries(components.schemas)
  if (!version.startsWith('3.0')) return schemas
  return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, toOpenApi30(schema)]))
}

/**
 * Adds the components to the document's `components.schemas`. A name the
 * document already holds with another schema (the application's own
 * component) is refused rather than overwritten: `componentPrefix` keeps them apart.
 */
export function addComponents (
  document: { openapi?: string; components?: { schemas?: object } },
  components: ComponentSchemas
): void {
  const documentComponents = (document.components ??= {})
  const schemas = (documentComponents.schemas ??= {}) as Record<string, unknown>
  for (const [name, component] of Object.entries(componentsFor(components, document.openapi))) {
    if (Object.hasOwn(schemas, name) && !isOurs(schemas[name], component)) {
      throw new InvalidOptionError(messages.openApiComponent(name))
    }
    schemas[name] = component
  }
}

function isOurs (existing: unknown, component: JsonSchema): boolean {
  return JSON.stringify(existing) === JSON.stringify(component)
}
