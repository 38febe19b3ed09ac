import type { JsonSchema } from '../graph/resource-graph.js'
import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'
import { writtenFields, type WrittenField } from './written-fields.js'

/**
 * The JSON schema of one plan: identifiers where a relation is not expanded,
 * objects (nullable) or arrays where it is, nothing else. No unions, so
 * fast-json-stringify never needs Ajv at runtime.
 */
export function responseSchema (plan: ExpansionPlan): JsonSchema {
  const item = levelSchema(plan.root)
  if (!plan.target.list) return item
  // The envelope's other properties (pagination, links) pass through as they are.
  return listBodySchema(item, plan.target.envelope, passedThrough)
}

/** What a list body's envelope holds beside its array. */
export interface EnvelopeShape {
  /** The envelope's other properties, each with its schema. */
  readonly properties: Readonly<Record<string, JsonSchema>>
  /** What the envelope always holds: nothing declared, the array, or the array and every other property. */
  readonly required: 'none' | 'array' | 'all'
  /** Whether properties not named are admitted; undefined leaves the keyword out (admitted, by JSON Schema's default). */
  readonly additionalProperties: boolean | undefined
}

/** The serializer's envelope: the array, anything else written as it is. */
const passedThrough: EnvelopeShape = { properties: {}, required: 'none', additionalProperties: true }

/**
 * The body of a list route: the array of `item`, bare, or under `envelope`
 * in an object with the envelope's other properties. The one writer of list
 * envelopes: the serializers' (above) and the OpenAPI document's.
 */
export function listBodySchema (item: JsonSchema, envelope: string | undefined, shape: EnvelopeShape): JsonSchema {
  const array: JsonSchema = { type: 'array', items: item }
  if (envelope === undefined) return array
  const required = {
    none: {},
    array: { required: [envelope] },
    all: { required: [envelope, ...Object.keys(shape.properties)] },
  } satisfies Record<EnvelopeShape['required'], JsonSchema>
  const additional = shape.additionalProperties === undefined ? {} : { additionalProperties: shape.additionalProperties }
  return { type: 'object', properties: { [envelope]: array, ...shape.properties }, ...required[shape.required], ...additional }
}

export function levelSchema (level: LevelPlan): JsonSchema {
  const properties: JsonSchema = {}
  let hasOptional = false
  for (const field of writtenFields(level)) {
    properties[field.name] = fieldSchema(field)
    if (field.kind === 'scalar' && field.optional) hasOptional = true
  }
  // Every planned field is required, so the generated code writes each key
  // unconditionally (no comma bookkeeping); the data check (data-check.ts) has
  // made sure each is there. A level with an optional field (`Type.Optional`)
  // declares none required: fast-json-stringify writes required properties
  // first, which would move the optional one out of its declared place.
  return hasOptional ? { type: 'object', properties } : { type: 'object', properties, required: Object.keys(properties) }
}

function fieldSchema (field: WrittenField): JsonSchema {
  switch (field.kind) {
    case 'scalar': return writerSchema(field.schema)
    case 'object': return { ...levelSchema(field.level), nullable: true }
    case 'list': return { type: 'array', items: levelSchema(field.level) }
  }
}

/**
 * A field schema as fast-json-stringify should write it. A type list of one
 * type and null (`integer | null`) becomes that type, `nullable`: its generated
 * code then writes the forms the data check accepts (an int8 as text, 0/1 for
 * a boolean) as it does for the type alone, where a type list would match
 * each type strictly and throw on them.
 */
export function writerSchema (schema: JsonSchema): JsonSchema {
  let written = schema
  if (Array.isArray(schema.type)) {
    const types = schema.type as string[]
    const others = types.filter((type) => type !== 'null')
    if (others.length === 1 && types.length === 2) written = { ...schema, type: others[0], nullable: true }
  }
  if (typeof written.properties === 'object' && written.properties !== null) {
    const properties: JsonSchema = {}
    for (const [key, value] of Object.entries(written.properties as Record<string, JsonSchema>)) properties[key] = writerSchema(value)
    written = { ...written, properties }
  }
  if (typeof written.items === 'object' && written.items !== null && !Array.isArray(written.items)) {
    written = { ...written, items: writerSchema(written.items as JsonSchema) }
  }
  return written
}
