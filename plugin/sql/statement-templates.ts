import { createQueryId, type CompiledQuery, type Expression, type SqlBool } from 'kysely'
import { LruMap } from 'toad-cache'
import { DatabaseError, UnavailableError } from '../errors.js'
import { tracedStatement, type StatementLabel } from '../trace/channels.js'
import { CombinedStatements, type CombinedForm, type HeldAnswer, type StatementBatch } from './combined-statements.js'
import { databaseFailureKind, dialectOf, type ExpandDialect, type Statement } from './dialects/index.js'
import { executorOf } from './executor.js'
import type { AnyKysely, Row } from './selection.js'

/** Longer key lists are neither padded nor kept as templates: a statement costs memory per parameter. */
export const largestTemplateKeys = 512
/** Compiled statements kept per plugin instance, least recently used evicted first. */
const templatesKept = 500

/**
 * Statements of a cached plan are built and compiled by Kysely once, then run
 * again with other values. Key lists are padded to a power of two by
 * repeating the last key (as Hibernate's `in_clause_parameter_padding` does),
 * so a relation path has a handful of SQL texts instead of one per key
 * count: compiled statements stay few, and a statement cache on the driver
 * (see `cachePreparedStatements`) keeps hitting across pages.
 *
 * Only on a Kysely instance known to have no plugins (see `executorPlugins`): a plugin may write the SQL from
 * more than the query (a tenant's schema, say) or change values one by one,
 * so with plugins every statement is built and compiled, as Kysely does.
 * One set per plugin instance, whichever Kysely instance (the plugin's, a
 * request's transaction, a `db` chosen per request) runs a statement; a
 * statement is kept per database it is written for (see `statementSpace`). A
 * compiled statement is kept only when its parameters are exactly the values
 * it was built with, each in a position of its own.
 */
export class StatementTemplates {
  private readonly templates = new LruMap<CompiledQuery<unknown> | null>(templatesKept)
  private readonly siteIds = new WeakMap<object, number>()
  /** What is learnt of the statements sent as one (`sentTogether`). */
  readonly combined = new CombinedStatements()
  private nextSiteId = 0

  /**
   * Rows of the statement `build` makes for the keys of an `IN` list, where
   * their order and repeats do not matter, and `bound`, the most rows it
   * returns (its `limit`, a literal of its text; undefined for a statement
   * without one). `scope`: the request's
   * condition that the statement carries, if any (see `scopeParts`), whose
   * values come first, or after the keys with `keysBeforeScope`. `variant`:
   * what else tells apart statements of one site (an expanded list's sort,
   * limit and conditions' shape). `label`: where the statement sits, given
   * when the load channel has subscribers (trace/channels.ts).
   */
  async rowsByKeys (
    db: AnyKysely,
    site: object,
    keys: readonly unknown[],
    bound: number | undefined,
    build: (keys: readonly unknown[]) => Statement,
    scope?: ScopeParts,
    keysBeforeScope = false,
    variant = '',
    label?: StatementLabel
  ): Promise<Row[]> {
    if (keys.length > largestTemplateKeys) return await run(db, dialectOf(db).compile(build(keys)), label)
    const padded = padKeys(keys)
    const keyCount = keysBeforeScope ? -padded.length : padded.length
    // The bound is a literal of the statement's text: one template per bound.
    const purpose = `${keysBeforeScope ? 'keys first' : 'keys'}${bound === undefined ? '' : `/limit ${bound}`}${variant}`
    return await run(db, this.compiled(db, site, purpose, padded, keyCount, () => build(padded), scope), label)
  }

  /**
   * Rows of the statement `build` makes for `values`. `site` (an object that
   * lives as long as the plan, such as a planned field) and `purpose` name the
   * statement; the number of values tells its variants apart. A statement
   * with a scope has the scope's values first (the scope is its first
   * condition) and one template per shape of the scope's condition. `label`:
   * as for `rowsByKeys`.
   */
  async rows (
    db: AnyKysely,
    site: object,
    purpose: string,
    values: readonly unknown[],
    build: (values: readonly unknown[]) => Statement,
    valuesAreKeys = false,
    scope?: ScopeParts,
    label?: StatementLabel
  ): Promise<Row[]> {
    return await run(db, this.compiled(db, site, purpose, values, valuesAreKeys ? values.length : 0, () => build(values), scope), label)
  }

