import { isDeepStrictEqual } from 'node:util'
import type { Row } from './selection.js'

/**
 * A part of a combined statement (sql/combined-statements.ts) as one JSON
 * text of arrays, and its rows read back from it as node-postgres gives
 * them: which types are read back, as JSON itself or as their text, the
 * constants that check the driver's parsers, and each part's select list.
 */

const asInteger = (text: string): number => parseInt(text, 10)
const asText = (text: string): string => text
const asJsonText = (text: string): unknown => JSON.parse(text)
const uuidProbes = ['00000000-0000-0000-0000-000000000001', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1f']
/** JSON and JSONB values as PostgreSQL writes them back (JSONB with a space after each `:` and `,`). */
const jsonProbes = ['{"a": [1, "b"]}', '{"a_b": {"C": null, "d": 1.5}}', '[]', '"2024-02-29T12:34:56.789Z"', 'null', '1']

/** A type whose driver value is known, and what tells the driver's parser for it. */
interface KnownType {
  /** PostgreSQL's type id, as `pg_typeof(...)::oid` gives it. */
  readonly type: number
  /** Its value from its text (`cast(value as text)`), as node-postgres's default parser gives it. */
  readonly parse: (text: string) => unknown
  /** Whether its JSON, parsed, is the driver's value: read as JSON itself once known. */
  readonly asJson: boolean
  /**
   * Values of it, each selected as a constant by every statement sent (`cast` of the text, as PostgreSQL writes
   * it back): what the driver gives for them tells its parser. Several, so that a parser of an application's
   * that agrees with the default on some values (a safe integer, an object without an underscore in its keys)
   * is told apart too.
   */
  readonly cast: string
  readonly probes: readonly string[]
}

/** The types read back from a combined statement. Not `char(n)`: its cast to text drops the padding that its text on the wire keeps. */
const knownTypes: readonly KnownType[] = [
  { type: 16, parse: (text) => text === 'true', asJson: true, cast: 'bool', probes: ['true', 'false'] },
  { type: 19, parse: asText, asJson: false, cast: 'name', probes: ['n', 'A_b 1'] },
  { type: 20, parse: asText, asJson: false, cast: 'int8', probes: ['9007199254740993', '42', '-7', '0'] },
  { type: 21, parse: asInteger, asJson: true, cast: 'int2', probes: ['-2', '3'] },
  { type: 23, parse: asInteger, asJson: true, cast: 'int4', probes: ['-4', '5'] },
  { type: 25, parse: asText, asJson: true, cast: 'text', probes: ['t', 'A_b 1'] },
  { type: 26, parse: asInteger, asJson: false, cast: 'oid', probes: ['7'] },
  { type: 114, parse: asJsonText, asJson: true, cast: 'json', probes: jsonProbes },
  { type: 700, parse: parseFloat, asJson: false, cast: 'float4', probes: ['0.5', '-2', '3'] },
  { type: 701, parse: parseFloat, asJson: false, cast: 'float8', probes: ['0.1', '-2', '3', '1e+21'] },
  { type: 1043, parse: asText, asJson: true, cast: 'varchar', probes: ['v', 'A_b 1'] },
  { type: 1700, parse: asText, asJson: false, cast: 'numeric', probes: ['1.50', '42', '-0.001'] },
  { type: 2950, parse: asText, asJson: false, cast: 'uuid', probes: uuidProbes },
  { type: 3802, parse: asJsonText, asJson: true, cast: 'jsonb', probes: jsonProbes },
]
const byType: ReadonlyMap<number, KnownType> = new Map(knownTypes.map((known) => [known.type, known]))

/**
 * How a column of PostgreSQL's type `type` is read back (as JSON itself or
 * as its text converted by `parse`), if it is a type read back at all.
 */
export function columnReading (type: number | null): ColumnReading | undefined {
  const known = type === null ? undefined : byType.get(type)
  return known === undefined ? undefined : { type: known.type, asJson: known.asJson, parse: known.parse }
}

/** The column of the `index`th constant of `type` (the first without its index). */
const probeColumn = (type: number, index: number): string => (index === 0 ? `__expand_probe_${type}` : `__expand_probe_${type}_${index}`)
/** The constants every combined statement selects, several of each type read back (`knownTypes`). */
export const probeSelections = knownTypes.flatMap(({ type, cast, probes }) =>
  probes.map((probe, index) => `cast('${probe}' as ${cast}) as "${probeColumn(type, index)}"`)).join(', ')

/** A part's column in the statement sent: its type, and whether it comes as JSON itself or as its text converted by `parse`. */
export interface ColumnReading {
  readonly type: number
  readonly asJson: boolean
  readonly parse: (text: string) => unknown
}

/**
 * Whether the driver converted each constant of `row` (`probeSelections`) as
 * its default parser does: if not, an application's parser reads some type
 * otherwise, and no row is read back from a JSON text.
 */
export function probesReadAlike (row: Row): boolean {
  return knownTypes.every(({ type, parse, probes }) =>
    probes.every((probe, index) => isDeepStrictEqual(row[probeColumn(type, index)], parse(probe))))
}

/** The column of the statement sent that holds the `index`th part's JSON text. */
export const partColumn = (index: number): string => `__expand_part_${index}`

const quoted = (name: string): string => `"__expand_part"."${name.replace(/"/g, '""')}"`

/**
 * A part's select list: its rows as one JSON text of arrays, each value as
 * JSON itself or as its text (`known`), or every value as its text where
 * its columns are not known yet; and each column's type (`pg_typeof`, the
 * same in every row: the least of them, null for a statement without rows),
 * checked against what was learnt in every answer (a column's type changes
 * with a migration, or with the database a request's `db` reads).
 */
export function partSelect (names: readonly string[], known: readonly ColumnReading[] | undefined): string {
  const values = names.map((name, index) => (known?.[index]!.asJson === true ? quoted(name) : `cast(${quoted(name)} as text)`))
  const typesOf = names.map((name) => `min(pg_typeof(${quoted(name)})::oid)::int4`).join(', ')
  return `select cast(json_build_array(json_agg(json_build_array(${values.join(', ')})), json_build_array(${typesOf})) as text)`
}

/** A part's rows from its JSON arrays, each column read as `known` says. */
export function readRows (names: readonly string[], known: readonly ColumnReading[], values: Array<Array<unknown>>): Row[] {
  const rows: Row[] = new Array(values.length)
  const count = names.length
  for (let index = 0; index < values.length; index++) {
    const array = values[index]!
    const row: Row = {}
    for (let column = 0; column < count; column++) {
      const value = array[column]
      const reading = known[column]!
      row[names[column]!] = value === null || reading.asJson ? value : reading.parse(value as string)
    }
    rows[index] = row
  }
  return rows
}
