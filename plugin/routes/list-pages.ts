import type { ExpansionPlan } from '../plan/plan.js'
import type { ListPlan } from '../plan/list-plan.js'
import type { ResourceNode } from '../graph/resource-graph.js'
import type { DerivedField } from '../graph/derived-fields.js'
import { BadFilterError, messages } from '../errors.js'
import { loadRows, runsConcurrently } from '../load/batch-loader.js'
import type { LoadContext } from '../load/load-context.js'
import { ignore, withOneWave, type OneWave } from '../load/one-wave.js'
import { derivedSource } from '../sql/aggregate-statements.js'
import { keysetCondition, orderBy, selectKeys, sortJoins } from '../sql/list-order.js'
import { listConditions, type Condition } from '../sql/list-statements.js'
import { selectedRow, selectLevel, tableOf, type AnySelect, type Row } from '../sql/selection.js'
import type { ScopeParts } from '../sql/statement-templates.js'
import { orderedByKey } from './detail-keys.js'
import type { ListDeclaration } from './list-declarations.js'
import { isUnstorableValue, rootStatement } from './route-statements.js'

/** An offset page: `total` unless the route has `total: false`. */
export interface ListPage<T = Row> {
  data: T[]
  limit: number
  offset: number
  total?: number
}

/**
 * A cursor page: `next` is the `after` of the following page, null on the
 * last; `prev` the `before` of the page before, null on a page asked for
 * without a cursor and on a `before` page with no earlier row.
 */
export interface CursorPage<T = Row> {
  data: T[]
  limit: number
  next: string | null
  prev: string | null
}

/** What a generated list route reads its pages with, settled when the route is registered. */
export interface ListRoute {
  readonly node: ResourceNode
  /** The primary key's columns, which end every order. */
  readonly primaryKeyColumns: readonly string[]
  /** Offset pages: whether the body has `total` (and a COUNT is read for it). */
  readonly withTotal: boolean
  /** Cursor pages (`{ data, limit, next, prev }`) rather than offset pages. */
  readonly cursors: boolean
  readonly declaration: ListDeclaration
  /** What names the route's COUNT statements among the statement templates. */
  readonly countSite: object
}

/**
 * The page a list request asks for (its plan's list part): the rows under the
 * request's scope, filters, sort and page, and their relations as its plan
 * says. An unfiltered offset page in key order reads with the plain
 * statements of a list; any other through the list's conditions and order.
 */
