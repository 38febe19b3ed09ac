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
 * Adds to the document's `components.schemas` the components `documented`
 * (a route's documented schema) refers to, and those they refer to: one
 * transform may serve several documents (two @fastify/swagger instances in
 * sibling contexts), each of which names only what its own routes use. A
 * name the document already holds with another schema (the application's
 * own component) is refused rather than overwritten: `componentPrefix`
 * keeps them apart.
 */
export function addComponents (
  document: { openapi?: string; components?: { schemas?: object } },
  components: ComponentSchemas,
  documented: unknown
): void {
  const documentComponents = (document.components ??= {})
  const schemas = (documentComponents.schemas ??= {}) as Record<string, unknown>
  const all = componentsFor(components, document.openapi)
  for (const name of referencedComponents(documented, all, components.refBase)) {
    const component = all[name]!
    if (Object.hasOwn(schemas, name) && !isOurs(schemas[name], component)) {
      throw new InvalidOptionError(messages.openApiComponent(name))
    }
    schemas[name] = component
  }
}

/** The names of the components `from` refers to through `refBase`, and of those they refer to, in the order met. */
function referencedComponents (from: unknown, all: Readonly<Record<string, JsonSchema>>, refBase: string): string[] {
  const met = new Set<string>()
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    if (typeof value !== 'object' || value === null) return
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(refBase)) {
        const name = inner.slice(refBase.length)
        if (Object.hasOwn(all, name) && !met.has(name)) {
          met.add(name)
          visit(all[name])
        }
      } else {
        visit(inner)
      }
    }
  }
  visit(from)
  return [...met]
}

/** Whether @fastify/swagger leaves a route with this schema out of its document, as its `shouldRouteHide` decides. */
export function hiddenBySwagger (
  schema: Readonly<Record<string, unknown>>, hiding: { readonly hiddenTag: string; readonly hideUntagged: boolean }
): boolean {
  // Any truthy `hide`, as @fastify/swagger reads it.
  if (schema.hide) return true
  const tags = Array.isArray(schema.tags) ? schema.tags : []
  return (tags.length === 0 && hiding.hideUntagged) || tags.includes(hiding.hiddenTag)
}

function isOurs (existing: unknown, component: JsonSchema): boolean {
  return JSON.stringify(existing) === JSON.stringify(component)
}
