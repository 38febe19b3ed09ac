import type { ResolvedOptions } from '../options.js'
import { clientFieldNames, type JsonSchema, type ResourceNode } from '../graph/resource-graph.js'
import type { PathEnumeration } from './expansion-paths.js'

/** What the `expand`, `fields` and `omit` parameters of a route depend on. */
export interface ExpansionParameterSources {
  readonly node: ResourceNode
  /** The paths the route can expand. */
  readonly enumeration: PathEnumeration
  /** The route expands only permitted paths (`permitExpands`, or `permitListExpands` on a list route). */
  readonly restricted: boolean
  /** A list route. */
  readonly list: boolean
  readonly maxDepth: number
  /** Whether the route can show this relation of the resource at the top level. */
  readonly showable: (field: string) => boolean
  readonly defaultExpand: readonly string[] | undefined
  /** The response schemas describe the default response (`openApiRequiredDefaults`). */
  readonly requiredDefaults: boolean
}

/**
 * `expand`, `fields` and `omit` (under their configured names), as
 * querystring properties; `expand` left out where the route can expand nothing.
 */
export function expansionParameters (sources: ExpansionParameterSources, options: ResolvedOptions): Record<string, JsonSchema> {
  const { node, enumeration, restricted, list, maxDepth, showable, defaultExpand, requiredDefaults } = sources
  const wildcards = [...options.wildcards]
  // A wildcard after a path is shown where the route can expand something below that path.
  const below = enumeration.paths.find((path) => enumeration.paths.some((other) => other.startsWith(`${path}.`)))
  const wildcardNote = wildcards.length > 0
    ? ` ${wildcards.map((token) => `\`${token}\``).join(' or ')} expands every ${restricted ? 'permitted ' : ''}relation of a level` +
      `${below === undefined ? '' : ` (\`${below}.${wildcards[0]}\`: every one below \`${below}\`)`}.`
    : ''
  const where = restricted ? ` This ${list ? 'list ' : ''}route permits only the paths listed.` : ''
  const syntax = 'Comma-separated or repeated; dot notation reaches nested relations.'
  const parameters: Record<string, JsonSchema> = {}
  const expandable = enumeration.paths.length > 0
  // A route that can expand nothing gets no `expand` parameter: an empty enum admits no value at all.
  if (expandable) {
    const items: JsonSchema = { type: 'string' }
    let description: string
    if (enumeration.complete) {
      items.enum = [...enumeration.paths, ...wildcards]
      description = `Relations to expand (depth ${maxDepth} at most). ${syntax}${where}${wildcardNote}`
    } else {
      const shown = enumeration.paths.filter((path) => !path.includes('.'))
      description = `Relations to expand, up to ${maxDepth} levels deep: ${shown.join(', ')} and their own relations. ${syntax}${wildcardNote}`
    }
    const parameter: JsonSchema = { type: 'array', items, description }
    // The route's defaultExpand: what an absent parameter means, and the empty value that asks for none.
    if (defaultExpand !== undefined && defaultExpand.length > 0) {
      const named = defaultExpand.map((path) => `\`${path}\``).join(', ')
      parameter.description = `${description} Without this parameter, ${named} ${defaultExpand.length === 1 ? 'is' : 'are'} expanded; \`${options.expandParam}=\` (empty) expands none.`
      parameter.default = [...defaultExpand]
      if (items.enum !== undefined) items.enum = ['', ...(items.enum as string[])]
    }
    parameters[options.expandParam] = parameter
  }

  // Only names this route can show: a deferred relation a restricted list cannot expand is never in its responses.
  // Every other field (aggregates and computed fields too) is shown when named, on any route.
  const shownRelations = new Set(node.defaultFields)
  const fieldNames = clientFieldNames(node).filter((name) => !node.relations.has(name) || shownRelations.has(name) || showable(name))
  const example = dotExample(node, enumeration.paths)
  // With the opt-in, the response schemas describe the default response (documentation-schemas.ts): say where they stop holding.
  const optional = requiredDefaults
    ? 'Fields left out are absent from the response, even those its schema requires: the schema describes the default response.'
    : 'Fields left out are absent from the response.'
  const plain = fieldNames.find((name) => !node.relations.has(name))
  const nested = example === undefined
    ? ' This route expands no relation, so dot notation has nothing to reach.'
    : ` Dot notation narrows an expanded relation: \`${options.expandParam}=${example.relation}&${options.fieldsParam}=${plain === undefined ? '' : `${plain},`}${example.path}\`.`
  parameters[options.fieldsParam] = {
    type: 'array',
    items: { type: 'string' },
    description: `Only these fields (${node.name}: ${fieldNames.join(', ')}).${nested} Comma-separated or repeated. ${optional}`,
  }
  parameters[options.omitParam] = {
    type: 'array',
    items: { type: 'string' },
    description: `Leave these fields out (${node.name}: ${fieldNames.join(', ')})${example === undefined ? '' : `; dot notation reaches an expanded relation: \`${example.path}\``}. Comma-separated or repeated. ${optional}`,
  }
  return parameters
}

/** A `relation.field` example from the resource's own relations: the first one the route can expand, and a field of its level. */
function dotExample (node: ResourceNode, paths: readonly string[]): { relation: string; path: string } | undefined {
  for (const path of paths) {
    if (path.includes('.')) continue
    const relation = node.relations.get(path)
    if (relation === undefined) continue
    const target = relation.target
    const fields = relation.baseFields
    const field = fields.find((name) => name !== target.primaryKey && !target.relations.has(name)) ?? fields[0]
    if (field !== undefined) return { relation: path, path: `${path}.${field}` }
  }
  return undefined
}
