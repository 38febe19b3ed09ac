import type { FastifyRequest } from 'fastify'
import { InvalidDataError, RelationLoadFailedError, RequestAbortedError, UnavailableError, messages } from '../errors.js'
import { relationName, type FunctionLink, type RelationEdge, type ResourceNode } from '../graph/resource-graph.js'
import type { LevelPlan, PlannedField } from '../plan/plan.js'
import { withRetryAfter } from '../sql/statement-templates.js'
import type { Row } from '../sql/selection.js'
import { placeToOne } from './batch-loader.js'
import { keyOf } from './parent-keys.js'
import type { LoadContext } from './load-context.js'

/** A planned relation field resolved by a function: expanded, or (to-many) shown as the ids of the rows it returns. */
type FunctionField = Extract<PlannedField, { kind: 'id' | 'expanded' }>

/** What a relation's function put into its parents' rows: the rows to load further, with their weights, and the objects written. */
export interface FunctionRows {
  /** The related rows in the order their parents meet them, each once; none for ids. */
  readonly children: Row[]
  /** How many times each child is written (see `ObjectBudget`). */
  readonly weights: number[]
  /** The objects the rows add to the response, counting a row as often as it is written. */
  readonly written: number
  /** The objects already charged to the budget: each row the function gave for a key asked, once. */
  readonly read: number
}

/**
 * Fills a relation resolved by its `load` function into `rows`: one call for
 * the distinct keys of all the parents (a to-one relation's column values
 * that are not null, the parents' primary keys for a to-many one), no call
 * when there are none. Keys are compared as the loader compares them
 * (`keyOf`): the function is given each key as the rows hold it, and may
 * answer under any form of it. Each row it returns is copied before the
 * loader writes relations into it, so a cache's objects stay as they were.
 * The rows are charged to the object budget as a statement's would be.
 * A to-one relation's key has been copied into the rows' field first.
 */
export async function rowsFromFunction (
  context: LoadContext, owner: ResourceNode, field: FunctionField, link: FunctionLink, rows: Row[], weights: number[]
): Promise<FunctionRows> {
  const { relation } = field
  const keyField = link.many ? owner.primaryKey : relation.field
  // Each row's key, read once: null where a to-one row has no related row to look for.
  const keys = new Array<unknown>(rows.length)
  const distinct = new Map<unknown, unknown>()
  for (let index = 0; index < rows.length; index++) {
    const value = rows[index]![keyField]
    if (link.many && value === undefined) throw new InvalidDataError(messages.rowsLackPrimaryKey(owner.qualifiedName, owner.primaryKey))
    if (value === null || value === undefined) {
      keys[index] = null
      continue
    }
    const key = keyOf(value)
    keys[index] = key
    if (!distinct.has(key)) distinct.set(key, value)
  }
  const answers = distinct.size === 0 ? new Map<unknown, unknown>() : await call(context, field, link, [...distinct.values()])
  return link.many
    ? fillToMany(context, field, answers, distinct, rows, weights, keys)
    : fillToOne(context, relation, answers, distinct, rows, weights, keys)
}

function fillToOne (
  context: LoadContext, relation: RelationEdge, answers: Map<unknown, unknown>, distinct: Map<unknown, unknown>,
  rows: Row[], weights: number[], keys: unknown[]
): FunctionRows {
  // Each related row with the sum of its parents' weights, one per key asked.
  const related = new Map<unknown, { row: Row; weight: number }>()
  for (const key of distinct.keys()) {
    const value = answers.get(key)
    if (value === null || value === undefined) continue
    if (!isRow(value)) throw new InvalidDataError(messages.loadValueNotRow(relationName(relation), kindOf(value)))
    related.set(key, { row: { ...value }, weight: 0 })
  }
  context.budget.charge(related.size)
  const { met, written } = placeToOne(relation.field, rows, keys, weights, related)
  return { children: met.map((entry) => entry.row), weights: met.map((entry) => entry.weight), written, read: related.size }
}

function fillToMany (
  context: LoadContext, field: FunctionField, answers: Map<unknown, unknown>, distinct: Map<unknown, unknown>,
  rows: Row[], weights: number[], keys: unknown[]
): FunctionRows {
  const { relation } = field
  const groups = new Map<unknown, Row[]>()
  let read = 0
  for (const key of distinct.keys()) {
    const value = answers.get(key) ?? []
    if (!Array.isArray(value) || !value.every(isRow)) {
      const what = Array.isArray(value) ? 'an array holding a non-object' : kindOf(value)
      throw new InvalidDataError(messages.loadValueNotRows(relationName(relation), what))
    }
    read += value.length
    groups.set(key, value.map((row: Row) => ({ ...row })))
  }
  context.budget.charge(read)
  // Rows sharing a key share one array (or one array of ids), so a child's weight is the sum of theirs.
  const ids = field.kind === 'id' ? idsOf(groups, relation.target.primaryKey) : undefined
  const groupWeights = new Map<unknown, number>()
  for (let index = 0; index < rows.length; index++) {
    const key = keys[index]
    rows[index]![relation.field] = (ids ?? groups).get(key)
    groupWeights.set(key, (groupWeights.get(key) ?? 0) + weights[index]!)
  }
  const children: Row[] = []
  const childWeights: number[] = []
  let written = 0
  for (const [key, group] of groups) {
    const weight = groupWeights.get(key)!
    written += weight * group.length
    if (ids !== undefined) continue
    for (const child of group) {
      children.push(child)
      childWeights.push(weight)
    }
  }
  return { children, weights: childWeights, written, read }
}

