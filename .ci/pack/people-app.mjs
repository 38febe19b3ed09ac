// The scratch project's app for the pack smoke tests (smoke.mjs, otel-smoke.mjs):
// companies and people on in-memory SQLite, the two resources, their
// generated routes, as a user of the packed package writes them.
import { Type } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import expandPlugin, { defineResource } from 'fastify-expand'
import { Kysely, SqliteDialect } from 'kysely'

export async function peopleApp () {
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
  return { app, db, Company, Person }
}
