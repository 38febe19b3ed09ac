import type { FastifyRequest } from 'fastify'
import { expressionBuilder, type Expression, type SqlBool } from 'kysely'
import { RequestAbortedError, TooLargeError, messages } from '../errors.js'
import type { ResourceNode } from '../graph/resource-graph.js'
import type { ExpandedLists } from '../plan/expanded-list-plan.js'
import type { PlannedField } from '../plan/plan.js'
import { listedRelation, type ListedRelation } from '../sql/expanded-list-statements.js'
import { dialectOf, type ExpandDialect } from '../sql/dialects/index.js'
import type { AnyKysely } from '../sql/selection.js'
import { scopeParts, type ScopeParts, type StatementTemplates } from '../sql/statement-templates.js'

/**
 * What one load needs, threaded through every step as fast-json-stringify
 * threads its `context`: the Kysely instance of the request, the statement
 * templates, the object budget, and the request's scopes.
 */
export interface LoadContext {
  readonly db: AnyKysely
  /** What the statements of `db` are written in (resolved once per Kysely instance). */
  readonly dialect: ExpandDialect
  /** The request the rows are loaded for; undefined outside a request (no scopes apply). */
  readonly request: FastifyRequest | undefined
  readonly templates: StatementTemplates
  readonly budget: ObjectBudget
  /** The request's condition on the resource's table (its `scope`, or the scopes it inherits: `scopedBy`), or undefined for every row. */
  scope(node: ResourceNode): Expression<SqlBool> | undefined
  /** The same condition split for statement templates (see `scopeParts`); undefined for every row. */
  scopeParts(node: ResourceNode): ScopeParts | undefined
  /** Throws when the client has gone: the remaining statements of its request are not run. */
  ensureClientWaits(): void
  /**
   * What the request's expanded list of this planned field (`sort[path]`,
   * `limit[path]`, `where[path.field]`) changes in its statement; undefined
   * when the request asks nothing of it.
   */
  listed(field: PlannedField): ListedRelation | undefined
}

// A builder holds no state of its own: one serves every scope of every request.
const scopeBuilder = expressionBuilder()

export function createLoadContext (
  db: AnyKysely,
  request: FastifyRequest | undefined,
  templates: StatementTemplates,
  maxObjects: number,
  expandedLists?: ExpandedLists
): LoadContext {
  // Each list's conditions are written once per request, however many chunks of keys its statement runs for.
  const listed = new Map<PlannedField, ListedRelation>()
  // Each resource's scope is asked once per request, however many statements read its table.
  const scopes = new Map<ResourceNode, Expression<SqlBool> | undefined>()
  const conditions = new Map<ResourceNode, Expression<SqlBool> | undefined>()
  const parts = new Map<ResourceNode, ScopeParts | undefined>()
  const ownScope = (node: ResourceNode, request: FastifyRequest): Expression<SqlBool> | undefined => {
    if (scopes.has(node)) return scopes.get(node)
    const condition = node.resource.scope!(scopeBuilder, request)
    scopes.set(node, condition)
    return condition
  }
  return {
    db,
    dialect: dialectOf(db),
    request,
    templates,
    budget: new ObjectBudget(maxObjects),
    scope (node) {
      if (node.scopedBy.length === 0 || request === undefined) return undefined
      if (conditions.has(node)) return conditions.get(node)
      // A scope that answers undefined (every row) adds no condition to the others.
      const all = node.scopedBy.map((owner) => ownScope(owner, request)).filter((condition) => condition !== undefined)
      const condition = all.length === 0 ? undefined : all.length === 1 ? all[0] : scopeBuilder.and(all)
      conditions.set(node, condition)
      return condition
    },
    ensureClientWaits () {
      if (request?.raw.socket?.destroyed === true) throw new RequestAbortedError()
    },
    listed (field) {
      if (field.kind !== 'expanded') return undefined
      const list = expandedLists?.get(field)
      if (list === undefined) return undefined
      let parts = listed.get(field)
      if (parts === undefined) {
        parts = listedRelation(this, field.relation, list)
        listed.set(field, parts)
      }
      return parts
    },
    scopeParts (node) {
      if (parts.has(node)) return parts.get(node)
      const condition = this.scope(node)
      const split = condition === undefined ? undefined : scopeParts(condition)
      parts.set(node, split)
      return split
    },
  }
}

/**
 * Bounds the objects loading adds to one response. Each row carries a
 * weight: how many times it will be written (a person shared by 50 pets is
 * written 50 times, and so is everything below it), so to-many levels that
 * multiply are caught before their rows are even fetched further down. An id
 * of an id array is one object, as an expanded row is.
 *
 * Every row a relation's statement returns is written at least once, so a
 * statement never needs more than one row past what is left to tell that the
 * level is over the budget. `rowBound` is that, rounded up to a power of two:
 * it is written into the statement as a literal (SQLite runs an `IN` with a
 * bound `limit` parameter about 20% slower than with a literal one), and the
 * rounding keeps the SQL texts of a relation path few.
 */
export class ObjectBudget {
  private used = 0
  constructor (readonly limit: number) {}

  /** The objects loading may still add. */
  get remaining (): number {
    return Math.max(0, this.limit - this.used)
  }

  /** The most rows a statement of the next relation reads (its `limit`): past what is left, at most twice it. */
  get rowBound (): number {
    const needed = this.remaining + 1
    let bound = 1
    while (bound < needed) bound *= 2
    return bound
  }

  charge (objects: number): void {
    this.used += objects
    if (this.used > this.limit) {
      throw new TooLargeError(messages.tooLarge(this.limit))
    }
  }
}
