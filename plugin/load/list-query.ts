import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto'
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { BadCursorError, BadFilterError, BadSortError, ForbiddenError, InvalidOptionError, messages } from '../errors.js'
import type { Visibility } from '../plan/plan.js'
import type { JsonSchema, RelationEdge, ResourceNode } from '../resource-graph.js'
import type { LoadContext } from './load-context.js'
import { tableOf, type AnySelect, type Row } from './selection.js'
import { isSqlite, padKeys, type ScopeParts } from './statement-templates.js'
import { instantOf, isDateText } from '../dates.js'

/** The operators a declared filter may allow. */
export const filterOperators = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'null', 'contains'] as const
export type FilterOperator = typeof filterOperators[number]

/** What a filter, sort key or cursor value is read as: the field's schema type. */
export interface ValueType {
  readonly kind: 'integer' | 'number' | 'boolean' | 'string'
  /** Strings only: `date` (YYYY-MM-DD) and `date-time` (RFC 3339) are checked. */
  readonly format?: string
}

/** A declared filter: a column of the resource's table, or of a table reached through to-one relations. */
export interface FilterField {
  /** As declared and written in the query: `species`, `owner.name`. */
  readonly path: string
  /** The to-one relations walked from the route's resource, in order. */
  readonly hops: readonly RelationEdge[]
  /** The resource holding the field, and the field. */
  readonly node: ResourceNode
  readonly field: string
  readonly column: string
  readonly type: ValueType
  readonly operators: readonly FilterOperator[]
  readonly nullable: boolean
  /** The longest `contains` value this filter takes, in characters. */
  readonly containsMaxLength: number
}

/**
 * A filter as `routes()` declares it: its operators, or its operators and
 * the longest `contains` value it takes (the cost of a substring search
 * grows with the text times the value: see the README's security model).
 */
export type FilterDeclaration = readonly FilterOperator[] | {
  readonly operators: readonly FilterOperator[]
  /** The longest `contains` value, in characters (default 32). */
  readonly containsMaxLength?: number
}

export interface SortField {
  readonly name: string
  readonly column: string
  readonly type: ValueType
}

/** One filter of a request, its value read by the field's type. */
export interface RequestedFilter {
  readonly filter: FilterField
  readonly operator: FilterOperator
  /** eq..gte: one value; in: several; null: true for `is null`; contains: the LIKE pattern. */
  readonly value: unknown
}

export interface RequestedSort {
  readonly field: SortField
  readonly descending: boolean
}

/** A `filter[...]` parameter as written: read against the route's filters once the caller is known. */
export interface WrittenFilter {
  readonly path: string
  /** The operator as written: '' for `filter[path]=value` (eq). */
  readonly operator: string
  readonly raw: string
  /** The parameter's name, for messages: `filter[born][gte]`. */
  readonly written: string
}

/**
 * What the route's validator reads of a query string besides limit, offset
 * and expansions: its form only. Names, operators, values and the cursor
 * are read by `resolve`, for the caller, so that a field `fieldsFor` hides
 * answers the same 403 whatever is written with it.
 */
export interface ListRequest {
  readonly filters: readonly WrittenFilter[]
  readonly sort: ReadonlyArray<{ readonly name: string; readonly descending: boolean }>
  readonly after: string | undefined
}

/** A request's filters and sort as they apply to its caller, and the keyset values of its `after` cursor. */
export interface ResolvedList {
  readonly filters: readonly RequestedFilter[]
  /** The sort keys asked for (and visible), without the primary key that always ends them. */
  readonly sort: readonly RequestedSort[]
  /** Keyset values of the row an `after` cursor points past; undefined: the first page. */
  readonly after: readonly unknown[] | undefined
  /** Canonical text of what a cursor of this list is bound to: route, caller, filters (typed), sort keys. */
  readonly binding: string
}

/** Who asks, for the parts of `resolve` that depend on it. */
export interface ListCaller {
  readonly visibility: Visibility
  /** onInvalidExpand 'ignore': filters and sort keys on hidden fields are dropped instead of a 403. */
  readonly ignoreHidden: boolean
  /** `GET` and the route's full URL (with every prefix it was registered under). */
  readonly route: string
  /** The `cursorBinding` option's answer for the request, if the route has one. */
  readonly identity: string | undefined
}

export interface ListQueryOptions {
  filter?: Readonly<Record<string, FilterDeclaration>>
  sort?: readonly string[]
  cursorSecret?: string | Buffer
}

// Conditions are written on the statement's own expression builder.
export type Condition = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>

