import { isDeepStrictEqual } from 'node:util'
import { AliasNode, ColumnNode, CompiledQuery, IdentifierNode, ReferenceNode, SelectQueryNode, type OperationNode } from 'kysely'
import { LruMap } from 'toad-cache'
import { databaseFailureKind } from './dialects/index.js'
import type { AnyKysely, Row } from './selection.js'

/**
 * The statements a request sends together (load/one-wave.ts: its route's own,
 * and every relation's, keyed by subqueries of it), sent as one statement
 * where the database allows it (`combinesStatements`): each statement a
 * scalar subquery of the one sent, its rows one JSON text of arrays
 * (`json_agg(json_build_array(...))`) in its own order, read back into the
 * rows the statement would have given through the driver. One statement
 * instead of several costs the server and the driver less per request (fewer
 * messages, one row where there were hundreds; profile notes, "The page's
 * levels as JSON texts"), and its parts read one snapshot.
 *
 * The rows must be those the driver gives, value for value: a column is read
 * as JSON itself where its type's JSON is the driver's value (integers up to
 * four bytes, booleans, text, json), as its text and converted as the driver
 * converts it otherwise (`textParsers`). Which type a column has is learnt
 * from the first answer of its statement (`pg_typeof` of its values, with
 * every value as its text), and checked in every answer after it (a
 * migration, or a request's `db` of another schema, changes it); that the
 * driver converts each type as assumed is checked in every answer, on values
 * of each type the statement selects as constants (`probes`). A statement
 * with a column of another type, or on a driver that converts otherwise, is
 * sent on its own; where one is found in an answer, or the statement sent
 * fails other than as a database out of reach does (one part's error is
 * that part's), the request sends its statements again, each alone.
 */

/** PostgreSQL's type ids, as `pg_typeof(...)::oid` gives them, for the types whose driver values are known. */
const types = {
  bool: 16,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  varchar: 1043,
  numeric: 1700,
  uuid: 2950,
  jsonb: 3802,
} as const

const asInteger = (text: string): number => parseInt(text, 10)
const asText = (text: string): string => text

/**
 * Each known type's value from its text (`cast(value as text)`), as node-postgres's default parsers give it. Not
 * `char(n)`: its cast to text drops the padding that its text on the wire keeps.
 */
const textParsers: ReadonlyMap<number, (text: string) => unknown> = new Map<number, (text: string) => unknown>([
  [types.bool, (text) => text === 'true'],
  [types.name, asText],
  [types.int8, asText],
  [types.int2, asInteger],
  [types.int4, asInteger],
  [types.text, asText],
  [types.oid, asInteger],
  [types.json, (text) => JSON.parse(text)],
  [types.float4, parseFloat],
  [types.float8, parseFloat],
  [types.varchar, asText],
  [types.numeric, asText],
  [types.uuid, asText],
  [types.jsonb, (text) => JSON.parse(text)],
])

/** The types whose JSON, parsed, is the driver's value: read as JSON itself once known. */
const asJson: ReadonlySet<number> = new Set([types.bool, types.int2, types.int4, types.text, types.varchar, types.json, types.jsonb])

/** A value of each known type, selected as a constant by every statement sent: what the driver gives for it tells its parsers. */
const probes: ReadonlyArray<{ readonly type: number; readonly cast: string; readonly text: string }> = [
  { type: types.bool, cast: 'bool', text: 'true' },
  { type: types.name, cast: 'name', text: 'n' },
  { type: types.int8, cast: 'int8', text: '9007199254740993' },
  { type: types.int2, cast: 'int2', text: '-2' },
  { type: types.int4, cast: 'int4', text: '-4' },
  { type: types.text, cast: 'text', text: 't' },
  { type: types.oid, cast: 'oid', text: '7' },
  { type: types.json, cast: 'json', text: '{"a":[1,"b"]}' },
  { type: types.float4, cast: 'float4', text: '0.5' },
  { type: types.float8, cast: 'float8', text: '0.1' },
  { type: types.varchar, cast: 'varchar', text: 'v' },
  { type: types.numeric, cast: 'numeric', text: '1.50' },
  { type: types.uuid, cast: 'uuid', text: '00000000-0000-0000-0000-000000000001' },
  { type: types.jsonb, cast: 'jsonb', text: '{"a": [1, "b"]}' },
]
const probeColumn = (type: number): string => `__expand_probe_${type}`
const probeSelections = probes.map(({ type, cast, text }) => `cast('${text}' as ${cast}) as "${probeColumn(type)}"`).join(', ')

