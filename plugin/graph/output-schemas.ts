import type { JsonSchema, SourceSchema } from './resource-graph.js'

const annotationKeys = new Set(['type', 'format', 'description', 'title', 'examples', 'default'])

/**
 * The JSON schema a field is written with. TypeBox's symbols are dropped and
 * unions of plain types become a type list, so fast-json-stringify never
 * falls back to its slow anyOf path (fast-json-stringify validates anyOf with Ajv at runtime).
 */
export function toOutputSchema (schema: SourceSchema): JsonSchema {
  return simplify(JSON.parse(JSON.stringify(schema)) as JsonSchema)
}

function simplify (schema: JsonSchema): JsonSchema {
  if (schema.type === 'Date') return { type: 'string', format: 'date-time' }
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined
  const bareType = (member: { type?: unknown }) =>
    typeof member.type === 'string' && Object.keys(member).every((key) => annotationKeys.has(key))
  if (Array.isArray(union) && union.every(bareType)) {
    const types = [...new Set(union.map((member) => (member.type === 'Date' ? 'string' : member.type) as string))]
    const formats = [...new Set(union.map((member) => (member.type === 'Date' ? 'date-time' : member.format)).filter(Boolean))]
    const simple: JsonSchema = { type: types.length === 1 ? types[0] : types }
    if (formats.length === 1) simple.format = formats[0]
    return simple
  }
  if (schema.type === 'object' && typeof schema.properties === 'object' && schema.properties !== null) {
    const properties: JsonSchema = {}
    for (const [key, value] of Object.entries(schema.properties as Record<string, JsonSchema>)) properties[key] = simplify(value)
    return { ...schema, properties }
  }
  if (schema.type === 'array' && typeof schema.items === 'object' && schema.items !== null) {
    return { ...schema, items: simplify(schema.items as JsonSchema) }
  }
  return schema
}

/** The types of a schema, `nullable` as 'null'. */
export function typesOf (schema: JsonSchema): string[] {
  const types = Array.isArray(schema.type) ? [...schema.type as string[]] : typeof schema.type === 'string' ? [schema.type] : []
  if (schema.nullable === true && !types.includes('null')) types.push('null')
  return types
}
