import type { LevelPlan, PlannedField } from '../plan/plan.js'
import { aggregatesByRelation, aggregateStatement } from '../sql/aggregate-statements.js'
import type { CompiledQuery } from 'kysely'
import type { CombinedForm, HeldAnswer, Source } from '../sql/combined-statements.js'
import {
  keyColumnsOf, keyNamesOf, keySource, keySubquery, keySubqueryByName, nestedScope, waveRowReader, waveStatement, withNativeKeys,
  type NativeKeys,
} from '../sql/key-subqueries.js'
import { hasStatement, limitOf, relationIdsQuery, relationRowsQuery, rowBoundOf } from '../sql/relation-statements.js'
import { keyColumns, selectedRow, type AnySelect, type Row } from '../sql/selection.js'
import { reusesStatements, sentTogether, waveRows, type ScopeParts } from '../sql/statement-templates.js'
import { fieldReadAsText } from '../sql/text-columns.js'
import { loadChannel, tokenOf, type StatementLabel } from '../trace/channels.js'
import { positionsOf } from '../trace/positions.js'
import { keyOf } from './parent-keys.js'
import type { LoadContext } from './load-context.js'

type RelationField = Extract<PlannedField, { kind: 'id' | 'expanded' }>

/** A generated route's own statement (its page, its row), as the relation statements of one wave take their keys from it. */
export interface RootStatement {
  /** The statement, built for `values` (called only when its relations' statements are compiled). */
  readonly build: () => AnySelect
  /** What it binds after its scope's values (a page's limit and offset, a row's key): every statement of the wave binds them last. */
  readonly values: readonly unknown[]
  /** What tells it apart from the route's other statements of the same plan (`page`, `one`, a filtered page's shape). */
  readonly purpose: string
  /** Its scope's parts, the values it binds first (see `scopeParts`); a null key: built for this request alone. */
  readonly scope: ScopeParts | undefined
}

/**
 * The relation statements of a request sent together with its route's own
 * statement (`sendOneWave`), each taking its keys from a subquery of its
 * parent's statement (sql/key-subqueries.ts) rather than from the parent's
 * rows: a plan of any depth costs one round trip. The loader takes each
 * relation's rows from here (batch-loader's `rowsOf`) and places and charges
 * them as it does a statement's it sent itself; the keys of the parents it
 * placed that a statement did not answer for, it reads by value.
 */
export class OneWave {
  private readonly sent = new Map<PlannedField, Promise<WaveAnswer>>()
  private readonly taken = new Set<PlannedField>()

  /**
   * Holds the rows of a field's statement, sent, keyed by `parts` columns (a
   * composite key's parts); `placed`: what of each row a to-one relation
   * places in its parents (see `placedRow`).
   */
  add (field: PlannedField, rows: Promise<HeldAnswer>, parts: number, placed?: (row: Row) => Row): void {
    const answer = rows.then((read) => answerOf(read, parts, placed))
    // Awaited by the loader when it takes them, by `settled` when it does not: never an unhandled rejection.
    answer.catch(ignore)
    this.sent.set(field, answer)
  }

  /**
   * For a field's statement, sent: the rows it read the first time (none
   * after: its chunks of keys past the first, which the statement read with
   * the first), and which of `keys` it did not answer for. Undefined for a
   * field the wave did not send.
   */
  async take (field: PlannedField, keys: readonly unknown[]): Promise<{ rows: Row[]; missing: unknown[] } | undefined> {
    const sent = this.sent.get(field)
    if (sent === undefined) return undefined
    const { rows, covered } = await sent
    const first = !this.taken.has(field)
    this.taken.add(field)
    return { rows: first ? rows : [], missing: covered === undefined ? [] : keys.filter((key) => !covered.has(keyOf(key))) }
  }

  /** Settles when every statement of the wave has answered, taken or not: a load answers with none left running. */
  async settled (): Promise<void> {
    await Promise.allSettled(this.sent.values())
  }
}