const filterParam = 'filter'
const sortParam = 'sort'
const afterParam = 'after'
/** Bounds on what one request may ask, so a query string cannot make a statement of any size. */
const maxFilters = 20
const maxInValues = 100
/** The longest filter value of any other operator, in characters. */
export const maxValueLength = 1000
/** The longest `contains` value by default: a substring search costs the text's length times the value's. */
export const defaultContainsMaxLength = 32
const maxCursorLength = 4000
/** AES-256-GCM: a 96-bit nonce and a 128-bit tag around the encrypted keyset values. */
const nonceLength = 12
const tagLength = 16
/** Leads every cursor binding: a cursor of another format is refused rather than misread. */
const cursorVersion = 'fastify-expand cursor 2'

/**
 * The list route's filters, sort keys and cursors, checked at startup:
 * `read` takes a request's query string apart (or a 400), `resolve` reads
 * it for the caller, `where`/`orderBy`/`keyset` write it into the route's statements.
 */
export class ListQuery {
  readonly filters: ReadonlyMap<string, FilterField>
  readonly sortFields: ReadonlyMap<string, SortField>
  readonly primaryKey: SortField
  /** Cursors are encrypted and authenticated (AES-256-GCM) with this key, derived from the cursor secret. */
  private readonly cipherKey: Buffer
  /** Cursor nonces are derived from what they hold with this key (see `cursorAfter`). */
  private readonly nonceKey: Buffer

  constructor (
    readonly node: ResourceNode,
    options: ListQueryOptions,
    defaultSecret: Buffer,
    fail: (message: string) => never
  ) {
    this.filters = readFilterOption(node, options.filter, fail)
    this.sortFields = readSortOption(node, options.sort, fail)
    this.primaryKey = { name: node.primaryKey, column: `${tableOf(node)}.${node.column(node.primaryKey)}`, type: sortableType(node, node.primaryKey) ?? { kind: 'string' } }
    if (options.cursorSecret !== undefined &&
      !(typeof options.cursorSecret === 'string' && options.cursorSecret.length >= 16) &&
      !(Buffer.isBuffer(options.cursorSecret) && options.cursorSecret.length >= 16)) {
      fail(messages.shortCursorSecret)
    }
    const secret = options.cursorSecret === undefined ? defaultSecret : Buffer.from(options.cursorSecret)
    this.cipherKey = createHmac('sha256', secret).update('fastify-expand cursor key').digest()
    this.nonceKey = createHmac('sha256', secret).update('fastify-expand cursor nonce').digest()
  }

