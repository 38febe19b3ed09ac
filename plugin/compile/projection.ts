import { dateTimeTextOf } from '../graph/dates.js'
import type { JsonSchema } from '../graph/resource-graph.js'

/**
 * A projection: a function compiled from the response schema fast-json-stringify
 * compiles (response-schema.ts), that copies the data into new plain objects
 * holding exactly what fast-json-stringify would write, in its key order, with
 * the values it would write (an int8 as text becomes the number, a Date the
 * ISO string, 0/1 a boolean). `JSON.stringify` of that copy is then the same
 * text as fast-json-stringify's output, and on V8 13.8+ it takes the
 * side-effect-free fast path, which writes faster than any generated code.
 *
 * A value it cannot reproduce exactly (a bigint beyond 2^53, a Date for a
 * `date` or `time` format, which fast-json-stringify writes in local time, a
 * `toJSON` method, an envelope property named like an array index) throws
 * `cannotProject`: the caller then writes that body with fast-json-stringify.
 * A schema with a part it does not cover (unions, type lists, `const`,
 * `enum`, defaults, open objects other than the list envelope) gets no
 * projection at all (`undefined`).
 *
 * The generated code names only property names of the schema, each as a JSON
 * string literal; it never sees request input.
 */
export interface Projection {
  readonly project: (data: unknown) => unknown
  readonly source: string
}

/** Thrown by a projection for a body it leaves to fast-json-stringify. */
export const cannotProject: unique symbol = Symbol('cannot project')

/** Keywords that change nothing fast-json-stringify writes once a type is given (it validates nothing). */
const annotations = new Set([
  'enum', 'title', 'description', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment',
  'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'contentEncoding', 'contentMediaType',
])

export const primitiveTypes = new Set(['string', 'integer', 'number', 'boolean'])

/** Array-index keys come first in any object, whatever the order they were added in; `__proto__` sets the prototype. */
export function isOrderedKey (key: string): boolean {
  return !/^(?:0|[1-9][0-9]*)$/.test(key) && key !== '__proto__'
}

export function compileProjection (schema: JsonSchema): Projection | undefined {
  const context: ProjectionContext = { functions: [], counter: 0 }
  const root = rootFunction(context, schema)
  if (root === undefined) return undefined
  const source = `${context.functions.join('\n')}\nreturn ${root}`
  // eslint-disable-next-line no-new-func
  const compiled = new Function('fail', 'integerOf', 'numberOf', 'dateTimeOf', 'extraOf', source)
  const project = compiled(fail, integerOf, numberOf, dateTimeOf, extraOf) as (data: unknown) => unknown
  return { project, source }
}

interface ProjectionContext {
  functions: string[]
  counter: number
}

function rootFunction (context: ProjectionContext, schema: JsonSchema): string | undefined {
  if (schema.type === 'object' && schema.additionalProperties === true) return envelopeFunction(context, schema)
  if (schema.type === 'object') return objectFunction(context, schema)
  if (schema.type === 'array') return arrayFunction(context, schema)
  return undefined
}

/** Whether a schema holds only `type`, `nullable`, annotations and the keys `allowed`. */
export function covered (schema: JsonSchema, allowed: readonly string[]): boolean {
  for (const key of Object.keys(schema)) {
    if (key === 'type' || key === 'nullable' || annotations.has(key) || allowed.includes(key)) continue
    return false
  }
  return schema.nullable === undefined || schema.nullable === true || schema.nullable === false
}

/**
 * The list envelope: `{ [envelope]: array }` open to other properties, which
 * fast-json-stringify writes after the array in `Object.keys` order, each with
 * `JSON.stringify`, leaving out undefined, functions and symbols.
 */
