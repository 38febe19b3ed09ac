import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto'
import { BadCursorError, messages } from '../errors.js'
import { instantOf, isDateText } from '../graph/dates.js'
import { numberText } from '../graph/checks.js'
import { isDateFormat, type RequestedSort, type ValueType } from '../routes/list-declarations.js'
import type { Row } from '../sql/selection.js'

/** AES-256-GCM: a 96-bit nonce and a 128-bit tag around the encrypted keyset values. */
const nonceLength = 12
const tagLength = 16
/** Leads every cursor binding: a cursor of another format is refused rather than misread. */
export const cursorVersion = 'fastify-expand cursor 2'

/** Prefix of the cursor columns the cursor route selects beside the plan's. */
export const cursorColumn = '__expand_key_'

/**
 * A list route's cursors: keyset values encrypted and authenticated
 * (AES-256-GCM) with keys derived from the route's cursor secret.
 */
export class CursorCodec {
  /** Cursors are encrypted and authenticated with this key, derived from the cursor secret. */
  private readonly cipherKey: Buffer
  /** Cursor nonces are derived from what they hold with this key (see `cursorAfter`). */
  private readonly nonceKey: Buffer

  constructor (secret: Buffer) {
    this.cipherKey = createHmac('sha256', secret).update('fastify-expand cursor key').digest()
    this.nonceKey = createHmac('sha256', secret).update('fastify-expand cursor nonce').digest()
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
  cursorAfter (row: Row, keys: readonly RequestedSort[], binding: string): string {
    return this.cursorAt(keys.map((_key, index) => cursorValue(row[`${cursorColumn}${index}`])), false, binding)
  }

  /**
   * The cursor of a position given by its keyset values; `inclusive`: the
   * position's own row counts as past it (the cursor a page that came back
   * empty gives to walk back the other way). Its payload is the values,
   * then `true` when inclusive: a cursor made before inclusive ones existed
   * reads as exclusive.
   */
  cursorAt (keyset: readonly unknown[], inclusive: boolean, binding: string): string {
    const values = Buffer.from(JSON.stringify(inclusive ? [...keyset, true] : keyset))
    const nonce = createHmac('sha256', this.nonceKey).update(binding).update('\u0000').update(values).digest().subarray(0, nonceLength)
    const cipher = createCipheriv('aes-256-gcm', this.cipherKey, nonce, { authTagLength: tagLength })
    cipher.setAAD(Buffer.from(binding))
    const encrypted = Buffer.concat([cipher.update(values), cipher.final()])
    return Buffer.concat([nonce, encrypted, cipher.getAuthTag()]).toString('base64url')
  }

  /** The position of a cursor made by `cursorAt` for this binding, each value of its key's type; else 400 naming `param`. */
  readCursor (raw: string, keys: readonly RequestedSort[], binding: string, param: string): CursorPosition {
    const bad = () => new BadCursorError(messages.badCursor(param))
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
    if (!Array.isArray(values)) throw bad()
    const inclusive = values.length === keys.length + 1 && values[keys.length] === true
    if (values.length !== keys.length && !inclusive) throw bad()
    const keyset = inclusive ? values.slice(0, keys.length) : values
    keys.forEach(({ field }, index) => {
      const value: unknown = keyset[index]
      if (value === null ? !field.nullable : !isCursorValue(field.type, value)) throw bad()
    })
    return { values: keyset, inclusive }
  }
}

/** Where a cursor points: between two rows (exclusive), or at a row that counts as past it (inclusive). */
export interface CursorPosition {
  readonly values: readonly unknown[]
  readonly inclusive: boolean
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

/** A key value as a cursor keeps it, bound back as the column stores it. */
function cursorValue (value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'bigint') return value.toString()
  return value
}
