import { sql } from 'kysely'
import { selectedNames, waveJoin, waveRow } from './key-subqueries.js'
import type { AnyKysely, AnySelect, Row } from './selection.js'

/** Of every row of a relations statement: the part it belongs to (0: the route's own statement's keys). */
const partColumn = '__expand_part'
/** The common table expression of part N. */
const partTable = (part: number): string => `__expand_part_${part}`
/** The key column a part selects for the part it is the parent of. */
const keyColumnFor = (child: number): string => `__expand_key_${child}`
/** The column of the whole statement at position N: each part's columns have positions of their own. */
const positionColumn = (position: number): string => `__expand_c${position}`

/**
 * One part of a relations statement: a statement read as a common table
 * expression (the route's own statement, or a relation's, keyed by a
 * subquery of its parent part), with the keys each of its child parts reads.
 */
export interface StatementPart {
  /** The part whose rows give this part's keys (undefined for the route's own statement, part 0). */
  readonly parent: number | undefined
  /** The column of the parent's rows whose values are this part's keys (the parent's table's, as in `keyColumnOf`). */
  readonly keyColumn: string | undefined
  /** The statement, given the subquery of its keys (undefined for part 0). */
  readonly statement: (keys: AnySelect | undefined) => AnySelect
  /** Whether the part's own rows come back (a relation's); part 0 sends back only its children's keys. */
  readonly rows: boolean
}

/** What a relations statement's rows are read back by: each part's columns and positions. */
export interface PartsLayout {
  /** Per part: its own columns' names and the position each is read from. */
  readonly columns: ReadonlyArray<ReadonlyArray<readonly [name: string, position: number]>>
  /** Per part: the position of its key column for each child part, by child. */
  readonly keys: ReadonlyArray<ReadonlyMap<number, number>>
}

/**
 * The statement of every relation of a request in one (load/one-wave.ts's
 * `sendInOneStatement`): each part a common table expression, the route's own
 * statement first, each relation's reading its keys from its parent part (so
 * that a parent's statement runs once, whatever its children), and the rows
 * of all parts as one result: each row says its part (`__expand_part`) and
 * holds its part's columns at positions of their own, NULL elsewhere. A
 * first branch that reads no row (`where false`) selects every part's
 * columns, so that each position has its part's type. The rows of a to-many
 * part keep their order (`waveRow`). Its values are bound in the order of its
 * parts: the route's statement's, then each relation's scope.
 */
export function relationsStatement (db: AnyKysely, parts: readonly StatementPart[]): { query: AnySelect; layout: PartsLayout } {
  const queries: AnySelect[] = []
  const childKeys = parts.map(() => new Map<number, string>())
  parts.forEach((part, index) => {
    if (part.parent !== undefined) childKeys[part.parent]!.set(index, part.keyColumn!)
  })
  for (const [index, part] of parts.entries()) {
    const keys = part.parent === undefined
      ? undefined
      : (db.selectFrom(partTable(part.parent)) as AnySelect).select(`${partTable(part.parent)}.${keyColumnFor(index)}`)
    let query = part.statement(keys)
    for (const [child, column] of childKeys[index]!) query = query.select(sql.ref(column).as(keyColumnFor(child)))
    queries.push(query)
  }
  // Positions: a part's own columns (a relation's), then its keys for its children; a to-many part's order shared.
  const columns: Array<Array<readonly [string, number]>> = []
  const keys: Array<Map<number, number>> = []
  const selected: Array<Array<readonly [string, number]>> = []
  let positions = 0
  const orderedParts = new Set<number>()
  for (const [index, query] of queries.entries()) {
    const names = selectedNames(query)
    const own: Array<readonly [string, number]> = []
    const keyPositions = new Map<number, number>()
    const reads: Array<readonly [string, number]> = []
    for (const name of names) {
      if (name === waveRow) {
        orderedParts.add(index)
        continue
      }
      // Every row of a part is a relation row: the column its parent's key matched is not read back.
      if (name === waveJoin) continue
      const child = [...childKeys[index]!.keys()].find((part) => keyColumnFor(part) === name)
      if (child !== undefined) keyPositions.set(child, positions)
      else if (!parts[index]!.rows) continue
      else own.push([name, positions])
      reads.push([name, positions++])
    }
    columns.push(own)
    keys.push(keyPositions)
    selected.push(reads)
  }
  const orderedPart = orderedParts.size === 0 ? undefined : Math.min(...orderedParts)
  /** A branch of the union: part `index`'s rows (its columns, NULL at the others' positions); undefined: the typed first branch. */
  const branch = (from: AnyKysely, index: number | undefined): AnySelect => {
    const tables = index === undefined ? parts.map((_, part) => partTable(part)) : [partTable(index)]
    const items = selected.flatMap((reads, part) => reads.map(([name, position]) =>
      index === undefined || index === part
        ? sql.ref(`${partTable(part)}.${name}`).as(positionColumn(position))
        : sql.lit(null).as(positionColumn(position))))
    const query = (from.selectFrom(tables) as AnySelect).select(sql.lit(index ?? 0).as(partColumn)).select(items)
    if (orderedPart === undefined) return query
    const order = index === undefined ? orderedPart : orderedParts.has(index) ? index : undefined
    return query.select(order === undefined ? sql.lit(null).as(waveRow) : sql.ref(`${partTable(order)}.${waveRow}`).as(waveRow))
  }
  let creator: AnyKysely = db
  for (const [index, query] of queries.entries()) creator = creator.with(partTable(index), () => query) as unknown as AnyKysely
  let union = branch(creator, undefined).where(sql<boolean>`false`)
  for (let index = 0; index < parts.length; index++) union = union.unionAll(branch(db, index))
  if (orderedPart !== undefined) union = union.orderBy(partColumn).orderBy(waveRow)
  return { query: union, layout: { columns, keys } }
}

/** The rows of each part of a relations statement, each with its own columns' names; and per part, its children's keys. */
export function partsOf (rows: readonly Row[], layout: PartsLayout): { rows: Row[][]; keys: Array<Map<number, unknown[]>> } {
  const byPart: Row[][] = layout.columns.map(() => [])
  const keys = layout.keys.map((children) => new Map([...children.keys()].map((child) => [child, [] as unknown[]])))
  for (const row of rows) {
    const part = row[partColumn] as number
    const own: Row = {}
    for (const [name, position] of layout.columns[part]!) own[name] = row[positionColumn(position)]
    byPart[part]!.push(own)
    for (const [child, position] of layout.keys[part]!) keys[part]!.get(child)!.push(row[positionColumn(position)])
  }
  return { rows: byPart, keys }
}

