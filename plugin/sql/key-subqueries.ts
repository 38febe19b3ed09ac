import { AliasNode, IdentifierNode, sql, type AliasedRawBuilder, type RawBuilder, type SqlBool } from 'kysely'
import type { PlannedField } from '../plan/plan.js'
import { columnsOf } from '../graph/composite-relations.js'
import { identifierOf } from '../graph/identifiers.js'
import type { ResourceNode } from '../graph/resource-graph.js'
import { rowNumberOver, type RelationOrder } from './dialects/index.js'
import { keyColumns, partAlias, tableOf, type AnyKysely, type AnySelect, type Row } from './selection.js'
import type { ScopeParts } from './statement-templates.js'

/** A planned relation field: expanded, or shown as ids. */
type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>

/** The derived table of a parent statement's keys, and the column it selects (a composite key: one per part, `partNames`). */
const keyRows = '__expand_key_rows'
const keyName = 'key'
/** A one-wave statement's parts: its keys (a common table expression), its relation's rows, and the columns it adds. */
const waveKeys = '__expand_wave_keys'
const waveRows = '__expand_wave_rows'
/** Of a relation's row: the column its parent's key is matched on (its key to-one, its parent key else; a composite key: one per part). */
export const waveJoin = '__expand_wave_join'
/** Of a to-many relation's row: its place in the relation statement's order. */
export const waveRow = '__expand_wave_row'
/** Of every row of a one-wave statement: the parent key it answers for (a row without `waveJoin`: a key with no rows). */
export const waveKey = '__expand_wave_key'

/**
 * The names `count` key parts go under, after `name`: `name` itself for a
 * single key, `name.0`, `name.1`... for the parts of a composite key
 * (`partAlias`, as the level statements name them).
 */
function partNames (name: string, count: number): string[] {
  return count === 1 ? [name] : Array.from({ length: count }, (_, index) => partAlias(name, index))
}

/** `table`'s column `name` as a reference: quoted whole, since a part's name (`key.1`) holds a dot. */
function columnOf (table: string, name: string): RawBuilder<unknown> {
  return sql.id(table, name)
}

/**
 * `table`'s column `name`, selected under its own name: by reference where
 * the name holds no dot (`table.name`), else quoted whole (`columnOf`).
 */
function selectedColumn (table: string, name: string): string | AliasedRawBuilder<unknown, string> {
  return name.includes('.') ? columnOf(table, name).as(name) : `${table}.${name}`
}

/**
 * The distinct keys of a relation's rows as a subquery of the statement that
 * reads its parents (`parent`, compiled with every condition and bound of its
 * own: its scope, filters, order, limit): the parents' key columns
 * (`columns`: one, or a composite key's parts), for `key in (...)`. The
 * parent statement is a derived table: some databases take no order or
 * limit in an `in` subquery itself. Its rows are the rows the parent
 * statement reads, so a parent that the request's scope hides brings no
 * child either.
 */
export function keySubquery (db: AnyKysely, parent: AnySelect, columns: readonly string[]): AnySelect {
  const names = partNames(keyName, columns.length)
  const keys = parent.clearSelect().select(columns.map((column, index) => sql.ref(column).as(names[index]!)))
  return (db.selectFrom(keys.as(keyRows)) as AnySelect).select(names.map((name) => selectedColumn(keyRows, name))).distinct()
}

/**
 * `keySubquery` of a statement whose rows do not come from the owner's table
 * itself (a relation with `limit` selects from its rows numbered per parent):
 * the keys under `names`, the columns as the statement names them, read from
 * the statement as a derived table. A key it selects as its text (`native`
 * of its name) is read from the column it also selects it under as its
 * column holds it (`withNativeKeys`), as `keySource` reads one.
 */
export function keySubqueryByName (
  db: AnyKysely, parent: AnySelect, names: readonly string[], native: (name: string) => boolean
): AnySelect {
  const keys = partNames(keyName, names.length)
  return (db.selectFrom(parent.as(keyRows)) as AnySelect)
    .select(names.map((name, index) => columnOf(keyRows, native(name) ? nativeKeyName(name) : name).as(keys[index]!)))
    .distinct()
}