export async function readListPage (
  route: ListRoute, loadContext: LoadContext, plan: ExpansionPlan, list: ListPlan
): Promise<ListPage | CursorPage> {
  const { node, primaryKeyColumns, withTotal, cursors, declaration, countSite } = route
  const { limit } = list
  const offset = list.kind === 'offset' ? list.offset : 0
  const { db, templates } = loadContext
  // With a scope, the statements carry the request's condition first: templates per shape of that condition.
  const scope = loadContext.scope(node)
  const parts = loadContext.scopeParts(node)
  // A page in primary key order, unfiltered: the statements of a plain list.
  if (list.kind === 'offset' && list.filters.length === 0 && list.sort.length === 0) {
    const plainPage = ([limit, offset]: readonly unknown[]) =>
      orderedByKey(selectLevel(db, plan.root, scope), primaryKeyColumns).limit(limit as number).offset(offset as number)
    const pageValues = [limit, offset]
    // The relations' statements go with the page's where the database loads in one wave (load/one-wave.ts).
    const statement = { build: () => plainPage(pageValues), values: pageValues, purpose: 'page', scope: parts }
    const [{ rows, total }, wave] = await withOneWave(loadContext, plan.root, statement, async (together) =>
      await pageAndTotal(pageRead('page', pageValues, plainPage, parts), () => countRows([], [], ''), together))
    return pageOf(rows, await withRelations(rows, total, wave))
  }

  const { keys } = list
  // A page before a cursor is the page after it in the reversed order, read backwards.
  const backwards = list.kind === 'cursor' && list.cursor?.direction === 'before'
  const order = backwards ? keys.map(({ field, descending }) => ({ field, descending: !descending })) : keys
  // The statement binds, in order: the scopes of the aggregates it reads, the sort joins' scopes, the route's scope,
  // the filters, the cursor's keyset.
  const leadingValues: unknown[] = []
  // Aggregates and computed fields filtered or sorted by: the table read through a subquery that adds them.
  const derived = derivedOf(list.filters.map(({ filter }) => filter.derived), keys.map(({ field }) => field.derived))
  const from = derived.length === 0 ? undefined : derivedSource(loadContext, node, derived, leadingValues)
  const joined = sortJoins(selectLevel(db, plan.root, scope, from?.source), order, loadContext, leadingValues)
  const values: unknown[] = []
  const { conditions, shape } = listConditions(node, list, loadContext, values)
  const filterValues = [...values]
  const keyset = list.kind === 'cursor' && list.cursor !== undefined
    ? keysetCondition(order, list.cursor.position.values, list.cursor.position.inclusive, values, loadContext.dialect)
    : undefined
  // What the related scopes write, with or without values, tells the statement's templates apart (in `purpose`); one
  // that cannot be told apart by shape: the statement is built for this request alone.
  const fromShape = from === undefined ? '' : from.shape
  const statementScope = shape === null || joined.shape === null || fromShape === null
    ? forThisRequest
    : behindRelatedScopes(`${fromShape}|${joined.shape}`, leadingValues)
  const sortShape = order.map(({ field, descending }) => `${descending ? '-' : ''}${field.name}`).join(',')
  const page = () => {
    const filtered = conditions.reduce((current, condition) => current.where(condition), joined.query)
    const ordered = orderBy(keyset === undefined ? filtered : filtered.where(keyset.condition), order, loadContext.dialect)
    return cursors ? selectKeys(ordered, order, loadContext.dialect) : ordered
  }
  if (list.kind === 'cursor') {
    const purpose = `cursor${shape ?? ''}|${sortShape}|${joined.shape ?? ''}|${fromShape ?? ''}|${keyset?.shape ?? ''}`
    // The page reads one row past its limit (is there a next page?); its relations take their keys from the page
    // without it (the same statement, to its limit), so that they never read the rows of a parent not answered.
    const pageValues = [...values, limit]
    const statement = { build: () => page().limit(limit), values: pageValues, purpose, scope: statementScope }
    const readPage = () => page().limit(limit + 1)
    const [selected, wave] = await withOneWave(loadContext, plan.root, statement, async () => await filtered(
      templates.rows(db, plan.root, purpose, [...values, limit + 1], readPage, false, statementScope, rootStatement(loadContext, 'page'))
    ))
    const more = selected.length > limit
    if (more) selected.length = limit
    if (backwards) selected.reverse()
    const { cursor } = list
    const at = (row: Row) => declaration.cursors.cursorAfter(row, keys, list.binding)
    // A page that came back empty hands back its own cursor's position, counted the other way round:
    // the rows from it (inclusive) are those not before it (exclusive), and so on.
    const turned = () => declaration.cursors.cursorAt(cursor!.position.values, !cursor!.position.inclusive, list.binding)
    const first = selected[0]
    const last = selected[selected.length - 1]
    const next = backwards ? (last === undefined ? turned() : at(last)) : more ? at(last!) : null
    const prev = cursor === undefined
      ? null
      : backwards ? (more ? at(first!) : null) : first === undefined ? turned() : at(first)
    // The cursor columns read, each row keeps the level's own columns only.
    const rows = selected.map(selectedRow(plan.root))
    await loadRows(loadContext, plan.root, rows, wave)
    return { data: rows, limit, next, prev } satisfies CursorPage
  }
  const purpose = `page${shape ?? ''}|${sortShape}|${joined.shape ?? ''}|${fromShape ?? ''}`
  const offsetPage = () => page().limit(limit).offset(offset)
  const pageValues = [...values, limit, offset]
  const statement = { build: offsetPage, values: pageValues, purpose, scope: statementScope }
  const [{ rows, total }, wave] = await withOneWave(loadContext, plan.root, statement, async (together) => await filtered(pageAndTotal(
    pageRead(purpose, pageValues, offsetPage, statementScope),
    () => countRows(conditions, filterValues, shape, filterSource()),
    // A filtered page is often shorter than its limit (a search), and its COUNT repeats the filters over every row:
    // it follows the page, so that a search runs once where the page tells its total.
    together && list.filters.length === 0
  )))
  return pageOf(rows, await withRelations(rows, total, wave))

  /**
   * An offset page's statement, named by `purpose` among the templates: read
   * alone (`plain`), or reading its COUNT too (`counted`, `withTotalColumn`).
   */
  function pageRead (
    purpose: string, values: readonly unknown[], build: (values: readonly unknown[]) => AnySelect, statementScope: ScopeParts | undefined
  ): PageRead {
    return {
      plain: async () =>
        await templates.rows(db, plan.root, purpose, values, build, false, statementScope, rootStatement(loadContext, 'page')),
      counted: async () => await templates.rows(db, plan.root, `${purpose} and total`, values, (bound) => withTotalColumn(build(bound)),
        false, countedScope(statementScope), rootStatement(loadContext, 'page'))
    }
  }

  /**
   * What the count reads: the table, or through a subquery the derived fields its filters need, with the values of
   * the related scopes that subquery reads (bound first) and their shape.
   */
  function filterSource (): { source: ReturnType<typeof derivedSource>['source']; shape: string | null; values: unknown[] } | undefined {
    const filtering = derivedOf(list.filters.map(({ filter }) => filter.derived))
    if (filtering.length === 0) return undefined
    const values: unknown[] = []
    return { ...derivedSource(loadContext, node, filtering, values), values }
  }

  /** The offset page's body: `total` only where the route counts. */
  function pageOf (rows: Row[], total: number | undefined): ListPage {
    return total === undefined ? { data: rows, limit, offset } : { data: rows, limit, offset, total }
  }

  /**
   * The page's rows, and its `total` where the route counts: told by the
   * page itself when it ends before the limit with rows in it (or is the
   * first page), else the COUNT's (which repeats the page's filters over
   * every row). Where statements go out together (one wave, a page without
   * filters), the page's own statement reads the count (`counted`): a round
   * trip saved on a full page for a COUNT's work on a short one, and the
   * total read with the rows. Else the count is sent only for a full page or
   * one past the end, once the page has answered (in one wave, only for a page
   * past the end, which has no row to carry it); where the load's statements
   * run at the same time, with the first level of the page's relations.
   */
  async function pageAndTotal (
    page: PageRead, count: () => Promise<number>, counted: boolean
  ): Promise<{ rows: Row[]; total: Total | undefined }> {
    const tellsTotal = (rows: readonly Row[]) => rows.length < limit && (rows.length > 0 || offset === 0)
    if (!withTotal) return { rows: await page.plain(), total: undefined }
    if (!counted) {
      const rows = await page.plain()
      return { rows, total: tellsTotal(rows) ? offset + rows.length : await counting(count) }
    }
    const read = await page.counted()
    // Each row without the count: the level's own columns, as the plain page's rows have them.
    const rows = read.map(selectedRow(plan.root))
    if (tellsTotal(rows)) return { rows, total: offset + rows.length }
    return { rows, total: read.length > 0 ? Number(read[0]![totalColumn]) : await counting(count) }
  }

  /**
   * The count sent: where the load's statements run at the same time
   * (`runsConcurrently`), its answer awaited by `withRelations` (`pending`,
   * never an unhandled rejection before it is); else its answer, before the
   * relations' statements are sent.
   */
  async function counting (count: () => Promise<number>): Promise<Total> {
    if (!runsConcurrently(loadContext)) return await count()
    const pending = filtered(count())
    pending.catch(ignore)
    return { pending }
  }

  /**
   * Loads the page's relations, the page's COUNT (when one was sent) read in
   * the meantime: in the round trip of the first level's statements rather than
   * in one of its own. Both settle before the request is answered; the count's
   * error first, as it was sent first.
   */
  async function withRelations (rows: Row[], total: Total | undefined, wave: OneWave | undefined): Promise<number | undefined> {
    if (typeof total !== 'object') {
      await loadRows(loadContext, plan.root, rows, wave)
      return total
    }
    const [loaded, counted] = await Promise.allSettled([loadRows(loadContext, plan.root, rows, wave), total.pending])
    if (counted.status === 'rejected') throw counted.reason
    if (loaded.status === 'rejected') throw loaded.reason
    return counted.value
  }

  /**
   * A filter value the column's type refuses (an unstorable value) is the
   * filter's fault: a 400, not a 500. Values of the types the plugin reads
   * never get here (list-query.ts compares them as if the column could hold
   * them, as SQLite does); what remains is a column of a type the field's
   * schema does not describe (a fraction for an integer column, text that
   * is not a uuid for a uuid column).
   */
  async function filtered<T> (statements: Promise<T>): Promise<T> {
    try {
      return await statements
    } catch (error) {
      if (list.filters.length > 0 && isUnstorableValue(error)) throw new BadFilterError(messages.unstorableFilterValue)
      throw error
    }
  }

  /**
   * The page's statement also reading its COUNT (`totalColumn`): a subquery of
   * its select list, under the request's scope, written before the page's own
   * conditions, so that its values are bound first (`countedScope`).
   */
  function withTotalColumn (page: AnySelect): AnySelect {
    return page.select((eb) => {
      const count = (eb.selectFrom(tableOf(node)) as AnySelect).select((inner) => inner.fn.countAll().as('total'))
      return (scope === undefined ? count : count.where(scope)).as(totalColumn)
    })
  }

  /** The scope parts of a page that reads its count (`withTotalColumn`): the scope's values, then the page's own. */
  function countedScope (page: ScopeParts | undefined): ScopeParts | undefined {
    if (parts === undefined || parts.values.length === 0) return page
    if (page === undefined || page.key === null || parts.key === null) return { key: null, values: [] }
    return { key: `count ${parts.key}|${page.key}`, values: [...parts.values, ...page.values], distinct: page.values }
  }

  /**
   * The scope parts of a statement that writes related scopes (`shape`, their
   * values `leading`) before the route's own: the route's parts when they bind
   * nothing, else both, the related first.
   */
  function behindRelatedScopes (shape: string, leading: readonly unknown[]): ScopeParts | undefined {
    if (leading.length === 0) return parts
    return { key: `${shape}|${parts?.key ?? ''}`, values: [...leading, ...(parts?.values ?? [])] }
  }

  /** The rows of the list under the request's scope and filters: one COUNT statement. */
  async function countRows (
    conditions: readonly Condition[], values: readonly unknown[], shape: string | null, from?: ReturnType<typeof filterSource>
  ): Promise<number> {
    const countScope = shape === null || from?.shape === null ? forThisRequest : behindRelatedScopes(from?.shape ?? '', from?.values ?? [])
    const purpose = `count${shape ?? ''}${from === undefined ? '' : `|${from.shape ?? ''}`}`
    const [count] = await templates.rows(db, countSite, purpose, values, () => {
      const count = (db.selectFrom(from?.source ?? tableOf(node)) as AnySelect).select((eb) => eb.fn.countAll().as('total'))
      const scoped = scope === undefined ? count : count.where(scope)
      return conditions.reduce((current, condition) => current.where(condition), scoped)
    }, false, countScope, rootStatement(loadContext, 'count'))
    return Number(count!.total)
  }
}

/** The scope parts of a statement whose related scopes cannot be told apart by shape: built for this request alone. */
const forThisRequest: ScopeParts = Object.freeze({ key: null, values: [] })

/** A page's total: known, or its COUNT's answer still to come (`pending`), read while the page's relations load. */
type Total = number | { readonly pending: Promise<number> }

/** An offset page's statement: alone, or reading its COUNT too. */
interface PageRead {
  readonly plain: () => Promise<Row[]>
  readonly counted: () => Promise<Row[]>
}

/** Of each row of a page that reads its COUNT (`withTotalColumn`): the count. */
const totalColumn = '__expand_total'

/** The distinct aggregates and computed fields among those a list's filters and sort keys read, in order. */
function derivedOf (...lists: ReadonlyArray<ReadonlyArray<DerivedField | undefined>>): DerivedField[] {
  const found = new Set<DerivedField>()
  for (const list of lists) for (const field of list) if (field !== undefined) found.add(field)
  return [...found]
}
