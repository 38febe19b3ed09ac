import { dateTimeTextOf, isDateText } from '../graph/dates.js'
import { InvalidDataError } from '../errors.js'
import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'
import type { JsonSchema } from '../graph/resource-graph.js'

/** Throws `FST_EXPAND_INVALID_DATA` when the data does not fit the plan; returns nothing otherwise. */
export type DataCheck = (data: unknown) => void

/**
 * fast-json-stringify writes what the schema says, whatever the data holds:
 * `null` in a string field becomes `""`, `1.7` in an integer field `1`,
 * `"false"` in a boolean `true`, `null` for an object `{}`. So before a body
 * is written, the data is checked against the plan by code compiled once per
 * plan (like the serializer itself), and a value that does not fit is a 500
 * naming the resource and the path, never a plausible wrong body.
 *
 * Accepted as the value they stand for, since drivers return them: a bigint
 * or a decimal string of a safe integer for an integer (pg's int8), a decimal
 * string for a number (pg's numeric), 0 and 1 for a boolean (SQLite), a valid
 * Date for a string with a date or time format. A `date-time` is a Date or
 * text of a form dates.ts reads, a `date` a Date or `YYYY-MM-DD` of the
 * calendar: anything else there is data that does not fit.
 *
 * The generated code names only paths and type descriptions taken from the
 * definitions, each as a JSON string literal; it never sees request input.
 */
export function compileDataCheck (plan: ExpansionPlan): DataCheck {
  const context: CheckContext = { functions: [], counter: 0 }
  const resource = plan.target.node.qualifiedName
  const item = levelFunction(context, plan.root, '')
  let body: string
  if (!plan.target.list) {
    body = `const problem = ${item}(data); if (problem !== undefined) fail(${JSON.stringify(resource)}, -1, problem)`
  } else {
    const envelope = plan.target.envelope
    const list = envelope === undefined ? 'data' : `data[${JSON.stringify(envelope)}]`
    const envelopeCheck = envelope === undefined
      ? ''
      : `if (typeof data !== 'object' || data === null || Array.isArray(data)) fail(${JSON.stringify(resource)}, -1, 'the payload is ' + kind(data) + ${JSON.stringify(`, expected an object holding '${envelope}'`)})\n`
    body = `${envelopeCheck}const list = ${list}
if (!Array.isArray(list)) fail(${JSON.stringify(resource)}, -1, ${JSON.stringify(envelope === undefined ? 'the list is ' : `the list '${envelope}' is `)} + kind(list) + ', expected an array')
for (let index = 0; index < list.length; index++) {
  const problem = ${item}(list[index])
  if (problem !== undefined) fail(${JSON.stringify(resource)}, index, problem)
}`
  }
  const source = `${context.functions.join('\n')}\nreturn function checkData (data) {\n${body}\n}`
  // eslint-disable-next-line no-new-func
  return new Function('kind', 'fail', 'isIntegerText', 'isNumberText', 'dateTimeTextOf', 'isDateText', source)(
    kind, fail, isIntegerText, isNumberText, dateTimeTextOf, isDateText) as DataCheck
}

interface CheckContext {
  functions: string[]
  counter: number
}

/**
 * A function checking one object of a level: `(row) => problem | undefined`.
 * `path` is the level's place in the response (`''`, `'owner.'`), a constant
 * of the generated code, so checking never builds strings unless it fails.
 */
