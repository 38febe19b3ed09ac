import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely'
import { InvalidDefinitionError, messages } from '../errors.js'
import type { LevelPlan } from '../plan/plan.js'
import { ownerColumn, type RelationEdge, type ResourceNode } from '../graph/resource-graph.js'
import { literalKey } from '../drivers/statement-cache.js'
import type { KeyColumns } from '../graph/resource.js'
import { dialectOf, type ExpandDialect, type RelationOrder } from './dialects/index.js'
import { typesOf } from '../graph/output-schemas.js'
import { fieldReadAsText } from './text-columns.js'

export type Row = Record<string, unknown>
// Tables are named at runtime by the resource definitions.
export type AnyKysely = Kysely<any>
export type AnySelect = SelectQueryBuilder<any, any, Row>

/** A computed field's expression, written on the statement's builder. */
export type ComputedSql = (eb: ExpressionBuilder<any, any>) => Expression<unknown>

/**
 * The columns a level needs, as `column as field`: its primary key, every
 * written value, the local column of every to-one relation, and the
 * expression of every computed field. Never `*`, so a column the resource
 * does not declare (or the request may not see: plans hold only visible
 * fields) is never read. The primary key is always read: rows are found and
 * grouped by it. Aggregates are read by statements of their own.
 */
export function selectionOf (level: LevelPlan): Array<[column: string | ComputedSql, field: string]> {
  const { node } = level
  const selection = new Map<string, string | ComputedSql>(node.key.fields.map((field) => [field, node.column(field)]))
  for (const field of level.fields) {
    switch (field.kind) {
      case 'value':
        selection.set(field.name, node.column(field.name))
        break
      case 'computed':
        selection.set(field.name, field.computed.sql)
        break
      case 'aggregate':
        break
      case 'id':
      case 'expanded': {
        // A to-one relation's key is a column of this level; the others are read by their own statements.
        const column = ownerColumn(field.relation.link)
        if (column !== undefined) selection.set(field.name, column)
        // Over several columns: each under a part alias, which load/composite-ids.ts makes the identifier of.
        const { link } = field.relation
        if (link.kind === 'to-one' && typeof link.column !== 'string') {
          for (const [index, part] of link.column.entries()) selection.set(partAlias(field.name, index), part)
        }
        break
      }
      default:
        field satisfies never
    }
  }
  return [...selection].map(([field, column]) => [column, field])
}

/** The name a statement selects part `index` of a key under, beside `name` (the parent tag, `id`, a to-one field). */
export function partAlias (name: string, index: number): string {
  return `${name}.${index}`
}

const copiers = new WeakMap<LevelPlan, (row: Row) => Row>()

/**
 * A function copying a row of `level` to a new object holding only the
 * level's selection, in its order: what a statement selecting more (a parent
 * key, cursor columns) leaves once those are read. Cheaper than deleting the
 * extra properties (a runtime call each, about 0.2 µs in V8), and every copy
 * has the shape of the level's other rows. Compiled once per level of a plan.
 */
export function selectedRow (level: LevelPlan): (row: Row) => Row {
  let copy = copiers.get(level)
  if (copy === undefined) {
    // Field names come from the resource definitions.
    const properties = selectionOf(level).map(([, field]) => `${literalKey(field)}: row[${JSON.stringify(field)}]`)
    // eslint-disable-next-line no-new-func
    copy = new Function('row', `return { ${properties.join(', ')} }`) as (row: Row) => Row
    copiers.set(level, copy)
  }
  return copy
}

/**
 * The level's columns from its table, restricted to the rows `scope` lets
 * the request see. `from`: a subquery standing for the table under its name
 * (`derivedSource`), instead of the table.
 */
export function selectLevel (
  db: AnyKysely, level: LevelPlan, scope: Expression<SqlBool> | undefined, from?: ReturnType<AnySelect['as']>
): AnySelect {
  const query = selectLevelColumns(db.selectFrom(from ?? tableOf(level.node)) as AnySelect, level, dialectOf(db))
  return scope === undefined ? query : query.where(scope)
}

/**
 * `query` selecting the level's columns from its table, which the query
 * reads; a field or key declared a plain string as its text (text-columns.ts).
 */
export function selectLevelColumns (query: AnySelect, level: LevelPlan, dialect: ExpandDialect): AnySelect {
  const { node } = level
  const table = tableOf(node)
  return query.select((eb) => selectionOf(level).map(([column, field]) => {
    if (typeof column !== 'string') return sql`${column(eb)}`.as(field)
    return fieldReadAsText(node, field) ? dialect.asText(`${table}.${column}`).as(field) : eb.ref(`${table}.${column}`).as(field)
  }))
}

/** A resource's primary key column, qualified by its table. */
export function keyColumn (node: ResourceNode): string {
  // A composite key has several: `keyColumns`.
  if (node.key.kind === 'composite') throw new TypeError(`${node.qualifiedName} has a composite key`)
  return `${tableOf(node)}.${node.column(node.primaryKey)}`
}

/** A resource's key columns, qualified by `table` (its own table by default). */
export function keyColumns (node: ResourceNode, table = tableOf(node)): string[] {
  return node.key.fields.map((field) => `${table}.${node.column(field)}`)
}

export function tableOf (node: ResourceNode): string {
  if (node.table === undefined) {
    throw new InvalidDefinitionError(messages.noTable(node.qualifiedName))
  }
  return node.table
}

/**
 * The keys a to-many relation's `orderBy` (`column`, or `-column` for
 * descending, of its target's table) orders by. A column that may hold NULL
 * has its NULLs after every value ascending and before every value
 * descending on every database (the dialect's `nullableOrder`), so that a
 * relation with a `limit` keeps the same rows everywhere; a column of a field
 * the target declares without null is ordered by alone, as its index reads it.
 */
export function orderByKeys (dialect: ExpandDialect, target: ResourceNode, orderBy: string): RelationOrder[] {
  const name = orderBy.replace(/^-/, '')
  const column = `${tableOf(target)}.${name}`
  const direction = orderBy.startsWith('-') ? 'desc' : 'asc'
  return mayHoldNull(target, name) ? dialect.nullableOrder(column, direction) : [[column, direction]]
}

/** Whether `column` of `node`'s table may hold NULL: unless a field read from it is declared without null. */
function mayHoldNull (node: ResourceNode, column: string): boolean {
  for (const [field, schema] of node.fieldSchemas) {
    if (node.relations.has(field) || node.column(field) !== column) continue
    // A schema of no plain type (a union it keeps as one) may hold null as far as it says.
    const types = typesOf(schema)
    return types.length === 0 || types.includes('null')
  }
  return true
}

export function foreignKeyOf (relation: RelationEdge, foreignKey: KeyColumns | undefined): string {
  if (foreignKey === undefined) {
    throw new InvalidDefinitionError(messages.toManyNotLoadable(relation.owner.qualifiedName, relation.field))
  }
  // Statements over a composite key are written by composite-keys.ts: what reaches here has one column.
  if (typeof foreignKey !== 'string') throw new TypeError(`${relation.field}: a foreign key of several columns`)
  return foreignKey
}
