import { isDateText } from '../graph/dates.js'
import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { covered, dateTimeOf, envelopeSource, extraOf, fail, isOrderedKey, objectSource, type Projection } from './projection.js'
import { isIntegerText, isNumberText } from './data-check.js'
import { writerSchema } from './response-schema.js'

/**
 * The data check and the projection in one pass: a function compiled from a
 * plan that copies a body into the response's shape (as projection.ts does)
 * while it checks it (as data-check.ts does), so that a list is read once
 * instead of twice before `JSON.stringify`.
 *
 * It takes only what both passes would take unchanged or convert the same
 * way: every field the check requires present, each value in a form the check
 * accepts and the projection writes (a number holding an integer, a bigint or
 * an int8's text in the safe range for an integer; a finite number or a
 * numeric's text for a number; true, false, 0 or 1 for a boolean; a string,
 * or a valid Date for a `date-time`; null where the field is nullable). On
 * anything else it throws `cannotProject`, and the caller runs the two passes
 * as they are: the check then names what does not fit, or the projection (or
 * fast-json-stringify behind it) writes what the check accepts in a rarer
 * form (a bigint past 2^53, a Date for a `date` or `time`). Where it writes,
 * the bytes are those of the two passes (test/compile/checked-projection.test.ts).
 *
 * Combinations with a field it does not cover (an object or type list in a
 * field's schema, or anything the projection itself leaves out) get none
 * (`undefined`): their bodies go through the two passes.
 *
 * The generated code names only field names, each as a JSON string literal;
 * it never sees request input.
 */
export function compileCheckedProjection (plan: ExpansionPlan): Projection | undefined {
  const context: CheckedContext = { functions: [], counter: 0, lists: new Map() }
  const item = levelFunction(context, plan.root)
  if (item === undefined) return undefined
  let root = item
  const envelope = plan.target.envelope
  if (plan.target.list) {
    if (envelope !== undefined && !isOrderedKey(envelope)) return undefined
    const list = listExpression(context, `${item}(value)`)
    root = `root${context.counter++}`
    context.functions.push(envelope === undefined
      ? `function ${root} (value) {\n  return ${list}\n}`
      : envelopeSource(root, JSON.stringify(envelope), list))
  }
  const source = `${context.functions.join('\n')}\nreturn ${root}`
  // eslint-disable-next-line no-new-func
  const compiled = new Function('fail', 'integerOf', 'numberOf', 'booleanOf', 'dateTimeOf', 'isDateText', 'extraOf', source)
  const project = compiled(fail, integerOf, numberOf, booleanOf, dateTimeOf, isDateText, extraOf) as (data: unknown) => unknown
  return { project, source }
}

interface CheckedContext {
  functions: string[]
  counter: number
  /** The function copying a list, by the expression of its items. */
  lists: Map<string, string>
}

/** A function copying one object of a level, checked: `(object) => copy`, throwing `cannotProject` otherwise. */
function levelFunction (context: CheckedContext, level: LevelPlan): string | undefined {
  const entries: string[] = []
  for (const field of level.fields) {
    // JSON.stringify writes array-index keys first; `__proto__` in a literal sets the prototype.
    if (!isOrderedKey(field.name)) return undefined
    const key = JSON.stringify(field.name)
    const read = `(value = object[${key}])`
    if (field.kind === 'expanded') {
      const nested = levelFunction(context, field.level)
      if (nested === undefined) return undefined
      entries.push(field.relation.many
        ? `${key}: (${read}, ${listExpression(context, `${nested}(value)`)})`
        // A missing to-one object fails in the nested function (it is not an object).
        : `${key}: ${read} === null ? null : ${nested}(value)`)
      continue
    }
    const expression = valueExpression(context, writerSchema(level.node.fieldSchemas.get(field.name)!))
    if (expression === undefined) return undefined
    entries.push(level.node.optionalFields.has(field.name)
      ? `${key}: ${read} === undefined ? undefined : ${expression}`
      : `${key}: (${read}, ${expression})`)
  }
  const name = `level${context.counter++}`
  context.functions.push(objectSource(name, entries))
  return name
}

/**
 * An expression of `value` copying it as a list of `item` (an expression of
 * `value` for each element): an array with no `toJSON` (JSON.stringify would
 * call it on the copy), else `cannotProject`. One function per item, made once.
 */
function listExpression (context: CheckedContext, item: string): string {
  let name = context.lists.get(item)
  if (name === undefined) {
    name = `list${context.counter++}`
    context.lists.set(item, name)
    context.functions.push(`function ${name} (list) {
  const length = list.length
  const copy = new Array(length)
  let value
  for (let index = 0; index < length; index++) {
    value = list[index]
    copy[index] = ${item}
  }
  return copy
}`)
  }
  return `Array.isArray(value) && value.toJSON === undefined ? ${name}(value) : fail()`
}

/** An expression of `value` (never undefined here) for a field schema as written, or undefined when not covered. */
function valueExpression (context: CheckedContext, schema: JsonSchema): string | undefined {
  let expression: string | undefined
  if (schema.type === 'array') {
    const items = schema.items as JsonSchema | undefined
    if (!covered(schema, ['items']) || items === undefined || typeof items !== 'object' || Array.isArray(items)) return undefined
    const item = valueExpression(context, items)
    if (item === undefined) return undefined
    expression = listExpression(context, item)
  } else {
    if (!covered(schema, schema.type === 'string' ? ['format'] : []) || schema.format === 'unsafe') return undefined
    expression = primitiveExpression(schema.type as string, schema.format)
    if (expression === undefined) return undefined
  }
  return schema.nullable === true ? `value === null ? null : ${expression}` : expression
}

/** The common form inline; the forms drivers return (int8 text, bigint, 0/1, Date) through a helper. */
function primitiveExpression (type: string, format: unknown): string | undefined {
  switch (type) {
    case 'string':
      // A Date for a `date` or `time` is the server's local time in fast-json-stringify: left to the two passes.
      if (format === 'date-time') return 'dateTimeOf(value)'
      return format === 'date' ? 'isDateText(value) ? value : fail()' : "typeof value === 'string' ? value : fail()"
    case 'integer':
      return "typeof value === 'number' ? (Number.isInteger(value) ? value : fail()) : integerOf(value)"
    case 'number':
      return "typeof value === 'number' ? (Number.isFinite(value) ? value : fail()) : numberOf(value)"
    case 'boolean':
      return 'value === true || value === false ? value : booleanOf(value)'
    default:
      return undefined
  }
}

const safe = 9007199254740991n

/** An integer's other forms the data check accepts and the projection writes as a number: a bigint, an int8's text. */
function integerOf (value: unknown): number {
  if (typeof value === 'bigint') return value <= safe && value >= -safe ? Number(value) : fail()
  return isIntegerText(value) ? Number(value) : fail()
}

/** A number's other forms: a numeric's text, a bigint in the safe range. */
function numberOf (value: unknown): number {
  if (typeof value === 'bigint') return value <= safe && value >= -safe ? Number(value) : fail()
  return isNumberText(value) ? Number(value) : fail()
}

/** SQLite's booleans. */
function booleanOf (value: unknown): boolean {
  if (value === 0) return false
  if (value === 1) return true
  return fail()
}
