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
 * converts it otherwise (`knownTypes`). Which type a column has is learnt
 * from the first answer of its statement (`pg_typeof` of its values, with
 * every value as its text), and checked in every answer after it (a
 * migration, or a request's `db` of another schema, changes it); that the
 * driver converts each type as assumed is checked in every answer, on values
 * of each type the statement selects as constants (`knownTypes`). A statement
 * with a column of another type, or on a driver that converts otherwise, is
 * sent on its own; where one is found in an answer, or the statement sent
 * fails other than as a database out of reach does (one part's error is
 * that part's), the request sends its statements again, each alone.
 */

const asInteger = (text: string): number => parseInt(text, 10)
const asText = (text: string): string => text
const asJsonText = (text: string): unknown => JSON.parse(text)

/** A type whose driver value is known, and what tells the driver's parser for it. */
interface KnownType {
  /** PostgreSQL's type id, as `pg_typeof(...)::oid` gives it. */
  readonly type: number
  /** Its value from its text (`cast(value as text)`), as node-postgres's default parser gives it. */
  readonly parse: (text: string) => unknown
  /** Whether its JSON, parsed, is the driver's value: read as JSON itself once known. */
  readonly asJson: boolean
  /** A value of it, selected as a constant by every statement sent (`cast` of `probe`): what the driver gives for it tells its parser. */
  readonly cast: string
  readonly probe: string
}

/** The types read back from a combined statement. Not `char(n)`: its cast to text drops the padding that its text on the wire keeps. */
const knownTypes: readonly KnownType[] = [
  { type: 16, parse: (text) => text === 'true', asJson: true, cast: 'bool', probe: 'true' },
  { type: 19, parse: asText, asJson: false, cast: 'name', probe: 'n' },
  { type: 20, parse: asText, asJson: false, cast: 'int8', probe: '9007199254740993' },
  { type: 21, parse: asInteger, asJson: true, cast: 'int2', probe: '-2' },
  { type: 23, parse: asInteger, asJson: true, cast: 'int4', probe: '-4' },
  { type: 25, parse: asText, asJson: true, cast: 'text', probe: 't' },
  { type: 26, parse: asInteger, asJson: false, cast: 'oid', probe: '7' },
  { type: 114, parse: asJsonText, asJson: true, cast: 'json', probe: '{"a":[1,"b"]}' },
  { type: 700, parse: parseFloat, asJson: false, cast: 'float4', probe: '0.5' },
  { type: 701, parse: parseFloat, asJson: false, cast: 'float8', probe: '0.1' },
  { type: 1043, parse: asText, asJson: true, cast: 'varchar', probe: 'v' },
  { type: 1700, parse: asText, asJson: false, cast: 'numeric', probe: '1.50' },
  { type: 2950, parse: asText, asJson: false, cast: 'uuid', probe: '00000000-0000-0000-0000-000000000001' },
  { type: 3802, parse: asJsonText, asJson: true, cast: 'jsonb', probe: '{"a": [1, "b"]}' },
]
const byType: ReadonlyMap<number, KnownType> = new Map(knownTypes.map((known) => [known.type, known]))

const probeColumn = (type: number): string => `__expand_probe_${type}`
const probeSelections = knownTypes.map(({ type, cast, probe }) => `cast('${probe}' as ${cast}) as "${probeColumn(type)}"`).join(', ')

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

/**
 * A statement that parts of a combined statement read their keys from, a
 * common table expression of it (load/one-wave.ts): its name, and its
 * statement.
 */
export interface Source {
  readonly name: string
  readonly compiled: CompiledQuery<unknown>
}

/**
 * A statement's form in a combined statement, besides the form it is sent
 * alone in (load/one-wave.ts): its keys read by name from `sources` rather
 * than from its parents' statements written within it, and no parent key
 * said per row, since in one statement its parents' rows are those of the
 * same snapshot.
 */
export interface CombinedForm {
  /** The sources it reads, each after the sources it reads itself: the combined statement opens with them, once each. */
  readonly sources: readonly Source[]
  /** Its statement. */
  readonly compiled: CompiledQuery<unknown>
  /** Whether its statement is its last source's (the rows its children read their keys from): read from there. */
  readonly isSource: boolean
}

/** What a held statement answers: its rows, and whether they were read through its combined form. */
export interface HeldAnswer {
  readonly rows: Row[]
  readonly combined: boolean
}

/** A statement held for the statement sent, with what its rows are read with. */
interface Held {
  /** As sent alone. */
  readonly compiled: CompiledQuery<unknown>
  readonly names: readonly string[]
  /** As read in a combined statement, where it has a form of its own there whose columns are all named. */
  readonly form: { readonly form: CombinedForm; readonly names: readonly string[] } | undefined
  readonly resolve: (answer: HeldAnswer) => void
  readonly reject: (error: unknown) => void
}

/** How a held statement is read in a combined statement: its text, the names of its rows' columns, and the values it binds. */
interface Reading {
  readonly sql: string
  readonly names: readonly string[]
  readonly parameters: readonly unknown[]
  /** Its text is a source's name, read from there. */
  readonly source: boolean
  readonly form: CombinedForm | undefined
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

  /**
   * @internal The combined statement of `parts` reading `sources` first, as
   * known now; each piece's placeholders numbered after `offsets` (the
   * sources', then the parts').
   */
  textOf (sources: readonly Source[], parts: readonly Reading[], offsets: readonly number[]): Combined | undefined {
    const key = sources.length === 0
      ? parts.map((part) => part.sql).join('\u0000')
      : `${sources.map((source) => `${source.name}\u0003${source.compiled.sql}`).join('\u0001')}\u0002${parts.map((part) => part.sql).join('\u0000')}`
    const known = parts.map((part) => {
      const knowledge = this.knowledge.get(part.sql)
      return knowledge === 'alone' ? undefined : knowledge
    })
    const kept = this.combined.get(key)
    if (kept !== undefined && kept.known.every((columns, index) => columns === known[index])) return kept
    const definitions: string[] = []
    for (const [index, source] of sources.entries()) {
      const text = renumbered(source.compiled.sql, offsets[index]!)
      if (text === undefined) return undefined
      definitions.push(`"${source.name}" as (${text})`)
    }
    const selections: string[] = []
    for (const [index, part] of parts.entries()) {
      const from = part.source ? `"${part.form!.sources.at(-1)!.name}"` : renumbered(part.sql, offsets[sources.length + index]!)
      if (from === undefined) return undefined
      selections.push(`(${partSelect(part.names, known[index])} from ${part.source ? from : `(${from})`} as "__expand_part") as "${partColumn(index)}"`)
    }
    const opening = definitions.length === 0 ? '' : `with ${definitions.join(', ')} `
    const written = { sql: `${opening}select ${selections.join(', ')}, ${probeSelections}`, known }
    this.combined.set(key, written)
    return written
  }
}

/**
 * Of a combined statement sent: the statements it stands for, each as it
 * would have been sent alone, in the order of its parts. A property of the
 * statement itself, which a log of the statements sent (a Kysely `log`,
 * whose events carry the statement sent) can tell its parts by.
 */
const partsSent = Symbol('fastify-expand: the parts of a combined statement')

/** @internal The statements `compiled` stands for, as sent alone, if it is a combined statement (`partsSent`). */
export function partsOfCombined (compiled: CompiledQuery<unknown>): readonly CompiledQuery<unknown>[] | undefined {
  return (compiled as { [partsSent]?: readonly CompiledQuery<unknown>[] })[partsSent]
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
  /** Whether a statement of the batch's database was sent alone at once, outside the statement sent. */
  private someAlone = false

  constructor (private readonly db: AnyKysely, private readonly statements: CombinedStatements) {}

  /**
   * The rows of `compiled`, sent with the batch's other statements, read
   * through `form` where it has one; undefined for a statement of another
   * database, or one whose columns are not all named (sent alone, now).
   */
  hold (db: AnyKysely, compiled: CompiledQuery<unknown>, form?: CombinedForm): Promise<HeldAnswer> | undefined {
    if (db !== this.db) return undefined
    const names = selectedNames(compiled.query)
    if (names === undefined || this.statements.known(compiled.sql) === 'alone') {
      this.someAlone = true
      return undefined
    }
    const formNames = form === undefined ? undefined : selectedNames(form.compiled.query)
    const readForm = formNames === undefined ? undefined : { form: form!, names: formNames }
    return new Promise<HeldAnswer>((resolve, reject) => { this.held.push({ compiled, names, form: readForm, resolve, reject }) })
  }

  /**
   * Sends the statements held: a single one as it is, several as one
   * statement where they can be. Each is read there through its combined
   * form where it has one, when every statement of the request is in it:
   * the rows its keys come from are then those placed (one snapshot). With
   * one sent apart (its columns not all read back alike), its children's
   * statements say which keys they answered for, as they do sent alone.
   */
  send (): void {
    const { held } = this
    if (held.length === 0) return
    if (held.length === 1) {
      sendAlone(this.db, held)
      return
    }
    const readings = held.map((part) => this.readingOf(part, !this.someAlone))
    const sources = readings.some((reading) => reading.form !== undefined) ? sourcesOf(readings) : []
    const offsets: number[] = []
    let offset = 0
    for (const piece of [...sources.map((source) => source.compiled.parameters), ...readings.map((reading) => reading.parameters)]) {
      offsets.push(offset)
      offset += piece.length
    }
    const combined = offset > mostParameters ? undefined : this.statements.textOf(sources, readings, offsets)
    if (combined === undefined) {
      sendAlone(this.db, held)
      return
    }
    const parameters = [...sources.flatMap((source) => source.compiled.parameters), ...readings.flatMap((reading) => reading.parameters)]
    const statement: CompiledQuery<unknown> = Object.defineProperty({ ...CompiledQuery.raw(combined.sql, parameters) }, partsSent, {
      value: held.map((part) => part.compiled),
    })
    this.db.executeQuery(statement).then(
      (result) => { this.answer(held, readings, combined, result.rows[0] as Row) },
      (error: unknown) => {
        // The database unreachable, or the statement cancelled (a timeout): each part's answer too. Any other error
        // may be one part's alone (a value its column cannot hold), answered for that part: each sent alone.
        if (databaseFailureKind(error) === 'unavailable') for (const part of held) part.reject(error)
        else sendAlone(this.db, held)
      }
    )
  }

  /** How `part` is read in the statement sent: through its combined form where it may be, else as sent alone. */
  private readingOf (part: Held, mayUseForms: boolean): Reading {
    const { form } = part
    if (mayUseForms && form !== undefined && this.statements.known(form.form.compiled.sql) !== 'alone') {
      const { compiled, isSource } = form.form
      return { sql: compiled.sql, names: form.names, parameters: isSource ? [] : compiled.parameters, source: isSource, form: form.form }
    }
    return { sql: part.compiled.sql, names: part.names, parameters: part.compiled.parameters, source: false, form: undefined }
  }

  /**
   * Each part's rows from the combined statement's row; every part sent
   * alone instead where one cannot be read back alike (a type read otherwise
   * by the driver, or a column of a type other than the one learnt).
   */
  private answer (held: readonly Held[], readings: readonly Reading[], combined: Combined, row: Row): void {
    if (!knownTypes.every(({ type, parse, probe }) => isDeepStrictEqual(row[probeColumn(type)], parse(probe)))) {
      // The driver converts some type otherwise (a parser of the application's): every statement alone, from now on.
      for (const [index, part] of held.entries()) {
        this.statements.learn(part.compiled.sql, 'alone')
        this.statements.learn(readings[index]!.sql, 'alone')
      }
      sendAlone(this.db, held)
      return
    }
    const answers: Row[][] = []
    for (const [index, reading] of readings.entries()) {
      const [values, typeIds] = JSON.parse(row[partColumn(index)] as string) as [Array<Array<unknown>> | null, Array<number | null>]
      const rows = values === null ? [] : this.rowsOf(reading, combined.known[index], values, typeIds)
      if (rows === undefined) {
        sendAlone(this.db, held)
        return
      }
      answers.push(rows)
    }
    for (const [index, part] of held.entries()) part.resolve({ rows: answers[index]!, combined: readings[index]!.form !== undefined })
  }

  /**
   * A part's rows, each column read as `known` says where its type is the
   * one learnt; where none was, every value as its text, converted for its
   * type, and the types learnt for the next time it is sent. Undefined for
   * a column of a type not known, or other than the one learnt (forgotten,
   * to be learnt again).
   */
  private rowsOf (
    reading: Reading, known: readonly ColumnReading[] | undefined, values: Array<Array<unknown>>, typeIds: ReadonlyArray<number | null>
  ): Row[] | undefined {
    if (known !== undefined) {
      if (typeIds.every((type, index) => type === known[index]!.type)) return readRows(reading.names, known, values)
      this.statements.forget(reading.sql)
      return undefined
    }
    const readings: ColumnReading[] = []
    for (const type of typeIds) {
      const known = type === null ? undefined : byType.get(type)
      if (known === undefined) {
        this.statements.learn(reading.sql, 'alone')
        return undefined
      }
      readings.push({ type: known.type, asJson: known.asJson, parse: known.parse })
    }
    this.statements.learn(reading.sql, readings)
    return readRows(reading.names, readings.map((reading) => ({ ...reading, asJson: false })), values)
  }
}

/** The sources the readings' forms read, each once, in the order first read: each after those it reads. */
function sourcesOf (readings: readonly Reading[]): Source[] {
  const sources = new Map<string, Source>()
  for (const { form } of readings) {
    if (form === undefined) continue
    for (const source of form.sources) if (!sources.has(source.name)) sources.set(source.name, source)
  }
  return [...sources.values()]
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
    db.executeQuery(part.compiled).then((result) => { part.resolve({ rows: result.rows as Row[], combined: false }) }, part.reject)
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
