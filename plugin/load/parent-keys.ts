import { InvalidDataError, messages } from '../errors.js'
import { rowKey } from '../graph/identifiers.js'
import type { ResourceNode } from '../graph/resource-graph.js'
import type { Row } from '../sql/selection.js'

/**
 * Keys per statement: a power of two, under SQLite's 32,766 and PostgreSQL's
 * 65,535 bound parameters.
 */
const keysPerStatement = 8_192

/** Each row's key (in the rows' order) and an empty group per distinct key. */
export function groupByParent (rows: Row[], owner: ResourceNode): { keys: unknown[]; groups: Map<unknown, unknown[]> } {
  const keys = new Array<unknown>(rows.length)
  const groups = new Map<unknown, unknown[]>()
  for (let index = 0; index < rows.length; index++) {
    const value = rowKey(owner.key, rows[index]!)
    if (value === undefined) {
      throw new InvalidDataError(messages.rowsLackPrimaryKey(owner.qualifiedName, owner.primaryKey))
    }
    if (isRounded(value)) throw new InvalidDataError(messages.roundedKey(owner.qualifiedName, owner.primaryKey))
    const key = keyOf(value)
    keys[index] = key
    if (!groups.has(key)) groups.set(key, [])
  }
  return { keys, groups }
}

/**
 * A key as it compares in the database. Drivers return one key in several
 * forms: pg gives int8 as the string '1' and int4 as the number 1, SQLite may
 * give a bigint; the number 1, the bigint 1n and the string '1' are one key.
 * Binary keys compare by their bytes. Integers that a number holds exactly are
 * kept as numbers, the common case, which a Map finds without making a string;
 * other numbers and bigints compare as their decimal text, as a string key does.
 */
export function keyOf (value: unknown): unknown {
  switch (typeof value) {
    case 'number':
      return Number.isSafeInteger(value) ? value : String(value)
    case 'string':
      return integerText(value) ? Number(value) : value
    case 'bigint':
      return value >= -maxSafe && value <= maxSafe ? Number(value) : String(value)
    default:
      if (value instanceof Uint8Array) return `\u0000bytes:${Buffer.from(value).toString('hex')}`
      return value
  }
}

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER)

/**
 * Whether a key is an integer past 2^53 - 1 held by a JavaScript number:
 * possibly another key rounded by its driver (2^53 + 1 reads as 2^53), so
 * that relations would be matched to the wrong row. Refused before any
 * statement binds it: the field is declared `Type.String()` to be read as
 * its exact text (sql/text-columns.ts).
 */
export function isRounded (key: unknown): boolean {
  return typeof key === 'number' && Number.isInteger(key) && !Number.isSafeInteger(key)
}

/** Whether `text` is an integer written as String(number) would write it, in the safe range: '1', '-12', not '01', '1.0' or '1e3'. */
function integerText (text: string): boolean {
  const length = text.length
  if (length === 0 || length > 17) return false
  const first = text.charCodeAt(0)
  if (first !== 45 && (first < 48 || first > 57)) return false
  const value = Number(text)
  return Number.isSafeInteger(value) && String(value) === text
}

/** `values` in lists of at most `keysPerStatement`, one per statement. */
export function * chunks<T> (values: T[]): Generator<T[]> {
  for (let start = 0; start < values.length; start += keysPerStatement) yield values.slice(start, start + keysPerStatement)
}
