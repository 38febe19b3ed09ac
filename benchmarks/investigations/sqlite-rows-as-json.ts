/*
 * The SQLite page's statements read in other forms than the rows better-sqlite3 builds (profile notes: "SQLite's
 * rows as one JSON text"). The five statements the plugin's route sends for
 * `GET /pets?limit=100&offset=0&expand=owner.employer,toys` are captured from the route, then run through
 * better-sqlite3 alone, the forms alternating in rounds of 200 runs (median of 20 rounds, µs per request):
 *
 * - array rows (what `cachePreparedStatements` reads) and object rows (better-sqlite3's default);
 * - each statement's rows as one JSON text of arrays (`json_group_array(json_array(...))` over the statement) and
 *   `JSON.parse`: a stored blob that reads as JSONB, or text with the JSON subtype (a virtual generated column of
 *   `json_object`, a JSON function in the select list), would be written into the text as JSON, not as the value;
 * - the same over the statement kept from being flattened (`(select * from (...) limit -1)`: SQLite takes the
 *   subtype off a value that leaves a subquery it does not flatten);
 * - that, each value also tested for a blob (`iif(c >= x'', x'ff', c)`: only a blob sorts at or after the empty
 *   blob; `x'ff'` is no JSONB, so `json_array` then fails and the statement would be read again as rows);
 * - every part in one statement.
 *
 *   node --import tsx benchmarks/investigations/sqlite-rows-as-json.ts
 */
import type { Statement } from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { cachePreparedStatements } from '../../plugin/index.js'
import { buildApp } from '../../test/helpers/app.js'
import { expandOfDepth, pageRows } from '../baselines/hand-written.js'
import { createPetsDatabase, petResources } from '../domain/pets-db.js'

const database = createPetsDatabase()
const captured: Array<{ sql: string; parameters: readonly unknown[] }> = []
let capturing = false
const db = new Kysely<any>({
  dialect: new SqliteDialect({ database: cachePreparedStatements(database) }),
  log: (event) => { if (capturing && event.level === 'query') captured.push({ sql: event.query.sql, parameters: event.query.parameters }) },
})
const app = await buildApp({ db, resources: petResources }, (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: pageRows }))
const url = `/pets?limit=${pageRows}&offset=0&expand=${expandOfDepth[2]}`
await app.inject({ url })
capturing = true
await app.inject({ url })
capturing = false
await app.close()

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`
const columnsOf = (sql: string): string[] => database.prepare(sql).columns().map((column) => column.name)

/** Each captured statement as `wrap` writes it, with its parameters. */
function prepared (wrap: (sql: string, columns: string[]) => string, raw = false): Array<{ statement: Statement; parameters: unknown[] }> {
  return captured.map(({ sql, parameters }) => {
    const statement = database.prepare(wrap(sql, columnsOf(sql)))
    return { statement: raw ? statement.raw(true) : statement.pluck(), parameters: [...parameters] }
  })
}

const asRows = (raw: boolean) => {
  const statements = captured.map(({ sql, parameters }) => {
    const statement = database.prepare(sql)
    return { statement: raw ? statement.raw(true) : statement, parameters: [...parameters] }
  })
  return (): number => statements.reduce((rows, { statement, parameters }) => rows + statement.all(parameters).length, 0)
}
const parsedLength = (text: unknown): number => (JSON.parse(text as string) as unknown[]).length
const asJson = (statements: ReturnType<typeof prepared>) =>
  (): number => statements.reduce((rows, { statement, parameters }) => rows + parsedLength(statement.get(parameters)), 0)
const jsonArrays = (values: (column: string) => string, from: (sql: string) => string) =>
  (sql: string, columns: string[]): string => `select json_group_array(json_array(${columns.map(values).join(', ')})) from ${from(sql)}`
const plainValue = (column: string): string => quoted(column)
const blobTested = (column: string): string => `iif(${quoted(column)} >= x'', x'ff', ${quoted(column)})`
const flattened = (sql: string): string => `(${sql})`
const notFlattened = (sql: string): string => `(select * from (${sql}) limit -1)`

const combinedSql = 'select ' + captured.map(({ sql }, index) => `(${jsonArrays(plainValue, flattened)(sql, columnsOf(sql))}) as part_${index}`).join(', ')
const combined = database.prepare(combinedSql).raw(true)
const combinedParameters = captured.flatMap(({ parameters }) => parameters)

const forms: Record<string, () => number> = {
  'array rows': asRows(true),
  'object rows': asRows(false),
  'JSON text per statement': asJson(prepared(jsonArrays(plainValue, flattened))),
  'JSON text, statement not flattened': asJson(prepared(jsonArrays(plainValue, notFlattened))),
  'JSON text, not flattened, blobs tested': asJson(prepared(jsonArrays(blobTested, notFlattened))),
  'JSON texts in one statement': () => (combined.get(combinedParameters) as string[])
    .reduce((rows, text) => rows + parsedLength(text), 0),
}
const counts = Object.entries(forms).map(([name, form]) => [name, form()] as const)
if (new Set(counts.map(([, rows]) => rows)).size !== 1) throw new Error(`the forms read different rows: ${JSON.stringify(counts)}`)
console.log(`${captured.length} statements, ${counts[0]![1]} rows`)

const times: Record<string, number[]> = {}
for (let round = 0; round < 20; round++) {
  for (const [name, form] of Object.entries(forms)) {
    const start = process.hrtime.bigint()
    for (let run = 0; run < 200; run++) form()
    ;(times[name] ??= []).push(Number(process.hrtime.bigint() - start) / 200 / 1000)
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!
for (const [name, values] of Object.entries(times)) console.log(`${name}: ${median(values).toFixed(0)} µs`)