function envelopeFunction (context: ProjectionContext, schema: JsonSchema): string | undefined {
  if (!covered(schema, ['properties', 'additionalProperties']) || schema.nullable === true) return undefined
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties === undefined) return undefined
  const keys = Object.keys(properties)
  if (keys.length !== 1 || !isOrderedKey(keys[0]!)) return undefined
  const key = JSON.stringify(keys[0])
  const list = valueExpression(context, properties[keys[0]!]!, 'value')
  if (list === undefined) return undefined
  const name = `envelope${context.counter++}`
  context.functions.push(envelopeSource(name, key, `value === undefined ? undefined : ${list}`))
  return name
}

/**
 * The source of an envelope function `name`: a new object holding the list
 * (`listExpression` of `value`, the property as read) under `key` (a JSON
 * string literal), then the other properties as `JSON.stringify` writes them
 * alone (`extraOf`).
 */
export function envelopeSource (name: string, key: string, listExpression: string): string {
  return `function ${name} (object) {
  if (typeof object !== 'object' || object === null || Array.isArray(object) || typeof object.toJSON === 'function') fail()
  let value = object[${key}]
  const projected = { ${key}: ${listExpression} }
  for (const name of Object.keys(object)) {
    if (name === ${key}) continue
    value = object[name]
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue
    projected[name] = extraOf(name, value)
  }
  return projected
}`
}

function objectFunction (context: ProjectionContext, schema: JsonSchema): string | undefined {
  if (!covered(schema, ['properties', 'required']) || schema.additionalProperties !== undefined) return undefined
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties === undefined || typeof properties !== 'object') return undefined
  const requiredList = Array.isArray(schema.required) ? schema.required as string[] : []
  const keys = Object.keys(properties)
  if (keys.length === 0 || !keys.every(isOrderedKey)) return undefined
  // fast-json-stringify throws for a required property the schema does not declare; not covered.
  if (!requiredList.every((key) => keys.includes(key))) return undefined
  const required = new Set(requiredList)
  // fast-json-stringify writes the required properties first (a stable sort).
  const ordered = [...keys.filter((key) => required.has(key)), ...keys.filter((key) => !required.has(key))]
  const entries: string[] = []
  for (const key of ordered) {
    const expression = valueExpression(context, properties[key]!, 'value')
    if (expression === undefined) return undefined
    const read = `(value = object[${JSON.stringify(key)}])`
    // Missing and required: fast-json-stringify throws. Every expression but a
    // boolean's fails on undefined by itself, so only those test it first.
    if (!required.has(key)) entries.push(`${JSON.stringify(key)}: ${read} === undefined ? undefined : ${expression}`)
    else if (properties[key]!.type === 'boolean') entries.push(`${JSON.stringify(key)}: ${read} === undefined ? fail() : ${expression}`)
    else entries.push(`${JSON.stringify(key)}: (${read}, ${expression})`)
  }
  const name = `object${context.counter++}`
  context.functions.push(objectSource(name, entries))
  return name
}

/**
 * The source of an object function `name`: a plain object (not an array, no
 * `toJSON`) copied to a new one of `entries`, each `key: expression` reading
 * the object's properties into `value`.
 */
export function objectSource (name: string, entries: readonly string[]): string {
  return `function ${name} (object) {
  if (typeof object !== 'object' || object === null || Array.isArray(object) || typeof object.toJSON === 'function') fail()
  let value
  return {
    ${entries.join(',\n    ')}
  }
}`
}

function arrayFunction (context: ProjectionContext, schema: JsonSchema): string | undefined {
  if (!covered(schema, ['items'])) return undefined
  const items = schema.items as JsonSchema | undefined
  if (items === undefined || typeof items !== 'object' || Array.isArray(items)) return undefined
  const item = valueExpression(context, items, 'value')
  if (item === undefined) return undefined
  const name = `array${context.counter++}`
  context.functions.push(`function ${name} (array) {
  // JSON.stringify would call an Array.prototype.toJSON on the copy; fast-json-stringify never does.
  if (!Array.isArray(array) || array.toJSON !== undefined) fail()
  const length = array.length
  const projected = []
  let value
  for (let index = 0; index < length; index++) {
    value = array[index]
    projected.push(${item})
  }
  return projected
}`)
  return name
}

