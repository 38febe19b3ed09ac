import { identifierDocumentation, type ResourceKey } from '../graph/identifiers.js'
import type { JsonSchema, RelationEdge } from '../graph/resource-graph.js'

/**
 * A relation's identifier schema where its target has a composite key: each
 * string the field declares is documented as that key's identifier, with the
 * pattern of its parts and a description naming them (graph/identifiers.ts),
 * in an array's items and a union's members too. Other schemas as they are.
 */
export function documentedIdentifiers (idSchema: JsonSchema, relation: RelationEdge): JsonSchema {
  const { key } = relation.target
  return key.kind === 'composite' ? withPattern(idSchema, key) : idSchema
}

function withPattern (schema: JsonSchema, key: Extract<ResourceKey, { kind: 'composite' }>): JsonSchema {
  const types = Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  if (types.includes('string')) {
    return { ...schema, ...identifierDocumentation(key) }
  }
  if (typeof schema.items === 'object' && schema.items !== null) return { ...schema, items: withPattern(schema.items as JsonSchema, key) }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: (schema.anyOf as JsonSchema[]).map((member) => withPattern(member, key)) }
  return schema
}
