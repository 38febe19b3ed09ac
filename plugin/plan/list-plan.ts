import type { FastifyRequest } from 'fastify'
import { BadFilterError, BadSortError, ForbiddenError, InvalidOptionError, messages } from '../errors.js'
import { instantOf, isDateText } from '../graph/dates.js'
import { integerText, numberText } from '../graph/checks.js'
import { afterParam, beforeParam, type ListQuery } from '../parse/list-query.js'
import { cursorVersion, type CursorPosition } from './cursors.js'
import { hiddenOnPath, type Visibility } from './plan.js'
import {
  keysOf, type FilterField, type FilterOperator, type ListDeclaration, type RequestedSort, type ValueType,
} from '../routes/list-declarations.js'

const sortParam = 'sort'
const maxInValues = 100

/** One filter of a request, its value read by the field's type. */
export interface RequestedFilter {
  readonly filter: FilterField
  readonly operator: FilterOperator
  /** eq..gte: one value; in: several; null: true for `is null`; contains: the text as given. */
  readonly value: unknown
}

/** A request's filters and sort keys as they apply to its caller: what the list's statements read. */
export interface ResolvedList {
  readonly filters: readonly RequestedFilter[]
  /** The sort keys asked for (and visible), without the primary key that always ends them. */
  readonly sort: readonly RequestedSort[]
  /** The keys the rows are ordered by: `sort`, then the primary key (ascending) unless it is there. */
  readonly keys: readonly RequestedSort[]
  /** Rows per page: `limit` as written (else the route's page size), clamped to the route's maxPageSize. */
  readonly limit: number
}

/** The list part of a request's plan on a generated list route, by its route's pagination. */
export type ListPlan = OffsetListPlan | CursorListPlan

export interface OffsetListPlan extends ResolvedList {
  readonly kind: 'offset'
  readonly offset: number
}

export interface CursorListPlan extends ResolvedList {
  readonly kind: 'cursor'
  /** The cursor the page follows (`after`) or precedes (`before`); undefined: the first page. */
  readonly cursor: { readonly direction: 'after' | 'before'; readonly position: CursorPosition } | undefined
  /** Canonical text of what a cursor of this list is bound to: route, caller, filters (typed), sort keys. */
  readonly binding: string
}

/** A generated list route, for the list part of its requests' plans: made once, when the route is registered. */
export interface ListTarget {
  readonly declaration: ListDeclaration
  readonly pagination: ListPlan['kind']
  readonly pageSize: number
  readonly maxPageSize: number
  /** onInvalidExpand 'ignore': filters and sort keys on hidden fields are dropped instead of a 403. */
  readonly ignoreHidden: boolean
  /** Cursor pages: the `cursorBinding` option, asked for the caller's identity. */
  readonly cursorBinding: ((request: FastifyRequest) => string) | undefined
  /** The route's URL as `routes()` was given it, when Fastify does not tell the full one. */
  readonly prefix: string
  /** The keys of a page without `sort`: the primary key, ascending (shared by every such request). */
  readonly primaryKeyOrder: readonly RequestedSort[]
}

/** The request's filters and sort, for `visibility`: what `resolveList` reads of the caller. */
interface ListCaller {
  readonly visibility: Visibility
  readonly ignoreHidden: boolean
}

const noFilters: readonly RequestedFilter[] = Object.freeze([])
const noSort: readonly RequestedSort[] = Object.freeze([])

/** The list route's target, its per-route parts computed once. */
export function listTarget (settings: Omit<ListTarget, 'primaryKeyOrder'>): ListTarget {
  return Object.freeze({ ...settings, primaryKeyOrder: Object.freeze(keysOf(settings.declaration, [])) })
}

/**
 * The list part of a request's plan: its filters, sort keys and cursor as
 * they apply to the caller `visibility` describes (the visibility its
 * expansion was planned with), and its page. Made with the expansion part,
 * from the same query: see request-plan.ts.
 */