  /**
   * Takes `filter[...]`, `sort` and `after` apart from a parsed query string
   * (keys as written: `filter[born][gte]`, or nested objects from a parser
   * that builds them). Only their form is checked here (the 400 of what is
   * not a filter, a repeated or too long parameter): what they name is read
   * by `resolve`, once the caller is known. The route's validator reads the
   * query to answer that 400 before any hook; the handler reads again the
   * query it is given, which a hook may have replaced or changed: never
   * conditions read from another object, never none.
   */
  read (query: unknown, cursors: boolean): ListRequest {
    if (typeof query !== 'object' || query === null) {
      throw new InvalidOptionError(messages.listQueryNotObject(query === null ? 'null' : typeof query))
    }
    const filters: WrittenFilter[] = []
    const seen = new Set<string>()
    const add = (path: string, operator: string, raw: unknown) => {
      const written = `${filterParam}[${path}]${operator === '' ? '' : `[${operator}]`}`
      if (typeof raw !== 'string') throw new BadFilterError(messages.filterNotOnce(written))
      if (raw.length > maxValueLength) throw new BadFilterError(messages.tooLong(written, raw.length, maxValueLength))
      const id = `${path}[${operator === '' ? 'eq' : operator}]`
      if (seen.has(id)) throw new BadFilterError(messages.filterRepeated(written))
      seen.add(id)
      if (seen.size > maxFilters) throw new BadFilterError(messages.tooManyFilters(maxFilters))
      filters.push({ path, operator, raw, written })
    }
    for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
      if (name === filterParam) {
        readNestedFilters(value, add)
        continue
      }
      if (!name.startsWith(`${filterParam}[`)) continue
      const match = /^filter\[([^[\]]+)\](?:\[([^[\]]+)\])?$/.exec(name)
      if (match === null) throw new BadFilterError(messages.notAFilter(name))
      add(match[1]!, match[2] ?? '', value)
    }
    const sort = readSortText((query as Record<string, unknown>)[sortParam])
    const after = (query as Record<string, unknown>)[afterParam]
    if (!cursors || after === undefined) return { filters, sort, after: undefined }
    if (typeof after !== 'string' || after.length > maxCursorLength) throw new BadCursorError(messages.badCursor(afterParam))
    return { filters, sort, after }
  }

  /**
   * The request's filters, sort keys and cursor as they apply to `caller`.
   * A filter or sort key on a field `fieldsFor` hides from the caller is a
   * 403 whatever its operator or value (dropped under `onInvalidExpand:
   * 'ignore'`), checked before either is read; a name the route does not
   * take is a 400 whose message lists only what the caller may use. The
   * cursor must have been made by this route for the same effective filters
   * and sort (and identity, with `cursorBinding`), else 400.
   */
  resolve (request: ListRequest, caller: ListCaller): ResolvedList {
    const hidden = (node: ResourceNode, field: string) => {
      const visible = caller.visibility.visible(node)
      return visible !== undefined && !visible.has(field)
    }
    const hiddenFilter = (filter: FilterField) => {
      let node = this.node
      for (const hop of filter.hops) {
        if (hidden(node, hop.field)) return true
        node = hop.target
      }
      return hidden(node, filter.field)
    }
    const filters: RequestedFilter[] = []
    for (const { path, operator, raw, written } of request.filters) {
      const filter = this.filters.get(path)
      if (filter === undefined) {
        const usable = [...this.filters.values()].filter((filter) => !hiddenFilter(filter)).map((filter) => filter.path)
        throw new BadFilterError(messages.unknownFilter(this.node.name, path, usable))
      }
      if (hiddenFilter(filter)) {
        if (caller.ignoreHidden) continue
        throw new ForbiddenError(messages.hiddenFilter(path))
      }
      const op = (operator === '' ? 'eq' : operator) as FilterOperator
      if (!filter.operators.includes(op)) {
        throw new BadFilterError(messages.badFilterOperator(this.node.name, path, operator, filter.operators))
      }
      filters.push({ filter, operator: op, value: readFilterValue(filter, op, raw, written) })
    }
    const sort: RequestedSort[] = []
    const names = new Set<string>()
    for (const { name, descending } of request.sort) {
      const field = this.sortFields.get(name)
      if (field === undefined) {
        const usable = [...this.sortFields.keys()].filter((name) => !hidden(this.node, name))
        throw new BadSortError(messages.unknownSort(this.node.name, name, usable))
      }
      if (hidden(this.node, name)) {
        if (caller.ignoreHidden) continue
        throw new ForbiddenError(messages.hiddenSort(name))
      }
      if (names.has(name)) throw new BadSortError(messages.sortRepeated(sortParam, name))
      names.add(name)
      sort.push({ field, descending })
      // The primary key is unique: keys after it could never order anything.
      if (field.column === this.primaryKey.column) break
    }
    const binding = this.bindingOf(caller, filters, sort)
    const after = request.after === undefined ? undefined : this.readCursor(request.after, this.keysOf({ sort }), binding)
    return { filters, sort, after, binding }
  }

  /**
   * What a cursor is bound to, as JSON (never a join of raw text, which two
   * different requests could share): the resource, the route's method and
   * full URL, the caller's identity when the route binds cursors to it, each
   * filter as (path, operator, value read by its type) in a canonical order,
   * and the sort keys.
   */
  private bindingOf (caller: ListCaller, filters: readonly RequestedFilter[], sort: readonly RequestedSort[]): string {
    const filterTuples = filters.map(({ filter, operator, value }) => [filter.path, operator, value] as const)
      .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    const sortTuples = this.keysOf({ sort }).map(({ field, descending }) => [field.name, descending])
    return JSON.stringify([cursorVersion, this.node.qualifiedName, caller.route, caller.identity ?? null, filterTuples, sortTuples])
  }

  /** The sort keys of a request, the primary key (ascending) last unless it is already there. */
  keysOf (list: Pick<ResolvedList, 'sort'>): RequestedSort[] {
    const keys = [...list.sort]
    if (!keys.some(({ field }) => field.column === this.primaryKey.column)) keys.push({ field: this.primaryKey, descending: false })
    return keys
  }

  /**
   * The request's filters as conditions on the route's table, to add in
   * order; each value (and each related scope's values) is pushed on
   * `values` now, in the order the statement binds them. `shape` is the
   * conditions' text up to values, or null when a related scope cannot be
   * told apart by shape (the statement is then not kept as a template).
   */
  conditions (list: ResolvedList, context: LoadContext, values: unknown[]): { conditions: Condition[]; shape: string | null } {
    let shape: string | null = ''
    const conditions: Condition[] = []
    for (const requested of list.filters) {
      const [condition, part] = filterCondition(requested, this.node, context, values)
      conditions.push(condition)
      shape = shape === null || part === null ? null : `${shape}&${part}`
    }
    return { conditions, shape }
  }

  /** Orders `query` by the request's sort keys. */
  orderBy<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[]): Q {
    let result = query
    for (const { field, descending } of keys) result = result.orderBy(field.column, descending ? 'desc' : 'asc') as Q
    return result
  }

  /**
   * Rows after the cursor's. Keys all in one direction compare as a row
   * value, `(k1, k2) > (?, ?)` (SQLite and PostgreSQL both take it, and each
   * value is bound once); mixed directions are written out as an OR of
   * ANDs, `k1 < ? or (k1 = ? and k2 > ?)`, each comparison following its key.
   */
  keyset (keys: readonly RequestedSort[], after: readonly unknown[], values: unknown[]): Condition {
    const descending = keys[0]!.descending
    if (keys.every((key) => key.descending === descending)) {
      values.push(...after)
      const columns = sql.join(keys.map(({ field }) => sql.ref(field.column)))
      return () => sql<SqlBool>`(${columns}) ${sql.raw(descending ? '<' : '>')} (${sql.join(after.map((value) => sql`${value}`))})`
    }
    keys.forEach((_key, index) => {
      for (let before = 0; before <= index; before++) values.push(after[before])
    })
    return (eb) => eb.or(keys.map(({ field, descending }, index) => {
      const parts: Array<Expression<SqlBool>> = []
      for (let before = 0; before < index; before++) parts.push(eb(keys[before]!.field.column, '=', after[before]))
      parts.push(eb(field.column, descending ? '<' : '>', after[index]))
      return parts.length === 1 ? parts[0]! : eb.and(parts)
    }))
  }

  /**
   * The columns a cursor is made of, selected under names of their own. On
   * PostgreSQL a `date` or `date-time` key is read as text: the value the
   * database compares, whatever the column's type. pg would read a `timestamp` or `date` as a
   * Date in the process's time zone, whose UTC text the database then reads
   * back as another wall-clock time (rows repeated or skipped outside UTC);
   * the text cast back to the column's type is the key itself, to the microsecond.
   */
  selectKeys<Q extends AnySelect> (query: Q, keys: readonly RequestedSort[], sqlite: boolean): Q {
    return query.select((eb) => keys.map(({ field }, index) => {
      const key = `${cursorColumn}${index}`
      return sqlite || !isDateFormat(field.type) ? eb.ref(field.column).as(key) : eb.cast(eb.ref(field.column), 'text').as(key)
    })) as Q
  }

  /**
   * The cursor pointing past `row` (which holds the selected key columns):
   * the key values encrypted with AES-256-GCM, the binding as associated
   * data, so that a cursor shows nothing of them (a hidden sort value, a
   * hidden primary key) and answers only the list it was made for. The
   * nonce is derived from the binding and the values (as AES-GCM-SIV does):
   * the same position of the same list gives the same cursor, and two
   * different ones never share a nonce.
   */
  cursorAfter (row: Row, keys: readonly RequestedSort[], list: ResolvedList): string {
    const values = Buffer.from(JSON.stringify(keys.map((_key, index) => cursorValue(row[`${cursorColumn}${index}`]))))
    const nonce = createHmac('sha256', this.nonceKey).update(list.binding).update('\u0000').update(values).digest().subarray(0, nonceLength)
    const cipher = createCipheriv('aes-256-gcm', this.cipherKey, nonce, { authTagLength: tagLength })
    cipher.setAAD(Buffer.from(list.binding))
    const encrypted = Buffer.concat([cipher.update(values), cipher.final()])
    return Buffer.concat([nonce, encrypted, cipher.getAuthTag()]).toString('base64url')
  }

  /** The keyset values of a cursor made by `cursorAfter` for this binding, each of its key's type; else 400. */
  private readCursor (raw: string, keys: readonly RequestedSort[], binding: string): unknown[] {
    const bad = () => new BadCursorError(messages.badCursor(afterParam))
    if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw bad()
    const bytes = Buffer.from(raw, 'base64url')
    if (bytes.length <= nonceLength + tagLength) throw bad()
    let values: unknown
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.cipherKey, bytes.subarray(0, nonceLength), { authTagLength: tagLength })
      decipher.setAAD(Buffer.from(binding))
      decipher.setAuthTag(bytes.subarray(bytes.length - tagLength))
      const text = Buffer.concat([decipher.update(bytes.subarray(nonceLength, bytes.length - tagLength)), decipher.final()])
      values = JSON.parse(text.toString('utf8'))
    } catch {
      throw bad()
    }
    if (!Array.isArray(values) || values.length !== keys.length) throw bad()
    keys.forEach(({ field }, index) => { if (!isCursorValue(field.type, values[index])) throw bad() })
    return values
  }
}

