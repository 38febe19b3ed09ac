import type { JsonSchema } from '../graph/resource-graph.js'

/*
 * Example values for documentation. Documentation tools invent an example
 * when a schema has none, and on the resource graph they invent nonsense: a
 * `$ref` left unresolved on a cycle (Pet -> visits -> pet -> Pet) is sampled
 * as "string", so Swagger UI showed `"pet": "string"` for a field that is an
 * id or a Pet. Every resource level therefore carries an example of its
 * default response, built here from the field schemas: a value the schema
 * admits, or none at all when this cannot tell (a `pattern`, an unknown
 * `format`, a `oneOf`), never a guess.
 */

const stringFormats: Readonly<Record<string, string>> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  iri: 'https://example.com/',
  'uri-reference': '/',
  'iri-reference': '/',
  uuid: '00000000-0000-4000-8000-000000000000',
  byte: 'c3RyaW5n',
  binary: 'string',
  password: 'string',
  regex: '.*',
}

const annotationKeys = new Set(['title', 'description', '$comment', 'deprecated', 'readOnly', 'writeOnly'])

/** A value `schema` admits (the schema's own example, default or first enum value first), or undefined. */
export function exampleValue (schema: JsonSchema, depth = 0): unknown {
  if (depth > 16) return undefined
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if (Object.hasOwn(schema, 'example')) return schema.example
  if (Object.hasOwn(schema, 'const')) return schema.const
  if (Object.hasOwn(schema, 'default')) return schema.default
  if (Array.isArray(schema.enum)) return schema.enum.length > 0 ? schema.enum[0] : undefined
  // A value may match several members of a oneOf, which then refuses it; $ref, allOf and not are not followed.
  if (['oneOf', '$ref', 'allOf', 'not', 'if', 'patternProperties'].some((key) => Object.hasOwn(schema, key))) return undefined
  if (Array.isArray(schema.anyOf)) {
    let fallback: unknown
    for (const member of schema.anyOf as JsonSchema[]) {
      const value = exampleValue(member, depth + 1)
      if (value !== undefined && value !== null) return value
      if (value === null) fallback = null
    }
    return fallback
  }
  const types = Array.isArray(schema.type) ? schema.type as string[] : typeof schema.type === 'string' ? [schema.type] : []
  const type = types.find((name) => name !== 'null') ?? (types.length > 0 ? 'null' : undefined)
  switch (type) {
    case undefined: return Object.keys(schema).every((key) => annotationKeys.has(key)) ? null : undefined
    case 'null': return null
    case 'boolean': return true
    case 'integer': return numberExample(schema, true)
    case 'number': return numberExample(schema, false)
    case 'string': return stringExample(schema)
    case 'array': return arrayExample(schema, depth)
    case 'object': return objectExample(schema, depth)
    default: return undefined
  }
}

function numberExample (schema: JsonSchema, integer: boolean): number | undefined {
  const bound = (key: string) => (typeof schema[key] === 'number' ? schema[key] as number : undefined)
  const minimum = bound('minimum')
  const maximum = bound('maximum')
  const exclusiveMinimum = bound('exclusiveMinimum')
  const exclusiveMaximum = bound('exclusiveMaximum')
  const multipleOf = bound('multipleOf')
  const fits = (value: number) => Number.isFinite(value) &&
    (!integer || Number.isInteger(value)) &&
    (minimum === undefined || value >= minimum) && (maximum === undefined || value <= maximum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) && (exclusiveMaximum === undefined || value < exclusiveMaximum) &&
    (multipleOf === undefined || multipleOf <= 0 || Number.isInteger(value / multipleOf))
  const low = exclusiveMinimum ?? minimum
  const high = exclusiveMaximum ?? maximum
  const candidates = [0]
  for (const edge of [low, high]) {
    if (edge === undefined) continue
    candidates.push(edge, Math.ceil(edge), Math.floor(edge), Math.floor(edge) + 1, Math.ceil(edge) - 1)
    if (multipleOf !== undefined && multipleOf > 0) {
      candidates.push(Math.ceil(edge / multipleOf) * multipleOf, Math.floor(edge / multipleOf) * multipleOf)
    }
  }
  if (low !== undefined && high !== undefined) candidates.push((low + high) / 2)
  return candidates.find(fits)
}

function stringExample (schema: JsonSchema): string | undefined {
  const format = typeof schema.format === 'string' ? schema.format : undefined
  let value = format === undefined ? 'string' : stringFormats[format]
  if (value === undefined) return undefined
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity
  if (format === undefined) {
    if (value.length < minLength) value = value.padEnd(minLength, 'x')
    if (value.length > maxLength) value = value.slice(0, maxLength)
  }
  if ([...value].length < minLength || [...value].length > maxLength) return undefined
  if (typeof schema.pattern === 'string') {
    try {
      if (!new RegExp(schema.pattern, 'u').test(value)) return undefined
    } catch {
      return undefined
    }
  }
  return value
}

function arrayExample (schema: JsonSchema, depth: number): unknown[] | undefined {
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity
  const items = schema.items
  const item = typeof items === 'object' && items !== null && !Array.isArray(items)
    ? exampleValue(items as JsonSchema, depth + 1)
    : undefined
  if (item === undefined || maxItems < 1 || Object.hasOwn(schema, 'prefixItems') || Object.hasOwn(schema, 'contains')) {
    return minItems === 0 ? [] : undefined
  }
  if (minItems > 1 && schema.uniqueItems === true) return undefined
  return Array.from({ length: Math.max(1, minItems) }, () => item)
}

function objectExample (schema: JsonSchema, depth: number): Record<string, unknown> | undefined {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
  const example: Record<string, unknown> = {}
  for (const [name, property] of Object.entries(properties)) {
    const value = exampleValue(property, depth + 1)
    if (value !== undefined) example[name] = value
    else if (required.has(name)) return undefined
  }
  for (const name of required) if (!Object.hasOwn(example, name)) return undefined
  return example
}
