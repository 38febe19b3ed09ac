import { BadFilterError, BadSortError, ForbiddenError, messages } from '../errors.js'
import type { ResourceNode } from '../graph/resource-graph.js'
import type { ExpandedListQuery } from '../parse/expanded-list-query.js'
import type { ExpandedListDeclaration, ExpandedListDeclarations } from '../routes/expanded-list-declarations.js'
import type { FilterOperator, RequestedSort } from '../routes/list-declarations.js'
import { readFilterValue, type RequestedFilter } from './list-plan.js'
import { hiddenOnPath, type ExpandedField, type ExpansionPlan, type LevelPlan } from './plan.js'

/** What one request asks of one expanded to-many relation, validated for its caller. */
export interface ExpandedListPlan {
  readonly declaration: ExpandedListDeclaration
  /** The sort keys asked for (and visible), without the related key that always ends the order; undefined: the relation's own order. */
  readonly sort: readonly RequestedSort[] | undefined
  /** Rows per parent: `limit[path]` clamped to the list's `maxLimit`; undefined: the relation's own `limit`, if any. */
  readonly limit: number | undefined
  /** The `where[path.field]` conditions, each value read by the field's type. */
  readonly filters: readonly RequestedFilter[]
}

/**
 * A request's expanded lists, by the planned field each applies to (a field
 * of the request's expansion plan, which requests asking the same share):
 * the request's own part, never cached with the plan.
 */
export type ExpandedLists = ReadonlyMap<ExpandedField, ExpandedListPlan>

/** What planning a request's expanded lists reads of the plugin's options. */
export interface ExpandedListCaller {
  /** onInvalidExpand 'ignore': sort keys and conditions on hidden fields are dropped instead of a 403. */
  readonly ignoreHidden: boolean
  /** A list without `maxLimit` clamps `limit[path]` to this: more rows of one parent could only be over the object budget. */
  readonly maxObjects: number
}

interface Asked {
  readonly declaration: ExpandedListDeclaration
  sort: RequestedSort[] | undefined
  limit: number | undefined
  readonly filters: RequestedFilter[]
}

/**
 * The expanded-list part of a request's plan: each `sort[path]`,
 * `limit[path]` and `where[path.field]` checked against the route's
 * declarations and the request's expansion plan (the path must be declared
 * and expanded by this request: else 400), each field against what the
 * caller may see (a field `fieldsFor` hides: 403, or dropped with
 * `ignoreHidden`, as a list's filters and sort keys are). A `limit[path]`
 * is clamped to the list's `maxLimit`, else to `maxObjects`.
 */
export function planExpandedLists (
  declarations: ExpandedListDeclarations, query: ExpandedListQuery, expansion: ExpansionPlan, caller: ExpandedListCaller
): ExpandedLists {
  const { ignoreHidden, maxObjects } = caller
  const hidden = (node: ResourceNode, field: string) => hiddenOnPath(expansion.visibility, node, [field])
  const hiddenPath = (root: ResourceNode, path: string) => hiddenOnPath(expansion.visibility, root, path.split('.'))
  const asked = new Map<ExpandedField, Asked>()
  const listAt = (path: string, written: string, refuse: (message: string) => never): Asked => {
    const declaration = declarations.get(path)
    if (declaration === undefined) {
      // As a list's messages, only what the caller may use: paths through relations `fieldsFor` hides are left out.
      const usable = [...declarations.keys()].filter((declared) => !hiddenPath(expansion.root.node, declared))
      refuse(messages.expandedListNotDeclared(written, expansion.root.node.name, usable))
    }
    const field = expandedFieldAt(expansion.root, path)
    if (field === undefined) refuse(messages.expandedListNotExpanded(written, path))
    let entry = asked.get(field!)
    if (entry === undefined) {
      entry = { declaration: declaration!, sort: undefined, limit: undefined, filters: [] }
      asked.set(field!, entry)
    }
    return entry
  }
  const badSort = (message: string): never => { throw new BadSortError(message) }
  const badFilter = (message: string): never => { throw new BadFilterError(message) }

  for (const { path, keys, written } of query.sorts) {
    const entry = listAt(path, written, badSort)
    const { declaration } = entry
    const sort: RequestedSort[] = []
    const names = new Set<string>()
    for (const { name, descending } of keys) {
      const field = declaration.sortFields.get(name)
      if (field === undefined) {
        const usable = [...declaration.sortFields.keys()].filter((usable) => !hidden(declaration.node, usable))
        badSort(messages.unknownSort(`'${path}'`, name, usable))
      }
      if (hidden(declaration.node, name)) {
        if (ignoreHidden) continue
        throw new ForbiddenError(messages.hiddenSort(`${path}.${name}`))
      }
      if (names.has(name)) badSort(messages.sortRepeated(written, name))
      names.add(name)
      sort.push({ field: field!, descending })
    }
    entry.sort = sort.length === 0 ? undefined : sort
  }
  for (const { path, limit, written } of query.limits) {
    const entry = listAt(path, written, badFilter)
    const { maxLimit } = entry.declaration
    // Each limit is a literal of its statement's text: bounded, a client cannot make statements without end.
    entry.limit = Math.min(limit, maxLimit ?? maxObjects)
  }
  for (const { path, field: name, operator, raw, written } of query.wheres) {
    const entry = listAt(path, written, badFilter)
    const { declaration } = entry
    const filter = declaration.filters.get(name)
    if (filter === undefined) {
      const usable = [...declaration.filters.values()].filter(({ field }) => !hidden(declaration.node, field)).map(({ path }) => path)
      badFilter(messages.unknownFilter(`'${path}'`, `${path}.${name}`, usable))
    }
    if (hidden(declaration.node, name)) {
      if (ignoreHidden) continue
      throw new ForbiddenError(messages.hiddenFilter(`${path}.${name}`))
    }
    const op = (operator === '' ? 'eq' : operator) as FilterOperator
    if (!filter!.operators.includes(op)) {
      badFilter(messages.badFilterOperator(`'${path}'`, filter!.path, operator, filter!.operators))
    }
    entry.filters.push({ filter: filter!, operator: op, value: readFilterValue(filter!, op, raw, written) })
  }
  const lists = new Map<ExpandedField, ExpandedListPlan>()
  for (const [field, { declaration, sort, limit, filters }] of asked) {
    lists.set(field, Object.freeze({ declaration, sort, limit, filters: Object.freeze(filters) }))
  }
  return lists
}

/** The planned field expanding `path` (a dot path from the plan's root), or undefined when the plan does not expand it. */
export function expandedFieldAt (root: LevelPlan, path: string): ExpandedField | undefined {
  let level = root
  let found: ExpandedField | undefined
  for (const segment of path.split('.')) {
    found = undefined
    for (const field of level.fields) {
      if (field.kind === 'expanded' && field.name === segment) found = field
    }
    if (found === undefined) return undefined
    level = found.level
  }
  return found
}
