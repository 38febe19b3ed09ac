import { InvalidDefinitionError, messages } from '../errors.js'
import { isResource, type AnyResource, type RelationDefinition, type RelationOptions, type ResourceReference } from './resource.js'

// The resources a registration reaches, and the names they go under: what the graph (resource-graph.ts) is built from.

/** A relation's definition as its reference and its options (none for a bare reference). */
export function splitDefinition (definition: RelationDefinition): [ResourceReference, RelationOptions] {
  return Array.isArray(definition) ? [definition[0], definition[1]] : [definition as ResourceReference, {}]
}

/** The resource a reference names by object or by function, the function called once here; a startup error for anything else. */
export function resolveThunk (reference: AnyResource | (() => AnyResource), context: string): AnyResource {
  if (isResource(reference)) return reference
  let resolved: unknown
  try {
    resolved = reference()
  } catch (error) {
    throw new InvalidDefinitionError(messages.referenceThrew(context, (error as Error).message))
  }
  if (!isResource(resolved)) throw new InvalidDefinitionError(messages.referenceNotResource(context))
  return resolved
}

/** The given resources and every resource they reach through object or function references. */
export function collectReachable (resources: readonly AnyResource[]): AnyResource[] {
  const found = new Set<AnyResource>()
  const visit = (resource: unknown, context: string) => {
    if (!isResource(resource)) throw new InvalidDefinitionError(messages.notAResource(context))
    if (found.has(resource)) return
    found.add(resource)
    const relations = { ...resource.expandable, ...resource.nested }
    for (const [field, definition] of Object.entries(relations)) {
      const [reference] = splitDefinition(definition as RelationDefinition)
      if (typeof reference === 'string') continue
      const fieldContext = `Resource '${resource.name}', field '${field}'`
      visit(resolveThunk(reference, fieldContext), fieldContext)
    }
  }
  resources.forEach((resource, index) => visit(resource, `resources[${index}]`))
  return [...found]
}

/** A resource's name as the registry holds it: `namespace.Name`, or the bare name. */
export function qualifiedNameOf (resource: AnyResource): string {
  return resource.namespace ? `${resource.namespace}.${resource.name}` : resource.name
}
