import { BadFilterError, BadSortError, messages } from '../errors.js'
import { safeInteger } from './integers.js'
import { maxValueLength, type WrittenSortKey } from './list-query.js'

/** A `where[path.field]` parameter as written: read against the route's expanded lists once the caller is known. */
export interface WrittenWhere {
  /** The expanded list's path and the field, as written: `owner.pets`, `species`. */
  readonly path: string
  readonly field: string
  /** The operator as written: '' for `where[pets.species]=value` (eq). */
  readonly operator: string
  readonly raw: string
  /** The parameter's name, for messages: `where[pets.born][gte]`. */
  readonly written: string
}

/** A `sort[path]` parameter: its keys as written. */
export interface WrittenListSort {
  readonly path: string
  readonly keys: readonly WrittenSortKey[]
  readonly written: string
}

/** A `limit[path]` parameter: a safe integer from 1, not yet clamped to the list's `maxLimit`. */
export interface WrittenListLimit {
  readonly path: string
  readonly limit: number
  readonly written: string
}

/**
 * The expanded-list part of a request's query, as written: what it asks of
 * the order, the number and the rows of expanded to-many relations. Read by
 * `planExpandedLists` (plan/expanded-list-plan.ts) for the caller.
 */
export interface ExpandedListQuery {
  readonly sorts: readonly WrittenListSort[]
  readonly limits: readonly WrittenListLimit[]
  readonly wheres: readonly WrittenWhere[]
}

const sortParam = 'sort'
const whereParam = 'where'
/** As many conditions as a list's filters, at most. */
const maxWheres = 20
const bracketed = /^(sort|limit|where)\[/
const oneBracket = /^\[([^[\]]+)\]$/
const whereBrackets = /^\[([^[\]]+)\](?:\[([^[\]]+)\])?$/

/** A query that asks nothing of expanded lists: the common case, shared. */
export const noExpandedListQuery: ExpandedListQuery = Object.freeze({
  sorts: Object.freeze([]), limits: Object.freeze([]), wheres: Object.freeze([]),
})

/**
 * Takes `sort[path]`, `limit[path]` and `where[path.field]`,
 * `where[path.field][operator]` apart from a parsed query string (keys as
 * written, or `where` as an object from a parser that builds them). `sort`
 * and `limit` themselves (a list route's own) are not read here. Only the
 * form is checked: a value given twice or not as text, a limit that is not
 * a positive integer, a bracket form that is none of these (400).
 */
export function readExpandedListQuery (query: Record<string, unknown>): ExpandedListQuery {
  let sorts: WrittenListSort[] | undefined
  let limits: WrittenListLimit[] | undefined
  let wheres: WrittenWhere[] | undefined
  const seen = new Set<string>()
  const addWhere = (target: string, operator: string, raw: unknown) => {
    const written = `${whereParam}[${target}]${operator === '' ? '' : `[${operator}]`}`
    const dot = target.lastIndexOf('.')
    if (dot <= 0 || dot === target.length - 1) throw new BadFilterError(messages.notAnExpandedListParameter(written))
    if (typeof raw !== 'string') throw new BadFilterError(messages.filterNotOnce(written))
    if (raw.length > maxValueLength) throw new BadFilterError(messages.tooLong(written, raw.length, maxValueLength))
    const id = `${whereParam}[${target}][${operator === '' ? 'eq' : operator}]`
    if (seen.has(id)) throw new BadFilterError(messages.filterRepeated(written))
    seen.add(id)
    wheres ??= []
    if (wheres.length === maxWheres) throw new BadFilterError(messages.tooManyFilters(maxWheres))
    wheres.push({ path: target.slice(0, dot), field: target.slice(dot + 1), operator, raw, written })
  }
  for (const name of Object.keys(query)) {
    if (name === whereParam) {
      readNestedWheres(query[name], addWhere)
      continue
    }
    const param = bracketed.exec(name)?.[1]
    if (param === undefined) continue
    const rest = name.slice(param.length)
    const value = query[name]
    if (param === whereParam) {
      const match = whereBrackets.exec(rest)
      if (match === null) throw new BadFilterError(messages.notAnExpandedListParameter(name))
      addWhere(match[1]!, match[2] ?? '', value)
      continue
    }
    const path = oneBracket.exec(rest)?.[1]
    const refuse = (message: string): never => {
      throw param === sortParam ? new BadSortError(message) : new BadFilterError(message)
    }
    if (path === undefined) refuse(messages.notAnExpandedListParameter(name))
    if (param === sortParam) {
      if (typeof value !== 'string') refuse(messages.sortNotOnce(name))
      ;(sorts ??= []).push({ path: path!, keys: sortKeys(value as string), written: name })
    } else {
      const limit = safeInteger(value, 1)
      if (limit === undefined) refuse(messages.badExpandedLimit(name))
      ;(limits ??= []).push({ path: path!, limit: limit!, written: name })
    }
  }
  if (sorts === undefined && limits === undefined && wheres === undefined) return noExpandedListQuery
  return { sorts: sorts ?? [], limits: limits ?? [], wheres: wheres ?? [] }
}

/** A sort value taken apart: names, each maybe `-`; empty items skipped (as a list's `sort` reads). */
function sortKeys (raw: string): WrittenSortKey[] {
  return raw.split(',').filter((item) => item !== '').map((item) => {
    const descending = item.startsWith('-')
    return { name: descending ? item.slice(1) : item, descending }
  })
}

/** `where` as an object: `{ 'pets.species': 'cat' }` or `{ 'pets.born': { gte: '2020-01-01' } }`. */
function readNestedWheres (value: unknown, add: (target: string, operator: string, raw: unknown) => void): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadFilterError(messages.notAnExpandedListParameter(whereParam))
  }
  for (const [target, inner] of Object.entries(value as Record<string, unknown>)) {
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
      for (const [operator, raw] of Object.entries(inner as Record<string, unknown>)) add(target, operator, raw)
    } else add(target, '', inner)
  }
}