/**
 * Whether a value read from a cursor is one `cursorValue` makes for a key
 * of this type, so that nothing else is ever bound: an integer (a safe
 * number, or the decimal text a driver gives for int8), a finite number,
 * 1 or 0 for a boolean, a string (a date or date-time where the format says).
 */
function isCursorValue (type: ValueType, value: unknown): boolean {
  switch (type.kind) {
    case 'integer':
      return Number.isSafeInteger(value) || (typeof value === 'string' && /^-?[0-9]{1,20}$/.test(value))
    case 'number':
      // pg gives numeric columns as text.
      return (typeof value === 'number' && Number.isFinite(value)) ||
        (typeof value === 'string' && numberText.test(value) && Number.isFinite(Number(value)))
    case 'boolean':
      return value === 0 || value === 1
    case 'string':
      if (typeof value !== 'string') return false
      // PostgreSQL's text of a date or timestamp (selectKeys casts them), or a form dates.ts reads.
      return !isDateFormat(type) || isDateText(value) || instantOf(value) !== undefined || !Number.isNaN(Date.parse(value))
  }
}

/** The `sort` parameter taken apart: names, each maybe `-`; empty items skipped. */
function readSortText (raw: unknown): ListRequest['sort'] {
  if (raw === undefined) return []
  if (typeof raw !== 'string') throw new BadSortError(messages.sortNotOnce(sortParam))
  return raw.split(',').filter((item) => item !== '').map((item) => {
    const descending = item.startsWith('-')
    return { name: descending ? item.slice(1) : item, descending }
  })
}

