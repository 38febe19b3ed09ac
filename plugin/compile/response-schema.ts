import type { JsonSchema } from '../resource-graph.js'
import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'

/**
 * The JSON schema of one plan: identifiers where a relation is not expanded,
 * objects (nullable) or arrays where it is, nothing else. No unions, so
 * fast-json-stringify never needs Ajv at runtime.
 */
export function responseSchema (plan: ExpansionPlan): JsonSchema {
  const item = levelSchema(plan.root)
  if (!plan.target.list) return item
  const array: JsonSchema = { type: 'array', items: item }
  if (plan.target.envelope === undefined) return array
  // The envelope's other properties (pagination, links) pass through as they are.
  return { type: 'object', properties: { [plan.target.envelope]: array }, additionalProperties: true }
}

export function levelSchema (level: LevelPlan): JsonSchema {
  const properties: JsonSchema = {}
  for (const field of level.fields) {
    if (field.kind === 'expanded') {
      const nested = levelSchema(field.level)
      properties[field.name] = field.relation.many ? { type: 'array', items: nested } : { ...nested, nullable: true }
    } else {
      properties[field.name] = level.node.fieldSchemas.get(field.name)!
    }
  }
  // Every planned field is required unless the resource schema makes it
  // optional: the generated code then writes each key unconditionally (no
  // comma bookkeeping). The data check (data-check.ts) has made sure it is there.
  const required = level.fields.filter((field) => field.kind === 'expanded' || !level.node.optionalFields.has(field.name))
  return { type: 'object', properties, required: required.map((field) => field.name) }
}
