import { expressionBuilder, type Expression, type SqlBool } from 'kysely'
import type { RelationEdge } from '../graph/resource-graph.js'
import type { LoadContext } from '../load/load-context.js'
import type { ExpandedListPlan } from '../plan/expanded-list-plan.js'
import type { RelationOrder } from './dialects/index.js'
import { listConditions } from './list-statements.js'
import type { ScopeParts } from './statement-templates.js'

/**
 * What a request's expanded list (`sort[path]`, `limit[path]`,
 * `where[path.field]`) changes in its relation's statement, which stays
 * one statement per relation path: its order within a parent, its limit
 * per parent (as the relation option `limit` writes it, on every dialect),
 * and its conditions, added to the request's scope on the related table.
 */
export interface ListedRelation {
  /** The order within a parent: the list's sort keys, then the related key; undefined: the relation's own order. */
  readonly order: ((relatedKey: string) => RelationOrder[]) | undefined
  /** Rows per parent; undefined: the relation's own `limit`, if any. */
  readonly limit: number | undefined
  /** The scope on the related table and the list's conditions, as one condition; undefined: neither. */
  readonly condition: Expression<SqlBool> | undefined
  /**
   * The same condition for statement templates: the scope's values, then the
   * conditions' (each bound as a parameter), and a key telling their shapes
   * apart; null key: not kept as a template.
   */
  readonly parts: ScopeParts | undefined
  /** Tells apart statements of one planned field with different sorts, limits or conditions (their values are parameters). */
  readonly variant: string
}

// A builder holds no state of its own: one serves every condition.
const conditionBuilder = expressionBuilder()

/** The parts of `relation`'s statement that `list` decides, for the request `context` loads for. */
export function listedRelation (context: LoadContext, relation: RelationEdge, list: ExpandedListPlan): ListedRelation {
  const target = relation.target
  const scope = context.scope(target)
  const scopeParts = context.scopeParts(target)
  const values: unknown[] = []
  // Fields of the related table itself, written as a list's filters on the table the relation's statement reads.
  const written = listConditions(target, list, context, values)
  const conditions = written.conditions.map((condition) => condition(conditionBuilder))
  const shape = written.shape
  const all = scope === undefined ? conditions : [scope, ...conditions]
  const condition = all.length === 0 ? undefined : all.length === 1 ? all[0] : conditionBuilder.and(all)
  const parts: ScopeParts | undefined = conditions.length === 0
    ? scopeParts
    : {
        key: scopeParts?.key === null || shape === null ? null : `${scopeParts?.key ?? ''}${shape}`,
        values: [...(scopeParts?.values ?? []), ...values],
      }
  const { sort, limit } = list
  const sortShape = sort?.map(({ field, descending }) => `${descending ? '-' : ''}${field.name}`).join(',')
  return {
    order: sort === undefined
      ? undefined
      : (relatedKey) => [
          ...sort.map(({ field, descending }): RelationOrder => [field.column, descending ? 'desc' : 'asc']),
          [relatedKey, 'asc'],
        ],
    limit,
    condition,
    parts,
    variant: `/list sort ${sortShape ?? ''} limit ${limit ?? ''} where ${shape ?? '?'}`,
  }
}
