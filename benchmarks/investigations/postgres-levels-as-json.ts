// What the PostgreSQL page's rows cost to read, by the form they come in: the four statements one wave sends
// (captured from the plugin's route, each as sent alone), the one statement the route sends them as (the wave as one),
// one statement returning each level's rows as one JSON text of arrays, written by hand,
// the same with every value written as its text (converted in JavaScript as pg converts a column's text), and the
// one-statement limit (PostgreSQL writing the whole body). Each through pg, named, one request after another, the
// forms alternating in rounds; per request: wall time, Node's CPU (process.cpuUsage) and PostgreSQL's (/proc of its
// processes, Linux). Rows only: none of the forms is shaped or serialized here.
// Run: DATABASE_URL=postgres://... npx tsx benchmarks/investigations/postgres-levels-as-json.ts
// Figures quoted in benchmarks/profile-notes.md, "The page's levels as JSON texts" and "The wave as one statement".
import { tracingChannel } from 'node:diagnostics_channel'
import { Kysely, PostgresDialect } from 'kysely'
import type { Pool } from 'pg'
import type { LoadMessage } from '../../plugin/trace/channels.js'
import { buildApp } from '../../test/helpers/app.js'
import { postgresWrittenBody } from '../baselines/postgres-body.js'
import { createPetsDatabase, petResources } from '../domain/pets-db.js'
import { copyPetsToPostgres, postgresUrl } from '../domain/pets-pg.js'
import { postgresCpuMs } from '../domain/postgres-cpu.js'

if (postgresUrl === undefined) throw new Error('set DATABASE_URL')
const pets = await copyPetsToPostgres(createPetsDatabase(), postgresUrl)
const values = [100, 0]

// The wave's statements, as the plugin's route sends them for the page.
const wave: string[] = []
const channel = tracingChannel<unknown, LoadMessage>('fastify-expand:load')
const ignored = (): void => {}
const recorded = {
  start: (message: LoadMessage) => { wave.push(message.sql) }, end: ignored, asyncStart: ignored, asyncEnd: ignored, error: ignored,
}
channel.subscribe(recorded)
const app = await buildApp({ db: pets.namedDb, resources: petResources }, (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: 100 }))
await app.inject({ url: '/pets?limit=100&offset=0&expand=owner.employer,toys' })
channel.unsubscribe(recorded)
await app.close()
if (wave.length !== 4 || wave.some((text) => text.match(/\$\d+/g)!.some((placeholder) => !['$1', '$2'].includes(placeholder)))) {
  throw new Error(`expected four statements binding the limit and offset: ${wave.join('\n')}`)
}

// The statement the plugin's route sends for the page (plugin/sql/combined-statements.ts: the wave's statements as
// one), its columns' types known: as sent the second time. Captured by a Kysely instance over the same pool.
let combined: { sql: string; parameters: readonly unknown[] } | undefined
const logged = new Kysely<any>({
  dialect: new PostgresDialect({ pool: pets.pool }),
  log: (event) => { if (event.level === 'query') combined = { sql: event.query.sql, parameters: event.query.parameters } },
})
const combining = await buildApp({ db: logged, resources: petResources }, (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: 100 }))
for (let time = 0; time < 2; time++) await combining.inject({ url: '/pets?limit=100&offset=0&expand=owner.employer,toys' })
await combining.close()
if (combined === undefined || !combined.sql.includes('"__expand_part_3"') || combined.parameters.length !== 8) {
  throw new Error(`expected one statement of four parts: ${combined?.sql}`)
}
const combinedStatement = combined

