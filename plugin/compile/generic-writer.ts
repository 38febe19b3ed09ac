import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { covered, isPrimitiveType, type PrimitiveType } from './projection.js'
import { responseSchema } from './response-schema.js'
import type { Stringify } from './mechanisms.js'
import { typesOf } from '../graph/output-schemas.js'
import {
  acceptedBy, expectedOf, extraOf, isJsonType, isOrderedKey, kind, leave, leftToGeneratedCode, refuse, structureAcceptedBy,
  valueFormatOf, writtenBy,
} from './value-rules.js'
import { writtenFields } from './written-fields.js'

/**
 * A combination's bodies written without compiling anything: the data check
 * (data-check.ts) and the projection (projection.ts) read as they are
 * generated, walking the plan and the response schema for each body, then
 * `JSON.stringify`. Each value goes through its rule in value-rules.ts, the
 * same text the generated code inlines, compiled once there. The same bytes
 * as the compiled serializer, and the same 500 `FST_EXPAND_INVALID_DATA` with
 * the same message for data that does not fit
 * (test/compile/generic-writer.test.ts); slower per body, with nothing to
 * build first. The serializer cache writes with it past its compile rate.
 *
 * `undefined` for a response schema the projection does not cover (a union
 * or a type list in a field's schema, say): only fast-json-stringify's code
 * writes those. A body it cannot reproduce (`leftToGeneratedCode`: a bigint
 * past 2^53, a Date in a `date` field, a `toJSON`) goes to `fallback`.
 */
export function genericWriter (plan: ExpansionPlan, fallback: () => Stringify): Stringify | undefined {
  const schema = responseSchema(plan)
  if (!rootCovered(schema)) return undefined
  return (data) => {
    checkData(plan, data)
    let projected: unknown
    try {
      projected = projectRoot(schema, data)
    } catch (error) {
      if (error !== leftToGeneratedCode) throw error
      return fallback()(data)
    }
    return JSON.stringify(projected)
  }
}

// The data check, as compileDataCheck generates it.

function checkData (plan: ExpansionPlan, data: unknown): void {
  const resource = plan.target.node.qualifiedName
  if (!plan.target.list) {
    const problem = checkLevel(plan.root, '', data)
    if (problem !== undefined) refuse(resource, -1, problem)
    return
  }
  const envelope = plan.target.envelope
  if (envelope !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data))) {
    refuse(resource, -1, `the payload is ${kind(data)}, expected an object holding '${envelope}'`)
  }
  const list: unknown = envelope === undefined ? data : (data as Record<string, unknown>)[envelope]
  if (!Array.isArray(list)) {
    refuse(resource, -1, `${envelope === undefined ? 'the list is ' : `the list '${envelope}' is `}${kind(list)}, expected an array`)
  }
  for (let index = 0; index < list.length; index++) {
    const problem = checkLevel(plan.root, '', list[index])
    if (problem !== undefined) refuse(resource, index, problem)
  }
}