  /**
   * The statement `build` makes for `values`, compiled, as `rows` runs it: a
   * template kept from an earlier request with these values, else compiled
   * now (and kept, where it can be). The first `keyCount` values are the keys
   * of an IN list (interchangeable, may repeat); a negative count: the first
   * -keyCount values are such keys, and the statement has them before the
   * scope's values. For a statement run through `waveRows`: its form sent
   * alone, and its form in a combined statement.
   */
  compiled (
    db: AnyKysely,
    site: object,
    purpose: string,
    values: readonly unknown[],
    keyCount: number,
    build: () => Statement,
    scope: ScopeParts | undefined
  ): CompiledQuery<unknown> {
    // The dialect is asked where a statement is compiled, not on a template kept from an earlier request.
    if (!reusesStatements(db) || scope?.key === null) return dialectOf(db).compile(build())
    const variant = `${statementSpace(db)}/${this.siteId(site)}/${purpose}/${values.length}${scope === undefined ? '' : `/${scope.key}`}`
    const parameters = scope === undefined || scope.values.length === 0
      ? values
      : keyCount < 0 ? [...values.slice(0, -keyCount), ...scope.values, ...values.slice(-keyCount)] : [...scope.values, ...values]
    const template = this.templates.get(variant)
    if (template) return { ...template, queryId: createQueryId(), parameters }
    const compiled = dialectOf(db).compile(build())
    if (template === undefined) {
      if (!sameValues(compiled.parameters, parameters)) this.templates.set(variant, null)
      // Equal values in several positions would not tell which parameter is which:
      // keep the template of a later run. Repeated keys of an IN list are interchangeable.
      else if (distinctPositions(values, Math.abs(keyCount), scope?.distinct ?? scope?.values ?? [])) this.templates.set(variant, compiled)
    }
    return compiled
  }

  private siteId (site: object): number {
    let id = this.siteIds.get(site)
    if (id === undefined) {
      id = this.nextSiteId++
      this.siteIds.set(site, id)
    }
    return id
  }
}

// Resolved once per Kysely instance, as its dialect is; a space per dialect and adapter class, so a few in all.
const spaceOf = new WeakMap<AnyKysely, number>()
const spaces = new Map<ExpandDialect, Map<unknown, number>>()
let nextSpace = 0

/**
 * Which compiled statements `db` may run: those compiled for a Kysely
 * instance of the same dialect of the plugin's (`dialectOf`, which writes the
 * plugin's part of the SQL) and the same Kysely adapter class (whose dialect's
 * query compiler writes the rest: quotes, placeholders). A `db` chosen per
 * request may be another database than the last request's: texts written
 * for one are never sent to the other.
 */
export function statementSpace (db: AnyKysely): number {
  let space = spaceOf.get(db)
  if (space === undefined) {
    const dialect = dialectOf(db)
    const adapter = executorOf(db)?.adapter
    const adapterClass = typeof adapter === 'object' && adapter !== null ? adapter.constructor : undefined
    let byAdapter = spaces.get(dialect)
    if (byAdapter === undefined) {
      byAdapter = new Map()
      spaces.set(dialect, byAdapter)
    }
    space = byAdapter.get(adapterClass)
    if (space === undefined) {
      space = nextSpace++
      byAdapter.set(adapterClass, space)
    }
    spaceOf.set(db, space)
  }
  return space
}

/**
 * The plugins of a Kysely instance's executor, or undefined when this Kysely
 * does not expose them: `getExecutor()` and the executor's `plugins` are
 * Kysely internals (public in its types, absent from its documentation), so a
 * Kysely release may change them. Without them statements are not reused.
 */
