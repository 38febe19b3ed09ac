import type { JsonSchema } from '../graph/resource-graph.js'

/** Keywords whose values are data, not schemas: copied as they are. */
const dataKeywords = new Set(['example', 'default', 'const', 'enum'])

/**
 * Rewrites a JSON schema for OpenAPI 3.0, which has no `null` type:
 * `type: ['integer', 'null']` becomes `type: 'integer', nullable: true`, and
 * a lone `{ type: 'null' }` the one 3.0 schema admitting only null. OpenAPI
 * 3.1 takes JSON Schema as it is. 3.0 also has no `examples` array in a
 * schema (its first item becomes `example`) and ignores the siblings of a
 * `$ref` (a described `$ref` becomes a described `allOf` of it). Route
 * schemas are converted by the documentation generator itself; components
 * added beside them are not, so they go through here.
 */
export function toOpenApi30 (schema: JsonSchema): JsonSchema {
  const converted: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && isRecord(value)) {
      converted.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, convertValue(property)]))
    } else if (key === 'examples' && Array.isArray(value)) {
      if (value.length > 0 && !Object.hasOwn(schema, 'example')) converted.example = value[0]
    } else if (dataKeywords.has(key)) {
      converted[key] = value
    } else {
      converted[key] = convertValue(value)
    }
  }
  if (typeof converted.$ref === 'string' && Object.keys(converted).length > 1) {
    const { $ref, ...siblings } = converted
    return { ...siblings, allOf: [{ $ref }] }
  }
  const type = converted.type
  if (type === 'null') return { ...converted, type: 'object', nullable: true, enum: [null] }
  if (Array.isArray(type) && type.includes('null')) {
    const others = type.filter((name) => name !== 'null')
    if (others.length === 1) return { ...converted, type: others[0], nullable: true }
    delete converted.type
    return { ...converted, anyOf: [...others.map((name) => ({ type: name })), { type: 'object', nullable: true, enum: [null] }] }
  }
  return converted
}

function convertValue (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convertValue)
  if (isRecord(value)) return toOpenApi30(value)
  return value
}

function isRecord (value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