// The same rows, a level a JSON text (arrays in the wave's column order), in one statement.
const levels = (value: (column: string) => string) => {
  const array = (columns: string[]) => `json_build_array(${columns.map(value).join(', ')})`
  return `with page as (select id, cast(name as text) as name, cast(species as text) as species, owner_id, sold_from_id
    from pets order by id limit $1 offset $2),
  owners as (select o.id, cast(o.name as text) as name, cast(o.hobbies as text) as hobbies, o.employer_id from people as o
    where o.id = any(array(select owner_id from page)))
  select
    cast((select json_agg(${array(['p.id', 'p.name', 'p.species', 'p.owner_id', 'p.sold_from_id'])} order by p.id) from page as p) as text),
    (select count(*) from pets),
    cast((select json_agg(${array(['o.id', 'o.name', 'o.hobbies', 'o.employer_id'])}) from owners as o) as text),
    cast((select json_agg(${array(['c.id', 'cast(c.name as text)', 'c.public'])}) from companies as c
      where c.id = any(array(select employer_id from owners))) as text),
    cast((select json_agg(${array(['t.id', 'cast(t.name as text)', 'pt.pet_id'])} order by pt.pet_id, pt.toy_id)
      from toys as t join pet_toys as pt on pt.toy_id = t.id where pt.pet_id = any(array(select id from page))) as text)`
}
const asJson = levels((column) => column)
const asText = levels((column) => `cast(${column} as text)`)
type Parse = (text: string | null) => unknown
const integer: Parse = (text) => (text === null ? null : parseInt(text, 10))
const text: Parse = (value) => value
const boolean: Parse = (value) => (value === null ? null : value === 'true')
const columnParsers: Parse[][] = [
  [integer, text, text, integer, integer], [integer, text, text, integer], [integer, text, boolean], [integer, text, integer],
]

const { pool } = pets
const query = (pool: Pool, name: string, text: string, rowMode?: 'array') =>
  pool.query({ name, text, values, ...(rowMode === undefined ? {} : { rowMode }) })
const forms: Record<string, () => Promise<number>> = {
  'four statements (one wave)': async () => {
    const results = await Promise.all(wave.map((text, index) => query(pool, `levels_wave_${index}`, text)))
    return results.reduce((sum, result) => sum + result.rows.length, 0)
  },
  'one statement, the plugin\'s (the wave as one)': async () => {
    const [row] = (await pool.query({ name: 'levels_plugin', text: combinedStatement.sql, values: [...combinedStatement.parameters] })).rows
    return [0, 1, 2, 3].reduce((sum, part) => sum + (JSON.parse(row[`__expand_part_${part}`]) as unknown[]).length, 0)
  },
  'one statement, levels as JSON': async () => {
    const [row] = (await query(pool, 'levels_json', asJson, 'array')).rows as string[][]
    return [row![0], row![2], row![3], row![4]].reduce((sum, level) => sum + (JSON.parse(level!) as unknown[]).length, 0)
  },
  'one statement, levels as JSON of texts': async () => {
    const [row] = (await query(pool, 'levels_text', asText, 'array')).rows as string[][]
    let count = 0
    for (const [index, level] of [row![0], row![2], row![3], row![4]].entries()) {
      const parsers = columnParsers[index]!
      for (const read of JSON.parse(level!) as Array<Array<string | null>>) {
        for (let column = 0; column < read.length; column++) (read as unknown[])[column] = parsers[column]!(read[column]!)
        count++
      }
    }
    return count
  },
  'the limit (the body written by PostgreSQL)': (() => {
    const body = postgresWrittenBody(pool)
    return async () => (await body(100, 0)).length
  })(),
}

for (const [name, run] of Object.entries(forms)) console.log(`${name}: ${await run()} rows (bytes for the limit)`)
for (const run of Object.values(forms)) for (let index = 0; index < 500; index++) await run()
const perRequest = new Map<string, Array<{ wall: number; node: number; postgres: number }>>()
const perRound = 300
for (let round = 0; round < 10; round++) {
  for (const [name, run] of Object.entries(forms)) {
    const postgres = postgresCpuMs()
    const cpu = process.cpuUsage()
    const start = process.hrtime.bigint()
    for (let index = 0; index < perRound; index++) await run()
    const wall = Number(process.hrtime.bigint() - start) / 1e3 / perRound
    const used = process.cpuUsage(cpu)
    const list = perRequest.get(name) ?? []
    list.push({ wall, node: (used.user + used.system) / perRound, postgres: (postgresCpuMs() - postgres) * 1000 / perRound })
    perRequest.set(name, list)
  }
}
const median = (numbers: number[]) => numbers.sort((a, b) => a - b)[numbers.length >> 1]!
console.log(`medians of 10 rounds of ${perRound} requests, per request (µs):`)
for (const [name, rounds] of perRequest) {
  const [wall, node, postgres] = (['wall', 'node', 'postgres'] as const).map((key) => median(rounds.map((round) => round[key])))
  console.log(`${name.padEnd(42)} wall ${wall!.toFixed(0).padStart(5)}  node ${node!.toFixed(0).padStart(5)}  postgres ${postgres!.toFixed(0).padStart(5)}  cpu ${(node! + postgres!).toFixed(0).padStart(5)}`)
}
await pets.close()
