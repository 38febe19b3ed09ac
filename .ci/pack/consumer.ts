// Strict TypeScript consumer of the packed package: the `expandable` route
// option, the `expand` decorator, `defineResource` and `Expanded`,
// type-checked against the shipped declarations only.
import { Type } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import expandPlugin, {
  createSerializer,
  defineResource,
  isExpanded,
  UnknownFieldError,
  type ExpandableRouteOptions,
  type Expanded,
  type Expansion,
} from 'fastify-expand'
import { expandInstrumentation, type ExpandInstrumentation, type LoadMessage } from 'fastify-expand/otel'
import { Kysely, SqliteDialect } from 'kysely'
import { trace } from '@opentelemetry/api'

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
  const rows = await db.selectFrom('people').select(['id', 'name', 'employer_id as employer']).execute()
  const expanded: boolean = isExpanded(request, 'employer')
  if (!expanded) return app.expand.load(request, rows)
  const loaded = await app.expand.load<Expanded<typeof Person, 'employer'>>(request, rows)
  const employer: { id: number; name: string } | null | undefined = loaded[0]?.employer
  void employer
  return loaded
})
app.get('/people/:id', { expandable: { resource: 'Person' } }, async (request) => {
  const rows = await app.expand.select(request).limit(1).execute()
  return (await app.expand.load(request, rows))[0]
})
app.expand.routes('/companies', Company)

const code: string = new UnknownFieldError('x').code
void code

const expansion: Expansion | null = null as Expansion | null
const paths: ReadonlySet<string> | undefined = expansion?.expandedPaths
void paths

const person: Expanded<typeof Person, 'employer'> = createSerializer(Person, { expand: 'employer' }).shape({})
const employerName: string | undefined = person.employer?.name
void employerName

// @ts-expect-error: a field name that the schema does not declare
defineResource({ name: 'Bad', schema: Type.Object({ id: Type.Integer() }), fields: ['nope'] })
// @ts-expect-error: `expandable` takes a resource, not a number
app.get('/wrong', { expandable: { resource: 42 } }, async () => [])
// @ts-expect-error: Company has no field 'motto'
export type Wrong = Expanded<typeof Company>['motto']

// The `./otel` entry's declarations, with @opentelemetry/api's types.
const instrumentation: ExpandInstrumentation = expandInstrumentation({ tracerProvider: trace.getTracerProvider(), enabled: false })
instrumentation.enable()
const statementPath: LoadMessage['path'] = ''
void statementPath
// @ts-expect-error: no such option
expandInstrumentation({ tracer: null })
