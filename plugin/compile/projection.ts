import type { JsonSchema } from '../graph/resource-graph.js'
import { GeneratorContext } from './generator-context.js'
import { isOrderedKey, valueFormatOf, valueRules } from './value-rules.js'

/**
 * A projection: a function compiled from the response schema fast-json-stringify
 * compiles (response-schema.ts), that copies the data into new plain objects
 * holding exactly what fast-json-stringify would write, in its key order, with
 * the values it would write (an int8 as text becomes the number, a Date the
 * ISO string, 0/1 a boolean). `JSON.stringify` of that copy is then the same
 * text as fast-json-stringify's output, and on V8 13.8+ it takes the
 * side-effect-free fast path, which writes faster than any generated code.
 *
 * Each value is copied by its rule in value-rules.ts. A value it cannot
 * reproduce exactly (a form the rule does not accept, a bigint beyond 2^53,
 * a Date for a `date` or `time` format, which fast-json-stringify writes in
 * local time, a `toJSON` method, an envelope property named like an array
 * index) throws `leftToGeneratedCode`: the caller then writes that body with
 * fast-json-stringify, so the bytes are its own for any data. Since what it
 * copies is only what the data check accepts, no body it writes is one the
 * check would refuse.
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

/** Keywords that change nothing fast-json-stringify writes once a type is given (it validates nothing). */
const annotations = new Set([
  'enum', 'title', 'description', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment',
  'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'contentEncoding', 'contentMediaType',
])

export type PrimitiveType = 'string' | 'integer' | 'number' | 'boolean'

export function isPrimitiveType (type: unknown): type is PrimitiveType {
  return type === 'string' || type === 'integer' || type === 'number' || type === 'boolean'
}

export function compileProjection (schema: JsonSchema): Projection | undefined {
  const context = new GeneratorContext()
  const root = rootFunction(context, schema)
  if (root === undefined) return undefined
  const { compiled, source } = context.compile<(data: unknown) => unknown>(`return ${root}`)
  return { project: compiled, source }
}

function rootFunction (context: GeneratorContext, schema: JsonSchema): string | undefined {
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
function envelopeFunction (context: GeneratorContext, schema: JsonSchema): string | undefined {
  if (!covered(schema, ['properties', 'additionalProperties']) || schema.nullable === true) return undefined
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties === undefined) return undefined
  const keys = Object.keys(properties)
  if (keys.length !== 1 || !isOrderedKey(keys[0]!)) return undefined
  const key = JSON.stringify(keys[0])
  const list = valueExpression(context, properties[keys[0]!]!)
  if (list === undefined) return undefined
  return context.define('envelope', (name) => envelopeSource(name, key, `value === undefined ? undefined : ${list}`))
}

/**
 * The source of an envelope function `name`: a new object holding the list
 * (`listExpression` of `value`, the property as read) under `key` (a JSON
 * string literal), then the other properties as `JSON.stringify` writes them
 * alone (`extraOf`).
 */
export function envelopeSource (name: string, key: string, listExpression: string): string {
  return `function ${name} (object) {
  if (typeof object !== 'object' || object === null || Array.isArray(object) || typeof object.toJSON === 'function') leave()
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

function objectFunction (context: GeneratorContext, schema: JsonSchema): string | undefined {
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
    const expression = valueExpression(context, properties[key]!)
    if (expression === undefined) return undefined
    const read = `(value = object[${JSON.stringify(key)}])`
    // Missing and required: fast-json-stringify throws. Every expression leaves undefined to it by itself.
    entries.push(required.has(key)
      ? `${JSON.stringify(key)}: (${read}, ${expression})`
      : `${JSON.stringify(key)}: ${read} === undefined ? undefined : ${expression}`)
  }
  return context.define('object', (name) => objectSource(name, entries))
}

/**
 * The source of an object function `name`: a plain object (not an array, no
 * `toJSON`) copied to a new one of `entries`, each `key: expression` reading
 * the object's properties into `value`.
 */
export function objectSource (name: string, entries: readonly string[]): string {
  return `function ${name} (object) {
  if (typeof object !== 'object' || object === null || Array.isArray(object) || typeof object.toJSON === 'function') leave()
  let value
  return {
    ${entries.join(',\n    ')}
  }
}`
}

function arrayFunction (context: GeneratorContext, schema: JsonSchema): string | undefined {
  if (!covered(schema, ['items'])) return undefined
  const items = schema.items as JsonSchema | undefined
  if (items === undefined || typeof items !== 'object' || Array.isArray(items)) return undefined
  const item = valueExpression(context, items)
  if (item === undefined) return undefined
  return context.define('array', (name) => `function ${name} (array) {
  // JSON.stringify would call an Array.prototype.toJSON on the copy; fast-json-stringify never does.
  if (!Array.isArray(array) || array.toJSON !== undefined) leave()
  const length = array.length
  const projected = []
  let value
  for (let index = 0; index < length; index++) {
    value = array[index]
    projected.push(${item})
  }
  return projected
}`)
}

/** An expression of `value` giving what fast-json-stringify writes for it under `schema` (value is not undefined). */
function valueExpression (context: GeneratorContext, schema: JsonSchema): string | undefined {
  const type = schema.type
  let expression: string | undefined
  if (type === 'object') {
    const name = objectFunction(context, schema)
    expression = name === undefined ? undefined : `${name}(value)`
  } else if (type === 'array') {
    const name = arrayFunction(context, schema)
    expression = name === undefined ? undefined : `${name}(value)`
  } else {
    expression = scalarExpression(schema)
  }
  if (expression === undefined) return undefined
  return schema.nullable === true ? `value === null ? null : ${expression}` : expression
}

/** The rule's written form of a scalar schema (value-rules.ts), or undefined when the schema is not one the projections cover. */
export function scalarExpression (schema: JsonSchema): string | undefined {
  const type = schema.type
  if (!isPrimitiveType(type) || !covered(schema, type === 'string' ? ['format'] : [])) return undefined
  // `unsafe` strings are written without escaping by fast-json-stringify.
  if (schema.format === 'unsafe') return undefined
  return valueRules[valueFormatOf(type, schema.format)].writes
}
