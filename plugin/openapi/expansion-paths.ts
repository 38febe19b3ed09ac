import { relationAt, type ResourceNode } from '../graph/resource-graph.js'

export interface PathEnumeration {
  /** Valid `expand` paths, parents before their children. */
  readonly paths: readonly string[]
  /** False when the paths stop short of `maxDepth` because there were more than `limit`. */
  readonly complete: boolean
  /** The depth the paths reach. */
  readonly depth: number
}

export interface PathEnumerationSettings {
  readonly maxDepth: number
  readonly allowRecursive: boolean
  /** List routes: only these paths (each with its prefixes) may be expanded. */
  readonly permitted: ReadonlySet<string> | undefined
  /** At most this many paths; beyond it the enumeration stops at the last depth that fits whole. */
  readonly limit: number
}

/**
 * Every path a request may expand from `node`. Relations form cycles
 * (Person.pets -> Pet.owner -> Person), so the walk is bounded twice: by the
 * depth limit, and by `limit` paths, keeping whole depths only, so that an
 * enumeration is either complete or complete up to the depth it names.
 */
export function enumerateExpansionPaths (node: ResourceNode, settings: PathEnumerationSettings): PathEnumeration {
  let best: PathEnumeration = { paths: [], complete: true, depth: 0 }
  for (let depth = 1; depth <= settings.maxDepth; depth++) {
    const paths: string[] = []
    let grew = false
    const overflow = walk(node, node.clientFields, [], depth, settings, (path, atLimit) => {
      paths.push(path)
      if (atLimit) grew = true
      return paths.length > settings.limit
    })
    if (overflow) return { ...best, complete: false }
    best = { paths, complete: true, depth }
    // Nothing at this depth: deeper walks cannot find anything either.
    if (!grew) break
  }
  return best
}

/**
 * Depth-first, in relation order; returns true as soon as `visit` asks to
 * stop. `names`: what exists at this level (a relation's `fields`/`omit`
 * options remove the others).
 */
function walk (
  node: ResourceNode,
  names: ReadonlySet<string>,
  path: readonly string[],
  depth: number,
  settings: PathEnumerationSettings,
  visit: (path: string, atLimit: boolean) => boolean
): boolean {
  for (const field of node.relations.keys()) {
    const relation = relationAt(node, names, field)
    if (relation === undefined) continue
    if (!settings.allowRecursive && path.includes(field)) continue
    const segments = [...path, field]
    const joined = segments.join('.')
    if (settings.permitted !== undefined && !settings.permitted.has(joined)) continue
    if (visit(joined, segments.length === depth)) return true
    if (segments.length < depth && walk(relation.target, relation.clientFields, segments, depth, settings, visit)) return true
  }
  return false
}
