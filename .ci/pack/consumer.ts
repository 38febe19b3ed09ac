// Strict TypeScript consumer of the packed package: the `expandable` route
// option, the `expand` decorator and `defineResource`, type-checked against
// the shipped declarations only.
import { Type } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import expandPlugin, { defineResource, isExpanded, UnknownFieldError, type ExpandableRouteOptions } from 'fastify-expand'
import { Kysely, SqliteDialect } from 'kysely'

interface Database {
  companies: { id: number; name: string }
  people: { id: number; name: string; employer_id: number | null }
}

const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })

const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
})
const Person = defineResource({
  name: 'Person',
  table: 'people',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), employer: Type.Union([Type.Integer(), Type.Null()]) }),
  fields: ['id', 'name', 'employer'],
  columns: { employer: 'employer_id' },
  expandable: { employer: Company },
})

const app = Fastify()
await app.register(expandPlugin, { db, resources: [Company, Person] })

const staff: ExpandableRouteOptions = { resource: Person, list: true }
app.get('/people', { expandable: staff }, async (request) => {
  const rows = await db.selectFrom('people').select(['id', 'name', 'employer_id']).execute()
  const loaded = await app.expand.load(request, rows)
  const first: { id: number; name: string; employer_id: number | null } | undefined = loaded[0]
  const expanded: boolean = isExpanded(request, 'employer')
  return expanded && first !== undefined ? loaded : []
})
app.get('/people/:id', { expandable: { resource: 'Person' } }, async (request) => {
  const rows = await app.expand.select(request).limit(1).execute()
  return (await app.expand.load(request, rows))[0]
})
app.expand.routes('/companies', Company)

const code: string = new UnknownFieldError('x').code
void code

// @ts-expect-error: a field name that the schema does not declare
defineResource({ name: 'Bad', schema: Type.Object({ id: Type.Integer() }), fields: ['nope'] })
// @ts-expect-error: `expandable` takes a resource, not a number
app.get('/wrong', { expandable: { resource: 42 } }, async () => [])