function isDateFormat (type: ValueType): boolean {
  return type.format === 'date' || type.format === 'date-time'
}

/** Prefix of the cursor columns the cursor route selects beside the plan's. */
export const cursorColumn = '__expand_key_'

/** A key value as a cursor keeps it, bound back as the column stores it. */
function cursorValue (value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'bigint') return value.toString()
  return value
}

function readNestedFilters (value: unknown, add: (path: string, operator: string, raw: unknown) => void): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadFilterError(messages.notAFilter(filterParam))
  }
  for (const [path, inner] of Object.entries(value as Record<string, unknown>)) {
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
      for (const [operator, raw] of Object.entries(inner as Record<string, unknown>)) add(path, operator, raw)
    } else add(path, '', inner)
  }
}

function readFilterValue (filter: FilterField, operator: FilterOperator, raw: string, written: string): unknown {
  switch (operator) {
    case 'null':
      if (raw !== 'true' && raw !== 'false') throw new BadFilterError(messages.badFilterValue(written, 'true or false', raw))
      return raw === 'true'
    case 'in': {
      const items = raw.split(',')
      if (items.length > maxInValues) throw new BadFilterError(messages.tooManyValues(written, maxInValues))
      return items.map((item) => readTyped(filter.type, item, written))
    }
    case 'contains':
      if (raw.length > filter.containsMaxLength) throw new BadFilterError(messages.tooLong(written, raw.length, filter.containsMaxLength))
      // The text as given: each dialect writes its own search (see containsCondition).
      return raw
    default:
      return readTyped(filter.type, raw, written)
  }
}

const integerText = /^-?[0-9]{1,16}$/
const numberText = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?$/

/**
 * A value of the field's type, as the database compares it (booleans as 1
 * and 0 on every dialect, a date-time as its instant in UTC written by
 * `toISOString()`), or a 400.
 */
export function readTyped (type: ValueType, raw: string, written: string): unknown {
  const refuse = (what: string): never => { throw new BadFilterError(messages.badFilterValue(written, what, raw)) }
  switch (type.kind) {
    case 'integer': {
      const number = integerText.test(raw) ? Number(raw) : NaN
      return Number.isSafeInteger(number) ? number : refuse(`an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`)
    }
    case 'number': {
      const number = numberText.test(raw) ? Number(raw) : NaN
      return Number.isFinite(number) ? number : refuse('a number')
    }
    case 'boolean':
      return raw === 'true' ? 1 : raw === 'false' ? 0 : refuse('true or false')
    case 'string':
      if (type.format === 'date') {
        if (!isDateText(raw)) refuse('a date (YYYY-MM-DD)')
      } else if (type.format === 'date-time') {
        const instant = instantOf(raw, true)
        return instant === undefined ? refuse('a date-time (RFC 3339, with a time zone)') : new Date(instant).toISOString()
      }
      return raw
  }
}

