import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { GeneratorContext } from './generator-context.js'
import { covered, envelopeSource, objectSource, scalarExpression, type Projection } from './projection.js'
import { writerSchema } from './response-schema.js'
import { isOrderedKey } from './value-rules.js'
import { writtenFields, type WrittenField } from './written-fields.js'

/**
 * The data check and the projection in one pass: a function compiled from a
 * plan that copies a body into the response's shape (as projection.ts does)
 * while it checks it (as data-check.ts does), so that a list is read once
 * instead of twice before `JSON.stringify`.
 *
 * Each value is copied by its rule in value-rules.ts, which copies only forms
 * the check accepts; every field the check requires must be present. On
 * anything else it throws `leftToGeneratedCode`, and the caller runs the two
 * passes as they are: the check then names what does not fit, or the
 * generated code writes what the check accepts in a rarer form (a bigint
 * past 2^53, a Date for a `date` or `time`). Where it writes, the bytes are
 * those of the two passes (test/compile/checked-projection.test.ts).
 *
 * Combinations with a field it does not cover (an object or type list in a
 * field's schema, or anything the projection itself leaves out) get none
 * (`undefined`): their bodies go through the two passes.
 *
 * The generated code names only field names, each as a JSON string literal;
 * it never sees request input.
 */
export function compileCheckedProjection (plan: ExpansionPlan): Projection | undefined {
  const context = new GeneratorContext()
  const item = levelFunction(context, plan.root)
  if (item === undefined) return undefined
  let root = item
  const envelope = plan.target.envelope
  if (plan.target.list) {
    if (envelope !== undefined && !isOrderedKey(envelope)) return undefined
    const list = listExpression(context, `${item}(value)`)
    root = context.define('root', (name) => envelope === undefined
      ? `function ${name} (value) {\n  return ${list}\n}`
      : envelopeSource(name, JSON.stringify(envelope), list))
  }
  const { compiled, source } = context.compile<(data: unknown) => unknown>(`return ${root}`)
  return { project: compiled, source }
}

/** A function copying one object of a level, checked: `(object) => copy`, throwing `leftToGeneratedCode` otherwise. */
function levelFunction (context: GeneratorContext, level: LevelPlan): string | undefined {
  const entries: string[] = []
  for (const field of writtenFields(level)) {
    // JSON.stringify writes array-index keys first; `__proto__` in a literal sets the prototype.
    if (!isOrderedKey(field.name)) return undefined
    const entry = fieldEntry(context, field)
    if (entry === undefined) return undefined
    entries.push(entry)
  }
  return context.define('level', (name) => objectSource(name, entries))
}

/** `key: expression` copying one field of `object`, or undefined when not covered. */
function fieldEntry (context: GeneratorContext, field: WrittenField): string | undefined {
  const key = JSON.stringify(field.name)
  const read = `(value = object[${key}])`
  switch (field.kind) {
    case 'scalar': {
      const expression = valueExpression(context, writerSchema(field.schema))
      if (expression === undefined) return undefined
      return field.optional ? `${key}: ${read} === undefined ? undefined : ${expression}` : `${key}: (${read}, ${expression})`
    }
    case 'object': {
      const nested = levelFunction(context, field.level)
      // A missing to-one object fails in the nested function (it is not an object).
      return nested === undefined ? undefined : `${key}: ${read} === null ? null : ${nested}(value)`
    }
    case 'list': {
      const nested = levelFunction(context, field.level)
      return nested === undefined ? undefined : `${key}: (${read}, ${listExpression(context, `${nested}(value)`)})`
    }
    default:
      return field satisfies never
  }
}

/**
 * An expression of `value` copying it as a list of `item` (an expression of
 * `value` for each element): an array with no `toJSON` (JSON.stringify would
 * call it on the copy), else left. One function per item, made once.
 */
function listExpression (context: GeneratorContext, item: string): string {
  const name = context.defineOnce('list', item, (name) => `function ${name} (list) {
  const length = list.length
  const copy = new Array(length)
  let value
  for (let index = 0; index < length; index++) {
    value = list[index]
    copy[index] = ${item}
  }
  return copy
}`)
  return `Array.isArray(value) && value.toJSON === undefined ? ${name}(value) : leave()`
}

/** An expression of `value` (never undefined here) for a field schema as written, or undefined when not covered. */
function valueExpression (context: GeneratorContext, schema: JsonSchema): string | undefined {
  let expression: string | undefined
  if (schema.type === 'array') {
    const items = schema.items as JsonSchema | undefined
    if (!covered(schema, ['items']) || items === undefined || typeof items !== 'object' || Array.isArray(items)) return undefined
    const item = valueExpression(context, items)
    if (item === undefined) return undefined
    expression = listExpression(context, item)
  } else {
    expression = scalarExpression(schema)
    if (expression === undefined) return undefined
  }
  return schema.nullable === true ? `value === null ? null : ${expression}` : expression
}
