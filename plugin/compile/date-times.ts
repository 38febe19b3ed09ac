import { dateTimeTextOf } from '../graph/dates.js'
import type { JsonSchema } from '../graph/resource-graph.js'

type Normalise = (value: unknown) => unknown

/**
 * For fast-json-stringify, which writes a `date-time` string as it is given
 * (and a Date as `toISOString()`): a function returning the data with each
 * date-time text of a form the plugin reads (docs/guarantees.md, "Dates and times")
 * replaced by its `toISOString()` form, as the projections write it, so
 * that every mechanism writes one form. Objects and arrays holding such a
 * text are copied, never changed; anything else is returned as it is
 * (text that is not a date-time is left to the data check). Undefined when
 * the schema has no date-time.
 */
export function compileDateTimeNormaliser (schema: JsonSchema): Normalise | undefined {
  return normaliserOf(schema)
}

function normaliserOf (schema: JsonSchema): Normalise | undefined {
  const types = Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  if (types.includes('string') && schema.format === 'date-time') return dateTimeText
  if (types.includes('object')) return objectNormaliser(schema)
  if (types.includes('array')) {
    const items = schema.items as JsonSchema | undefined
    const item = items === undefined || typeof items !== 'object' || Array.isArray(items) ? undefined : normaliserOf(items)
    return item === undefined ? undefined : (value) => (Array.isArray(value) ? copyOnChange(value, item) : value)
  }
  return undefined
}

function dateTimeText (value: unknown): unknown {
  return typeof value === 'string' ? dateTimeTextOf(value) ?? value : value
}

function objectNormaliser (schema: JsonSchema): Normalise | undefined {
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties === undefined || typeof properties !== 'object') return undefined
  const normalisers: Array<[string, Normalise]> = []
  for (const [name, property] of Object.entries(properties)) {
    const normalise = normaliserOf(property)
    if (normalise !== undefined) normalisers.push([name, normalise])
  }
  if (normalisers.length === 0) return undefined
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) return value
    const object = value as Record<string, unknown>
    let copy: Record<string, unknown> | undefined
    for (const [name, normalise] of normalisers) {
      const before = object[name]
      if (before === undefined) continue
      const after = normalise(before)
      if (after !== before) (copy ??= { ...object })[name] = after
    }
    return copy ?? object
  }
}

function copyOnChange (array: readonly unknown[], normalise: Normalise): unknown[] {
  let copy: unknown[] | undefined
  for (let index = 0; index < array.length; index++) {
    const after = normalise(array[index])
    if (after !== array[index]) (copy ??= [...array])[index] = after
  }
  return copy ?? (array as unknown[])
}