/** The condition of one filter, through its relations (`IN` subqueries, each with the related resource's scope). */
function filterCondition (
  requested: RequestedFilter, root: ResourceNode, context: LoadContext, values: unknown[]
): [Condition, string | null] {
  const { filter } = requested
  const comparison = comparisonOf(filter, requested.operator, requested.value, isSqlite(context.db))
  let shape: string | null = `${filter.path}[${comparison.shape}]`
  // Values in statement order: each hop's scope first, then the filter's own.
  const scopes: Array<Expression<SqlBool> | undefined> = filter.hops.map((hop) => {
    const scope = context.scope(hop.target)
    const parts: ScopeParts | undefined = context.scopeParts(hop.target)
    if (parts !== undefined) {
      values.push(...parts.values)
      shape = shape === null || parts.key === null ? null : `${shape}(${parts.key})`
    }
    return scope
  })
  values.push(...comparison.values)
  const through = (index: number, owner: ResourceNode): Condition => (eb) => {
    if (index === filter.hops.length) return comparison.leaf(eb)
    const hop = filter.hops[index]!
    const link = hop.link as Extract<RelationEdge['link'], { kind: 'to-one' }>
    const table = tableOf(hop.target)
    let related = context.db.selectFrom(table).select(`${table}.${hop.target.column(hop.target.primaryKey)}`)
    const scope = scopes[index]
    if (scope !== undefined) related = related.where(scope)
    related = related.where(through(index + 1, hop.target))
    return eb(`${tableOf(owner)}.${link.column}`, 'in', related)
  }
  return [through(0, root), shape]
}

/** A filter's comparison on its own column: the condition, the values it binds in order, and its shape up to values. */
interface Comparison {
  readonly leaf: Condition
  readonly values: readonly unknown[]
  readonly shape: string
}

const comparisonOperators = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const
const never: Condition = () => sql<SqlBool>`1 = 0`

/**
 * The comparison of one filter, as if the column could hold any value of
 * the field's schema (README, "Filter values"), the same on every dialect:
 * - a string holding NUL (which no PostgreSQL text holds, and which
 *   PostgreSQL refuses to bind) equals no stored text and orders after
 *   its text before the NUL: `eq` and `contains` find no row, `ne` every row
 *   not null, `in` leaves it out, `lt`/`lte` compare `<=` that text,
 *   `gt`/`gte` `>` it;
 * - on PostgreSQL, a number its untyped parameter could not be read as
 *   (an integer outside int4, a number outside real's range) is bound with
 *   a type that holds it (`valueExpression`);
 * - on SQLite, a date-time column is compared by its instant (`julianday`).
 */