export function planList (target: ListTarget, query: ListQuery, request: FastifyRequest, visibility: Visibility): ListPlan {
  const limit = Math.min(query.limit ?? target.pageSize, target.maxPageSize)
  const { declaration } = target
  if (target.pagination === 'offset') {
    const offset = query.offset ?? 0
    // A page in primary key order, unfiltered, the most common list: nothing to resolve, no array made.
    if (query.filters.length === 0 && query.sort.length === 0) {
      return { kind: 'offset', filters: noFilters, sort: noSort, keys: target.primaryKeyOrder, limit, offset }
    }
    const { filters, sort } = resolveList(declaration, query, { visibility, ignoreHidden: target.ignoreHidden })
    return { kind: 'offset', filters, sort, keys: keysOf(declaration, sort), limit, offset }
  }
  const caller = {
    // The full URL (with the prefixes of every plugin it is registered in): two mounts of one list never share cursors.
    route: `GET ${request.routeOptions.url ?? target.prefix}`,
    identity: identityOf(request, target.cursorBinding),
  }
  const { filters, sort } = resolveList(declaration, query, { visibility, ignoreHidden: target.ignoreHidden })
  const keys = keysOf(declaration, sort)
  const binding = bindingOf(declaration, caller, filters, keys)
  const cursor = query.after !== undefined
    ? { direction: 'after' as const, position: declaration.cursors.readCursor(query.after, keys, binding, afterParam) }
    : query.before !== undefined
      ? { direction: 'before' as const, position: declaration.cursors.readCursor(query.before, keys, binding, beforeParam) }
      : undefined
  return { kind: 'cursor', filters, sort, keys, limit, cursor, binding }
}

/**
 * The request's filters and sort keys as they apply to `caller`.
 * A filter or sort key on a field `fieldsFor` hides from the caller is a
 * 403 whatever its operator or value (dropped under `onInvalidExpand:
 * 'ignore'`), checked before either is read; a name the route does not
 * take is a 400 whose message lists only what the caller may use. A cursor
 * (read by `planList`) must have been made by this route for the same
 * effective filters and sort (and identity, with `cursorBinding`), else 400.
 */
function resolveList (
  declaration: ListDeclaration, request: Pick<ListQuery, 'filters' | 'sort'>, caller: ListCaller
): Pick<ResolvedList, 'filters' | 'sort'> {
  const hiddenFilter = (filter: FilterField) => hiddenOnPath(caller.visibility, declaration.node, filter.path.split('.'))
  // A sort path is hidden where any field on it is.
  const hiddenSort = (name: string) => hiddenOnPath(caller.visibility, declaration.node, name.split('.'))
  const filters: RequestedFilter[] = []
  for (const { path, operator, raw, written } of request.filters) {
    const filter = declaration.filters.get(path)
    if (filter === undefined) {
      const usable = [...declaration.filters.values()].filter((filter) => !hiddenFilter(filter)).map((filter) => filter.path)
      throw new BadFilterError(messages.unknownFilter(declaration.node.name, path, usable))
    }
    if (hiddenFilter(filter)) {
      if (caller.ignoreHidden) continue
      throw new ForbiddenError(messages.hiddenFilter(path))
    }
    const op = (operator === '' ? 'eq' : operator) as FilterOperator
    if (!filter.operators.includes(op)) {
      throw new BadFilterError(messages.badFilterOperator(declaration.node.name, path, operator, filter.operators))
    }
    filters.push({ filter, operator: op, value: readFilterValue(filter, op, raw, written) })
  }
  const sort: RequestedSort[] = []
  const names = new Set<string>()
  for (const { name, descending } of request.sort) {
    const field = declaration.sortFields.get(name)
    if (field === undefined) {
      const usable = [...declaration.sortFields.keys()].filter((name) => !hiddenSort(name))
      throw new BadSortError(messages.unknownSort(declaration.node.name, name, usable))
    }
    if (hiddenSort(name)) {
      if (caller.ignoreHidden) continue
      throw new ForbiddenError(messages.hiddenSort(name))
    }
    if (names.has(name)) throw new BadSortError(messages.sortRepeated(sortParam, name))
    names.add(name)
    sort.push({ field, descending })
    // The primary key is unique: keys after it could never order anything. (One part of a composite key is not.)
    if (declaration.primaryKey.length === 1 && field.column === declaration.primaryKey[0]!.column) break
  }
  return { filters, sort }
}

