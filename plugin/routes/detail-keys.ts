import { identifierDocumentation, partsOf, type ResourceKey } from '../graph/identifiers.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import type { AnySelect } from '../sql/selection.js'

// The generated routes' key: one column, or a composite key's columns, found by its identifier (graph/identifiers.ts).

/** The `:id` parameter of a resource with a composite key: its identifier, a string of the parts' pattern. */
export function compositeIdSchema (key: Extract<ResourceKey, { kind: 'composite' }>): JsonSchema {
  return { type: 'string', ...identifierDocumentation(key) }
}

/** The values `:id` binds, one per key column: a composite identifier's parts. */
export function keyValues (key: ResourceKey, id: unknown): readonly unknown[] {
  if (key.kind === 'single') return [id]
  // The route's parameter reader (parse/route-parameters.ts) answered 400 to an identifier that does not parse.
  return partsOf(String(id), key.types)!
}

/** `query` where each key column holds its value. */
export function whereKey (query: AnySelect, columns: readonly string[], values: readonly unknown[]): AnySelect {
  let found = query
  for (const [index, column] of columns.entries()) found = found.where(column, '=', values[index])
  return found
}

/** `query` in key order: each key column, ascending. */
export function orderedByKey (query: AnySelect, columns: readonly string[]): AnySelect {
  let ordered = query
  for (const column of columns) ordered = ordered.orderBy(column)
  return ordered
}