export function executorPlugins (db: AnyKysely): readonly unknown[] | undefined {
  const plugins = executorOf(db)?.plugins
  return Array.isArray(plugins) ? plugins : undefined
}

/** Whether statements may be reused on `db`: a Kysely instance known to have no plugins. */
export function reusesStatements (db: AnyKysely): boolean {
  const plugins = executorPlugins(db)
  return plugins !== undefined && plugins.length === 0
}

/**
 * Every statement the plugin runs passes here: the driver's words go to the log (as the cause), never into a body.
 * A labelled statement (given while the load channel has subscribers) is published there.
 */
function run (db: AnyKysely, compiled: CompiledQuery<unknown>, label: StatementLabel | undefined): Promise<Row[]> {
  // Not async itself: an untraced statement's promise is execute's own, with no frame around it.
  return label === undefined ? execute(db, compiled) : tracedStatement(label, compiled.sql, () => execute(db, compiled))
}

/** The statements being run by `sentTogether`'s `send`, held to go out as one. */
let holding: StatementBatch | undefined

/**
 * What `send` returns, every statement it runs on `db` before it returns
 * (those it runs at once, before any awaits) sent as one statement where
 * they can be (sql/combined-statements.ts), else each alone, as it runs.
 */
export function sentTogether<T> (templates: StatementTemplates, db: AnyKysely, send: () => T): T {
  const batch = templates.combined.batch(db)
  const outer = holding
  holding = batch
  try {
    return send()
  } finally {
    holding = outer
    batch.send()
  }
}

async function execute (db: AnyKysely, compiled: CompiledQuery<unknown>): Promise<Row[]> {
  try {
    const held = holding?.hold(db, compiled)
    if (held !== undefined) return (await held).rows
    return (await db.executeQuery(compiled)).rows as Row[]
  } catch (error) {
    throw databaseFailure(error)
  }
}

/**
 * The rows of a statement of one wave (load/one-wave.ts): `compiled`, as it
 * is sent alone, and `form`, as a combined statement reads it where it has
 * a form of its own there (sql/combined-statements.ts); whether it was read
 * so comes with its rows. Published (`label`) with its text sent alone.
 */
export async function waveRows (
  db: AnyKysely, compiled: CompiledQuery<unknown>, form: CombinedForm | undefined, label: StatementLabel | undefined
): Promise<HeldAnswer> {
  if (label === undefined) return await executeInWave(db, compiled, form)
  let combined = false
  const rows = await tracedStatement(label, compiled.sql, async () => {
    const answer = await executeInWave(db, compiled, form)
    combined = answer.combined
    return answer.rows
  })
  return { rows, combined }
}

async function executeInWave (db: AnyKysely, compiled: CompiledQuery<unknown>, form: CombinedForm | undefined): Promise<HeldAnswer> {
  try {
    const held = holding?.hold(db, compiled, form)
    if (held !== undefined) return await held
    return { rows: (await db.executeQuery(compiled)).rows as Row[], combined: false }
  } catch (error) {
    throw databaseFailure(error)
  }
}

/**
 * The error to answer for a driver's error: 503 `FST_EXPAND_UNAVAILABLE`
 * (with Retry-After) when the database cannot be reached now, else 500
 * `FST_EXPAND_DATABASE_ERROR`; the driver's error is the `cause`, for the
 * log, never in the body. For the statements a handler runs itself
 * (`app.expand.select(request)...execute()`): `catch (error) { throw databaseFailure(error) }`.
 */
export function databaseFailure (error: unknown): Error {
  if (databaseFailureKind(error) !== 'unavailable') return new DatabaseError({ cause: error })
  return withRetryAfter(new UnavailableError({ cause: error }))
}

/** A 503 with the Retry-After header: Fastify's error handler sets an error's `headers` on the reply. */
export function withRetryAfter<E extends Error> (unavailable: E): E {
  return Object.assign(unavailable, { headers: { 'retry-after': String(retryAfterSeconds) } })
}