function checkLevel (level: LevelPlan, path: string, row: unknown): string | undefined {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    return `${path === '' ? 'the item' : `'${path.slice(0, -1)}'`} is ${kind(row)}, expected an object`
  }
  for (const field of writtenFields(level)) {
    const at = path + field.name
    const value = (row as Record<string, unknown>)[field.name]
    let problem: string | undefined
    switch (field.kind) {
      case 'scalar':
        if (value === undefined) problem = field.optional ? undefined : `'${at}' is missing`
        else problem = checkValue(field.schema, at, value)
        break
      case 'object':
        if (value === undefined) problem = `'${at}' is missing`
        else if (value !== null) problem = checkLevel(field.level, `${at}.`, value)
        break
      case 'list':
        if (!Array.isArray(value)) return `'${at}' is ${kind(value)}, expected an array of ${field.level.node.name}`
        for (const item of value) {
          problem = checkLevel(field.level, `${at}.`, item)
          if (problem !== undefined) break
        }
        break
      default:
        field satisfies never
    }
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * valueCheck's statements, run. Only schemas the projection covers reach
 * here: one type, with or without null (a type list of more, or no type, has
 * no generic writer).
 */
function checkValue (schema: JsonSchema, at: string, value: unknown): string | undefined {
  const types = typesOf(schema)
  if (!types.some((type) => accepts(schema, type, value))) {
    return `'${at}' is ${kind(value)}, expected ${expectedOf(schema, types)}`
  }
  if (types.includes('object') && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const properties = schema.properties as Record<string, JsonSchema> | undefined
    if (properties !== undefined && Object.keys(properties).length > 0) return checkObject(schema, `${at}.`, value as Record<string, unknown>)
  }
  if (types.includes('array') && Array.isArray(value)) {
    const items = schema.items as JsonSchema
    for (const item of value) {
      const problem = checkValue(items, `${at}[]`, item)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

function accepts (schema: JsonSchema, type: string, value: unknown): boolean {
  if (!isJsonType(type)) return false
  if (type === 'object' || type === 'array') return structureAcceptedBy[type](value)
  return acceptedBy[valueFormatOf(type, schema.format)](value)
}

function checkObject (schema: JsonSchema, path: string, object: Record<string, unknown>): string | undefined {
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
  for (const [property, propertySchema] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
    const value = object[property]
    if (value === undefined) {
      if (required.has(property)) return `'${path + property}' is missing`
      continue
    }
    const problem = checkValue(propertySchema, path + property, value)
    if (problem !== undefined) return problem
  }
  return undefined
}

// The projection, as compileProjection generates it.

/** Whether compileProjection would write a projection for `schema` (rootFunction's conditions). */
function rootCovered (schema: JsonSchema): boolean {
  if (schema.type === 'object' && schema.additionalProperties === true) {
    if (!covered(schema, ['properties', 'additionalProperties']) || schema.nullable === true) return false
    const properties = schema.properties as Record<string, JsonSchema> | undefined
    if (properties === undefined) return false
    const keys = Object.keys(properties)
    return keys.length === 1 && isOrderedKey(keys[0]!) && valueCovered(properties[keys[0]!]!)
  }
  return (schema.type === 'object' || schema.type === 'array') && valueCovered(schema)
}

function valueCovered (schema: JsonSchema): boolean {
  const type = schema.type
  if (type === 'object') {
    if (!covered(schema, ['properties', 'required']) || schema.additionalProperties !== undefined) return false
    const properties = schema.properties as Record<string, JsonSchema> | undefined
    if (properties === undefined || typeof properties !== 'object') return false
    const keys = Object.keys(properties)
    if (keys.length === 0 || !keys.every(isOrderedKey)) return false
    const required = Array.isArray(schema.required) ? schema.required as string[] : []
    return required.every((key) => keys.includes(key)) && keys.every((key) => valueCovered(properties[key]!))
  }
  if (type === 'array') {
    if (!covered(schema, ['items'])) return false
    const items = schema.items as JsonSchema | undefined
    return items !== undefined && typeof items === 'object' && !Array.isArray(items) && valueCovered(items)
  }
  if (!isPrimitiveType(type)) return false
  return covered(schema, type === 'string' ? ['format'] : []) && schema.format !== 'unsafe'
}

function projectRoot (schema: JsonSchema, data: unknown): unknown {
  if (schema.type !== 'object' || schema.additionalProperties !== true) return projectValue(schema, data)
  if (!isPlainObject(data)) leave()
  const object = data as Record<string, unknown>
  const properties = schema.properties as Record<string, JsonSchema>
  const key = Object.keys(properties)[0]!
  const list = object[key]
  const projected: Record<string, unknown> = { [key]: list === undefined ? undefined : projectValue(properties[key]!, list) }
  for (const name of Object.keys(object)) {
    if (name === key) continue
    const value = object[name]
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue
    projected[name] = extraOf(name, value)
  }
  return projected
}

/** valueExpression's value, for a value that is not undefined (or a required property, which is left on it). */
function projectValue (schema: JsonSchema, value: unknown): unknown {
  if (schema.nullable === true && value === null) return null
  const type = schema.type
  if (type === 'object') return projectObject(schema, value)
  if (type === 'array') {
    if (!Array.isArray(value) || (value as { toJSON?: unknown }).toJSON !== undefined) return leave()
    const items = schema.items as JsonSchema
    const projected: unknown[] = []
    for (let index = 0; index < value.length; index++) projected.push(projectValue(items, value[index]))
    return projected
  }
  // Covered: a primitive type (valueCovered).
  return writtenBy[valueFormatOf(type as PrimitiveType, schema.format)](value)
}

function projectObject (schema: JsonSchema, value: unknown): Record<string, unknown> {
  if (!isPlainObject(value)) leave()
  const object = value as Record<string, unknown>
  const properties = schema.properties as Record<string, JsonSchema>
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
  const keys = Object.keys(properties)
  const projected: Record<string, unknown> = {}
  for (const key of [...keys.filter((key) => required.has(key)), ...keys.filter((key) => !required.has(key))]) {
    const property = object[key]
    projected[key] = property === undefined && !required.has(key) ? undefined : projectValue(properties[key]!, property)
  }
  return projected
}

/** What objectSource and envelopeSource copy: an object, not an array, without `toJSON`. */
function isPlainObject (value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  return typeof (value as { toJSON?: unknown }).toJSON !== 'function'
}
