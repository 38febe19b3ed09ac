import type { Kysely, SelectQueryBuilder } from 'kysely'
import { InvalidDataError, InvalidDefinitionError, TooLargeError } from '../errors.js'
import type { LevelPlan, PlannedField } from '../plan/plan.js'
import type { RelationEdge, ResourceNode } from '../resource-graph.js'
import { templatesFor } from './statement-templates.js'

export type Row = Record<string, unknown>
// Tables are named at runtime by the resource definitions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyKysely = Kysely<any>

/** Property of loaded child rows holding the parent key they belong to; removed once they are grouped. */
const parentKey = '__expand_parent'
/**
 * Keys per statement: a power of two, under SQLite's 32,766 and PostgreSQL's
 * 65,535 bound parameters.
 */
const keysPerStatement = 8_192

/**
 * The columns a level needs, as `column as field`: its primary key, every
 * written value, and the local column of every to-one relation. Never `*`,
 * so a column the resource does not declare is never read.
 */
export function selectionOf (level: LevelPlan): Array<[column: string, field: string]> {
  const { node } = level
  const selection = new Map<string, string>([[node.primaryKey, node.column(node.primaryKey)]])
  for (const field of level.fields) {
    if (field.kind === 'value') selection.set(field.name, node.column(field.name))
    else if (!field.relation.many) selection.set(field.name, toOneColumn(field.relation))
  }
  return [...selection].map(([field, column]) => [column, field])
}

export function selectLevel (db: AnyKysely, level: LevelPlan, table = tableOf(level.node)): SelectQueryBuilder<any, any, Row> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return db.selectFrom(table).select((eb) => selectionOf(level).map(([column, field]) => eb.ref(`${table}.${column}`).as(field)))
}

/**
 * Bounds the objects one response holds. Each row carries a weight: how many
 * times it will be written (a person shared by 50 pets is written 50 times,
 * and so is everything below it), so to-many levels that multiply are caught
 * before their rows are even fetched further down.
 */
class ObjectBudget {
  private used = 0
  constructor (readonly limit: number) {}

  charge (objects: number): void {
    this.used += objects
    if (this.used > this.limit) {
      throw new TooLargeError(`The response would hold more than ${this.limit} objects: expand fewer relations or ask for a smaller page`)
    }
  }
}

/**
 * Fills the relations of `rows` that the level expands (and to-many id
 * arrays), one statement per relation path at every depth: the rows of a
 * path are loaded for all parents at once (`WHERE key IN (...)`), never per row.
 */
export async function loadRows (db: AnyKysely, level: LevelPlan, rows: Row[], maxObjects: number): Promise<void> {
  const budget = new ObjectBudget(maxObjects)
  budget.charge(rows.length)
  await loadLevel(db, level, rows, rows.map(() => 1), budget)
}

async function loadLevel (db: AnyKysely, level: LevelPlan, rows: Row[], weights: number[], budget: ObjectBudget): Promise<void> {
  if (rows.length === 0) return
  for (const field of level.fields) {
    if (field.kind === 'value') continue
    if (field.kind === 'id') {
      if (field.relation.many) await loadIdArrays(db, level.node, field, rows)
      else copyToOneIds(field.relation, rows)
      continue
    }
    if (field.relation.many) await loadToMany(db, level.node, field, rows, weights, budget)
    else await loadToOne(db, field, rows, weights, budget)
  }
}

function copyToOneIds (relation: RelationEdge, rows: Row[]): void {
  // Rows given by a handler may carry the id under the column's name only.
  const column = toOneColumn(relation)
  for (const row of rows) {
    if (row[relation.field] !== undefined) continue
    const id = row[column]
    if (id === undefined) {
      const where = column === relation.field ? `'${column}'` : `'${relation.field}' or its column '${column}'`
      throw new InvalidDataError(`${relation.owner.qualifiedName} rows given to load lack ${where}, which holds the ${relation.target.qualifiedName} of '${relation.field}'`)
    }
    row[relation.field] = id
  }
}