/**
 * A one-wave statement's answer: its relation's rows, and the parent keys it
 * read them for (sql/key-subqueries.ts); undefined: every key of the parents
 * placed, read in the same statement as their rows (`CombinedForm`).
 */
interface WaveAnswer {
  readonly rows: Row[]
  readonly covered: ReadonlySet<unknown> | undefined
}

/**
 * Each row says a parent key it answered for (a composite key: its
 * identifier, as the loader holds it); a row without a relation row is that
 * alone. A row with one is kept as `placed` gives it, else whole. Read
 * through its combined form, each row is a relation row.
 */
function answerOf ({ rows: read, combined }: HeldAnswer, parts: number, placed: ((row: Row) => Row) | undefined): WaveAnswer {
  if (combined) return { rows: placed === undefined ? read : read.map(placed), covered: undefined }
  const rows: Row[] = []
  const covered = new Set<unknown>()
  const reader = waveRowReader(parts)
  for (const row of read) {
    covered.add(keyOf(reader.keyOf(row)))
    if (reader.joined(row)) rows.push(placed === undefined ? row : placed(row))
  }
  return { rows, covered }
}

/**
 * What the loader places of a row of `site`'s one-wave statement: an expanded
 * to-one relation's row goes into its parents as it is read, so it is copied
 * with the level's own columns, without the wave's (a to-many relation's rows
 * are copied so once grouped, batch-loader's `loadToMany`; ids and aggregates
 * are read, never placed).
 */
function placedRow (site: RelationField | PlannedAggregate): ((row: Row) => Row) | undefined {
  return site.kind === 'expanded' && site.relation.link.kind === 'to-one' ? selectedRow(site.level) : undefined
}

/** Handles a rejection awaited elsewhere, so that it is never reported as unhandled before it is. */
export const ignore = (): void => {}

/**
 * Sends the statement of every relation of the plan below `root`, keyed by
 * subqueries of `statement`, when the database loads in one wave
 * (`loadsInOneWave`, outside a transaction); else undefined, and the loader
 * sends each level's statements once its parents' rows are in, as it does
 * below a function-resolved relation (`sendLevel`). Every statement reads at most the budget's bound of rows
 * (`ObjectBudget.rowBound`, nothing loaded yet): the budget is charged when
 * the loader places them, as when they come one level at a time, so a
 * request over it answers the same error.
 */
export function sendOneWave (context: LoadContext, root: LevelPlan, statement: RootStatement, combining = false): OneWave | undefined {
  if (!sendsTogether(context)) return undefined
  // A client gone by now is found before its rows are placed (batch-loader's `rowsOf`): the load stops there, the wave answered.
  const wave = new OneWave()
  const rootSource = memoized((): Source => ({
    name: sourceName(0),
    compiled: context.templates.compiled(
      context.db, root, `source ${statement.purpose}`, statement.values, 0, () => withNativeKeys(statement.build(), nativeKeysOf(root)), statement.scope
    ),
  }))
  sendLevel(context, root, {
    wave,
    root,
    rootStatement: statement,
    parent: memoized(statement.build),
    parentScope: statement.scope,
    numbered: false,
    listsAbove: '',
    sources: combining ? memoized(() => [rootSource()]) : undefined,
    numbering: { next: 1 },
  })
  return wave
}

/** A source's name in a combined statement: the sources are numbered as the plan is walked, the route's own statement first. */
const sourceName = (index: number): string => `__expand_source_${index}`

/**
 * Whether the request's statements go out together instead of each once the
 * one before it has answered: the database loads in one wave
 * (`loadsInOneWave`), outside a transaction (one connection, one statement
 * at a time).
 */
export function sendsTogether (context: LoadContext): boolean {
  const { db, dialect } = context
  return dialect.loadsInOneWave && dialect.loadsConcurrently && !db.isTransaction
}

/**
 * Sends the statements of a level's relations and aggregates, each keyed by
 * the statement of the level's rows (`sending.parent`), and those of the
 * levels below.
 */