/** The ids of each group's rows: a to-many relation shown unexpanded. */
function idsOf (groups: Map<unknown, Row[]>, primaryKey: string): Map<unknown, unknown[]> {
  return new Map([...groups].map(([key, group]) => [key, group.map((row) => row[primaryKey])]))
}

/**
 * Calls the relation's function once, for every key of its path. Its error
 * never reaches the body: a thrown `UnavailableError` is a 503 with
 * Retry-After (as the database out of reach is), anything else a 500 whose
 * cause (logged) is the error; a client that went away meanwhile is the
 * aborted request it is. The answer is keyed as the loader compares keys.
 */
async function call (context: LoadContext, field: FunctionField, link: FunctionLink, keys: unknown[]): Promise<Map<unknown, unknown>> {
  context.ensureClientWaits()
  // Every load runs for a request (index.ts makes each load context with one).
  const request = context.request!
  const { signal, release } = clientSignal(request)
  recordCall(request, field, keys.length)
  let answer: unknown
  try {
    answer = await link.load(keys, { request, signal })
  } catch (error) {
    if (signal.aborted) throw new RequestAbortedError()
    if (error instanceof UnavailableError) throw 'headers' in error ? error : withRetryAfter(error)
    throw new RelationLoadFailedError({ cause: error })
  } finally {
    release()
  }
  context.ensureClientWaits()
  if (!(answer instanceof Map)) throw new InvalidDataError(messages.loadNotAMap(relationName(field.relation), kindOf(answer), link.many))
  const answers = new Map<unknown, unknown>()
  for (const [key, value] of answer) answers.set(keyOf(key), value)
  return answers
}

/**
 * A signal aborted when the request's connection closes before the call
 * ends: the client went away. The listener goes when the call ends, so a
 * kept-alive connection does not collect them.
 */
function clientSignal (request: FastifyRequest): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController()
  // A request may have no socket (one a hook made, a stream whose session is gone): then nothing tells its client left.
  const socket = request.raw.socket as FastifyRequest['raw']['socket'] | null
  if (socket === null) return { signal: controller.signal, release: () => {} }
  const abort = () => controller.abort(new RequestAbortedError())
  socket.once('close', abort)
  return { signal: controller.signal, release: () => { socket.off('close', abort) } }
}

function isRow (value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** What a value is, for messages: never the value itself. */
function kindOf (value: unknown): string {
  if (value === null || value === undefined) return String(value)
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/**
 * The request's calls, by planned field, with their numbers of keys: what
 * `explain` reports after loading. Held by the request (index.ts declares the
 * decoration), so they go with it.
 */
export const functionCalls = Symbol('fastify-expand function calls')

type Recorded = FastifyRequest & { [functionCalls]: Map<PlannedField, number> | null }

function recordCall (request: FastifyRequest, field: PlannedField, keys: number): void {
  const recorded = request as Recorded
  recorded[functionCalls] ??= new Map()
  recorded[functionCalls].set(field, keys)
}

/** A relation resolved by a function, as `explain` lists it: its path, and its number of keys once the request has called it. */
export interface PlannedCall {
  path: string
  kind: 'function'
  relation: string
  keys?: number
}

/** The relations of a plan resolved by functions, in the plan's order, at every depth. */
export function plannedCalls (request: FastifyRequest, level: LevelPlan, path = ''): PlannedCall[] {
  const planned: PlannedCall[] = []
  for (const field of level.fields) {
    if (field.kind === 'value' || field.kind === 'aggregate' || field.kind === 'computed') continue
    const at = path === '' ? field.name : `${path}.${field.name}`
    const { link } = field.relation
    // A to-one id is its owner's column: no call.
    if (link.kind === 'function' && (link.many || field.kind === 'expanded')) {
      const keys = (request as Recorded)[functionCalls]?.get(field)
      planned.push({ path: at, kind: 'function', relation: relationName(field.relation), ...(keys === undefined ? {} : { keys }) })
    }
    if (field.kind === 'expanded') planned.push(...plannedCalls(request, field.level, at))
  }
  return planned
}