async function loadToOne (db: AnyKysely, field: Extract<PlannedField, { kind: 'expanded' }>, rows: Row[], weights: number[], budget: ObjectBudget): Promise<void> {
  const { relation, level } = field
  copyToOneIds(relation, rows)
  const ids = distinctKeys(rows.map((row) => row[relation.field]))
  const target = level.node
  const related = new Map<unknown, Row>()
  for (const chunk of chunks(ids)) {
    for (const child of await templatesFor(db).rowsByKeys(field, chunk, (keys) => toOneQuery(db, level, keys))) related.set(keyOf(child[target.primaryKey]), child)
  }
  const childWeights = new Map<Row, number>()
  let written = 0
  rows.forEach((row, index) => {
    const id = row[relation.field]
    const child = id === null || id === undefined ? undefined : related.get(keyOf(id))
    row[relation.field] = child ?? null
    if (child === undefined) return
    childWeights.set(child, (childWeights.get(child) ?? 0) + weights[index])
    written += weights[index]
  })
  budget.charge(written)
  await loadLevel(db, level, [...childWeights.keys()], [...childWeights.values()], budget)
}

async function loadToMany (db: AnyKysely, owner: ResourceNode, field: Extract<PlannedField, { kind: 'expanded' }>, rows: Row[], weights: number[], budget: ObjectBudget): Promise<void> {
  const { relation, level } = field
  const groups = groupByParent(rows, owner)
  for (const chunk of chunks([...groups.keys()])) {
    for (const child of await templatesFor(db).rowsByKeys(field, chunk, (keys) => toManyQuery(db, relation, level, keys))) {
      const key = keyOf(child[parentKey])
      // The parent key is the last column selected, so deleting it returns the row to the shape it had before.
      delete child[parentKey]
      groups.get(key)?.push(child)
    }
  }
  // Rows sharing a key share one array, so a child's weight is the sum of theirs.
  const groupWeights = new Map<unknown, number>()
  rows.forEach((row, index) => {
    const key = keyOf(row[owner.primaryKey])
    row[relation.field] = groups.get(key) ?? []
    groupWeights.set(key, (groupWeights.get(key) ?? 0) + weights[index])
  })
  const children: Row[] = []
  const childWeights: number[] = []
  let written = 0
  for (const [key, group] of groups) {
    const weight = groupWeights.get(key) ?? 0
    for (const child of group as Row[]) {
      children.push(child)
      childWeights.push(weight)
    }
    written += weight * group.length
  }
  budget.charge(written)
  await loadLevel(db, level, children, childWeights, budget)
}

async function loadIdArrays (db: AnyKysely, owner: ResourceNode, field: Extract<PlannedField, { kind: 'id' }>, rows: Row[]): Promise<void> {
  const { relation } = field
  const groups = groupByParent(rows, owner)
  for (const chunk of chunks([...groups.keys()])) {
    for (const found of await templatesFor(db).rowsByKeys(field, chunk, (keys) => idArrayQuery(db, relation, keys))) groups.get(keyOf(found[parentKey]))?.push(found.id)
  }
  for (const row of rows) row[relation.field] = groups.get(keyOf(row[owner.primaryKey])) ?? []
}

/** The statement of one to-one path: related rows by primary key. */
export function toOneQuery (db: AnyKysely, level: LevelPlan, ids: readonly unknown[]) {
  return selectLevel(db, level).where(keyColumn(level.node), 'in', ids)
}

/** The statement of one to-many path: related rows of all parents, each tagged with its parent key. */
export function toManyQuery (db: AnyKysely, relation: RelationEdge, level: LevelPlan, parentKeys: readonly unknown[]) {
  const { through } = relation.keys
  const { parentColumn, relatedKey } = toManyColumns(relation)
  const rows = through === undefined
    ? selectLevel(db, level)
    : selectLevel(db, level).innerJoin(through.table, relatedKey, keyColumn(level.node))
  return orderedByParent(rows.select(`${parentColumn} as ${parentKey}`).where(parentColumn, 'in', parentKeys), relation)
}

/**
 * The statement of a to-many relation shown as ids: the join table alone when
 * there is one, joined to the related table only to follow the relation's orderBy.
 */
export function idArrayQuery (db: AnyKysely, relation: RelationEdge, parentKeys: readonly unknown[]) {
  const { through, orderBy } = relation.keys
  const { parentColumn, relatedKey } = toManyColumns(relation)
  const ids = db.selectFrom(through?.table ?? tableOf(relation.target))
    .select([`${relatedKey} as id`, `${parentColumn} as ${parentKey}`])
    .where(parentColumn, 'in', parentKeys)
  return orderedByParent(through === undefined || orderBy === undefined ? ids : ids.leftJoin(tableOf(relation.target), keyColumn(relation.target), relatedKey), relation)
}

/**
 * Where a to-many relation's keys sit: the parent's key (the foreign key, or
 * the join table's `from`) and the related key (the related table's primary
 * key, or the join table's `to`, as the id array shows it).
 */
