import { createQueryId, type Compilable, type CompiledQuery } from 'kysely'
import { LruMap } from 'toad-cache'
import { DatabaseError } from '../errors.js'
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
 * Only on a Kysely instance without plugins: a plugin may write the SQL from
 * more than the query (a tenant's schema, say) or change values one by one,
 * so with plugins every statement is built and compiled, as Kysely does.
 * One set per plugin instance, whichever Kysely instance (the plugin's, a
 * request's transaction) runs a statement: they share a dialect. A
 * compiled statement is kept only when its parameters are exactly the values
 * it was built with, each in a position of its own.
 */
export class StatementTemplates {
  private readonly templates = new LruMap<CompiledQuery<unknown> | null>(templatesKept)
  private readonly siteIds = new WeakMap<object, number>()
  private nextSiteId = 0

  /**
   * Rows of the statement `build` makes for the keys of an `IN` list, where
   * their order and repeats do not matter. `fixed`: the statement's text and
   * values are the keys' alone; a statement with a request's own condition
   * (a scope) is built every time, but still with padded keys, so that its
   * text repeats for the driver's statement cache.
   */
  async rowsByKeys (db: AnyKysely, site: object, keys: readonly unknown[], build: (keys: readonly unknown[]) => Compilable<unknown>, fixed = true): Promise<Row[]> {
    if (keys.length > largestTemplateKeys) return await run(db, build(keys).compile())
    return await this.rows(db, site, 'keys', padKeys(keys), build, true, fixed)
  }

  /**
   * Rows of the statement `build` makes for `values`. `site` (an object that
   * lives as long as the plan, such as a planned field) and `purpose` name the
   * statement; the number of values tells its variants apart.
   */
  async rows (
    db: AnyKysely,
    site: object,
    purpose: string,
    values: readonly unknown[],
    build: (values: readonly unknown[]) => Compilable<unknown>,
    valuesAreKeys = false,
    fixed = true
  ): Promise<Row[]> {
    if (!fixed || db.getExecutor().plugins.length > 0) return await run(db, build(values).compile())
    const variant = `${this.siteId(site)}/${purpose}/${values.length}`
    const template = this.templates.get(variant)
    if (template) return await run(db, { ...template, queryId: createQueryId(), parameters: values })
    const compiled = build(values).compile()
    if (template === undefined) {
      if (!sameValues(compiled.parameters, values)) this.templates.set(variant, null)
      // Equal values in several positions would not tell which parameter is which:
      // keep the template of a later run. Repeated keys of an IN list are interchangeable.
      else if (valuesAreKeys || new Set(values).size === values.length) this.templates.set(variant, compiled)
    }
    return await run(db, compiled)
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

/** Every statement the plugin runs passes here: the driver's words go to the log (as the cause), never into a body. */
async function run (db: AnyKysely, compiled: CompiledQuery<unknown>): Promise<Row[]> {
  try {
    return (await db.executeQuery(compiled)).rows as Row[]
  } catch (error) {
    throw new DatabaseError({ cause: error })
  }
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
