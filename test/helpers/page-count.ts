import { inOneWave, type Dialect } from '../fixtures/dialects.js'

/**
 * Whether an offset page of `app.expand.routes` runs its COUNT statement: a
 * page that ends before its limit with rows in it (or the first page) tells
 * its `total` itself; a full page, or an empty one past the first, needs the
 * count. Where the count goes out with the page (`countGoesWithPage`), it is
 * sent whatever the page holds. What the reference models of the tests expect.
 */
export function pageRunsCount (rows: number, limit: number, offset: number, withPage = false): boolean {
  return withPage || !(rows < limit && (rows > 0 || offset === 0))
}

/**
 * Whether an offset page's COUNT goes out with the page, before the page
 * tells whether it needs it (plugin/routes/list-pages.ts's
 * `pageAndTotal`): where statements go out together (`inOneWave`), on a page
 * without filters.
 */
export function countGoesWithPage (dialect: Dialect, filtered: boolean): boolean {
  return inOneWave(dialect) && !filtered
}

/** Whether a statement is a list's COUNT (identifiers quoted as any dialect quotes them). */
export function isCountStatement (statement: string): boolean {
  return /^select count\(\*\) as ["`]total["`]/.test(statement)
}
