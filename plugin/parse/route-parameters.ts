import type { FastifySchemaCompiler } from 'fastify'
import { identifierDescription, partsOf, type ResourceKey } from '../graph/identifiers.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { integerError, safeInteger } from './integers.js'
import { readListQuery } from './list-query.js'

/**
 * The generated routes read their own parameters (`limit`, `offset`, `:id`)
 * instead of leaving them to the application's validator: Ajv coerces
 * `'-Infinity'` past `type: 'integer'` and `minimum`, and a validator that
 * does not coerce (TypeBox's) rejects every number written in a URL. Parsed
 * here, a value is a safe integer in range or a 400 (`FST_ERR_VALIDATION`,
 * Fastify's code for a request part that does not validate), the same with
 * any validator compiler and on every database.
 */
export interface ParameterRules {
  /** `:id`: the primary key's schema. */
  id?: JsonSchema
  /** The primary key: a composite key's `:id` is its identifier, whose parts are checked against their types. */
  key?: ResourceKey
  /** Query parameters holding integers, with their smallest value. */
  integers?: Record<string, { minimum: number }>
  /**
   * List routes: `filter[...]`, `sort` and (with `cursors`) `after`, read by
   * readListQuery; what does not fit is its own 400
   * (`FST_EXPAND_BAD_FILTER`, `_BAD_SORT`, `_BAD_CURSOR`).
   */
  list?: { cursors: boolean }
}

/** A route's `validatorCompiler`: reads params and querystring by `rules`, passes other parts through. */
export function parameterReader (rules: ParameterRules): FastifySchemaCompiler<unknown> {
  return ({ httpPart }) => {
    if (httpPart === 'params') return (params) => readParams(params, rules.id, rules.key)
    if (httpPart === 'querystring') {
      return (query) => {
        const read = readQuery(query, rules.integers ?? {})
        if (rules.list === undefined || 'error' in read) return read
        try {
          // Read to answer a bad one 400 before any hook; the request's plan reads the query again, as it is when made.
          readListQuery(read.value, rules.list.cursors)
        } catch (error) {
          // Fastify answers an Error the validator gives with its own code and status.
          return { error: error as Error }
        }
        return read
      }
    }
    return () => true
  }
}

function readParams (params: unknown, schema: JsonSchema | undefined, key: ResourceKey | undefined): { value: unknown } | { error: Error } {
  const record = { ...(params as Record<string, unknown>) }
  if (schema === undefined || record.id === undefined) return { value: record }
  if (key?.kind === 'composite' && partsOf(String(record.id), key.types) === undefined) {
    return { error: new Error(`params/id must be ${key.fields.join(',')}: ${identifierDescription(key.fields, key.types)}`) }
  }
  const type = schema.type
  if (type === 'integer' || type === 'number') {
    const id = safeInteger(record.id, Number.MIN_SAFE_INTEGER)
    if (id === undefined) return { error: new Error(`params/id must be an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`) }
    record.id = id
  }
  return { value: record }
}

function readQuery (query: unknown, integers: Record<string, { minimum: number }>): { value: unknown } | { error: Error } {
  const record = { ...(query as Record<string, unknown>) }
  for (const [name, { minimum }] of Object.entries(integers)) {
    if (record[name] === undefined) continue
    const value = safeInteger(record[name], minimum)
    if (value === undefined) return { error: integerError(name, minimum) }
    record[name] = value
  }
  return { value: record }
}
