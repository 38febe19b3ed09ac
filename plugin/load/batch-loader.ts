import { InvalidDataError, messages } from '../errors.js'
import type { LevelPlan, PlannedField } from '../plan/plan.js'
import { aggregatesByRelation, aggregateStatement } from '../sql/aggregate-statements.js'
import { ownerColumn, type FunctionLink, type RelationEdge, type ResourceNode } from '../graph/resource-graph.js'
import { rowsFromFunction } from './function-relations.js'
import { chunks, groupByParent, isRounded, keyOf } from './parent-keys.js'
import { copyCompositeToOneIds } from './composite-ids.js'
import { rowKey } from '../graph/identifiers.js'
import { parentKeyReader, relatedIdReader } from '../sql/composite-keys.js'
import type { LoadContext } from './load-context.js'
import type { OneWave } from './one-wave.js'
import { bindsKeysFirst, parentKey, relationIdsQuery, relationRowsQuery, rowBoundOf } from '../sql/relation-statements.js'
import { selectedRow, type Row } from '../sql/selection.js'
import { loadChannel, tokenOf, type StatementKind, type StatementLabel } from '../trace/channels.js'
import { positionsOf } from '../trace/positions.js'

type ExpandedField = Extract<PlannedField, { kind: 'expanded' }>
type IdField = Extract<PlannedField, { kind: 'id' }>

/**
 * Fills the relations of `rows` that the level expands (and to-many id
 * arrays), one statement per relation path at every depth: the rows of a
 * path are loaded for all parents at once (`WHERE key IN (...)`), never per row.
 * The rows given are the caller's (a page, a handler's query): the object
 * budget counts what loading adds, expanded rows and the ids of id arrays,
 * each as often as it is written. No statement reads more rows than the
 * budget has left plus one (see `rowsOf`), and a relation over it throws
 * before any statement of the next level runs. The relations of a level do not depend on
 * each other: where the database can run several statements at once (see
 * `runsConcurrently`) they are loaded concurrently, each path still one
 * statement after its parent's, unless `wave` holds the statements already
 * sent with the rows' own (load/one-wave.ts).
 */
export async function loadRows (context: LoadContext, level: LevelPlan, rows: Row[], wave?: OneWave): Promise<void> {
  const load: Load = { context, root: level, concurrent: runsConcurrently(context), stopped: false, wave }
  if (wave === undefined) return await loadLevel(load, level, rows, rows.map(() => 1))
  try {
    await loadLevel(load, level, rows, rows.map(() => 1))
  } finally {
    await wave.settled()
  }
}

/** One load: its context, its plan's root level, whether its statements may overlap, and whether one of them has failed. */
interface Load {
  readonly context: LoadContext
  readonly root: LevelPlan
  readonly concurrent: boolean
  /** Set when a relation failed: the others start no further statement. */
  stopped: boolean
  /** The relations' statements sent with the root's, if they were. */
  readonly wave: OneWave | undefined
}

/** Thrown to a relation whose load stops because another relation of the same load failed; never answered. */
const stoppedByOther = new Error('stopped: another relation of this load failed')

/**
 * Whether the statements of one load may run at the same time: not in a
 * transaction (one connection, which runs one statement at a time), and only
 * where the dialect's connections run them so (`loadsConcurrently`).
 */
export function runsConcurrently ({ db, dialect }: LoadContext): boolean {
  return dialect.loadsConcurrently && !db.isTransaction
}

