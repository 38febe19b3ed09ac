import { AliasNode, ColumnNode, CompiledQuery, IdentifierNode, ReferenceNode, SelectQueryNode, type OperationNode } from 'kysely'
import { LruMap } from 'toad-cache'
import { columnReading, partColumn, partSelect, probeSelections, probesReadAlike, readRows, type ColumnReading } from './combined-rows.js'
import { databaseFailureKind, refusedForItsText } from './dialects/index.js'
import { isNativeKey } from './key-subqueries.js'
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
 * converts it otherwise (sql/combined-rows.ts). Which type a column has is learnt
 * from the first answer of its statement (`pg_typeof` of its values, with
 * every value as its text), and checked in every answer after it (a
 * migration, or a request's `db` of another schema, changes it); that the
 * driver converts each type as assumed is checked in every answer, on values
 * of each type the statement selects as constants (`probeSelections`). A statement
 * with a column of another type, or on a driver that converts otherwise, is
 * sent on its own; where one is found in an answer, or the statement sent
 * fails other than as a database out of reach does (one part's error is
 * that part's), the request sends its statements again, each alone.
 */

/** What is known of a statement's columns: how each is read, or that one has a type read otherwise (`alone`). */
type Knowledge = readonly ColumnReading[] | 'alone'

/** The most values one statement binds: the protocol counts them in 16 bits. */
const mostParameters = 65_535

/** The most columns a part reads back: its values are one function call's arguments, 100 at most in PostgreSQL. */
const mostColumns = 100

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
  /** Its combined form, where it is read through it (from its source, where its statement is one). */
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
    const key = `${sources.map((source) => `${source.name}\u0003${source.compiled.sql}`).join('\u0001')}\u0002${parts.map((part) => part.sql).join('\u0000')}`
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
      const text = part.form?.isSource === true ? undefined : renumbered(part.sql, offsets[sources.length + index]!)
      const from = part.form?.isSource === true ? `"${part.form.sources.at(-1)!.name}"` : text === undefined ? undefined : `(${text})`
      if (from === undefined) return undefined
      selections.push(`(${partSelect(part.names, known[index])} from ${from} as "__expand_part") as "${partColumn(index)}"`)
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
    // A source's keys for the relations below it (`withNativeKeys`) are not among its rows' values.
    const formNames = form === undefined ? undefined : selectedNames(form.compiled.query)?.filter((name) => !isNativeKey(name))
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
      (result) => {
        try {
          this.answer(held, readings, combined, result.rows[0] as Row)
        } catch {
          // An answer this cannot read (a parser of the application's for text, which its probes did not tell
          // apart, changed a part's JSON): every statement alone, from now on.
          this.learnAlone(held, readings)
          sendAlone(this.db, held)
        }
      },
      (error: unknown) => {
        // The database unreachable, or the statement cancelled (a timeout): each part's answer too. Any other error
        // may be one part's alone (a value its column cannot hold), answered for that part: each sent alone.
        if (databaseFailureKind(error) === 'unavailable') {
          for (const part of held) part.reject(error)
          return
        }
        if (refusedForItsText(error)) this.learnFailure(held, readings)
        sendAlone(this.db, held)
      }
    )
  }

  /** Every statement of `held`, in either form, sent alone from now on. */
  private learnAlone (held: readonly Held[], readings: readonly Reading[]): void {
    for (const [index, part] of held.entries()) {
      this.statements.learn(part.compiled.sql, 'alone')
      this.statements.learn(readings[index]!.sql, 'alone')
    }
  }

  /**
   * A combined statement PostgreSQL refused for its text (a type mismatch, a
   * limit of its own), which it would refuse again: its parts' combined forms
   * are not used from then on, or where none was, its parts are sent alone.
   */
  private learnFailure (held: readonly Held[], readings: readonly Reading[]): void {
    const withForms = readings.filter((reading) => reading.form !== undefined)
    if (withForms.length === 0) this.learnAlone(held, readings)
    for (const reading of withForms) this.statements.learn(reading.sql, 'alone')
  }

  /** How `part` is read in the statement sent: through its combined form where it may be, else as sent alone. */
  private readingOf (part: Held, mayUseForms: boolean): Reading {
    const { form } = part
    if (mayUseForms && form !== undefined && this.statements.known(form.form.compiled.sql) !== 'alone') {
      const { compiled, isSource } = form.form
      return { sql: compiled.sql, names: form.names, parameters: isSource ? [] : compiled.parameters, form: form.form }
    }
    return { sql: part.compiled.sql, names: part.names, parameters: part.compiled.parameters, form: undefined }
  }

  /**
   * Each part's rows from the combined statement's row; every part sent
   * alone instead where one cannot be read back alike (a type read otherwise
   * by the driver, or a column of a type other than the one learnt).
   */
  private answer (held: readonly Held[], readings: readonly Reading[], combined: Combined, row: Row): void {
    if (!probesReadAlike(row)) {
      // The driver converts some type otherwise (a parser of the application's): every statement alone, from now on.
      this.learnAlone(held, readings)
      sendAlone(this.db, held)
      return
    }
    const answers: Row[][] = []
    for (const [index, reading] of readings.entries()) {
      const [values, typeIds] = JSON.parse(row[partColumn(index)] as string) as [Array<Array<unknown>> | null, Array<number | null>]
      const rows = values === null ? [] : this.rowsOf(reading, held[index]!.compiled.sql, combined.known[index], values, typeIds)
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
   * a column of a type not known (the part sent alone from then on, in
   * either form: `aloneSql` is its form sent alone), or other than the one
   * learnt (forgotten, to be learnt again).
   */
  private rowsOf (
    reading: Reading,
    aloneSql: string,
    known: readonly ColumnReading[] | undefined,
    values: Array<Array<unknown>>,
    typeIds: ReadonlyArray<number | null>
  ): Row[] | undefined {
    if (known !== undefined) {
      if (typeIds.every((type, index) => type === known[index]!.type)) return readRows(reading.names, known, values)
      this.statements.forget(reading.sql)
      return undefined
    }
    const readings: ColumnReading[] = []
    for (const type of typeIds) {
      const column = columnReading(type)
      if (column === undefined) {
        // Its form alone too: both select the same columns (else the form would be tried first, then the statement).
        this.statements.learn(reading.sql, 'alone')
        this.statements.learn(aloneSql, 'alone')
        return undefined
      }
      readings.push(column)
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
  // A part's values are the arguments of one function call (`json_build_array`), which PostgreSQL takes 100 of at most.
  if (names.length === 0 || names.length > mostColumns || new Set(names).size !== names.length) return undefined
  // A name PostgreSQL cuts short (63 bytes), or one a plain object cannot hold as its own key: the driver's row has it.
  return names.some((name) => name === '__proto__' || Buffer.byteLength(name) > 63) ? undefined : names
}

/**
 * `sql` with each placeholder `$n` numbered `n + offset`, for a part placed
 * after statements binding `offset` values; undefined for a text this cannot
 * read for sure (a comment, a string with backslash escapes, a dollar-quoted
 * one, a `$` inside an unquoted name), sent alone.
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
      // Inside an unquoted name (PostgreSQL allows `$` after its first character): not a placeholder.
      if (index > 0 && /[\p{L}\p{N}_$]/u.test(sql[index - 1]!)) return undefined
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