function toManyColumns (relation: RelationEdge): { parentColumn: string; relatedKey: string } {
  const { through } = relation.keys
  return through === undefined
    ? { parentColumn: `${tableOf(relation.target)}.${foreignKeyOf(relation)}`, relatedKey: keyColumn(relation.target) }
    : { parentColumn: `${through.table}.${through.from}`, relatedKey: `${through.table}.${through.to}` }
}

/**
 * The parent key first: an index on it (a foreign key's, a join table's primary
 * key) hands over each parent's rows together and in order, without a sort. The
 * related key then orders them, or ends the relation's orderBy (`column`, or
 * `-column` for descending, checked by defineResource), so ties come out the
 * same on every run; expanded rows and id arrays share this order.
 */
function orderedByParent<Q extends { orderBy(column: string, direction?: 'desc'): Q }> (query: Q, relation: RelationEdge): Q {
  const { parentColumn, relatedKey } = toManyColumns(relation)
  const byParent = query.orderBy(parentColumn)
  const { orderBy } = relation.keys
  if (orderBy === undefined) return byParent.orderBy(relatedKey)
  const column = `${tableOf(relation.target)}.${orderBy.replace(/^-/, '')}`
  return (orderBy.startsWith('-') ? byParent.orderBy(column, 'desc') : byParent.orderBy(column)).orderBy(relatedKey)
}

/**
 * The statements a plan runs after its root one, in order, compiled with one
 * placeholder key each: what `explain` shows.
 */
export function plannedStatements (db: AnyKysely, level: LevelPlan, path = ''): Array<{ path: string; sql: string }> {
  const statements: Array<{ path: string; sql: string }> = []
  for (const field of level.fields) {
    if (field.kind === 'value' || (field.kind === 'id' && !field.relation.many)) continue
    const at = path === '' ? field.name : `${path}.${field.name}`
    if (field.kind === 'id') {
      statements.push({ path: at, sql: idArrayQuery(db, field.relation, [0]).compile().sql })
      continue
    }
    const query = field.relation.many ? toManyQuery(db, field.relation, field.level, [0]) : toOneQuery(db, field.level, [0])
    statements.push({ path: at, sql: query.compile().sql }, ...plannedStatements(db, field.level, at))
  }
  return statements
}

function groupByParent (rows: Row[], owner: ResourceNode): Map<unknown, unknown[]> {
  const groups = new Map<unknown, unknown[]>()
  for (const row of rows) {
    const key = row[owner.primaryKey]
    if (key === undefined) {
      throw new InvalidDataError(`${owner.qualifiedName} rows given to load lack their primary key '${owner.primaryKey}', which to-many relations are loaded by`)
    }
    groups.set(keyOf(key), [])
  }
  return groups
}

/** A resource's primary key column, qualified by its table. */
export function keyColumn (node: ResourceNode): string {
  return `${tableOf(node)}.${node.column(node.primaryKey)}`
}

export function tableOf (node: ResourceNode): string {
  if (node.table === undefined) {
    throw new InvalidDefinitionError(`Resource '${node.qualifiedName}' has no table: give it 'table' to load it from the database`)
  }
  return node.table
}

function toOneColumn (relation: RelationEdge): string {
  return relation.keys.column ?? relation.owner.column(relation.field)
}

function foreignKeyOf (relation: RelationEdge): string {
  if (relation.keys.foreignKey === undefined) {
    throw new InvalidDefinitionError(`Resource '${relation.owner.qualifiedName}', field '${relation.field}': a to-many relation needs foreignKey or through to be loaded`)
  }
  return relation.keys.foreignKey
}

/**
 * A key as it compares in the database. Drivers return one key in several
 * forms: pg gives int8 as the string '1' and int4 as the number 1, SQLite may
 * give a bigint; the number 1, the bigint 1n and the string '1' are one key.
 * Binary keys compare by their bytes.
 */
export function keyOf (value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (value instanceof Uint8Array) return `\u0000bytes:${Buffer.from(value).toString('hex')}`
  return value
}

/** The distinct non-null keys among `values`, each as first given (so it binds as the driver gave it). */
function distinctKeys (values: unknown[]): unknown[] {
  const seen = new Map<unknown, unknown>()
  for (const value of values) {
    if (value === null || value === undefined) continue
    const key = keyOf(value)
    if (!seen.has(key)) seen.set(key, value)
  }
  return [...seen.values()]
}

function * chunks<T> (values: T[]): Generator<T[]> {
  for (let start = 0; start < values.length; start += keysPerStatement) yield values.slice(start, start + keysPerStatement)
}
