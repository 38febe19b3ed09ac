import { isResource, type AnyResource, type RelationDefinition, type RelationOptions } from '../../plugin/index.js'

/**
 * The baseline a straightforward port of drf-flex-fields gives: per request,
 * split the query values, walk the resource declarations to decide each
 * level's fields, build the output objects, then JSON.stringify them.
 *
 * Written to be fair: the declaration is walked once per request and level
 * (as drf builds one child serializer per nested field, not per row), and
 * rows are shaped by a tight loop over that decision.
 */
export function genericStringify (
  resource: AnyResource,
  query: { expand?: string; fields?: string; omit?: string },
  data: unknown,
  list: boolean,
  registry: ReadonlyMap<string, AnyResource> = new Map()
): string {
  const level = walkDeclaration(
    resource, resource.fields, splitPaths(query.expand), splitPaths(query.fields), splitPaths(query.omit), registry)
  const shaped = list ? (data as Row[]).map((row) => shapeRow(level, row)) : shapeRow(level, data as Row)
  return JSON.stringify(shaped)
}

type Row = Record<string, unknown>
type Paths = readonly (readonly string[])[]

interface WalkField {
  name: string
  many: boolean
  /** Present when the field is an expanded relation. */
  nested: WalkLevel | undefined
}

interface WalkLevel {
  fields: WalkField[]
}

function splitPaths (value: string | undefined): Paths {
  if (value === undefined || value === '') return []
  const paths: string[][] = []
  for (const item of value.split(',')) if (item !== '') paths.push(item.split('.'))
  return paths
}

/** drf-flex-fields' `_split_levels`: the names of this level and, per name, the paths below it. */
function splitLevels (paths: Paths): { here: Set<string>; below: Map<string, string[][]> } {
  const here = new Set<string>()
  const below = new Map<string, string[][]>()
  for (const path of paths) {
    const [first, ...rest] = path as [string, ...string[]]
    here.add(first)
    if (rest.length > 0) {
      const nested = below.get(first) ?? []
      nested.push(rest)
      below.set(first, nested)
    }
  }
  return { here, below }
}

function walkDeclaration (
  resource: AnyResource,
  base: readonly string[],
  expand: Paths,
  fields: Paths,
  omit: Paths,
  registry: ReadonlyMap<string, AnyResource>
): WalkLevel {
  const expandLevels = splitLevels(expand)
  const fieldLevels = splitLevels(fields)
  const omitLevels = splitLevels(omit)
  const omitted = new Set<string>()
  for (const path of omit) if (path.length === 1) omitted.add(path[0]!)

  const expandable: Readonly<Record<string, RelationDefinition | undefined>> = resource.expandable ?? {}
  const nested: Readonly<Record<string, RelationDefinition | undefined>> = resource.nested ?? {}
  const chosen = base.filter((name) => (fields.length === 0 || fieldLevels.here.has(name)) && !omitted.has(name))
  // Deferred relations (expandable, not in the default fields) appear when expanded, after the others.
  for (const name of Object.keys(expandable)) {
    if (!base.includes(name) && expandLevels.here.has(name) && (fields.length === 0 || fieldLevels.here.has(name)) && !omitted.has(name)) {
      chosen.push(name)
    }
  }

  const level: WalkLevel = { fields: [] }
  for (const name of chosen) {
    const definition = nested[name] ?? (expandLevels.here.has(name) ? expandable[name] : undefined)
    if (definition === undefined) {
      level.fields.push({ name, many: false, nested: undefined })
      continue
    }
    const [reference, options] = Array.isArray(definition) ? definition as [unknown, RelationOptions] : [definition, {} as RelationOptions]
    const target = resolve(reference, registry)
    const relationOmit = new Set(options.omit ?? [])
    const relationBase = (options.fields ?? target.fields).filter((field: string) => !relationOmit.has(field))
    const alwaysExpand = (options.expand ?? []).map((path) => path.split('.'))
    level.fields.push({
      name,
      many: options.many === true,
      nested: walkDeclaration(
        target,
        relationBase,
        [...(expandLevels.below.get(name) ?? []), ...alwaysExpand],
        fieldLevels.below.get(name) ?? [],
        omitLevels.below.get(name) ?? [],
        registry
      ),
    })
  }
  return level
}

function resolve (reference: unknown, registry: ReadonlyMap<string, AnyResource>): AnyResource {
  if (isResource(reference)) return reference
  if (typeof reference === 'function') return (reference as () => AnyResource)()
  const found = registry.get(String(reference))
  if (found === undefined) throw new Error(`generic walk: unknown resource '${String(reference)}'`)
  return found
}

function shapeRow (level: WalkLevel, row: Row): Row {
  const output: Row = {}
  for (const field of level.fields) {
    const value = row[field.name]
    if (field.nested === undefined) output[field.name] = value
    else if (field.many) output[field.name] = (value as Row[]).map((item) => shapeRow(field.nested!, item))
    else output[field.name] = value === null || value === undefined ? null : shapeRow(field.nested, value as Row)
  }
  return output
}
