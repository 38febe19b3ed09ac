import { BadCursorError, BadFilterError, BadSortError, InvalidOptionError, messages } from '../errors.js'

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
 * What the route's validator reads of a query string besides limit, offset
 * and expansions: its form only. Names, operators, values and the cursor
 * are read by `resolve`, for the caller, so that a field `fieldsFor` hides
 * answers the same 403 whatever is written with it.
 */
export interface ListRequest {
  readonly filters: readonly WrittenFilter[]
  readonly sort: ReadonlyArray<{ readonly name: string; readonly descending: boolean }>
  readonly after: string | undefined
}

/** A request's filters and sort as they apply to its caller, and the keyset values of its `after` cursor. */

const filterParam = 'filter'
const sortParam = 'sort'
export const afterParam = 'after'
/** Bounds on what one request may ask, so a query string cannot make a statement of any size. */
const maxFilters = 20
/** The longest filter value of any operator but `contains`, in characters. */
export const maxValueLength = 1000
const maxCursorLength = 4000

/**
 * Takes `filter[...]`, `sort` and `after` apart from a parsed query string
 * (keys as written: `filter[born][gte]`, or nested objects from a parser
 * that builds them). Only their form is checked here (the 400 of what is
 * not a filter, a repeated or too long parameter): what they name is read
 * by `resolveList` (plan/list-plan.ts), once the caller is known. The route's validator reads the
 * query to answer that 400 before any hook; the handler reads again the
 * query it is given, which a hook may have replaced or changed: never
 * conditions read from another object, never none.
 */
export function readListQuery (query: unknown, cursors: boolean): ListRequest {
  if (typeof query !== 'object' || query === null) {
    throw new InvalidOptionError(messages.listQueryNotObject(query === null ? 'null' : typeof query))
  }
  const filters: WrittenFilter[] = []
  const seen = new Set<string>()
  const add = (path: string, operator: string, raw: unknown) => {
    const written = `${filterParam}[${path}]${operator === '' ? '' : `[${operator}]`}`
    if (typeof raw !== 'string') throw new BadFilterError(messages.filterNotOnce(written))
    if (raw.length > maxValueLength) throw new BadFilterError(messages.tooLong(written, raw.length, maxValueLength))
    const id = `${path}[${operator === '' ? 'eq' : operator}]`
    if (seen.has(id)) throw new BadFilterError(messages.filterRepeated(written))
    seen.add(id)
    if (seen.size > maxFilters) throw new BadFilterError(messages.tooManyFilters(maxFilters))
    filters.push({ path, operator, raw, written })
  }
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (name === filterParam) {
      readNestedFilters(value, add)
      continue
    }
    if (!name.startsWith(`${filterParam}[`)) continue
    const match = /^filter\[([^[\]]+)\](?:\[([^[\]]+)\])?$/.exec(name)
    if (match === null) throw new BadFilterError(messages.notAFilter(name))
    add(match[1]!, match[2] ?? '', value)
  }
  const sort = readSortText((query as Record<string, unknown>)[sortParam])
  const after = (query as Record<string, unknown>)[afterParam]
  if (!cursors || after === undefined) return { filters, sort, after: undefined }
  if (typeof after !== 'string' || after.length > maxCursorLength) throw new BadCursorError(messages.badCursor(afterParam))
  return { filters, sort, after }
}

/** The `sort` parameter taken apart: names, each maybe `-`; empty items skipped. */
function readSortText (raw: unknown): ListRequest['sort'] {
  if (raw === undefined) return []
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
