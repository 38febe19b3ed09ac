import { inOneWave, type Dialect } from '../fixtures/dialects.js'

/**
 * Whether an offset page of `app.expand.routes` runs a COUNT statement of its
 * own: a page that ends before its limit with rows in it (or the first page)
 * tells its `total` itself; a full page, or an empty one past the first, needs
 * the count. Where the page's statement reads the count (`countGoesWithPage`),
 * only a page past the end runs one: it has no row to carry the count. What the
 * reference models of the tests expect.
 */
export function pageRunsCount (rows: number, limit: number, offset: number, withPage = false): boolean {
  if (withPage) return rows === 0 && offset > 0
  return !(rows < limit && (rows > 0 || offset === 0))
}

/**
 * Whether an offset page's statement reads its COUNT (plugin/routes/list-pages.ts's
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
