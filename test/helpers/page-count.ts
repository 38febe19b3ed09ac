/**
 * Whether an offset page of `app.expand.routes` runs its COUNT statement: a
 * page that ends before its limit with rows in it (or the first page) tells
 * its `total` itself; a full page, or an empty one past the first, needs the
 * count. What the reference models of the tests expect.
 */
export function pageRunsCount (rows: number, limit: number, offset: number): boolean {
  return !(rows < limit && (rows > 0 || offset === 0))
}

/** Whether a statement is a list's COUNT (identifiers quoted as any dialect quotes them). */
export function isCountStatement (statement: string): boolean {
  return /^select count\(\*\) as ["`]total["`]/.test(statement)
}