function sendLevel (context: LoadContext, level: LevelPlan, sending: Sending): void {
  const { db } = context
  const { parent, numbered, sources } = sending
  const keysOf = (columns: readonly string[], names: readonly string[]) =>
    memoized(() => (numbered ? keySubqueryByName(db, parent(), names, readsNative(level)) : keySubquery(db, parent(), columns)))
  for (const field of level.fields) {
    if (field.kind !== 'id' && field.kind !== 'expanded') continue
    // A relation resolved by a function has no statement: it is called with its parents' rows, and the levels below
    // it load level by level, their statements keyed by the rows it gives. Every other relation goes in the wave,
    // with a request's expanded list (`sort[path]`, `limit[path]`, `where[path.field]`), over a composite key
    // (matched part by part, sql/composite-keys.ts) or with a `limit`.
    if (!hasStatement(field)) continue
    const bound = rowBoundOf(context, field.relation) ?? 0
    const columns = keyColumnsOf(level.node, field)
    const names = keyNamesOf(level.node, field)
    const limited = limitOf(context, field) !== undefined
    const keys = keysOf(columns, names)
    const statement = (waveKeys: AnySelect) => statementOf(context, field, waveKeys, bound)
    // A request's expanded list adds its conditions' values to the scope's, and its sort and limit to the statement's
    // variant, and to those of every statement below it, which hold this one as their keys' subquery.
    const listed = context.listed(field)
    const own = listed === undefined ? context.scopeParts(field.relation.target) : listed.parts
    const lists = `${sending.listsAbove}${listed?.variant ?? ''}`
    const combined = sources === undefined
      ? undefined
      : combinedStatement(
        context, field, sources, names, readsNative(level), sourceStatement(context, field, bound, statement), own, listed?.variant ?? ''
      )
    // In a combined statement, an expanded relation's rows are a source: the statements of the level below read their keys from it.
    const source = combined === undefined || field.kind !== 'expanded'
      ? undefined
      : memoized((): Source => ({ name: sourceName(sending.numbering.next++), compiled: combined() }))
    const readSources = source === undefined ? sources : memoized(() => [...sources!(), source()])
    const form = combined === undefined
      ? undefined
      : () => ({ sources: readSources!(), compiled: combined(), isSource: source !== undefined })
    sendStatement(context, sending, field, keys, columns.length, statement, own, lists, form)
    if (field.kind === 'expanded') {
      // The level below takes its keys from this relation's rows: its statement keyed as here, without the wave's join,
      // and with its keys as their columns hold them, which a statement with `limit` carries out of its numbered rows.
      sendLevel(context, field.level, {
        ...sending,
        parent: memoized(() => relationRowsQuery(context, field, keys(), bound, nativeKeysOf(field.level))),
        parentScope: nestedScope(own, sending.parentScope),
        numbered: limited,
        listsAbove: lists,
        sources: readSources,
      })
    }
  }
  // The level's aggregates: one grouped statement per relation, keyed by the level's own keys.
  const aggregates = level.fields.filter((field): field is PlannedAggregate => field.kind === 'aggregate')
  if (aggregates.length === 0) return
  const columns = keyColumns(level.node)
  const keys = keysOf(columns, level.node.key.fields)
  for (const group of aggregatesByRelation(aggregates, (field) => field.aggregate.relation).values()) {
    // The group's first field names the statement, as when it is sent on its own (batch-loader's `loadAggregates`).
    const site = group[0]!
    const { relation } = site.aggregate
    const statement = (waveKeys: AnySelect) => aggregateStatement(context, relation, group.map((field) => field.aggregate), waveKeys)
    const own = context.scopeParts(relation.target)
    const combined = sources === undefined
      ? undefined
      : combinedStatement(context, site, sources, level.node.key.fields, readsNative(level), statement, own, '')
    const form = combined === undefined ? undefined : () => ({ sources: sources!(), compiled: combined(), isSource: false })
    sendStatement(context, sending, site, keys, columns.length, statement, own, sending.listsAbove, form)
  }
}

