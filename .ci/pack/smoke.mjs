// Smoke test of the packed package, run in a scratch project that installed
// only the tarball and the peers a user installs: two resources, the generated
// routes, and an expanded request on SQLite, checked byte for byte.
import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import expandPlugin, { defineResource, createSerializer, requestErrorCodes } from 'fastify-expand'
import { Kysely, SqliteDialect } from 'kysely'

const db = new Kysely({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })
await db.schema.createTable('companies')
  .addColumn('id', 'integer', (column) => column.primaryKey())
  .addColumn('name', 'text', (column) => column.notNull())
  .execute()
await db.schema.createTable('people')
  .addColumn('id', 'integer', (column) => column.primaryKey())
  .addColumn('name', 'text', (column) => column.notNull())
  .addColumn('employer_id', 'integer', (column) => column.references('companies.id'))
  .execute()
await db.insertInto('companies').values([{ id: 1, name: 'Acme' }]).execute()
await db.insertInto('people').values([{ id: 1, name: 'Jon', employer_id: 1 }, { id: 2, name: 'Liz', employer_id: null }]).execute()

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
  expandable: { employer: 'Company' },
})

const app = Fastify()
await app.register(expandPlugin, { db, resources: [Company, Person] })
app.expand.routes('/people', Person)
await app.ready()

const expanded = await app.inject({ method: 'GET', url: '/people?expand=employer' })
assert.equal(expanded.statusCode, 200, expanded.body)
assert.equal(expanded.headers['content-type'], 'application/json; charset=utf-8')
assert.equal(expanded.body,
  '{"data":[{"id":1,"name":"Jon","employer":{"id":1,"name":"Acme"}},{"id":2,"name":"Liz","employer":null}],' +
  '"limit":20,"offset":0,"total":2}')

const one = await app.inject({ method: 'GET', url: '/people/1?fields=name,employer' })
assert.equal(one.statusCode, 200, one.body)
assert.equal(one.body, '{"name":"Jon","employer":1}')

const unknown = await app.inject({ method: 'GET', url: '/people/1?expand=boss' })
assert.equal(unknown.statusCode, 400)
assert.ok(requestErrorCodes.includes(JSON.parse(unknown.body).code), unknown.body)

const serialize = createSerializer(Person, { resources: [Company], expand: 'employer' })
assert.equal(serialize.stringify({ id: 3, name: 'Ann', employer: { id: 1, name: 'Acme' } }),
  '{"id":3,"name":"Ann","employer":{"id":1,"name":"Acme"}}')

await app.close()
await db.destroy()
console.log('pack smoke test: ok')
