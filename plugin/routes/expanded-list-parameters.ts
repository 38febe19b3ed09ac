import type { JsonSchema } from '../graph/resource-graph.js'
import type { ExpandedListDeclaration, ExpandedListDeclarations } from './expanded-list-declarations.js'
import { operatorParameters } from './list-parameters.js'

/**
 * The querystring properties of a route's expanded lists, as the OpenAPI
 * document shows them: `sort[path]`, `limit[path]` and one
 * `where[path.field]` per declared filter and operator (written as a list
 * route's `filter[...]` parameters are).
 */
export function expandedListParameters (declarations: ExpandedListDeclarations): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {}
  for (const declaration of declarations.values()) {
    Object.assign(properties, sortParameter(declaration), limitParameter(declaration))
    for (const filter of declaration.filters.values()) {
      for (const operator of filter.operators) {
        properties[`where[${filter.path}]${operator === 'eq' ? '' : `[${operator}]`}`] = operatorParameters[operator](filter)
      }
    }
  }
  return properties
}

/** `sort[path]`: one key of the declared fields (`-` for descending), or several, comma-separated. */
function sortParameter ({ path, sortFields }: ExpandedListDeclaration): Record<string, JsonSchema> {
  const names = [...sortFields.keys()]
  if (names.length === 0) return {}
  const keys = names.flatMap((name) => [name, `-${name}`])
  const one = `-?(?:${names.join('|')})`
  return {
    [`sort[${path}]`]: {
      anyOf: [{ type: 'string', enum: keys }, { type: 'string', pattern: `^${one}(?:,${one})*$` }],
      description: `Order of each expanded \`${path}\` array: sort keys, comma-separated, \`-\` for descending (${names.join(', ')}). ` +
        'The related key, ascending, ends the order. Only with the relation expanded.',
    },
  }
}

/** `limit[path]`: rows per parent, a larger one clamped to the list's `maxLimit`. */
function limitParameter ({ path, maxLimit }: ExpandedListDeclaration): Record<string, JsonSchema> {
  return {
    [`limit[${path}]`]: {
      type: 'integer',
      minimum: 1,
      maximum: maxLimit ?? Number.MAX_SAFE_INTEGER,
      description: `The most rows of each expanded \`${path}\` array${maxLimit === undefined ? '' : ` (at most ${maxLimit})`}. Only with the relation expanded.`,
    },
  }
}
