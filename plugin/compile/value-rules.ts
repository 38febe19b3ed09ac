import { dateTimeTextOf, isDateText } from '../graph/dates.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { InvalidDataError } from '../errors.js'

/**
 * The one rule of each value the plugin writes: which forms the data check
 * accepts, and what the projections hand `JSON.stringify` for them. Every
 * generator (data-check.ts, projection.ts, checked-projection.ts) inlines
 * these expressions, and the generic writer (generic-writer.ts) runs the same
 * text compiled once here, so that no two mechanisms can tell a value apart
 * differently (test/compile/value-rules.test.ts feeds the same edge values
 * through each).
 *
 * Accepted, since drivers return them (docs/guarantees.md): a safe integer, a bigint or a
 * decimal text of a safe integer for an integer (pg's int8), a decimal text
 * or a bigint of the safe range for a number (pg's numeric), 0 and 1 for a
 * boolean (SQLite), a valid Date for a `date`, `time` or `date-time`. A
 * `date-time` is a Date or text of a form dates.ts reads, a `date` a Date or
 * `YYYY-MM-DD` of the calendar. Anything else is data that does not fit: a
 * 500 `FST_EXPAND_INVALID_DATA`.
 *
 * Written: the value a projection copies is what fast-json-stringify's
 * generated code writes for it. A form accepted that the projections cannot
 * write with the same bytes (a bigint past 2^53, a Date for a `date` or
 * `time`, which fast-json-stringify writes in local time) makes them `leave()`
 * the body to the generated code; so does any form not accepted, which the
 * data check then names.
 */
export type ValueFormat = 'string' | 'date-time' | 'date' | 'time' | 'integer' | 'number' | 'boolean' | 'null'

/** The JSON schema types the plugin knows; the scalar ones by their format (`valueFormatOf`). */
export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'object' | 'array'

export interface ValueRule {
  /** How messages name what fits: 'an integer'. */
  readonly expected: string
  /** An expression of `value`, true when the data check accepts it. */
  readonly accepts: string
  /**
   * An expression of `value` (never undefined there) giving what the
   * projections copy, or calling `leave()`. Its common form is tested inline,
   * the forms drivers return go through a helper: the hot path stays plain.
   */
  readonly writes: string
}

const validDate = '(value instanceof Date && !Number.isNaN(value.getTime()))'

export const valueRules = {
  string: {
    expected: 'a string',
    accepts: "typeof value === 'string'",
    writes: "typeof value === 'string' ? value : leave()",
  },
  'date-time': {
    expected: 'a date-time',
    accepts: 'dateTimeTextOf(value) !== undefined',
    // A Date or a text of a form read, in its one written form.
    writes: 'dateTimeOf(value)',
  },
  date: {
    expected: 'a date (YYYY-MM-DD)',
    accepts: `isDateText(value) || ${validDate}`,
    writes: 'isDateText(value) ? value : leave()',
  },
  time: {
    expected: 'a string',
    accepts: `typeof value === 'string' || ${validDate}`,
    writes: "typeof value === 'string' ? value : leave()",
  },
  integer: {
    expected: 'an integer',
    // A number past 2^53 - 1 may be another integer rounded (a driver's int8): refused, never written as if exact.
    accepts: "(typeof value === 'number' ? Number.isSafeInteger(value) : typeof value === 'bigint' || isIntegerText(value))",
    writes: "typeof value === 'number' && Number.isSafeInteger(value) ? value : integerOf(value)",
  },
  number: {
    expected: 'a number',
    accepts: "(typeof value === 'number' ? Number.isFinite(value) : isNumberText(value) || " +
      "(typeof value === 'bigint' && value <= 9007199254740991n && value >= -9007199254740991n))",
    writes: "typeof value === 'number' && Number.isFinite(value) ? value : numberOf(value)",
  },
  boolean: {
    expected: 'a boolean',
    accepts: "typeof value === 'boolean' || value === 0 || value === 1",
    writes: 'value === true || value === false ? value : booleanOf(value)',
  },
  null: {
    expected: 'null',
    accepts: 'value === null',
    writes: 'value === null ? null : leave()',
  },
} as const satisfies Record<ValueFormat, ValueRule>

/**
 * Objects and arrays: the check accepts them as values and checks inside by
 * their schema; the projections copy them by their schema.
 */
export const structureRules = {
  object: {
    expected: 'an object',
    accepts: "(typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date))",
  },
  array: { expected: 'an array', accepts: 'Array.isArray(value)' },
} as const satisfies Record<Exclude<JsonType, 'string' | 'integer' | 'number' | 'boolean' | 'null'>, Omit<ValueRule, 'writes'>>

/**
 * What fast-json-stringify's type lists (`string | integer`) match, by type:
 * it picks the first type that matches strictly, so only the plain JavaScript
 * forms are accepted there.
 */
export const strictRules = {
  string: "typeof value === 'string'",
  integer: 'Number.isSafeInteger(value)',
  number: "(typeof value === 'number' && Number.isFinite(value))",
  boolean: "typeof value === 'boolean'",
  null: 'value === null',
  array: 'Array.isArray(value)',
  object: "(typeof value === 'object' && value !== null && !Array.isArray(value))",
} as const satisfies Record<JsonType, string>

export function isJsonType (type: string): type is JsonType {
  return type in strictRules
}

/** The rule of a scalar type with its format (a string's `date-time`, `date` or `time`); other formats are plain strings. */
export function valueFormatOf (type: Exclude<JsonType, 'object' | 'array'>, format: unknown): ValueFormat {
  if (type !== 'string') return type
  return format === 'date-time' || format === 'date' || format === 'time' ? format : 'string'
}