async function loadLevel (load: Load, level: LevelPlan, rows: Row[], weights: number[]): Promise<void> {
  if (rows.length === 0) return
  const pending: Array<() => Promise<void>> = []
  const aggregates: PlannedAggregate[] = []
  for (const field of level.fields) {
    switch (field.kind) {
      case 'value': case 'computed': continue
      case 'aggregate': aggregates.push(field); continue
      case 'id': case 'expanded': break
      default: field satisfies never
    }
    const kind = field.relation.link.kind
    switch (kind) {
      case 'to-one':
        if (field.kind === 'id') copyToOneIds(field.relation, rows)
        else pending.push(() => loadToOne(load, field, rows, weights))
        break
      case 'to-many':
      case 'many-to-many':
        if (field.kind === 'id') pending.push(() => loadIdArrays(load, level.node, field, rows, weights))
        else pending.push(() => loadToMany(load, level.node, field, rows, weights))
        break
      case 'function': {
        const link = field.relation.link as FunctionLink
        // A to-one id is its owner's column, as a to-one relation's is: the function is called for expanded rows only.
        if (field.kind === 'id' && !link.many) copyToOneIds(field.relation, rows)
        else pending.push(() => loadFromFunction(load, level.node, field, link, rows, weights))
        break
      }
      default:
        kind satisfies never
    }
  }
  if (aggregates.length > 0) {
    for (const group of aggregatesByRelation(aggregates, (field) => field.aggregate.relation).values()) {
      pending.push(() => loadAggregates(load, level.node, group, rows))
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

/** A relation resolved by its function (load/function-relations.ts), then the levels below it as any other. */
async function loadFromFunction (
  load: Load, owner: ResourceNode, field: ExpandedField | IdField, link: FunctionLink, rows: Row[], weights: number[]
): Promise<void> {
  if (load.stopped) throw stoppedByOther
  if (!link.many) copyToOneIds(field.relation, rows)
  const filled = await rowsFromFunction(load.context, owner, field, link, rows, weights)
  chargeWritten(load, filled.written, filled.read)
  if (field.kind === 'expanded') await loadLevel(load, field.level, filled.children, filled.weights)
}

/** Rows given by a handler may carry a to-one id under the column's name only. */
function copyToOneIds (relation: RelationEdge, rows: Row[]): void {
  const column = ownerColumn(relation.link)
  if (column === undefined) return copyCompositeToOneIds(relation, rows)
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
  // Each row's key, read once: null where the row has no related row to look for.
  const keys = new Array<unknown>(rows.length)
  // Per key: the id bound for it (as the driver first gave it), then its related row and the sum of its parents' weights.
  const wanted = new Map<unknown, WantedRow>()
  const ids: unknown[] = []
  for (let index = 0; index < rows.length; index++) {
    const id = rows[index]![relation.field]
    if (id === null || id === undefined) {
      keys[index] = null
      continue
    }
    if (isRounded(id)) throw new InvalidDataError(messages.roundedKey(relation.owner.qualifiedName, relation.field))
    const key = keyOf(id)
    keys[index] = key
    if (wanted.get(key) === undefined) {
      wanted.set(key, { row: undefined, weight: 0 })
      ids.push(id)
    }
  }
  let read = 0
  for (const chunk of chunks(ids)) {
    const found = await rowsOf(load, field, chunk, relationRowsQuery)
    read += found.length
    for (const child of found) {
      const entry = wanted.get(keyOf(rowKey(target.key, child)))
      if (entry !== undefined) entry.row = child
    }
  }
  const { met, written } = placeToOne(relation.field, rows, keys, weights, wanted)
  chargeWritten(load, written, read)
  await loadLevel(load, level, met.map((entry) => entry.row), met.map((entry) => entry.weight))
}

/** A related row, and how many times it is written (see `ObjectBudget`). */
export interface WeightedRow { row: Row; weight: number }

/** The related row of a key asked for, if one was found, and how many times it is written. */
interface WantedRow { row: Row | undefined; weight: number }

/**
 * Writes each row's related row (or null) into `field`, by the row's key,
 * and sums the weights of the parents of each related row: the related rows
 * in the order their parents first meet them, and the objects written.
 */
export function placeToOne (
  field: string, rows: Row[], keys: readonly unknown[], weights: readonly number[], related: ReadonlyMap<unknown, WantedRow>
): { met: WeightedRow[]; written: number } {
  const met: WeightedRow[] = []
  let written = 0
  for (let index = 0; index < rows.length; index++) {
    const key = keys[index]
    const found = key === null ? undefined : related.get(key)
    if (found?.row === undefined) {
      rows[index]![field] = null
      continue
    }
    rows[index]![field] = found.row
    const weight = weights[index]!
    // Weights are at least 1 (a row counts once), so a weight of 0 is a row not met yet.
    if (found.weight === 0) met.push(found as WeightedRow)
    found.weight += weight
    written += weight
  }
  return { met, written }
}

async function loadToMany (load: Load, owner: ResourceNode, field: ExpandedField, rows: Row[], weights: number[]): Promise<void> {
  const { relation, level } = field
  const { keys, groups } = groupByParent(rows, owner)
  // Each child without its parent key: the level's own columns, as a to-one row of the level has them.
  const withoutParent = selectedRow(level)
  const parentOf = parentKeyReader(relation)
  let read = 0
  for (const chunk of chunks([...groups.keys()])) {
    const found = await rowsOf(load, field, chunk, relationRowsQuery)
    read += found.length
    // The statement returns a parent's rows one after another (ordered by its key): its group is looked up once per run.
    let runKey: unknown = noKey
    let group: unknown[] | undefined
    for (const child of found) {
      const key = keyOf(parentOf(child))
      if (key !== runKey) {
        runKey = key
        group = groups.get(key)
      }
      group?.push(withoutParent(child))
    }
  }
  const children: Row[] = []
  const childWeights: number[] = []
  let written = 0
  const addGroup = (group: Row[], weight: number): void => {
    for (const child of group) {
      children.push(child)
      childWeights.push(weight)
    }
    written += weight * group.length
  }
  if (groups.size === rows.length) {
    // Each row has a key of its own: its group's weight is its own, and the groups come in the rows' order.
    for (let index = 0; index < rows.length; index++) {
      const group = groups.get(keys[index]) as Row[]
      rows[index]![relation.field] = group
      addGroup(group, weights[index]!)
    }
  } else {
    // Rows sharing a key share one array, so a child's weight is the sum of theirs.
    const groupWeights = new Map<unknown, number>()
    for (let index = 0; index < rows.length; index++) {
      const key = keys[index]
      rows[index]![relation.field] = groups.get(key)
      groupWeights.set(key, (groupWeights.get(key) ?? 0) + weights[index]!)
    }
    for (const [key, group] of groups) addGroup(group as Row[], groupWeights.get(key) ?? 0)
  }
  chargeWritten(load, written, read)
  await loadLevel(load, level, children, childWeights)
}

/** No key a row's key reads as (`keyOf` gives numbers, strings and the drivers' other values, never this object). */
const noKey: unknown = Object.freeze({})

/**
 * The aggregates of one relation for every row, from one grouped statement
 * per chunk of keys: a row without related rows counts 0, and its other
 * aggregates are null. Scalars: they add no object to the budget.
 */
async function loadAggregates (load: Load, owner: ResourceNode, planned: readonly PlannedAggregate[], rows: Row[]): Promise<void> {
  const aggregates = planned.map((field) => field.aggregate)
  const relation = aggregates[0]!.relation
  const { keys, groups } = groupByParent(rows, owner)
  const found = new Map<unknown, Row>()
  const { context } = load
  // The group's first planned field names the statement: it lives as long as the plan, which decides its columns.
  const site = planned[0]!
  const byKeys = async (keys: readonly unknown[]): Promise<Row[]> => {
    if (load.stopped) throw stoppedByOther
    context.ensureClientWaits()
    const build = (keys: readonly unknown[]) => aggregateStatement(context, relation, aggregates, keys)
    const label = loadChannel.hasSubscribers ? statementLabel(load, site, 'aggregates', keys.length) : undefined
    const scope = context.scopeParts(relation.target)
    return await context.templates.rowsByKeys(context.db, site, keys, undefined, build, scope, false, '', label)
  }
  for (const chunk of chunks([...groups.keys()])) {
    if (load.stopped) throw stoppedByOther
    context.ensureClientWaits()
    // Sent with the root's statement (load/one-wave.ts): its groups, then by key those of the parents it did not answer for.
    const sent = load.wave === undefined ? undefined : await load.wave.take(site, chunk)
    const read = sent === undefined
      ? await byKeys(chunk)
      : sent.missing.length === 0 ? sent.rows : sent.rows.concat(await byKeys(sent.missing))
    for (const row of read) found.set(keyOf(row[parentKey]), row)
  }
  for (let index = 0; index < rows.length; index++) {
    const values = found.get(keys[index])
    for (const aggregate of aggregates) {
      rows[index]![aggregate.name] = values === undefined
        ? (aggregate.function === 'count' ? 0 : null)
        : values[aggregate.name]
    }
  }
}

type PlannedAggregate = Extract<PlannedField, { kind: 'aggregate' }>

/** Each id of an array is one object, written as often as its row is: charged as an expanded row would be. */
async function loadIdArrays (load: Load, owner: ResourceNode, field: IdField, rows: Row[], weights: number[]): Promise<void> {
  const { relation } = field
  const { keys, groups } = groupByParent(rows, owner)
  const parentOf = parentKeyReader(relation)
  const idOf = relatedIdReader(relation)
  let read = 0
  for (const chunk of chunks([...groups.keys()])) {
    const found = await rowsOf(load, field, chunk, (context, field, keys, bound) => relationIdsQuery(context, field, keys, bound))
    read += found.length
    for (const row of found) groups.get(keyOf(parentOf(row)))?.push(idOf(row))
  }
  let written = 0
  for (let index = 0; index < rows.length; index++) {
    const ids = groups.get(keys[index])!
    rows[index]![relation.field] = ids
    written += weights[index]! * ids.length
  }
  chargeWritten(load, written, read)
}

/**
 * Runs the statement of a planned field for some keys: compiled once and
 * reused, per shape of the request's scope on the related table when it has
 * one. It reads one row more than the budget has left at most, and charges
 * each row it read once (every row is written at least once): a relation
 * over the budget throws as soon as its statement shows it.
 */
async function rowsOf<F extends ExpandedField | IdField> (
  load: Load,
  field: F,
  keys: readonly unknown[],
  query: (context: LoadContext, field: F, keys: readonly unknown[], bound: number) => ReturnType<typeof relationRowsQuery>
): Promise<Row[]> {
  if (load.stopped) throw stoppedByOther
  const { context } = load
  context.ensureClientWaits()
  // Sent with the root's statement (load/one-wave.ts): its rows, then by key those of the parents it did not answer for.
  const sent = load.wave === undefined ? undefined : await load.wave.take(field, keys)
  if (sent === undefined) return await rowsByKeys(load, field, keys, query)
  context.budget.charge(sent.rows.length)
  if (sent.missing.length === 0) return sent.rows
  if (load.stopped) throw stoppedByOther
  context.ensureClientWaits()
  return sent.rows.concat(await rowsByKeys(load, field, sent.missing, query))
}

/** `rowsOf`'s statement for these keys, bound: its rows, charged. */
async function rowsByKeys<F extends ExpandedField | IdField> (
  load: Load,
  field: F,
  keys: readonly unknown[],
  query: (context: LoadContext, field: F, keys: readonly unknown[], bound: number) => ReturnType<typeof relationRowsQuery>
): Promise<Row[]> {
  const { context } = load
  // A to-one statement has no bound: it reads at most a row per key, and the keys are of parents already charged.
  const bound = rowBoundOf(context, field.relation)
  const build = (keys: readonly unknown[]) => query(context, field, keys, bound ?? 0)
  // A request's expanded list adds its conditions' values to the scope's, and its sort and limit to the statement's variant.
  const listed = context.listed(field)
  const scope = listed === undefined ? context.scopeParts(field.relation.target) : listed.parts
  const keysFirst = bindsKeysFirst(context, field)
  const label = loadChannel.hasSubscribers ? statementLabel(load, field, field.kind === 'id' ? 'ids' : 'rows', keys.length) : undefined
  const rows = await context.templates.rowsByKeys(context.db, field, keys, bound, build, scope, keysFirst, listed?.variant, label)
  context.budget.charge(rows.length)
  return rows
}

/** What the load channel publishes of a relation's statement: its path and level in the plan, and its keys. */
function statementLabel (load: Load, field: PlannedField, kind: StatementKind, keyCount: number): StatementLabel {
  const { path, wave } = positionsOf(load.root).get(field)!
  return { kind, path, system: load.context.dialect.systemName, wave, keyCount, request: tokenOf(load.context) }
}

/**
 * Charges what a relation writes beyond the rows its statements read (and
 * `rowsOf` charged): rows shared by several parents, or written under a
 * parent written several times. A row no parent took (a key the database
 * matched and the loader does not) stays charged, as read.
 */
function chargeWritten (load: Load, written: number, read: number): void {
  if (written > read) load.context.budget.charge(written - read)
}
