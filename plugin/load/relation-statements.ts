import type { LevelPlan, PlannedField } from '../plan/plan.js'
import type { RelationEdge, RelationKind, RelationLink } from '../resource-graph.js'
import type { LoadContext } from './load-context.js'
import { foreignKeyOf, keyColumn, selectLevel, tableOf, type AnyKysely, type AnySelect } from './selection.js'

/** Column of loaded child rows holding the parent key they belong to; removed once they are grouped. */
export const parentKey = '__expand_parent'

/**
 * The statements of one relation kind, for all parents at once (`IN` over
 * their keys). Every statement that reads a resource's table carries the
 * request's scope on it, so a row outside the scope is never loaded.
 */
interface KindStatements<K extends RelationKind> {
  /** The related rows of the level, each to-many row tagged with its parent key. */
  rows(context: LoadContext, link: Extract<RelationLink, { kind: K }>, relation: RelationEdge, level: LevelPlan, keys: readonly unknown[]): AnySelect
  /** To-many kinds: the related ids alone, tagged with their parent key (`id`, parent). */
  ids?(context: LoadContext, link: Extract<RelationLink, { kind: K }>, relation: RelationEdge, keys: readonly unknown[]): AnySelect
}

const statements: { [K in RelationKind]: KindStatements<K> } = {
  'to-one': {
    rows: (context, _link, relation, level, keys) =>
      selectLevel(context.db, level, context.scope(relation.target)).where(keyColumn(level.node), 'in', keys),
  },
  'to-many': {
    rows (context, link, relation, level, keys) {
      const parentColumn = `${tableOf(relation.target)}.${foreignKeyOf(relation, link.foreignKey)}`
      const rows = selectLevel(context.db, level, context.scope(relation.target)).select(`${parentColumn} as ${parentKey}`).where(parentColumn, 'in', keys)
      return orderedByParent(rows, relation, parentColumn, keyColumn(relation.target))
    },
    ids (context, link, relation, keys) {
      const parentColumn = `${tableOf(relation.target)}.${foreignKeyOf(relation, link.foreignKey)}`
      const relatedKey = keyColumn(relation.target)
      const scope = context.scope(relation.target)
      const ids = context.db.selectFrom(tableOf(relation.target)).select([`${relatedKey} as id`, `${parentColumn} as ${parentKey}`]).where(parentColumn, 'in', keys)
      return orderedByParent(scope === undefined ? ids : ids.where(scope), relation, parentColumn, relatedKey)
    },
  },
  'many-to-many': {
    rows (context, { through }, relation, level, keys) {
      const parentColumn = `${through.table}.${through.from}`
      const relatedKey = `${through.table}.${through.to}`
      const rows = selectLevel(context.db, level, context.scope(relation.target))
        .innerJoin(through.table, relatedKey, keyColumn(level.node))
        .select(`${parentColumn} as ${parentKey}`)
        .where(parentColumn, 'in', keys)
      return orderedByParent(rows, relation, parentColumn, relatedKey)
    },
    ids (context, { through }, relation, keys) {
      // The join table alone, unless the related rows decide: their order, or the request's scope on them.
      const parentColumn = `${through.table}.${through.from}`
      const relatedKey = `${through.table}.${through.to}`
      const scope = context.scope(relation.target)
      let ids = context.db.selectFrom(through.table).select([`${relatedKey} as id`, `${parentColumn} as ${parentKey}`]).where(parentColumn, 'in', keys)
      if (scope !== undefined) ids = ids.innerJoin(tableOf(relation.target), keyColumn(relation.target), relatedKey).where(scope)
      else if (relation.keys.orderBy !== undefined) ids = ids.leftJoin(tableOf(relation.target), keyColumn(relation.target), relatedKey)
      return orderedByParent(ids, relation, parentColumn, relatedKey)
    },
  },
}

/** The statement loading the rows of an expanded relation for these parent (to-many) or related (to-one) keys. */
export function relationRowsQuery (context: LoadContext, field: Extract<PlannedField, { kind: 'expanded' }>, keys: readonly unknown[]): AnySelect {
  const { link } = field.relation
  switch (link.kind) {
    case 'to-one': return statements['to-one'].rows(context, link, field.relation, field.level, keys)
    case 'to-many': return statements['to-many'].rows(context, link, field.relation, field.level, keys)
    case 'many-to-many': return statements['many-to-many'].rows(context, link, field.relation, field.level, keys)
  }
}

/** The statement loading a to-many relation's ids for these parent keys. */
export function relationIdsQuery (context: LoadContext, relation: RelationEdge, keys: readonly unknown[]): AnySelect {
  const { link } = relation
  switch (link.kind) {
    case 'to-one': throw new TypeError('a to-one relation shows the id its row holds: no statement')
    case 'to-many': return statements['to-many'].ids!(context, link, relation, keys)
    case 'many-to-many': return statements['many-to-many'].ids!(context, link, relation, keys)
  }
}

/**
 * The parent key first: an index on it (a foreign key's, a join table's primary
 * key) hands over each parent's rows together and in order, without a sort. The
 * related key then orders them, or ends the relation's orderBy, so ties come
 * out the same on every run; expanded rows and id arrays share this order.
 */
function orderedByParent (query: AnySelect, relation: RelationEdge, parentColumn: string, relatedKey: string): AnySelect {
  const byParent = query.orderBy(parentColumn)
  const { orderBy } = relation.keys
  return (orderBy === undefined ? byParent : byParent.orderBy(`${tableOf(relation.target)}.${orderBy}`)).orderBy(relatedKey)
}

/**
 * The statements a plan runs after its root one, in order, compiled with one
 * placeholder key each: what `explain` shows.
 */
export function plannedStatements (context: LoadContext, level: LevelPlan, path = ''): Array<{ path: string; sql: string }> {
  const planned: Array<{ path: string; sql: string }> = []
  for (const field of level.fields) {
    if (field.kind === 'value' || (field.kind === 'id' && field.relation.link.kind === 'to-one')) continue
    const at = path === '' ? field.name : `${path}.${field.name}`
    if (field.kind === 'id') {
      planned.push({ path: at, sql: relationIdsQuery(context, field.relation, [0]).compile().sql })
      continue
    }
    planned.push({ path: at, sql: relationRowsQuery(context, field, [0]).compile().sql }, ...plannedStatements(context, field.level, at))
  }
  return planned
}