/** What a value of `schema` is, as the messages of data that does not fit say: 'an integer or null'. */
export function expectedOf (schema: JsonSchema, types: readonly string[]): string {
  return types.map((type) => {
    if (!isJsonType(type)) return type
    if (type === 'object' || type === 'array') return structureRules[type].expected
    return valueRules[valueFormatOf(type, schema.format)].expected
  }).join(' or ')
}

// The runtime helpers the generated code calls, each with its one rule.

/** Thrown by a projection for a body it leaves to fast-json-stringify's generated code (after the data check). */
export const leftToGeneratedCode: unique symbol = Symbol('left to the generated code')

export function leave (): never {
  throw leftToGeneratedCode
}

/** Data that does not fit: the 500, naming the resource, the list item and the path, never the value. */
export function refuse (resource: string, index: number, problem: string): never {
  const where = index < 0 ? resource : `${resource} list item ${index}`
  throw new InvalidDataError(`Data for ${where} does not fit the response: ${problem}`)
}

/** What a value is, without its content: bodies and logs never carry the data itself. */
export function kind (value: unknown): string {
  if (value === undefined) return 'missing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (value instanceof Date) return 'a Date'
  switch (typeof value) {
    case 'string': return 'a string'
    case 'number':
      if (Number.isSafeInteger(value)) return 'an integer'
      if (Number.isInteger(value)) return 'an integer past 2^53 - 1, which a number holds only rounded'
      return Number.isFinite(value) ? 'a fraction' : 'a non-finite number'
    case 'bigint': return 'a bigint'
    case 'boolean': return 'a boolean'
    case 'object': return 'an object'
    default: return `a ${typeof value}`
  }
}

/*
 * Driver output, not client input: pg writes an int8 or a numeric without
 * leading zeros or a bare fraction, so these are stricter than the texts a
 * filter or a cursor may hold (graph/checks.ts's integerText, numberText).
 */
const integerText = /^-?(?:0|[1-9][0-9]{0,15})$/
const numberText = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/
const safe = 9007199254740991n

/** A decimal integer in the safe range, as pg returns an int8. */
export function isIntegerText (value: unknown): boolean {
  return typeof value === 'string' && integerText.test(value) && Number.isSafeInteger(Number(value))
}

/** A decimal number, as pg returns a numeric. */
export function isNumberText (value: unknown): boolean {
  return typeof value === 'string' && numberText.test(value) && Number.isFinite(Number(value))
}

/** An integer's other accepted forms written as a number: a bigint of the safe range, an int8's text. */
export function integerOf (value: unknown): number {
  if (typeof value === 'bigint') return value <= safe && value >= -safe ? Number(value) : leave()
  return isIntegerText(value) ? Number(value) : leave()
}

/** A number's other accepted forms: a numeric's text, a bigint of the safe range. */
export function numberOf (value: unknown): number {
  if (typeof value === 'bigint') return value <= safe && value >= -safe ? Number(value) : leave()
  return isNumberText(value) ? Number(value) : leave()
}

/** SQLite's booleans. */
export function booleanOf (value: unknown): boolean {
  if (value === 0) return false
  if (value === 1) return true
  return leave()
}

/** A date-time (a Date, or text of a form read: dates.ts) as `toISOString()` writes it. */
export function dateTimeOf (value: unknown): string {
  return dateTimeTextOf(value) ?? leave()
}

/** Array-index keys come first in any object, whatever the order they were added in; `__proto__` sets the prototype. */
export function isOrderedKey (key: string): boolean {
  return !/^(?:0|[1-9][0-9]*)$/.test(key) && key !== '__proto__'
}

/**
 * An envelope property (pagination, links) as `JSON.stringify(value)` writes
 * it alone, which is how fast-json-stringify writes the envelope's other
 * properties. Nested in the projection, a `toJSON` would be called with the
 * property's name rather than '' and a bigint would throw: those bodies are
 * left to the generated code, as are names JSON.stringify would move (array
 * indexes) or that set the prototype.
 */
export function extraOf (name: string, value: unknown): unknown {
  if (!isOrderedKey(name) || typeof value === 'bigint') return leave()
  // A Date's own toJSON ignores the name it is given.
  if (value instanceof Date && value.toJSON === Date.prototype.toJSON) return value.toJSON()
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') return leave()
  return value
}

/** Everything generated code may call, by the name it calls it. */
export const runtimeHelpers = {
  kind, refuse, leave, isIntegerText, isNumberText, integerOf, numberOf, booleanOf, dateTimeOf, dateTimeTextOf, isDateText, extraOf,
} as const

type Predicate = (value: unknown) => boolean
type Write = (value: unknown) => unknown

/** Source text compiled once, with the runtime helpers in scope. */
export function compileWithHelpers (source: string): unknown {
  // eslint-disable-next-line no-new-func
  return new Function(...Object.keys(runtimeHelpers), source)(...Object.values(runtimeHelpers))
}

function compiledRules<K extends string, T> (rules: Record<K, unknown>, build: (key: K) => string): Record<K, T> {
  const compiled: Partial<Record<K, T>> = {}
  for (const key of Object.keys(rules) as K[]) compiled[key] = compileWithHelpers(`return (value) => (${build(key)})`) as T
  return compiled as Record<K, T>
}

/** The rules' expressions as functions, for the generic writer, which compiles nothing per combination. */
export const acceptedBy = compiledRules<ValueFormat, Predicate>(valueRules, (format) => valueRules[format].accepts)
export const writtenBy = compiledRules<ValueFormat, Write>(valueRules, (format) => valueRules[format].writes)
export const structureAcceptedBy =
  compiledRules<keyof typeof structureRules, Predicate>(structureRules, (type) => structureRules[type].accepts)