/**
 * A statement's form in a combined statement (sql/combined-statements.ts's
 * `CombinedForm`): its keys read by name (`names`) from its parents'
 * source, the last of `sources`, so that it binds the values of its own
 * condition alone (`own`, its scope: first); a key name `native` tells read
 * as its column holds it. `variant`: its own expanded list's
 * (`ListedRelation.variant`).
 */
function combinedStatement (
  context: LoadContext, site: RelationField | PlannedAggregate, sources: () => readonly Source[], names: readonly string[],
  native: (name: string) => boolean, statement: (keys: AnySelect) => AnySelect, own: ScopeParts | undefined, variant: string
): () => CompiledQuery<unknown> {
  const { db, templates } = context
  return memoized(() => {
    const parent = sources().at(-1)!.name
    // The bound is a literal of the statement's text, and its parents' source a name in it: one template per each.
    const purpose = `combined ${parent}/limit ${context.budget.rowBound}${variant}`
    return templates.compiled(db, site, purpose, [], 0, () => statement(keySource(db, parent, names, native)), own)
  })
}

/**
 * Whether a key of `level` is read from the statement of its rows as its
 * column holds it: where that statement selects it as its text, and so
 * selects it also as its column holds it (`nativeKeysOf`). Asked when a
 * statement is built: a template kept from an earlier request needs none.
 */
function readsNative (level: LevelPlan): (name: string) => boolean {
  return (name) => fieldReadAsText(level.node, name)
}

/**
 * An expanded relation's statement as its source in a combined statement:
 * with the keys its relations read as their columns hold them (`nativeKeysOf`).
 */
function sourceStatement (
  context: LoadContext, field: RelationField, bound: number, statement: (keys: AnySelect) => AnySelect
): (keys: AnySelect) => AnySelect {
  if (field.kind !== 'expanded') return statement
  return (waveKeys) => relationRowsQuery(context, field, waveKeys, bound, nativeKeysOf(field.level))
}

/**
 * The keys of `level`'s rows that the statements of its relations and
 * aggregates read, where the level's statement selects them as their text
 * (text-columns.ts): each once, its column and its name, for its source to
 * select as the column holds them (`withNativeKeys`). An `int8` or a `uuid`
 * key declared a string is compared with its relation's column so.
 */
function nativeKeysOf (level: LevelPlan): NativeKeys {
  const keys = new Map<string, string>()
  const add = (columns: readonly string[], names: readonly string[]): void => {
    names.forEach((name, index) => { if (fieldReadAsText(level.node, name)) keys.set(name, columns[index]!) })
  }
  for (const field of level.fields) {
    if (field.kind === 'aggregate') add(keyColumns(level.node), level.node.key.fields)
    else if ((field.kind === 'id' || field.kind === 'expanded') && hasStatement(field)) {
      add(keyColumnsOf(level.node, field), keyNamesOf(level.node, field))
    }
  }
  return [...keys].map(([name, column]) => [column, name])
}

type PlannedAggregate = Extract<PlannedField, { kind: 'aggregate' }>

/** What the statements of one wave share, and what a level's statements take from the levels above it. */
interface Sending {
  readonly wave: OneWave
  readonly root: LevelPlan
  /** The route's statement, whose values every statement of the wave binds. */
  readonly rootStatement: RootStatement
  /** The statement of the level's rows, whose keys its relations' statements read. */
  readonly parent: () => AnySelect
  /** That statement's scope parts: its own, then its parents' up to the root's. */
  readonly parentScope: ScopeParts | undefined
  /** That statement reads its rows numbered per parent (a relation with `limit`): its keys are read by the names it selects them under. */
  readonly numbered: boolean
  /**
   * The sorts, limits and condition shapes of the request's expanded lists on
   * that statement and its parents (`ListedRelation.variant`): they change its
   * text, and so the text of every statement keyed by it, without changing the
   * plan, whose fields name the statements' templates.
   */
  readonly listsAbove: string
  /**
   * Where the wave goes out as one statement (`sentTogether`): the sources
   * that statement holds for the level, the route's statement first, the
   * level's own last (its relations read their keys from it); undefined
   * where it does not.
   */
  readonly sources: (() => readonly Source[]) | undefined
  /** The next source's number. */
  readonly numbering: { next: number }
}

