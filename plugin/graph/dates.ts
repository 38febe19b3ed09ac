/**
 * The text forms of `date` and `date-time` values the plugin reads, and the
 * one form it writes for each (docs/guarantees.md, "Dates and times").
 *
 * A date-time is `YYYY-MM-DD`, `T`, `t` or a space, `HH:MM`, optional
 * `:SS` and fraction, then `Z`, `z`, `±HH:MM` or nothing: nothing means UTC
 * (SQLite's `datetime()` writes '2021-01-01 00:00:00'; pg reads a
 * `timestamp without time zone` as it is told, see docs/guarantees.md). Its instant
 * is kept to the millisecond, a longer fraction cut (as pg and mysql2 read
 * PostgreSQL's and MariaDB's microseconds into a Date, and as `Date.parse`
 * does, so that a value reads alike from text and from a Date), and written
 * as `toISOString()` writes it. A date is
 * `YYYY-MM-DD`, written as it is. Years run from 0001 to 9999, the years
 * RFC 3339's four digits hold; the calendar is checked (no 2021-02-30, no 24:00).
 */

const dateTimeText = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))?$/
const dateText = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/

/** The first and last instants of years 0001 to 9999, in milliseconds since 1970. */
const firstInstant = new Date(0).setUTCFullYear(1, 0, 1)
const lastInstant = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/** Milliseconds since 1970 of a calendar day and time in UTC, or NaN when a field is out of its range. */
function utcInstant (year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0, milliseconds = 0): number {
  if (year < 1 || month < 1 || month > 12 || day < 1 || hours > 23 || minutes > 59 || seconds > 59) return NaN
  const date = new Date(0)
  // setUTCFullYear keeps years below 100 as they are (Date.UTC would read 50 as 1950).
  date.setUTCFullYear(year, month - 1, day)
  if (date.getUTCDate() !== day) return NaN
  return date.getTime() + ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds
}

/**
 * The instant of a date-time text in one of the forms read, in milliseconds
 * since 1970, or undefined. `requireOffset`: text without `Z` or an offset is
 * refused (a filter value must say its time zone).
 */
export function instantOf (text: string, requireOffset = false): number | undefined {
  const match = dateTimeText.exec(text)
  if (match === null) return undefined
  const [, year, month, day, hours, minutes, seconds, fraction, zulu, sign, offsetHours, offsetMinutes] = match
  if (requireOffset && zulu === undefined && sign === undefined) return undefined
  // The first three digits: `Number('0.57') * 1000` is 569.99...
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'))
  const local = utcInstant(Number(year), Number(month), Number(day), Number(hours), Number(minutes), Number(seconds ?? 0), milliseconds)
  let offset = 0
  if (sign !== undefined) {
    if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined
    offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000
  }
  const instant = local - offset
  return instant >= firstInstant && instant <= lastInstant ? instant : undefined
}

/** A date-time as the plugin writes it (`toISOString()`): from a valid Date or a text of a form read; else undefined. */
export function dateTimeTextOf (value: unknown): string | undefined {
  if (value instanceof Date) {
    const time = value.getTime()
    return time >= firstInstant && time <= lastInstant ? value.toISOString() : undefined
  }
  if (typeof value !== 'string') return undefined
  const instant = instantOf(value)
  return instant === undefined ? undefined : new Date(instant).toISOString()
}

/** Whether a text is a date `YYYY-MM-DD` of the calendar, years 0001 to 9999. */
export function isDateText (value: unknown): value is string {
  if (typeof value !== 'string') return false
  const match = dateText.exec(value)
  return match !== null && !Number.isNaN(utcInstant(Number(match[1]), Number(match[2]), Number(match[3])))
}
