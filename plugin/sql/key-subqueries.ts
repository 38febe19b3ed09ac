import { AliasNode, IdentifierNode, sql } from 'kysely'
import type { PlannedField } from '../plan/plan.js'
import { ownerColumn, type ResourceNode } from '../graph/resource-graph.js'
import { rowNumberOver, type RelationOrder } from './dialects/index.js'
import { keyColumn, tableOf, type AnyKysely, type AnySelect } from './selection.js'
import type { ScopeParts } from './statement-templates.js'

/** A planned relation field: expanded, or shown as ids. */
type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>

/** The derived table of a parent statement's keys, and the one column it selects. */
const keyRows = '__expand_key_rows'
const keyName = 'key'
/** A one-wave statement's parts: its keys (a common table expression), its relation's rows, and the columns it adds. */
const waveKeys = '__expand_wave_keys'
const waveRows = '__expand_wave_rows'
/** Of a relation's row: the column its parent's key is matched on (its key to-one, its parent key else). */
export const waveJoin = '__expand_wave_join'
/** Of a to-many relation's row: its place in the relation statement's order. */
export const waveRow = '__expand_wave_row'
/** Of every row of a one-wave statement: the parent key it answers for (a row without `waveJoin`: a key with no rows). */
export const waveKey = '__expand_wave_key'

/**
 * The distinct keys of a relation's rows as a subquery of the statement that
 * reads its parents (`parent`, compiled with every condition and bound of its
 * own: its scope, filters, order, limit): the parents' key column (`column`),
 * for `key in (...)`. The parent statement is a derived table: some
 * databases take no order or limit in an `in` subquery itself. Its rows are
 * the rows the parent statement reads, so a parent that the request's scope
 * hides brings no child either.
 */
export function keySubquery (db: AnyKysely, parent: AnySelect, column: string): AnySelect {
  const keys = parent.clearSelect().select(sql.ref(column).as(keyName))
  return (db.selectFrom(keys.as(keyRows)) as AnySelect).select(`${keyRows}.${keyName}`).distinct()
}

/**
 * `keySubquery` of a statement whose rows do not come from the owner's table
 * itself (a relation with `limit` selects from its rows numbered per parent):
 * the keys under `name`, the column as the statement names it, read from the
 * statement as a derived table.
 */
export function keySubqueryByName (db: AnyKysely, parent: AnySelect, name: string): AnySelect {
  return (db.selectFrom(parent.as(keyRows)) as AnySelect).select(sql.ref(`${keyRows}.${name}`).as(keyName)).distinct()
}

/**
 * A relation's statement in one wave (load/one-wave.ts): the keys of its
 * parents' statement first (`keySubquery`, read once as a common table
 * expression), each joined to the relation's rows for it (`statement`, given
 * those keys as its subquery). Every key comes back, with no relation row
 * where it has none, so that the loader knows which parents the statement
 * answered for: a parent the request placed whose key is not among them (its
 * parents' statement read other rows a moment later, as a concurrent insert
 * shifts a page) is loaded by its key after the wave. Rows that say their
 * place in the relation statement's order (`waveRow`, a to-many relation's)
 * keep it.
 */
export function waveStatement (db: AnyKysely, parentKeys: AnySelect, statement: (keys: AnySelect) => AnySelect): AnySelect {
  const related = statement((db.selectFrom(waveKeys) as AnySelect).select(`${waveKeys}.${keyName}`))
  const names = selectedNames(related)
  // Each of its columns by name (never `*`), but its place in the order: the statement is ordered by it.
  const columns = names.filter((name) => name !== waveRow).map((name) => `${waveRows}.${name}`)
  const joined = (db.with(waveKeys, () => parentKeys).selectFrom(waveKeys) as AnySelect)
    .leftJoin(related.as(waveRows), `${waveRows}.${waveJoin}`, `${waveKeys}.${keyName}`)
    .select(columns)
    .select(`${waveKeys}.${keyName} as ${waveKey}`)
  return names.includes(waveRow) ? joined.orderBy(`${waveRows}.${waveRow}`) : joined
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
 * statement reads: the column its parents' keys match (`joinColumn`), and
 * for a to-many relation its row's place in `order` (the statement's own).
 */
export function withWaveColumns (query: AnySelect, joinColumn: string, order?: readonly RelationOrder[]): AnySelect {
  const joined = query.select(sql.ref(joinColumn).as(waveJoin))
  if (order === undefined) return joined
  return joined.select(rowNumberOver(order).as(waveRow))
}

/**
 * The column of the owner's rows that a relation's statement takes its keys
 * from: a to-one relation's own column (the related rows' keys), the owner's
 * primary key for the others (the parents' keys).
 */
export function keyColumnOf (owner: ResourceNode, field: RelationField): string {
  const column = ownerColumn(field.relation.link)
  return column === undefined ? keyColumn(owner) : `${tableOf(owner)}.${column}`
}

/**
 * `keyColumnOf` as a statement of the owner's level names it (sql/selection.ts's
 * `selectionOf`): a to-one relation's column under the relation's field, the
 * primary key under its field.
 */
export function keyNameOf (owner: ResourceNode, field: RelationField): string {
  return ownerColumn(field.relation.link) === undefined ? owner.primaryKey : field.name
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