/** A part's column in the statement sent: its type, and whether it comes as JSON itself or as its text converted by `parse`. */
interface ColumnReading {
  readonly type: number
  readonly asJson: boolean
  readonly parse: (text: string) => unknown
}

/** What is known of a statement's columns: how each is read, or that one has a type read otherwise (`alone`). */
type Knowledge = readonly ColumnReading[] | 'alone'

/** The most values one statement binds: the protocol counts them in 16 bits. */
const mostParameters = 65_535

/** Statements held at once: a plan's relations, bounded by the plan's size. */
const statementsKnown = 2_000
/** Texts of combined statements kept, each for one set of statements. */
const combinedKept = 500

/** A statement held for the statement sent, with what its rows are read with. */
interface Held {
  readonly compiled: CompiledQuery<unknown>
  readonly names: readonly string[]
  readonly resolve: (rows: Row[]) => void
  readonly reject: (error: unknown) => void
}

/** The text of a combined statement, and what it was written from. */
interface Combined {
  readonly sql: string
  readonly known: ReadonlyArray<readonly ColumnReading[] | undefined>
}

/** The learnt columns of each statement sent in a combined one, by its text, and the combined texts. */
export class CombinedStatements {
  private readonly knowledge = new LruMap<Knowledge>(statementsKnown)
  private readonly combined = new LruMap<Combined>(combinedKept)

  /** A batch for `db`'s statements of one request: each `execute` through it is held until `send`. */
  batch (db: AnyKysely): StatementBatch {
    return new StatementBatch(db, this)
  }

  /** @internal How each column of `sql`'s rows is read, if known. */
  known (sql: string): Knowledge | undefined {
    return this.knowledge.get(sql)
  }

  /** @internal */
  learn (sql: string, knowledge: Knowledge): void {
    this.knowledge.set(sql, knowledge)
  }

  /** @internal */
  forget (sql: string): void {
    this.knowledge.delete(sql)
  }

  /** @internal The combined statement of `parts`, as known now. */
  textOf (parts: readonly Held[], offsets: readonly number[]): Combined | undefined {
    const key = parts.map((part) => part.compiled.sql).join('\u0000')
    const known = parts.map((part) => {
      const knowledge = this.knowledge.get(part.compiled.sql)
      return knowledge === 'alone' ? undefined : knowledge
    })
    const kept = this.combined.get(key)
    if (kept !== undefined && kept.known.every((columns, index) => columns === known[index])) return kept
    const selections: string[] = []
    for (const [index, part] of parts.entries()) {
      const text = renumbered(part.compiled.sql, offsets[index]!)
      if (text === undefined) return undefined
      selections.push(`(${partSelect(part.names, known[index])} from (${text}) as "__expand_part") as "${partColumn(index)}"`)
    }
    const written = { sql: `select ${selections.join(', ')}, ${probeSelections}`, known }
    this.combined.set(key, written)
    return written
  }
}

const partColumn = (index: number): string => `__expand_part_${index}`

const quoted = (name: string): string => `"__expand_part"."${name.replace(/"/g, '""')}"`