function comparisonOf (filter: FilterField, operator: FilterOperator, value: unknown, sqlite: boolean): Comparison {
  const column = filter.column
  if (operator === 'null') {
    return { leaf: (eb) => eb(column, value === true ? 'is' : 'is not', null), values: [], shape: `null${String(value)}` }
  }
  if (operator === 'contains') {
    const text = value as string
    if (text.includes('\u0000')) return { leaf: never, values: [], shape: 'never' }
    if (sqlite) return { leaf: () => sql<SqlBool>`instr(lower(${sql.ref(column)}), lower(${text})) > 0`, values: [text], shape: 'contains' }
    const pattern = likePattern(text)
    return { leaf: () => sql<SqlBool>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`, values: [pattern], shape: 'contains' }
  }
  let op: keyof typeof comparisonOperators | 'in' = operator
  let bound = operator === 'in' ? value as unknown[] : [value]
  if (filter.type.kind === 'string') {
    const cut = (text: unknown) => (text as string).indexOf('\u0000')
    if (operator === 'in') bound = bound.filter((item) => cut(item) < 0)
    else if (cut(value) >= 0) {
      const before = (value as string).slice(0, cut(value))
      switch (operator) {
        case 'eq': return { leaf: never, values: [], shape: 'never' }
        case 'ne': return { leaf: (eb) => eb(column, 'is not', null), values: [], shape: 'nullfalse' }
        case 'lt': case 'lte': op = 'lte'; break
        default: op = 'gt'
      }
      bound = [before]
    }
    if (bound.length === 0) return { leaf: never, values: [], shape: 'never' }
  }
  const byInstant = sqlite && filter.type.format === 'date-time'
  const left = byInstant ? sql`julianday(${sql.ref(column)})` : sql.ref(column)
  const typed = bound.map((item) => valueExpression(filter.type, item, sqlite))
  const right = (item: unknown, cast: string | undefined) => byInstant
    ? sql`julianday(${item})`
    : cast === undefined ? sql`${item}` : sql`cast(${item} as ${sql.raw(cast)})`
  if (op !== 'in') {
    const { item, cast } = typed[0]!
    return { leaf: (eb) => eb(left, comparisonOperators[op as keyof typeof comparisonOperators], right(item, cast)), values: bound, shape: `${op}${cast ?? ''}` }
  }
  // PostgreSQL reads an IN list as one type, the column's where it can: a
  // typed value (an int4 column's 2^31 is bound as bigint, fine; a real's
  // 1e300 as numeric, which the list would read back as real) is compared alone.
  // Padded as relation keys are (padKeys): lists of any length make a handful of statement texts.
  const plain = padKeys(typed.filter(({ cast }) => cast === undefined)) as typeof typed
  const alone = typed.filter(({ cast }) => cast !== undefined)
  const shape = `in${plain.length}${alone.map(({ cast }) => `,${cast!}`).join('')}`
  const leaf: Condition = (eb) => {
    const parts: Array<Expression<SqlBool>> = plain.length === 0 ? [] : [eb(left, 'in', plain.map(({ item }) => right(item, undefined)))]
    for (const { item, cast } of alone) parts.push(eb(left, '=', right(item, cast)))
    return parts.length === 1 ? parts[0]! : eb.or(parts)
  }
  return { leaf, values: [...plain, ...alone].map(({ item }) => item), shape }
}

const int4 = { min: -2147483648, max: 2147483647 }
/** The largest finite PostgreSQL `real`. */
const realMax = 3.4028234663852886e38

/**
 * A value with the type PostgreSQL reads its parameter as: none (the
 * column's, as for every value the column's type can hold), `bigint` for an
 * integer outside int4 (an int2/int4 column compares with it through the
 * integer operators its index serves), `numeric` for a number that is an
 * integer outside int4 or beyond real's range. SQLite compares any value
 * with any column: never a cast.
 */
function valueExpression (type: ValueType, item: unknown, sqlite: boolean): { item: unknown; cast: 'bigint' | 'numeric' | undefined } {
  if (sqlite || typeof item !== 'number') return { item, cast: undefined }
  const outsideInt4 = Number.isInteger(item) && (item < int4.min || item > int4.max)
  if (type.kind === 'integer') return { item, cast: outsideInt4 ? 'bigint' : undefined }
  return { item, cast: outsideInt4 || Math.abs(item) > realMax ? 'numeric' : undefined }
}

/**
 * `contains` as a LIKE pattern: the text between wildcards, its own `%`, `_`
 * and `\\` escaped. PostgreSQL searches with LIKE, which a trigram index on
 * `lower(column)` serves; SQLite has no index for a substring and searches
 * with `instr`, which compares bytes at each position: 1,000-character values
 * over 200 rows of 20,000 characters measured about 0.2 s with `instr`
 * against 20 s with LIKE, whose matcher backtracks character by character.
 */
function likePattern (text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`
}

/** The plain types a filter or sort key reads: a field's schema type, less null. */
function valueTypeOf (schema: JsonSchema | undefined): { type: ValueType; nullable: boolean } | undefined {
  if (schema === undefined) return undefined
  const types = Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  const nullable = types.includes('null')
  const plain = types.filter((type) => type !== 'null')
  if (plain.length !== 1) return undefined
  const kind = plain[0]
  if (kind !== 'integer' && kind !== 'number' && kind !== 'boolean' && kind !== 'string') return undefined
  return { type: typeof schema.format === 'string' && kind === 'string' ? { kind, format: schema.format } : { kind }, nullable }
}

/** A field's column on its resource's table: a value field's, or a to-one relation's local column. */
function columnOf (node: ResourceNode, field: string): string | undefined {
  const relation = node.relations.get(field)
  if (relation === undefined) return node.column(field)
  return relation.link.kind === 'to-one' ? relation.link.column : undefined
}

function sortableType (node: ResourceNode, field: string): ValueType | undefined {
  const read = valueTypeOf(node.fieldSchemas.get(field))
  return read === undefined || read.nullable ? undefined : read.type
}

function readFilterOption (
  node: ResourceNode, option: ListQueryOptions['filter'], fail: (message: string) => never
): Map<string, FilterField> {
  const filters = new Map<string, FilterField>()
  if (option === undefined) return filters
  if (typeof option !== 'object' || option === null || Array.isArray(option)) fail(messages.filterOptionNotObject)
  for (const [path, declaration] of Object.entries(option)) {
    const at = `filter '${path}'`
    const { operators, containsMaxLength } = readFilterDeclaration(declaration, at, fail)
    const segments = path.split('.')
    const hops: RelationEdge[] = []
    let current = node
    for (const segment of segments.slice(0, -1)) {
      const relation = current.relations.get(segment)
      if (relation === undefined || relation.link.kind !== 'to-one' || relation.target.table === undefined) {
        fail(messages.filterNotToOne(at, segment, current.qualifiedName))
      }
      hops.push(relation!)
      current = relation!.target
    }
    const field = segments[segments.length - 1]!
    const read = valueTypeOf(current.fieldSchemas.get(field))
    const column = current.fieldSchemas.has(field) ? columnOf(current, field) : undefined
    if (!current.fieldSchemas.has(field)) fail(messages.noSuchField(at, current.qualifiedName, field))
    if (column === undefined || (current.relations.get(field)?.alwaysNested ?? false)) {
      fail(messages.notAColumn(at, field, current.qualifiedName))
    }
    if (read === undefined) fail(messages.badFilterFieldType(at, field))
    if (!Array.isArray(operators) || operators.length === 0) fail(messages.noFilterOperators(at, filterOperators))
    for (const operator of operators) {
      if (!(filterOperators as readonly string[]).includes(operator)) {
        fail(messages.unknownFilterOperator(at, String(operator), filterOperators))
      }
      if (operator === 'contains' && read!.type.kind !== 'string') fail(messages.containsNeedsString(at))
      if (['lt', 'lte', 'gt', 'gte'].includes(operator) && read!.type.kind === 'boolean') fail(messages.comparisonOnBoolean(at, operator))
    }
    filters.set(path, Object.freeze({
      path,
      hops: Object.freeze(hops),
      node: current,
      field,
      column: `${tableOf(current)}.${column!}`,
      type: read!.type,
      operators: Object.freeze([...new Set(operators)]),
      nullable: read!.nullable,
      containsMaxLength,
    }))
  }
  return filters
}

/** A filter's declaration, in either form: its operators and the longest `contains` value. */
function readFilterDeclaration (
  declaration: FilterDeclaration, at: string, fail: (message: string) => never
): { operators: readonly FilterOperator[]; containsMaxLength: number } {
  if (Array.isArray(declaration)) return { operators: declaration, containsMaxLength: defaultContainsMaxLength }
  if (typeof declaration !== 'object' || declaration === null) fail(messages.noFilterOperators(at, filterOperators))
  const { operators, containsMaxLength, ...rest } = declaration as Exclude<FilterDeclaration, readonly FilterOperator[]>
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) fail(messages.unknownFilterKey(at, unknown))
  const lengthFits = (length: number) => Number.isSafeInteger(length) && length >= 1 && length <= maxValueLength
  if (containsMaxLength !== undefined && !lengthFits(containsMaxLength)) {
    fail(messages.badContainsMaxLength(at, maxValueLength))
  }
  return { operators, containsMaxLength: containsMaxLength ?? defaultContainsMaxLength }
}

function readSortOption (
  node: ResourceNode, option: readonly string[] | undefined, fail: (message: string) => never
): Map<string, SortField> {
  const fields = new Map<string, SortField>()
  if (option === undefined) return fields
  if (!Array.isArray(option)) fail(messages.sortOptionNotArray)
  for (const name of option) {
    if (typeof name !== 'string' || !node.fieldSchemas.has(name)) fail(messages.noSuchField('sort', node.qualifiedName, String(name)))
    const column = columnOf(node, name)
    if (column === undefined || (node.relations.get(name)?.alwaysNested ?? false)) {
      fail(messages.notAColumn('sort', name, node.qualifiedName))
    }
    const type = sortableType(node, name)
    // NULL sorts first on SQLite and last on PostgreSQL, and never compares in a keyset.
    if (type === undefined) fail(messages.badSortFieldType(name))
    fields.set(name, Object.freeze({ name, column: `${tableOf(node)}.${column!}`, type: type! }))
  }
  return fields
}