/** What a client is told to wait before retrying when the database cannot be reached. */
const retryAfterSeconds = 1

/**
 * A scope condition as templates see it: `key`, its shape (the condition
 * with each value replaced by a placeholder), and its values in order; a
 * null key when the condition holds something the shape cannot stand for.
 */
export interface ScopeParts {
  readonly key: string | null
  readonly values: readonly unknown[]
  /**
   * Where the statement writes a condition twice (a page reading its count
   * under the same scope), so that `values` repeat some of their own: each
   * value once. Told apart from each other and from the statement's other
   * values, they show which parameter is which; the repeats are the same.
   */
  readonly distinct?: readonly unknown[]
}

/**
 * Splits a scope condition into its shape and its values, so that a
 * statement compiled for one caller serves another whose condition has the
 * same shape. Whether the values really are the statement's parameters, in
 * this order, is checked against Kysely's compiled statement before a
 * template is kept.
 */
export function scopeParts (condition: Expression<SqlBool>): ScopeParts {
  const walk: ShapeWalk = { values: [], representable: true }
  const key = shapeOf(condition.toOperationNode(), walk)
  return walk.representable ? { key, values: walk.values } : { key: null, values: walk.values }
}

interface ShapeWalk {
  readonly values: unknown[]
  representable: boolean
}

/**
 * The shape of an operation node as a string: its structure, with `?` for
 * each value (`?N` for a list of N). Kysely's nodes are plain frozen objects
 * and arrays; a walk of its own costs a fraction of a JSON.stringify with a
 * replacer, and this runs for every scope of every request.
 */
function shapeOf (value: unknown, walk: ShapeWalk): string {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'string') return JSON.stringify(value)
    return typeof value === 'bigint' ? `${value}n` : String(value)
  }
  if (Array.isArray(value)) {
    let shape = '['
    for (const item of value) shape += shapeOf(item, walk) + ','
    return shape + ']'
  }
  const node = value as { kind?: unknown; value?: unknown; values?: unknown; immediate?: unknown }
  if (node.kind === 'ValueNode' && node.immediate !== true) {
    walk.values.push(node.value)
    return '?'
  }
  if (node.kind === 'PrimitiveValueListNode' && Array.isArray(node.values)) {
    walk.values.push(...node.values)
    return `?${node.values.length}`
  }
  // A value the shape cannot stand for (a Date or bytes written into the SQL, say): no template.
  if (value instanceof Date || value instanceof Uint8Array ||
    typeof (value as { toOperationNode?: unknown }).toOperationNode === 'function') {
    walk.representable = false
    return '!'
  }
  let shape = '{'
  for (const name in value) shape += name + ':' + shapeOf((value as Record<string, unknown>)[name], walk) + ','
  return shape + '}'
}

/**
 * Whether each value of a sample stands in a position of its own: the first
 * `keyCount` values, the keys of an IN list, may repeat among themselves.
 */
function distinctPositions (values: readonly unknown[], keyCount: number, scopeValues: readonly unknown[]): boolean {
  const seen = new Set(scopeValues)
  if (seen.size !== scopeValues.length) return false
  const keys = new Set(values.slice(0, keyCount))
  for (const key of keys) if (seen.has(key)) return false
  for (const key of keys) seen.add(key)
  for (let index = keyCount; index < values.length; index++) {
    if (seen.has(values[index])) return false
    seen.add(values[index])
  }
  return true
}

/** `keys` with the last repeated up to the next power of two. */
export function padKeys (keys: readonly unknown[]): readonly unknown[] {
  const count = keys.length
  if (count === 0) return keys
  let size = 1
  while (size < count) size *= 2
  if (size === count) return keys
  const padded = keys.slice()
  const last = keys[count - 1]
  for (let index = count; index < size; index++) padded.push(last)
  return padded
}

function sameValues (parameters: readonly unknown[], keys: readonly unknown[]): boolean {
  if (parameters.length !== keys.length) return false
  for (let index = 0; index < keys.length; index++) if (parameters[index] !== keys[index]) return false
  return true
}