/**
 * A part's select list: its rows as one JSON text of arrays, each value as
 * JSON itself or as its text (`known`), or every value as its text where
 * its columns are not known yet; and each column's type (`pg_typeof`, the
 * same in every row: the least of them, null for a statement without rows),
 * checked against what was learnt in every answer (a column's type changes
 * with a migration, or with the database a request's `db` reads).
 */
function partSelect (names: readonly string[], known: readonly ColumnReading[] | undefined): string {
  const values = names.map((name, index) => (known?.[index]!.asJson === true ? quoted(name) : `cast(${quoted(name)} as text)`))
  const typesOf = names.map((name) => `min(pg_typeof(${quoted(name)})::oid)::int4`).join(', ')
  return `select cast(json_build_array(json_agg(json_build_array(${values.join(', ')})), json_build_array(${typesOf})) as text)`
}

/**
 * The statements of one request, held as they are run (`hold`) and sent when
 * the request has run them all (`send`): together as one statement where
 * each is known to read back alike, else each alone.
 */
export class StatementBatch {
  private readonly held: Held[] = []

  constructor (private readonly db: AnyKysely, private readonly statements: CombinedStatements) {}

  /**
   * The rows of `compiled`, sent with the batch's other statements; undefined
   * for a statement of another database, or one whose columns are not all
   * named (sent alone, now).
   */
  hold (db: AnyKysely, compiled: CompiledQuery<unknown>): Promise<Row[]> | undefined {
    if (db !== this.db) return undefined
    const names = selectedNames(compiled.query)
    if (names === undefined || this.statements.known(compiled.sql) === 'alone') return undefined
    return new Promise<Row[]>((resolve, reject) => { this.held.push({ compiled, names, resolve, reject }) })
  }

  /** Sends the statements held: a single one as it is, several as one statement where they can be. */
  send (): void {
    const { held } = this
    if (held.length === 0) return
    if (held.length === 1) {
      sendAlone(this.db, held)
      return
    }
    const offsets: number[] = []
    let offset = 0
    for (const part of held) {
      offsets.push(offset)
      offset += part.compiled.parameters.length
    }
    const combined = offset > mostParameters ? undefined : this.statements.textOf(held, offsets)
    if (combined === undefined) {
      sendAlone(this.db, held)
      return
    }
    const parameters = held.flatMap((part) => part.compiled.parameters)
    this.db.executeQuery(CompiledQuery.raw(combined.sql, parameters)).then(
      (result) => { this.answer(held, combined, result.rows[0] as Row) },
      (error: unknown) => {
        // The database unreachable, or the statement cancelled (a timeout): each part's answer too. Any other error
        // may be one part's alone (a value its column cannot hold), answered for that part: each sent alone.
        if (databaseFailureKind(error) === 'unavailable') for (const part of held) part.reject(error)
        else sendAlone(this.db, held)
      }
    )
  }

  /**
   * Each part's rows from the combined statement's row; every part sent
   * alone instead where one cannot be read back alike (a type read otherwise
   * by the driver, or a column of a type other than the one learnt).
   */
  private answer (held: readonly Held[], combined: Combined, row: Row): void {
    if (!probes.every(({ type, text }) => isDeepStrictEqual(row[probeColumn(type)], textParsers.get(type)!(text)))) {
      // The driver converts some type otherwise (a parser of the application's): every statement alone, from now on.
      for (const part of held) this.statements.learn(part.compiled.sql, 'alone')
      sendAlone(this.db, held)
      return
    }
    const answers: Row[][] = []
    for (const [index, part] of held.entries()) {
      const [values, typeIds] = JSON.parse(row[partColumn(index)] as string) as [Array<Array<unknown>> | null, Array<number | null>]
      const rows = values === null ? [] : this.rowsOf(part, combined.known[index], values, typeIds)
      if (rows === undefined) {
        sendAlone(this.db, held)
        return
      }
      answers.push(rows)
    }
    for (const [index, part] of held.entries()) part.resolve(answers[index]!)
  }

