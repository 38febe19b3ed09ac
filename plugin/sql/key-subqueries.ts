import { sql } from 'kysely'
import type { PlannedField } from '../plan/plan.js'
import { ownerColumn, type ResourceNode } from '../graph/resource-graph.js'
import { keyColumn, tableOf, type AnyKysely, type AnySelect } from './selection.js'
import type { ScopeParts } from './statement-templates.js'

/** A planned relation field: expanded, or shown as ids. */
type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>

/** The name of a key subquery's derived table, and of the one column it selects. */
const keyRows = 'key_rows'
const keyName = 'key'

/**
 * The keys of a relation's rows as a subquery of the statement that reads
 * its parents (`parent`, compiled with every condition and bound of its own:
 * its scope, filters, order, limit): the parents' key column (`column`), for
 * `key in (...)`. The parent statement is a derived table, whose order and
 * limit MariaDB does not take in an `in` subquery itself. Its rows are the
 * rows the parent statement reads, so a parent that the request's scope
 * hides brings no child either.
 */
export function keySubquery (db: AnyKysely, parent: AnySelect, column: string): AnySelect {
  const keys = parent.clearSelect().select(sql.ref(column).as(keyName))
  return (db.selectFrom(keys.as(keyRows)) as AnySelect).select(`${keyRows}.${keyName}`)
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
