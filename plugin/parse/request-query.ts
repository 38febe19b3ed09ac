import type { ResolvedOptions } from '../options.js'
import { readListQuery, type ListQuery } from './list-query.js'
import { readExpansionQuery, type RawExpansionQuery } from './query.js'

/**
 * What one request's query string asks, as written: the first stage of a
 * request (engine.ts plans it into the request's plan, plan/request-plan.ts).
 * Read once, from the query object as it is when the request is planned.
 */
export interface RequestQuery {
  /** `expand`, `fields` and `omit`. */
  readonly expansion: RawExpansionQuery
  /** On a generated list route: its filters, sort, cursor and page as written; undefined on any other route. */
  readonly list: ListQuery | undefined
}

/** How a generated list route reads the list part of its query. */
export interface ListQueryForm {
  /** Cursor pages read `after`; offset pages read `offset`. */
  readonly pagination: 'offset' | 'cursor'
}

/**
 * The query string of one request taken apart: the expansion part, and with
 * `list` (a generated list route) the list part. The expansion part first: a
 * malformed `expand` is answered as on any expandable route, whatever the
 * list part holds.
 */
export function readRequestQuery (query: unknown, options: ResolvedOptions, list: ListQueryForm): RequestQuery & { list: ListQuery }
export function readRequestQuery (query: unknown, options: ResolvedOptions, list: undefined): RequestQuery & { list: undefined }
export function readRequestQuery (query: unknown, options: ResolvedOptions, list: ListQueryForm | undefined): RequestQuery {
  const expansion = readExpansionQuery(query, options)
  return { expansion, list: list === undefined ? undefined : readListQuery(query, list.pagination === 'cursor') }
}
