import type { JsonSchema } from '../graph/resource-graph.js'
import { maxValueLength } from '../parse/list-query.js'
import type { FilterField, FilterOperator, ListDeclaration } from './list-declarations.js'

/**
 * The list route's `sort` and `filter[...]` querystring properties: what
 * Fastify registers for the route and what the OpenAPI document shows, the
 * same objects.
 */
export function listParameters (declaration: ListDeclaration): Record<string, JsonSchema> {
  return { ...sortParameter(declaration), ...filterParameters(declaration) }
}

/** `sort`: a comma list of the sort fields, each maybe `-`. */
function sortParameter (declaration: ListDeclaration): Record<string, JsonSchema> {
  const names = [...declaration.sortFields.keys()]
  if (names.length === 0) return {}
  // A path's dots are literal: `employer.name`, not `employerXname`.
  const one = `-?(?:${names.map((name) => name.replaceAll('.', '\\.')).join('|')})`
  return {
    sort: {
      type: 'string',
      pattern: `^${one}(?:,${one})*$`,
      description: `Sort keys, comma-separated, \`-\` for descending: ${names.join(', ')}. The primary key, ascending, ends the order.`,
      examples: [names.length > 1 ? `-${names[0]},${names[1]}` : `-${names[0]}`],
    },
  }
}

const atMost = (length: number) => ` (at most ${length.toLocaleString('en-US')} characters)`

/** A value of the filter's field as the query string writes it, at most 1,000 characters for a string. */
function valueSchema (filter: FilterField): JsonSchema {
  const type: JsonSchema = filter.type.format === undefined
    ? { type: filter.type.kind }
    : { type: filter.type.kind, format: filter.type.format }
  return filter.type.kind === 'string' ? { ...type, maxLength: maxValueLength } : type
}

function comparison (words: string): (filter: FilterField) => JsonSchema {
  return (filter) => ({ ...valueSchema(filter), description: `${filter.path} ${words} this value${atMost(maxValueLength)}` })
}

/**
 * The querystring property of each operator: a new operator does not compile
 * until it says how its parameter is written.
 */
export const operatorParameters = {
  eq: comparison('equals'),
  ne: comparison('differs from'),
  lt: comparison('is less than'),
  lte: comparison('is at most'),
  gt: comparison('is greater than'),
  gte: comparison('is at least'),
  in: (filter) => ({
    type: 'string',
    maxLength: maxValueLength,
    description: `${filter.path} is one of these values, comma-separated (each ${filter.type.kind}; ${maxValueLength.toLocaleString('en-US')} characters at most in all)`,
  }),
  null: (filter) => ({ type: 'boolean', description: `true: ${filter.path} is null; false: it is not` }),
  exists: (filter) => ({ type: 'boolean', description: `true: at least one ${filter.path} row this caller may see; false: none` }),
  contains: (filter) => ({
    type: 'string',
    maxLength: filter.containsMaxLength,
    description: `${filter.path} contains this text, ignoring case${atMost(filter.containsMaxLength)}`,
  }),
} satisfies Record<FilterOperator, (filter: FilterField) => JsonSchema>

/**
 * One querystring property per declared filter and operator: `filter[species]`, `filter[species][in]`.
 * A longer value is a 400 FST_EXPAND_BAD_FILTER: `contains` values at most the filter's `containsMaxLength`,
 * any other value at most 1,000 characters as written (a string's `maxLength`, otherwise its description says so).
 */
function filterParameters (declaration: ListDeclaration): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {}
  for (const filter of declaration.filters.values()) {
    for (const operator of filter.operators) {
      properties[`filter[${filter.path}]${operator === 'eq' ? '' : `[${operator}]`}`] = operatorParameters[operator](filter)
    }
  }
  return properties
}
