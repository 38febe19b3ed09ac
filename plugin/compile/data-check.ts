import type { ExpansionPlan, LevelPlan } from '../plan/plan.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { GeneratorContext } from './generator-context.js'
import { typesOf } from '../graph/output-schemas.js'
import { expectedOf, isJsonType, strictRules, structureRules, valueFormatOf, valueRules } from './value-rules.js'
import { writtenFields, type WrittenField } from './written-fields.js'

/** Throws `FST_EXPAND_INVALID_DATA` when the data does not fit the plan; returns nothing otherwise. */
export type DataCheck = (data: unknown) => void

/**
 * fast-json-stringify writes what the schema says, whatever the data holds:
 * `null` in a string field becomes `""`, `1.7` in an integer field `1`,
 * `"false"` in a boolean `true`, `null` for an object `{}`. So before a body
 * is written, the data is checked against the plan by code compiled once per
 * plan (like the serializer itself), and a value that does not fit is a 500
 * naming the resource and the path, never a plausible wrong body. What fits
 * is each value's rule in value-rules.ts.
 */
export function compileDataCheck (plan: ExpansionPlan): DataCheck {
  const context = new GeneratorContext()
  const resource = JSON.stringify(plan.target.node.qualifiedName)
  const item = levelFunction(context, plan.root, '')
  let body: string
  if (!plan.target.list) {
    body = `const problem = ${item}(data); if (problem !== undefined) refuse(${resource}, -1, problem)`
  } else {
    const envelope = plan.target.envelope
    const list = envelope === undefined ? 'data' : `data[${JSON.stringify(envelope)}]`
    const envelopeCheck = envelope === undefined
      ? ''
      : `if (typeof data !== 'object' || data === null || Array.isArray(data)) refuse(${resource}, -1, 'the payload is ' + kind(data) + ${JSON.stringify(`, expected an object holding '${envelope}'`)})\n`
    body = `${envelopeCheck}const list = ${list}
if (!Array.isArray(list)) refuse(${resource}, -1, ${JSON.stringify(envelope === undefined ? 'the list is ' : `the list '${envelope}' is `)} + kind(list) + ', expected an array')
for (let index = 0; index < list.length; index++) {
  const problem = ${item}(list[index])
  if (problem !== undefined) refuse(${resource}, index, problem)
}`
  }
  return context.compile<DataCheck>(`return function checkData (data) {\n${body}\n}`).compiled
}

/**
 * A function checking one object of a level: `(row) => problem | undefined`.
 * `path` is the level's place in the response (`''`, `'owner.'`), a constant
 * of the generated code, so checking never builds strings unless it fails.
 */
function levelFunction (context: GeneratorContext, level: LevelPlan, path: string): string {
  const lines = [
    `  if (typeof row !== 'object' || row === null || Array.isArray(row)) return ${JSON.stringify(path === '' ? 'the item' : `'${path.slice(0, -1)}'`)} + ' is ' + kind(row) + ', expected an object'`,
    '  let value',
  ]
  for (const field of writtenFields(level)) {
    lines.push(`  value = row[${JSON.stringify(field.name)}]`, fieldCheck(context, field, path + field.name))
  }
  return context.define('level', (name) => `function ${name} (row) {\n${lines.join('\n')}\n}`)
}

/** Statements that return a problem when `value`, the field `at` read, does not fit it. */
function fieldCheck (context: GeneratorContext, field: WrittenField, at: string): string {
  const label = JSON.stringify(`'${at}'`)
  switch (field.kind) {
    case 'scalar': {
      const check = valueCheck(context, field.schema, at)
      return field.optional
        ? `  if (value !== undefined) { ${check} }`
        : `  if (value === undefined) return ${label} + ' is missing'\n  ${check}`
    }
    case 'object': {
      const nested = levelFunction(context, field.level, `${at}.`)
      return `  if (value !== null) { if (value === undefined) return ${label} + ' is missing'; const problem = ${nested}(value); if (problem !== undefined) return problem }`
    }
    case 'list': {
      const nested = levelFunction(context, field.level, `${at}.`)
      return `  if (!Array.isArray(value)) return ${label} + ' is ' + kind(value) + ', expected an array of ${field.level.node.name}'\n` +
        `  for (let index = 0; index < value.length; index++) { const problem = ${nested}(value[index]); if (problem !== undefined) return problem }`
    }
  }
}

/** Statements that return a problem when `value` does not fit `schema`. */
function valueCheck (context: GeneratorContext, schema: JsonSchema, at: string): string {
  const types = typesOf(schema)
  // A schema without a type (a free-form value, a union of objects) is written as fast-json-stringify decides.
  if (types.length === 0 || !types.every(isJsonType)) return ''
  const label = JSON.stringify(`'${at}'`)
  const refused = (accepted: readonly string[]) =>
    `if (!(${accepted.join(' || ')})) return ${label} + ' is ' + kind(value) + ', expected ${expectedOf(schema, types)}'`
  // Several types (string | integer): fast-json-stringify picks the first that matches strictly.
  if (types.filter((type) => type !== 'null').length > 1) return refused(types.map((type) => strictRules[type]))
  const accepted: string[] = []
  const deeper: string[] = []
  for (const type of types) {
    switch (type) {
      case 'object': {
        accepted.push(structureRules.object.accepts)
        const properties = schema.properties as Record<string, JsonSchema> | undefined
        if (properties !== undefined && Object.keys(properties).length > 0) {
          deeper.push(`if (typeof value === 'object' && value !== null && !Array.isArray(value)) { const problem = ${objectFunction(context, schema, `${at}.`)}(value); if (problem !== undefined) return problem }`)
        }
        break
      }
      case 'array': {
        accepted.push(structureRules.array.accepts)
        const items = schema.items as JsonSchema | undefined
        if (items !== undefined && typeof items === 'object' && typesOf(items).length > 0) {
          deeper.push(`if (Array.isArray(value)) { const problem = ${arrayFunction(context, items, `${at}[]`)}(value); if (problem !== undefined) return problem }`)
        }
        break
      }
      default:
        accepted.push(valueRules[valueFormatOf(type, schema.format)].accepts)
    }
  }
  return [refused(accepted), ...deeper].join('\n  ')
}

function objectFunction (context: GeneratorContext, schema: JsonSchema, path: string): string {
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
  const lines = ['  let value']
  for (const [property, propertySchema] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
    const at = path + property
    const check = valueCheck(context, propertySchema, at)
    lines.push(`  value = object[${JSON.stringify(property)}]`)
    lines.push(required.has(property)
      ? `  if (value === undefined) return ${JSON.stringify(`'${at}'`)} + ' is missing'\n  ${check}`
      : `  if (value !== undefined) { ${check} }`)
  }
  return context.define('object', (name) => `function ${name} (object) {\n${lines.join('\n')}\n}`)
}

function arrayFunction (context: GeneratorContext, items: JsonSchema, path: string): string {
  const check = valueCheck(context, items, path)
  return context.define('array', (name) => `function ${name} (array) {
  for (let index = 0; index < array.length; index++) {
    const value = array[index]
    ${check}
  }
}`)
}
