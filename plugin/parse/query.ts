import { MalformedError, messages } from '../errors.js'
import type { ResolvedOptions } from '../options.js'

/** The three parameters as received, each joined into one comma list ('' when absent). */
export interface RawExpansionQuery {
  readonly expand: string
  readonly fields: string
  readonly omit: string
  /**
   * The query has no `expand` parameter at all, in any form: a route's
   * `defaultExpand` applies. `expand=` (present, empty) asks for none.
   * Undefined is the same as false: values given in code are always given.
   */
  readonly expandAbsent?: boolean
}

/** Input given in code (createSerializer, relation options) rather than a query string. */
export type PathListInput = string | readonly string[] | undefined

/**
 * Reads `name`, repeated `name`, bracketed `name[]` and indexed `name[0]` from
 * a parsed query string, in the order the keys came. The length limit is
 * checked here, before anything is split.
 */
export function readParam (query: unknown, name: string, options: ResolvedOptions): string {
  if (typeof query !== 'object' || query === null) return ''
  const record = query as Record<string, unknown>
  let joined = ''
  let length = 0
  for (const key of Object.keys(record)) {
    if (key !== name && !(key.startsWith(name) && key[name.length] === '[')) continue
    // `name[]` and indexed `name[0]` (as PHP and some clients write arrays) are the repeated form; other brackets mean nothing here.
    if (key !== name && !/^\[[0-9]*\]$/.test(key.slice(name.length))) {
      throw new MalformedError(messages.bracketForm(key, name))
    }
    const values = record[key]
    for (const value of Array.isArray(values) ? values : [values]) {
      if (typeof value !== 'string') throw new MalformedError(messages.notAList(name))
      // The limit counts the characters of the values, not the commas that join repeated ones.
      length += value.length
      joined = joined === '' ? value : `${joined},${value}`
    }
  }
  if (length > options.maxParamLength) {
    throw new MalformedError(messages.tooLong(name, length, options.maxParamLength))
  }
  return joined
}

export function readExpansionQuery (query: unknown, options: ResolvedOptions): RawExpansionQuery {
  return readPlainQuery(query, options) ?? readAnyQuery(query, options)
}

/**
 * The common case in one pass over the keys (this runs on every request): each
 * parameter at most once, as a string, no bracketed key. Anything else
 * (repeated or bracketed forms, a value that is not a string) is read by
 * readAnyQuery, which also raises the errors, so both answer alike.
 */
function readPlainQuery (query: unknown, options: ResolvedOptions): RawExpansionQuery | undefined {
  if (typeof query !== 'object' || query === null) return undefined
  const record = query as Record<string, unknown>
  const { expandParam, fieldsParam, omitParam, maxParamLength } = options
  let expand: unknown
  let fields: unknown = ''
  let omit: unknown = ''
  for (const key of Object.keys(record)) {
    if (key === expandParam) expand = record[key]
    else if (key === fieldsParam) fields = record[key]
    else if (key === omitParam) omit = record[key]
    // `name[]`, `name[0]` and malformed brackets: the general reader's.
    else if (key.endsWith(']')) return undefined
  }
  if (expand !== undefined && typeof expand !== 'string') return undefined
  if (typeof fields !== 'string' || typeof omit !== 'string') return undefined
  if ((expand?.length ?? 0) > maxParamLength || fields.length > maxParamLength || omit.length > maxParamLength) return undefined
  return { expand: expand ?? '', fields, omit, expandAbsent: expand === undefined }
}

/** Every form readParam reads, with its errors (exported for the test that compares both readers). */
export function readAnyQuery (query: unknown, options: ResolvedOptions): RawExpansionQuery {
  const expand = readParam(query, options.expandParam, options)
  return {
    expand,
    fields: readParam(query, options.fieldsParam, options),
    omit: readParam(query, options.omitParam, options),
    expandAbsent: expand === '' && !hasParam(query, options.expandParam),
  }
}

/** Whether the parsed query string holds `name` in any form readParam reads (`name`, `name[]`, `name[0]`), even empty. */
function hasParam (query: unknown, name: string): boolean {
  if (typeof query !== 'object' || query === null) return false
  return Object.keys(query).some((key) => key === name || (key.startsWith(name) && /^\[[0-9]*\]$/.test(key.slice(name.length))))
}

/** The same three values given in code: arrays are joined as repeated parameters would be. */
export function rawFromInput (
  input: { expand?: PathListInput; fields?: PathListInput; omit?: PathListInput },
  options: ResolvedOptions
): RawExpansionQuery {
  const query: Record<string, unknown> = {}
  if (input.expand !== undefined) query[options.expandParam] = input.expand
  if (input.fields !== undefined) query[options.fieldsParam] = input.fields
  if (input.omit !== undefined) query[options.omitParam] = input.omit
  return readExpansionQuery(query, options)
}

/**
 * Splits a comma list of dot paths. Empty items are skipped (`a,,b`), empty
 * segments are malformed (`a..b`, `.a`, `a.`), and the number of paths is bounded.
 */
export function parsePaths (raw: string, name: string, options: ResolvedOptions): string[][] {
  const paths: string[][] = []
  if (raw === '') return paths
  for (const item of raw.split(',')) {
    const trimmed = item.trim()
    if (trimmed === '') continue
    const path = trimmed.split('.')
    for (const segment of path) {
      if (segment === '') throw new MalformedError(messages.emptySegment(name, trimmed))
    }
    paths.push(path)
    if (paths.length > options.maxPaths) {
      throw new MalformedError(messages.tooManyPaths(name, options.maxPaths))
    }
  }
  return paths
}

/** Paths folded into a tree; `leaf` marks a path that ends at this node. */
export interface PathNode {
  leaf: boolean
  readonly children: Map<string, PathNode>
}

export function emptyPathNode (): PathNode {
  return { leaf: false, children: new Map() }
}

/** A new tree: `tree` with `paths` added. `tree` is not changed: query trees are shared through the plan cache. */
export function withPaths (tree: PathNode | undefined, paths: readonly (readonly string[])[]): PathNode {
  return toPathTree(paths, tree === undefined ? emptyPathNode() : cloneTree(tree))
}

function cloneTree (tree: PathNode): PathNode {
  const copy: PathNode = { leaf: tree.leaf, children: new Map() }
  for (const [name, child] of tree.children) copy.children.set(name, cloneTree(child))
  return copy
}

export function toPathTree (paths: readonly (readonly string[])[], into: PathNode = emptyPathNode()): PathNode {
  for (const path of paths) {
    let node = into
    for (const segment of path) {
      let child = node.children.get(segment)
      if (child === undefined) {
        child = emptyPathNode()
        node.children.set(segment, child)
      }
      node = child
    }
    node.leaf = true
  }
  return into
}
