import { SqliteAdapter } from 'kysely'
import { InvalidDataError, messages } from '../errors.js'
import type { LevelPlan, PlannedField } from '../plan/plan.js'
import type { RelationEdge, ResourceNode } from '../resource-graph.js'
import type { LoadContext } from './load-context.js'
import { parentKey, relationIdsQuery, relationRowsQuery } from './relation-statements.js'
import type { AnyKysely, Row } from './selection.js'
import { executorOf } from './statement-templates.js'

/**
 * Keys per statement: a power of two, under SQLite's 32,766 and PostgreSQL's
 * 65,535 bound parameters.
 */
const keysPerStatement = 8_192

type ExpandedField = Extract<PlannedField, { kind: 'expanded' }>
type IdField = Extract<PlannedField, { kind: 'id' }>

/**
 * Fills the relations of `rows` that the level expands (and to-many id
 * arrays), one statement per relation path at every depth: the rows of a
 * path are loaded for all parents at once (`WHERE key IN (...)`), never per row.
 * The rows given are the caller's (a page, a handler's query): the object
 * budget counts what loading adds. The relations of a level do not depend on
 * each other: where the database can run several statements at once (see
 * `runsConcurrently`) they are loaded concurrently, each path still one
 * statement after its parent's.
 */
export async function loadRows (context: LoadContext, level: LevelPlan, rows: Row[]): Promise<void> {
  await loadLevel({ context, concurrent: runsConcurrently(context.db), stopped: false }, level, rows, rows.map(() => 1))
}

/** One load: its context, whether its statements may overlap, and whether one of them has failed. */
interface Load {
  readonly context: LoadContext
  readonly concurrent: boolean
  /** Set when a relation failed: the others start no further statement. */
  stopped: boolean
}

/** Thrown to a relation whose load stops because another relation of the same load failed; never answered. */
const stoppedByOther = new Error('stopped: another relation of this load failed')

const concurrency = new WeakMap<AnyKysely, boolean>()

/**
 * Whether the statements of one load may run at the same time on `db`: not
 * in a transaction (one connection, which runs one statement at a time), and
 * not on SQLite (Kysely's SQLite driver has one connection and runs its
 * statements one after another; overlapping them would only reorder them).
 * On a pool, statements beyond its free connections wait for one, as any
 * other query does.
 */
function runsConcurrently (db: AnyKysely): boolean {
  if (db.isTransaction) return false
  let concurrent = concurrency.get(db)
  if (concurrent === undefined) {
    const adapter = executorOf(db)?.adapter
    concurrent = adapter !== undefined && !(adapter instanceof SqliteAdapter)
    concurrency.set(db, concurrent)
  }
  return concurrent
}

async function loadLevel (load: Load, level: LevelPlan, rows: Row[], weights: number[]): Promise<void> {
  if (rows.length === 0) return
  const pending: Array<() => Promise<void>> = []
  for (const field of level.fields) {
    if (field.kind === 'value') continue
    const kind = field.relation.link.kind
    switch (kind) {
      case 'to-one':
        if (field.kind === 'id') copyToOneIds(field.relation, rows)
        else pending.push(() => loadToOne(load, field, rows, weights))
        break
      case 'to-many':
      case 'many-to-many':
        if (field.kind === 'id') pending.push(() => loadIdArrays(load, level.node, field, rows))
        else pending.push(() => loadToMany(load, level.node, field, rows, weights))
        break
      default:
        kind satisfies never
    }
  }
  if (!load.concurrent || pending.length < 2) {
    for (const relation of pending) await relation()
    return
  }
  // Every relation is awaited before the load answers, so a failure leaves no
  // statement running and no rejection unhandled; the first relation's error
  // (in the level's order) is the one answered, as when they run one by one.
  const outcomes = await Promise.allSettled(pending.map(async (relation) => {
    try {
      await relation()
    } catch (error) {
      load.stopped = true
      throw error
    }
  }))
  let failure: { reason: unknown } | undefined
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') continue
    if (outcome.reason !== stoppedByOther) throw outcome.reason
    failure ??= outcome
  }
  if (failure !== undefined) throw failure.reason
}

/** Rows given by a handler may carry a to-one id under the column's name only. */
function copyToOneIds (relation: RelationEdge, rows: Row[]): void {
  if (relation.link.kind !== 'to-one') return
  const { column } = relation.link
  for (const row of rows) {
    if (row[relation.field] !== undefined) continue
    const id = row[column]
    if (id === undefined) {
      const { owner, target, field } = relation
      throw new InvalidDataError(messages.rowsLackReference(owner.qualifiedName, field, column, target.qualifiedName))
    }
    row[relation.field] = id
  }
}

async function loadToOne (load: Load, field: ExpandedField, rows: Row[], weights: number[]): Promise<void> {
  const { relation, level } = field
  copyToOneIds(relation, rows)
  const target = level.node
  const related = new Map<unknown, Row>()
  for (const chunk of chunks(distinctKeys(rows.map((row) => row[relation.field])))) {
    for (const child of await rowsOf(load, field, chunk, relationRowsQuery)) related.set(keyOf(child[target.primaryKey]), child)
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
  load.context.budget.charge(written)
  await loadLevel(load, level, [...childWeights.keys()], [...childWeights.values()])
}

async function loadToMany (load: Load, owner: ResourceNode, field: ExpandedField, rows: Row[], weights: number[]): Promise<void> {
  const { relation, level } = field
  const groups = groupByParent(rows, owner)
  for (const chunk of chunks([...groups.keys()])) {
    for (const child of await rowsOf(load, field, chunk, relationRowsQuery)) {
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
  load.context.budget.charge(written)
  await loadLevel(load, level, children, childWeights)
}

async function loadIdArrays (load: Load, owner: ResourceNode, field: IdField, rows: Row[]): Promise<void> {
  const { relation } = field
  const groups = groupByParent(rows, owner)
  for (const chunk of chunks([...groups.keys()])) {
    const found = await rowsOf(load, field, chunk, (context, field, keys) => relationIdsQuery(context, field.relation, keys))
    for (const row of found) groups.get(keyOf(row[parentKey]))?.push(row.id)
  }
  for (const row of rows) row[relation.field] = groups.get(keyOf(row[owner.primaryKey])) ?? []
}

/**
 * Runs the statement of a planned field for some keys: compiled once and
 * reused, per shape of the request's scope on the related table when it has one.
 */
async function rowsOf<F extends ExpandedField | IdField> (
  load: Load,
  field: F,
  keys: readonly unknown[],
  query: (context: LoadContext, field: F, keys: readonly unknown[]) => ReturnType<typeof relationRowsQuery>
): Promise<Row[]> {
  if (load.stopped) throw stoppedByOther
  const { context } = load
  context.ensureClientWaits()
  return await context.templates.rowsByKeys(
    context.db, field, keys, (keys) => query(context, field, keys), context.scopeParts(field.relation.target))
}

function groupByParent (rows: Row[], owner: ResourceNode): Map<unknown, unknown[]> {
  const groups = new Map<unknown, unknown[]>()
  for (const row of rows) {
    const key = row[owner.primaryKey]
    if (key === undefined) {
      throw new InvalidDataError(messages.rowsLackPrimaryKey(owner.qualifiedName, owner.primaryKey))
    }
    groups.set(keyOf(key), [])
  }
  return groups
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