  /**
   * A part's rows, each column read as `known` says where its type is the
   * one learnt; where none was, every value as its text, converted for its
   * type, and the types learnt for the next time it is sent. Undefined for
   * a column of a type not known, or other than the one learnt (forgotten,
   * to be learnt again).
   */
  private rowsOf (
    part: Held, known: readonly ColumnReading[] | undefined, values: Array<Array<unknown>>, typeIds: ReadonlyArray<number | null>
  ): Row[] | undefined {
    if (known !== undefined) {
      if (typeIds.every((type, index) => type === known[index]!.type)) return readRows(part.names, known, values)
      this.statements.forget(part.compiled.sql)
      return undefined
    }
    const readings: ColumnReading[] = []
    for (const type of typeIds) {
      const parse = type === null ? undefined : textParsers.get(type)
      if (parse === undefined) {
        this.statements.learn(part.compiled.sql, 'alone')
        return undefined
      }
      readings.push({ type: type!, asJson: asJson.has(type!), parse })
    }
    this.statements.learn(part.compiled.sql, readings)
    return readRows(part.names, readings.map((reading) => ({ ...reading, asJson: false })), values)
  }
}

/** A part's rows from its JSON arrays, each column read as `known` says. */
function readRows (names: readonly string[], known: readonly ColumnReading[], values: Array<Array<unknown>>): Row[] {
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

/** Each statement sent on its own, answering its own rows or error. */
function sendAlone (db: AnyKysely, held: readonly Held[]): void {
  for (const part of held) {
    db.executeQuery(part.compiled).then((result) => { part.resolve(result.rows as Row[]) }, part.reject)
  }
}

/**
 * The names a select statement's rows have, in order; undefined for another
 * statement, or a column with no name of its own (`*`, an unnamed
 * expression): a statement read back from JSON arrays needs each.
 */
function selectedNames (query: OperationNode): string[] | undefined {
  if (!SelectQueryNode.is(query)) return undefined
  const names: string[] = []
  for (const { selection } of query.selections ?? []) {
    if (AliasNode.is(selection) && IdentifierNode.is(selection.alias)) names.push(selection.alias.name)
    else if (ReferenceNode.is(selection) && ColumnNode.is(selection.column)) names.push(selection.column.column.name)
    else if (ColumnNode.is(selection)) names.push(selection.column.name)
    else return undefined
  }
  if (names.length === 0 || new Set(names).size !== names.length) return undefined
  // A name PostgreSQL cuts short (63 bytes), or one a plain object cannot hold as its own key: the driver's row has it.
  return names.some((name) => name === '__proto__' || Buffer.byteLength(name) > 63) ? undefined : names
}

/**
 * `sql` with each placeholder `$n` numbered `n + offset`, for a part placed
 * after statements binding `offset` values; undefined for a text this cannot
 * read for sure (a comment, a string with backslash escapes, a dollar-quoted
 * one), sent alone.
 */
export function renumbered (sql: string, offset: number): string | undefined {
  let out = ''
  let from = 0
  for (let index = 0; index < sql.length; index++) {
    const char = sql[index]
    if (char === '\'' || char === '"') {
      if (char === '\'' && /[eE]/.test(sql[index - 1] ?? '')) return undefined
      const end = sql.indexOf(char, index + 1)
      if (end < 0) return undefined
      // A doubled quote inside is read as the end of one literal and the start of the next: the same text.
      index = end
    } else if ((char === '-' && sql[index + 1] === '-') || (char === '/' && sql[index + 1] === '*')) {
      return undefined
    } else if (char === '$') {
      let end = index + 1
      while (end < sql.length && sql.charCodeAt(end) >= 48 && sql.charCodeAt(end) <= 57) end++
      if (end === index + 1) return undefined
      out += `${sql.slice(from, index)}$${Number(sql.slice(index + 1, end)) + offset}`
      from = end
      index = end - 1
    }
  }
  return out + sql.slice(from)
}
