// What a bare `?` costs a SQLite statement that runs again with other values
// (plugin/sql/dialects/sqlite-values.ts). better-sqlite3 builds SQLite with
// SQLITE_ENABLE_STAT4: the planner reads a `LIMIT ?`, and on a table ANALYZE
// left samples for, a `?` compared with an indexed column, so binding a value
// again expires the plan and the next run prepares the statement again. Each
// statement is timed three ways, through better-sqlite3 alone, alternating in
// rounds: `?` bound on every run (what a driver does), `?` bound once
// (`statement.bind()`, so never planned again: the floor), and `+?` bound on
// every run (what the plugin sends). The same rows are checked first.
//
//   node --import tsx benchmarks/investigations/sqlite-planned-values.ts
import type Database from 'better-sqlite3'
import { createPeopleAndPets } from '../domain/people-pets.js'
import { createPetsDatabase } from '../domain/pets-db.js'

interface Case {
  readonly name: string
  readonly database: Database.Database
  /** The statement with `placeholder` for each value. */
  readonly text: (placeholder: string) => string
  readonly values: readonly unknown[]
}

const pets = createPetsDatabase()
const { database: people } = await createPeopleAndPets(20_000, {})
const keys = Array.from({ length: 128 }, (_, index) => Math.min(index + 1, 100))
const list = (placeholder: string) => keys.map(() => placeholder).join(', ')

const cases: Case[] = [
  {
    name: 'the end-to-end page\'s statement (limit, offset; no statistics)',
    database: pets,
    text: (p) => 'select "pets"."id" as "id", cast("pets"."name" as text) as "name", cast("pets"."species" as text) as "species", ' +
      `"pets"."owner_id" as "owner", "pets"."sold_from_id" as "sold_from" from "pets" order by "pets"."id" limit ${p} offset ${p}`,
    values: [100, 0],
  },
  {
    name: 'the end-to-end page\'s toys (128 keys; no statistics)',
    database: pets,
    text: (p) => 'select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" ' +
      `from "toys" inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" where "pet_toys"."pet_id" in (${list(p)}) ` +
      'order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384',
    values: keys,
  },
  {
    name: 'the derived page\'s grouped statement (128 keys; analyzed)',
    database: people,
    text: (p) => 'select "pets"."owner_id" as "__expand_parent", cast(count(*) as integer) as "pet_count", ' +
      `max("pets"."name") as "last_pet" from "pets" where "pets"."deleted" = ${p} and "pets"."owner_id" in (${list(p)}) group by "pets"."owner_id"`,
    values: [0, ...keys],
  },
  {
    name: 'one indexed value (analyzed)',
    database: people,
    text: (p) => `select "pets"."id" as "id", "pets"."name" as "name" from "pets" where "pets"."owner_id" = ${p} and "pets"."deleted" = ${p}`,
    values: [5, 0],
  },
]

const rounds = 21
const runs = 300
for (const { name, database, text, values } of cases) {
  const bare = database.prepare(text('?')).raw(true)
  const once = database.prepare(text('?')).raw(true).bind(...values)
  const plus = database.prepare(text('+?')).raw(true)
  const expected = JSON.stringify(bare.all(...values))
  if (JSON.stringify(plus.all(...values)) !== expected || JSON.stringify(once.all()) !== expected) throw new Error(`${name}: rows differ`)
  const forms: Record<string, () => unknown> = {
    '? bound each run': () => bare.all(...values),
    '? bound once': () => once.all(),
    '+? bound each run': () => plus.all(...values),
  }
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(forms).map((form) => [form, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [form, run] of Object.entries(forms)) {
      const start = performance.now()
      for (let index = 0; index < runs; index++) run()
      samples[form]!.push((performance.now() - start) / runs * 1000)
    }
  }
  const median = (values: number[]) => values.slice().sort((a, b) => a - b)[values.length >> 1]!
  console.log(`${name}: ${Object.entries(samples).map(([form, times]) => `${form} ${median(times).toFixed(1)} µs`).join(', ')}`)
}