/**
 * The keys of a relation's rows in a combined statement (load/one-wave.ts):
 * read by name (`names`, as the parents' statement selects them) from
 * `source`, that statement as a common table expression of the combined
 * one, under the names `keySubquery` gives them, distinct. A key its
 * source selects as its text (`native` of its name: declared a string,
 * text-columns.ts) is read from the column the source also selects it under
 * as its column holds it (`withNativeKeys`): compared with the relation's
 * own column, an `int8` or a `uuid`, its text would be refused.
 */
export function keySource (db: AnyKysely, source: string, names: readonly string[], native: (name: string) => boolean): AnySelect {
  const keys = partNames(keyName, names.length)
  const query = (db.selectFrom(source) as AnySelect)
    .select(names.map((name, index) => columnOf(source, native(name) ? nativeKeyName(name) : name).as(keys[index]!)))
    .distinct()
  keySources.add(query)
  return query
}

const nativeKeyPrefix = '__expand_native_'

/** The column a statement read for its rows' keys selects key `name` under as its column holds it (`withNativeKeys`). */
export const nativeKeyName = (name: string): string => `${nativeKeyPrefix}${name}`

/** Whether a statement's column is a key selected for the relations below it alone (`withNativeKeys`), not one of its rows' values. */
export function isNativeKey (name: string): boolean {
  return name.startsWith(nativeKeyPrefix)
}

/**
 * `query`, a level's statement read for its rows' keys (a source of a
 * combined statement, or a relation's statement with `limit` keying the
 * statements below it in one wave), selecting besides its columns each key
 * of `keys` (its column as the statement reads it, and its name) as the
 * column holds it, for the relations below that read it (`keySource`,
 * `keySubqueryByName`). They are never among its rows' values (`isNativeKey`).
 */
export function withNativeKeys (query: AnySelect, keys: NativeKeys): AnySelect {
  if (keys.length === 0) return query
  return query.select(keys.map(([column, name]) => sql.ref(column).as(nativeKeyName(name))))
}

/** Keys selected as their columns hold them (`withNativeKeys`): each its column, as a statement reads it, and its name. */
export type NativeKeys = ReadonlyArray<readonly [column: string, name: string]>

/** The subqueries `keySource` made: a statement keyed by one adds no column of a one-wave statement's. */
const keySources = new WeakSet<object>()

/**
 * Whether a statement keyed by `keys` is a one-wave statement's relation
 * (`waveStatement`): keyed by its parents' statement, it adds the columns
 * the wave's join reads (`withWaveColumns`). Keyed by values, or by a
 * source of a combined statement (`keySource`), it adds none.
 */
export function isWaveKeyed (keys: readonly unknown[] | AnySelect): keys is AnySelect {
  return !Array.isArray(keys) && !keySources.has(keys)
}

/**
 * A relation's statement in one wave (load/one-wave.ts): the keys of its
 * parents' statement first (`keySubquery` of `parts` columns, read once as a
 * common table expression), each joined to the relation's rows for it
 * (`statement`, given those keys as its subquery), part by part. Every key
 * comes back, with no relation row where it has none, so that the loader
 * knows which parents the statement answered for: a parent the request
 * placed whose key is not among them (its parents' statement read other rows
 * a moment later, as a concurrent insert shifts a page) is loaded by its key
 * after the wave. Rows that say their place in the relation statement's
 * order (`waveRow`, a to-many relation's) keep it.
 */