function levelFunction (context: CheckContext, level: LevelPlan, path: string): string {
  const name = `level${context.counter++}`
  const lines = [`function ${name} (row) {`,
    `  if (typeof row !== 'object' || row === null || Array.isArray(row)) return ${JSON.stringify(path === '' ? 'the item' : `'${path.slice(0, -1)}'`)} + ' is ' + kind(row) + ', expected an object'`,
    '  let value']
  for (const field of level.fields) {
    const at = path + field.name
    const label = JSON.stringify(`'${at}'`)
    lines.push(`  value = row[${JSON.stringify(field.name)}]`)
    if (field.kind === 'expanded') {
      const nested = levelFunction(context, field.level, `${at}.`)
      if (field.relation.many) {
        lines.push(`  if (!Array.isArray(value)) return ${label} + ' is ' + kind(value) + ', expected an array of ${field.level.node.name}'`)
        lines.push(`  for (let index = 0; index < value.length; index++) { const problem = ${nested}(value[index]); if (problem !== undefined) return problem }`)
      } else {
        lines.push(`  if (value !== null) { if (value === undefined) return ${label} + ' is missing'; const problem = ${nested}(value); if (problem !== undefined) return problem }`)
      }
      continue
    }
    const optional = level.node.optionalFields.has(field.name)
    const check = valueCheck(context, level.node.fieldSchemas.get(field.name)!, at)
    lines.push(optional
      ? `  if (value !== undefined) { ${check} }`
      : `  if (value === undefined) return ${label} + ' is missing'\n  ${check}`)
  }
  lines.push('}')
  context.functions.push(lines.join('\n'))
  return name
}

/** Statements that return a problem when `value` does not fit `schema`. */
function valueCheck (context: CheckContext, schema: JsonSchema, at: string): string {
  const types = typesOf(schema)
  // A schema without a type (a free-form value, a union of objects) is written as fast-json-stringify decides.
  if (types.length === 0) return ''
  const label = JSON.stringify(`'${at}'`)
  const accepted: string[] = []
  const deeper: string[] = []
  // Several types (string | integer) are written by fast-json-stringify picking the
  // first that matches strictly, so only the plain JavaScript forms are accepted there.
  if (types.filter((type) => type !== 'null').length > 1) {
    for (const type of types) {
      if (!(type in strictChecks)) return ''
      accepted.push(strictChecks[type]!)
    }
    const expected = types.map((type) => typeNames[type] ?? type).join(' or ')
    return `if (!(${accepted.join(' || ')})) return ${label} + ' is ' + kind(value) + ', expected ${expected}'`
  }
  for (const type of types) {
    switch (type) {
      case 'string':
        accepted.push(schema.format === 'date-time'
          ? 'dateTimeTextOf(value) !== undefined'
          : schema.format === 'date'
            ? 'isDateText(value) || (value instanceof Date && !Number.isNaN(value.getTime()))'
            : schema.format === 'time'
              ? "typeof value === 'string' || (value instanceof Date && !Number.isNaN(value.getTime()))"
              : "typeof value === 'string'")
        break
      case 'integer':
        accepted.push("(typeof value === 'number' ? Number.isInteger(value) : typeof value === 'bigint' || isIntegerText(value))")
        break
      case 'number':
        accepted.push("(typeof value === 'number' ? Number.isFinite(value) : isNumberText(value) || " +
          "(typeof value === 'bigint' && value <= 9007199254740991n && value >= -9007199254740991n))")
        break
      case 'boolean':
        accepted.push("typeof value === 'boolean' || value === 0 || value === 1")
        break
      case 'null':
        accepted.push('value === null')
        break
      case 'object': {
        accepted.push("(typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date))")
        const properties = schema.properties as Record<string, JsonSchema> | undefined
        if (properties !== undefined && Object.keys(properties).length > 0) {
          deeper.push(`if (typeof value === 'object' && value !== null && !Array.isArray(value)) { const problem = ${objectFunction(context, schema, `${at}.`)}(value); if (problem !== undefined) return problem }`)
        }
        break
      }
      case 'array': {
        accepted.push('Array.isArray(value)')
        const items = schema.items as JsonSchema | undefined
        if (items !== undefined && typeof items === 'object' && typesOf(items).length > 0) {
          deeper.push(`if (Array.isArray(value)) { const problem = ${arrayFunction(context, items, `${at}[]`)}(value); if (problem !== undefined) return problem }`)
        }
        break
      }
      default:
        // An unknown type name: leave the value to fast-json-stringify.
        return ''
    }
  }
  const expected = expectedOf(schema, types)
  return [`if (!(${accepted.join(' || ')})) return ${label} + ' is ' + kind(value) + ', expected ${expected}'`, ...deeper].join('\n  ')
}

