import type { AnyResource } from './resource.js'

// The checks that definitions and options share. Each caller words its own
// message (it knows what it is checking and where), so these only answer.

/** The first key of `object` that `known` does not list. */
export function unknownKey (object: object, known: ReadonlySet<string>): string | undefined {
  return Object.keys(object).find((key) => !known.has(key))
}

export function isPositiveInteger (value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A name written into SQL as it is: letters, digits and underscores, not starting with a digit. */
export function isIdentifier (value: unknown): value is string {
  return typeof value === 'string' && identifier.test(value)
}

const qualifiedTable = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/

/** A table, or `schema.table`. */
export function isTableName (value: unknown): value is string {
  return typeof value === 'string' && qualifiedTable.test(value)
}

/**
 * Whether a name (a table's last part, a field's) begins as the plugin's statements name their own columns,
 * tables and aliases, `__expand_`, in any case (SQLite's and MariaDB's names ignore it): one of an
 * application's so named would be read in their place.
 */
export function isReservedName (name: string): boolean {
  return /^__expand_/i.test(name.split('.').at(-1)!)
}

/** How a message describes what `isIdentifier` accepts. */
export const columnNameRule = 'letters, digits and underscores'
/** How a message describes what `isTableName` accepts. */
export const tableNameRule = 'letters, digits and underscores, or schema.table'

/** Decimal text of an integer JavaScript holds exactly (16 digits at most: the range is checked after). */
export const integerText = /^-?[0-9]{1,16}$/
/** Decimal text of a number, as JSON and the query string write it. */
export const numberText = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?$/

/** A value `defineResource` returned. */
export function isResource (value: unknown): value is AnyResource {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'fastify-expand/resource'
}