export function waveStatement (
  db: AnyKysely, parentKeys: AnySelect, parts: number, statement: (keys: AnySelect) => AnySelect
): AnySelect {
  const keys = partNames(keyName, parts)
  const related = statement((db.selectFrom(waveKeys) as AnySelect).select(keys.map((name) => selectedColumn(waveKeys, name))))
  const names = selectedNames(related)
  // Each of its columns by name (never `*`), but its place in the order: the statement is ordered by it.
  const columns = names.filter((name) => name !== waveRow).map((name) => selectedColumn(waveRows, name))
  const joins = partNames(waveJoin, parts)
  const joined = (db.with(waveKeys, () => parentKeys).selectFrom(waveKeys) as AnySelect)
    .leftJoin(related.as(waveRows), (join) => joins.reduce(
      (on, name, index) => on.on(sql<SqlBool>`${columnOf(waveRows, name)} = ${columnOf(waveKeys, keys[index]!)}`), join))
    .select(columns)
    .select(partNames(waveKey, parts).map((name, index) => columnOf(waveKeys, keys[index]!).as(name)))
  return names.includes(waveRow) ? joined.orderBy(`${waveRows}.${waveRow}`) : joined
}

/**
 * Of a one-wave statement's row (`waveStatement` over `parts` key parts): the
 * parent key it answers for, as the loader holds it (a composite key: its
 * identifier), and whether it holds a relation row.
 */
export function waveRowReader (parts: number): { keyOf: (row: Row) => unknown; joined: (row: Row) => boolean } {
  const join = partNames(waveJoin, parts)[0]!
  const joined = (row: Row): boolean => row[join] !== null && row[join] !== undefined
  if (parts === 1) return { keyOf: (row) => row[waveKey], joined }
  const keys = partNames(waveKey, parts)
  return { keyOf: (row) => identifierOf(keys.map((name) => row[name])), joined }
}

/** The names a statement selects its columns under: a relation statement names each (`column as name`). */
function selectedNames (query: AnySelect): string[] {
  return (query.toOperationNode().selections ?? []).map(({ selection }) => {
    const named = AliasNode.is(selection) && IdentifierNode.is(selection.alias)
    if (!named) throw new TypeError('a relation statement names each column it selects')
    return (selection.alias as IdentifierNode).name
  })
}

/**
 * A relation statement keyed by a subquery, with the columns its one-wave
 * statement reads: the columns its parents' keys match (`joinColumns`: one,
 * or a composite key's parts), and for a to-many relation its row's place in
 * `order` (the statement's own).
 */
export function withWaveColumns (query: AnySelect, joinColumns: readonly string[], order?: readonly RelationOrder[]): AnySelect {
  const names = partNames(waveJoin, joinColumns.length)
  const joined = query.select(joinColumns.map((column, index) => sql.ref(column).as(names[index]!)))
  if (order === undefined) return joined
  return joined.select(rowNumberOver(order).as(waveRow))
}

/**
 * The columns of the owner's rows that a relation's statement takes its keys
 * from: a to-one relation's own columns (the related rows' keys: one, or
 * one per part of the related key), the owner's key columns for the others
 * (the parents' keys).
 */
export function keyColumnsOf (owner: ResourceNode, field: RelationField): string[] {
  const { link } = field.relation
  if (link.kind === 'to-one') return columnsOf(link.column).map((column) => `${tableOf(owner)}.${column}`)
  return keyColumns(owner)
}

/**
 * `keyColumnsOf` as a statement of the owner's level names them
 * (sql/selection.ts's `selectionOf`): a to-one relation's columns under the
 * relation's field (each part under its alias), the key under its fields.
 */
export function keyNamesOf (owner: ResourceNode, field: RelationField): string[] {
  const { link } = field.relation
  if (link.kind === 'to-one') return partNames(field.name, columnsOf(link.column).length)
  return [...owner.key.fields]
}

/**
 * The scope parts of a statement that holds its parents' statements as
 * subqueries: each statement's scope is its first condition, and the
 * subquery is the last, so the values of the statement's own scope come
 * first, then those of each parent's, up to the root's. Its shape is theirs
 * in order, so that scopes on different levels never make one shape.
 */
export function nestedScope (own: ScopeParts | undefined, parent: ScopeParts | undefined): ScopeParts | undefined {
  if (own === undefined && parent === undefined) return undefined
  const key = own?.key === null || parent?.key === null ? null : `${own?.key ?? ''}>${parent?.key ?? ''}`
  return { key, values: [...(own?.values ?? []), ...(parent?.values ?? [])] }
}
