import { BadCursorError, BadFilterError, BadSortError, InvalidOptionError, messages } from '../errors.js'
import { integerParameter } from './integers.js'

/** A `filter[...]` parameter as written: read against the route's filters once the caller is known. */
export interface WrittenFilter {
  readonly path: string
  /** The operator as written: '' for `filter[path]=value` (eq). */
  readonly operator: string
  readonly raw: string
  /** The parameter's name, for messages: `filter[born][gte]`. */
  readonly written: string
}

/**
 * The list part of a request's query, as written: the filters' names,
 * operators and values, the sort names and the cursor are read by
 * `planList` (plan/list-plan.ts), for the caller, so that a field
 * `fieldsFor` hides answers the same 403 whatever is written with it.
 */
export interface ListQuery {
  readonly filters: readonly WrittenFilter[]
  readonly sort: readonly WrittenSortKey[]
  /** The `after` cursor (cursor pages only); undefined: the first page, or a page `before` a cursor. */
  readonly after: string | undefined
  /** The `before` cursor (cursor pages only): the page before it. Never with `after`. */
  readonly before: string | undefined
  /** `limit` as written (a safe integer from 1), not yet clamped to the route's maxPageSize. */
  readonly limit: number | undefined
  /** `offset` (offset pages only). */
  readonly offset: number | undefined
}

export interface WrittenSortKey {
  readonly name: string
  readonly descending: boolean
}

const filterParam = 'filter'
const sortParam = 'sort'
export const afterParam = 'after'
export const beforeParam = 'before'
/** Bounds on what one request may ask, so a query string cannot make a statement of any size. */
const maxFilters = 20
/** The longest filter value of any operator but `contains`, in characters. */
export const maxValueLength = 1000
const maxCursorLength = 4000
// Most lists are asked without filters or sort: one shared empty list each, not two new arrays per request.
const noFilters: readonly WrittenFilter[] = Object.freeze([])
const noSort: readonly WrittenSortKey[] = Object.freeze([])

/**
 * Takes `filter[...]`, `sort`, `after`, `limit` and `offset` apart from a
 * parsed query string (keys as written: `filter[born][gte]`, or nested
 * objects from a parser that builds them). Only their form is checked here
 * (the 400 of what is not a filter, a repeated or too long parameter, a
 * page size that is not an integer): what they name is read by `planList`
 * (plan/list-plan.ts), once the caller is known. The route's validator
 * reads the query to answer that 400 before any hook; the request's plan
 * reads the query as it is when the plan is made, which a hook may have
 * replaced or changed: never conditions read from another object, never none.
 */
export function readListQuery (query: unknown, cursors: boolean): ListQuery {
  if (typeof query !== 'object' || query === null) {
    throw new InvalidOptionError(messages.listQueryNotObject(query === null ? 'null' : typeof query))
  }
  let filters: WrittenFilter[] | undefined
  let seen: Set<string> | undefined
  const add = (path: string, operator: string, raw: unknown) => {
    const written = `${filterParam}[${path}]${operator === '' ? '' : `[${operator}]`}`
    if (typeof raw !== 'string') throw new BadFilterError(messages.filterNotOnce(written))
    if (raw.length > maxValueLength) throw new BadFilterError(messages.tooLong(written, raw.length, maxValueLength))
    const id = `${path}[${operator === '' ? 'eq' : operator}]`
    seen ??= new Set()
    if (seen.has(id)) throw new BadFilterError(messages.filterRepeated(written))
    seen.add(id)
    if (seen.size > maxFilters) throw new BadFilterError(messages.tooManyFilters(maxFilters))
    ;(filters ??= []).push({ path, operator, raw, written })
  }
  const record = query as Record<string, unknown>
  for (const name of Object.keys(record)) {
    if (name === filterParam) {
      readNestedFilters(record[name], add)
      continue
    }
    if (!name.startsWith(`${filterParam}[`)) continue
    const match = /^filter\[([^[\]]+)\](?:\[([^[\]]+)\])?$/.exec(name)
    if (match === null) throw new BadFilterError(messages.notAFilter(name))
    add(match[1]!, match[2] ?? '', record[name])
  }
  const sort = readSortText(record[sortParam])
  const limit = integerParameter(record, 'limit', 1)
  const offset = cursors ? undefined : integerParameter(record, 'offset', 0)
  const after = cursors ? cursorText(record, afterParam) : undefined
  const before = cursors ? cursorText(record, beforeParam) : undefined
  if (after !== undefined && before !== undefined) throw new BadCursorError(messages.cursorBothWays(afterParam, beforeParam))
  return { filters: filters ?? noFilters, sort, after, before, limit, offset }
}

/** A cursor parameter as written, once and not too long (what it holds is read by the route's CursorCodec), else 400. */
function cursorText (record: Record<string, unknown>, name: string): string | undefined {
  const value = record[name]
  if (value !== undefined && (typeof value !== 'string' || value.length > maxCursorLength)) {
    throw new BadCursorError(messages.badCursor(name))
  }
  return value
}

/** The `sort` parameter taken apart: names, each maybe `-`; empty items skipped. */
function readSortText (raw: unknown): readonly WrittenSortKey[] {
  if (raw === undefined) return noSort
  if (typeof raw !== 'string') throw new BadSortError(messages.sortNotOnce(sortParam))
  return raw.split(',').filter((item) => item !== '').map((item) => {
    const descending = item.startsWith('-')
    return { name: descending ? item.slice(1) : item, descending }
  })
}

function readNestedFilters (value: unknown, add: (path: string, operator: string, raw: unknown) => void): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadFilterError(messages.notAFilter(filterParam))
  }
  for (const [path, inner] of Object.entries(value as Record<string, unknown>)) {
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
      for (const [operator, raw] of Object.entries(inner as Record<string, unknown>)) add(path, operator, raw)
    } else add(path, '', inner)
  }
}