function objectFunction (context: CheckContext, schema: JsonSchema, path: string): string {
  const name = `object${context.counter++}`
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
  const lines = [`function ${name} (object) {`, '  let value']
  for (const [property, propertySchema] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
    const at = path + property
    const check = valueCheck(context, propertySchema, at)
    lines.push(`  value = object[${JSON.stringify(property)}]`)
    lines.push(required.has(property)
      ? `  if (value === undefined) return ${JSON.stringify(`'${at}'`)} + ' is missing'\n  ${check}`
      : `  if (value !== undefined) { ${check} }`)
  }
  lines.push('}')
  context.functions.push(lines.join('\n'))
  return name
}

function arrayFunction (context: CheckContext, items: JsonSchema, path: string): string {
  const name = `array${context.counter++}`
  context.functions.push(`function ${name} (array) {
  for (let index = 0; index < array.length; index++) {
    const value = array[index]
    ${valueCheck(context, items, path)}
  }
}`)
  return name
}

/** What fast-json-stringify's type lists match, by type (objects and arrays as values, unchecked inside). */
const strictChecks: Record<string, string> = {
  string: "typeof value === 'string'",
  integer: 'Number.isInteger(value)',
  number: "(typeof value === 'number' && Number.isFinite(value))",
  boolean: "typeof value === 'boolean'",
  null: 'value === null',
  array: 'Array.isArray(value)',
  object: "(typeof value === 'object' && value !== null && !Array.isArray(value))",
}

/** Strings of these formats are checked as such (README, "Dates and times"). */
const formatNames: Record<string, string> = {
  'date-time': 'a date-time',
  date: 'a date (YYYY-MM-DD)',
}

/** What a value of `schema` is, as the messages of data that does not fit say: 'an integer or null'. */
export function expectedOf (schema: JsonSchema, types: readonly string[]): string {
  const nameOf = (type: string) => (type === 'string' ? formatNames[schema.format as string] : undefined) ?? typeNames[type] ?? type
  return types.map(nameOf).join(' or ')
}

const typeNames: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  null: 'null',
  object: 'an object',
  array: 'an array',
}

export function typesOf (schema: JsonSchema): string[] {
  const types = Array.isArray(schema.type) ? [...schema.type as string[]] : typeof schema.type === 'string' ? [schema.type] : []
  if (schema.nullable === true && !types.includes('null')) types.push('null')
  return types
}

/** What a value is, without its content: bodies and logs never carry the data itself. */
export function kind (value: unknown): string {
  if (value === undefined) return 'missing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (value instanceof Date) return 'a Date'
  switch (typeof value) {
    case 'string': return 'a string'
    case 'number': return Number.isInteger(value) ? 'an integer' : Number.isFinite(value) ? 'a fraction' : 'a non-finite number'
    case 'bigint': return 'a bigint'
    case 'boolean': return 'a boolean'
    case 'object': return 'an object'
    default: return `a ${typeof value}`
  }
}

export function fail (resource: string, index: number, problem: string): never {
  const where = index < 0 ? resource : `${resource} list item ${index}`
  throw new InvalidDataError(`Data for ${where} does not fit the response: ${problem}`)
}

const integerText = /^-?(?:0|[1-9][0-9]{0,15})$/
const numberText = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/

/** A decimal integer in the safe range, as pg returns an int8. */
export function isIntegerText (value: unknown): boolean {
  return typeof value === 'string' && integerText.test(value) && Number.isSafeInteger(Number(value))
}

/** A decimal number, as pg returns a numeric. */
export function isNumberText (value: unknown): boolean {
  return typeof value === 'string' && numberText.test(value) && Number.isFinite(Number(value))
}