/** The `cursorBinding` option's answer for a request: a string, else the route's misconfiguration (500). */
function identityOf (request: FastifyRequest, cursorBinding: ListTarget['cursorBinding']): string | undefined {
  if (cursorBinding === undefined) return undefined
  const identity = cursorBinding(request)
  if (typeof identity !== 'string') throw new InvalidOptionError(messages.cursorBindingNotString(typeof identity))
  return identity
}

/**
 * What a cursor is bound to, as JSON (never a join of raw text, which two
 * different requests could share): the resource, the route's method and
 * full URL, the caller's identity when the route binds cursors to it, each
 * filter as (path, operator, value read by its type) in a canonical order,
 * and the sort keys.
 */
function bindingOf (
  declaration: ListDeclaration,
  caller: { readonly route: string; readonly identity: string | undefined },
  filters: readonly RequestedFilter[],
  keys: readonly RequestedSort[]
): string {
  const filterTuples = filters.map(({ filter, operator, value }) => [filter.path, operator, value] as const)
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
  const sortTuples = keys.map(({ field, descending }) => [field.name, descending])
  return JSON.stringify([cursorVersion, declaration.node.qualifiedName, caller.route, caller.identity ?? null, filterTuples, sortTuples])
}

function readFilterValue (filter: FilterField, operator: FilterOperator, raw: string, written: string): unknown {
  switch (operator) {
    case 'null':
    case 'exists':
      if (raw !== 'true' && raw !== 'false') throw new BadFilterError(messages.badFilterValue(written, 'true or false', raw))
      return raw === 'true'
    case 'in': {
      const items = raw.split(',')
      if (items.length > maxInValues) throw new BadFilterError(messages.tooManyValues(written, maxInValues))
      return items.map((item) => readTyped(filter.type, item, written))
    }
    case 'contains':
      if (raw.length > filter.containsMaxLength) throw new BadFilterError(messages.tooLong(written, raw.length, filter.containsMaxLength))
      // The text as given: each dialect writes its own search (ExpandDialect's `contains`).
      return raw
    case 'eq': case 'ne': case 'lt': case 'lte': case 'gt': case 'gte':
      return readTyped(filter.type, raw, written)
    default:
      // A new operator does not compile until it says how its value is read.
      return operator satisfies never
  }
}

/**
 * A value of the field's type, as the database compares it (booleans as 1
 * and 0 on every dialect, a date-time as its instant in UTC written by
 * `toISOString()`), or a 400.
 */
export function readTyped (type: ValueType, raw: string, written: string): unknown {
  const refuse = (what: string): never => { throw new BadFilterError(messages.badFilterValue(written, what, raw)) }
  switch (type.kind) {
    case 'integer': {
      const number = integerText.test(raw) ? Number(raw) : NaN
      return Number.isSafeInteger(number) ? number : refuse(`an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`)
    }
    case 'number': {
      const number = numberText.test(raw) ? Number(raw) : NaN
      return Number.isFinite(number) ? number : refuse('a number')
    }
    case 'boolean':
      return raw === 'true' ? 1 : raw === 'false' ? 0 : refuse('true or false')
    case 'string':
      if (type.format === 'date') {
        if (!isDateText(raw)) refuse('a date (YYYY-MM-DD)')
      } else if (type.format === 'date-time') {
        const instant = instantOf(raw, true)
        return instant === undefined ? refuse('a date-time (RFC 3339, with a time zone)') : new Date(instant).toISOString()
      }
      return raw
  }
}

// An expanded list's `where[path.field]` values are read as a list's filter values (plan/expanded-list-plan.ts).
export { readFilterValue }