/**
 * Sends one statement of the wave for `site` (a relation field, or the first
 * aggregate of a group), reading the rows of the related table for the keys
 * of `keys` (`parts` columns): its parents' statement first (its keys, a
 * common table expression), then the values of its own condition, `own` (the
 * scope on the related table, and a request's list conditions). `lists`: the
 * variants of the request's expanded lists on the statement and above it.
 * `form`: its form where the wave goes out as one statement.
 */
function sendStatement (
  context: LoadContext, sending: Sending, site: RelationField | PlannedAggregate,
  keys: () => AnySelect, parts: number, statement: (keys: AnySelect) => AnySelect, own: ScopeParts | undefined, lists: string,
  form: (() => CombinedForm) | undefined
): void {
  const { db, templates } = context
  const { wave, root, parentScope, rootStatement } = sending
  const build = () => waveStatement(db, keys(), parts, statement)
  const key = nestedScope(own, parentScope)?.key
  const scope = key === undefined ? undefined : { key, values: parentScope?.values ?? [] }
  const values = [...rootStatement.values, ...(own?.values ?? [])]
  // The bound is a literal of the statement's text, or of a subquery's: one template per bound.
  const purpose = `wave ${rootStatement.purpose}/limit ${context.budget.rowBound}${lists}`
  const label = loadChannel.hasSubscribers ? labelOf(context, root, site) : undefined
  // Built, compiled and run inside its own promise: never throws.
  const read = async (): Promise<HeldAnswer> =>
    await waveRows(db, templates.compiled(db, site, purpose, values, 0, build, scope), form?.(), label)
  wave.add(site, read(), parts, placedRow(site))
}

function statementOf (context: LoadContext, field: RelationField, keys: AnySelect, bound: number): AnySelect {
  return field.kind === 'expanded' ? relationRowsQuery(context, field, keys, bound) : relationIdsQuery(context, field, keys, bound)
}

/** A statement sent with the route's own: in its round trip (wave 0), binding no keys of its own. */
function labelOf (context: LoadContext, root: LevelPlan, site: RelationField | PlannedAggregate): StatementLabel {
  const { path } = positionsOf(root).get(site)!
  const kind = site.kind === 'aggregate' ? 'aggregates' : site.kind === 'id' ? 'ids' : 'rows'
  return { kind, path, system: context.dialect.systemName, wave: 0, keyCount: undefined, request: tokenOf(context) }
}

/** Built once, when first asked: a statement template kept from an earlier request needs none. */
function memoized<T> (build: () => T): () => T {
  let built: T | undefined
  return () => (built ??= build())
}

/**
 * What a route reads before its relations' rows (`read`: its own statement,
 * and its count), with the relations' statements sent right after its own
 * statement (`sendOneWave`): the route's statement first, so that it has the
 * database's attention first. `read` is told whether the statements go out
 * together (`sendsTogether`): then an unfiltered page's statement reads its
 * count too, else the count follows once the page has answered. When the
 * route's read fails, the statements of the wave are awaited before the
 * error is answered, so that none is left running.
 */
export async function withOneWave<T> (
  context: LoadContext, root: LevelPlan, statement: RootStatement, read: (together: boolean) => Promise<T>
): Promise<[T, OneWave | undefined]> {
  const together = sendsTogether(context)
  const send = (combining: boolean): [Promise<T>, OneWave | undefined] => {
    const reading = read(together)
    // Never throws: each statement is built, compiled and run inside its own promise.
    return [reading, sendOneWave(context, root, statement, combining)]
  }
  const { db, dialect, templates } = context
  // The route's statement and the wave's, run at once: one statement where the database combines them.
  const combining = together && dialect.combinesStatements && reusesStatements(db)
  const [reading, wave] = combining ? sentTogether(templates, db, () => send(true)) : send(false)
  try {
    return [await reading, wave]
  } catch (error) {
    await wave?.settled()
    throw error
  }
}