/** An expression of `value` giving what fast-json-stringify writes for it under `schema` (value is not undefined). */
function valueExpression (context: ProjectionContext, schema: JsonSchema, value: string): string | undefined {
  const type = schema.type
  if (typeof type !== 'string') return undefined
  let expression: string | undefined
  if (type === 'object') {
    const name = objectFunction(context, schema)
    expression = name === undefined ? undefined : `${name}(${value})`
  } else if (type === 'array') {
    const name = arrayFunction(context, schema)
    expression = name === undefined ? undefined : `${name}(${value})`
  } else if (primitiveTypes.has(type)) {
    if (!covered(schema, type === 'string' ? ['format'] : [])) return undefined
    // `unsafe` strings are written without escaping by fast-json-stringify.
    if (schema.format === 'unsafe') return undefined
    expression = primitiveExpression(type, schema.format, value)
  }
  if (expression === undefined) return undefined
  return schema.nullable === true ? `${value} === null ? null : ${expression}` : expression
}

function primitiveExpression (type: string, format: unknown, value: string): string | undefined {
  switch (type) {
    case 'string':
      // A Date in a `date` or `time` field is written in the server's local time by
      // fast-json-stringify: left to it. Strings are written as they are either way.
      // A date-time, text or Date, in its one written form (README, "Dates and times").
      if (format === 'date-time') return `dateTimeOf(${value})`
      return `typeof ${value} === 'string' ? ${value} : fail()`
    case 'integer':
      return `typeof ${value} === 'number' && Number.isInteger(${value}) ? ${value} : integerOf(${value})`
    case 'number':
      // NaN: fast-json-stringify throws where JSON.stringify writes null; numberOf leaves it to it.
      return `typeof ${value} === 'number' && ${value} === ${value} ? ${value} : numberOf(${value})`
    case 'boolean':
      // fast-json-stringify writes a boolean by truthiness.
      return `${value} === true || ${value} === false ? ${value} : !!${value}`
    default:
      return undefined
  }
}

export function fail (): never {
  throw cannotProject
}

/**
 * What fast-json-stringify writes for an integer that is not a number holding
 * an integer: a bigint as its digits (a number only in the safe range), any
 * other value truncated (Math.trunc), throwing when that is not finite.
 */
export function integerOf (value: unknown): number {
  if (typeof value === 'bigint') {
    if (value <= 9007199254740991n && value >= -9007199254740991n) return Number(value)
    return fail()
  }
  if (typeof value === 'symbol') return fail()
  const integer = Math.trunc(value as number)
  if (!Number.isFinite(integer)) return fail()
  return integer
}

/** fast-json-stringify writes `Number(value)`, null for an infinity, and throws on NaN. */
export function numberOf (value: unknown): number {
  if (typeof value === 'symbol') return fail()
  const number = Number(value)
  if (Number.isNaN(number)) return fail()
  return number
}

/**
 * A date-time (a Date, or text of a form read: dates.ts) as `toISOString()`
 * writes it, as fast-json-stringify's writer does (serializer-cache.ts);
 * anything else is left to it.
 */
export function dateTimeOf (value: unknown): string {
  return dateTimeTextOf(value) ?? fail()
}

/**
 * An envelope property as `JSON.stringify(value)` writes it alone. Nested in
 * the projection, a `toJSON` would be called with the property's name rather
 * than '' and a bigint would throw: those bodies are left to fast-json-stringify,
 * as are names JSON.stringify would move (array indexes) or that set the prototype.
 */
export function extraOf (name: string, value: unknown): unknown {
  if (!isOrderedKey(name) || typeof value === 'bigint') return fail()
  // A Date's own toJSON ignores the name it is given.
  if (value instanceof Date && value.toJSON === Date.prototype.toJSON) return value.toJSON()
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') return fail()
  return value
}
