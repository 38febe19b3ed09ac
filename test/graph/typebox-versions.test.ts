import { Type as Type034 } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import { Kysely, SqliteDialect } from 'kysely'
import t, { type Test } from 'tap'
import { Type as Type1 } from 'typebox'
import expandPlugin, { createSerializer, defineResource, type ObjectSchema } from '../../plugin/index.js'

/*
 * Resources declared with either TypeBox, the `@sinclair/typebox` 0.34 line
 * or the `typebox` 1.x one: both build JSON Schema, and every response must
 * be the same, through generated routes, a hand-written route and a
 * standalone serializer. The schemas must not be changed by the plugin.
 */

interface Tables {
  companies: { id: number; name: string }
  people: { id: number; name: string; nickname: string | null; employer_id: number | null }
  pets: { id: number; name: string; owner_id: number }
}

interface Schemas { company: ObjectSchema; person: ObjectSchema; pet: ObjectSchema }

const builders: Record<string, () => Schemas> = {
  '@sinclair/typebox 0.34': () => ({
    company: Type034.Object({ id: Type034.Integer(), name: Type034.String() }),
    person: Type034.Object({
      id: Type034.Integer(),
      name: Type034.String(),
      nickname: Type034.Union([Type034.String(), Type034.Null()]),
      employer: Type034.Union([Type034.Integer(), Type034.Null()]),
      pets: Type034.Array(Type034.Integer()),
    }),
    pet: Type034.Object({ id: Type034.Integer(), name: Type034.String(), owner: Type034.Integer() }),
  }),
  'typebox 1.x': () => ({
    company: Type1.Object({ id: Type1.Integer(), name: Type1.String() }),
    person: Type1.Object({
      id: Type1.Integer(),
      name: Type1.String(),
      nickname: Type1.Union([Type1.String(), Type1.Null()]),
      employer: Type1.Union([Type1.Integer(), Type1.Null()]),
      pets: Type1.Array(Type1.Integer()),
    }),
    pet: Type1.Object({ id: Type1.Integer(), name: Type1.String(), owner: Type1.Integer() }),
  }),
}

/** A row of the hand-written route, typed by an interface (no index signature). */
interface PetRow { id: number; name: string; owner: number }
/** The same, as class instances. */
class PetRecord {
  constructor (readonly id: number, readonly name: string, readonly owner: number) {}
}

async function database (): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })
  await db.schema.createTable('companies').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute()
  await db.schema.createTable('people').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text')
    .addColumn('nickname', 'text').addColumn('employer_id', 'integer').execute()
  await db.schema.createTable('pets').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').addColumn('owner_id', 'integer').execute()
  await db.insertInto('companies').values([{ id: 1, name: 'Acme' }]).execute()
  await db.insertInto('people').values([{ id: 1, name: 'Jon', nickname: 'J', employer_id: 1 }, { id: 2, name: 'Liz', nickname: null, employer_id: null }]).execute()
  await db.insertInto('pets').values([{ id: 1, name: 'Garfield', owner_id: 1 }, { id: 2, name: 'Odie', owner_id: 1 }, { id: 3, name: 'Nermal', owner_id: 2 }]).execute()
  return db
}

const requests = [
  '/pets',
  '/pets?expand=owner.employer',
  '/pets/3?expand=owner',
  '/people?expand=pets,employer&omit=nickname',
  '/people/1?expand=pets&fields=id,pets.name',
  '/interface-rows?expand=owner.employer',
  '/class-rows?expand=owner',
]

async function answers (t: Test, schemas: Schemas): Promise<{ bodies: unknown[]; serialized: string }> {
  const db = await database()
  const Company = defineResource({ name: 'Company', table: 'companies', schema: schemas.company, fields: ['id', 'name'] })
  const Person = defineResource({
    name: 'Person',
    table: 'people',
    schema: schemas.person,
    fields: ['id', 'name', 'nickname', 'employer'],
    columns: { employer: 'employer_id' },
    expandable: { employer: Company, pets: ['Pet', { many: true, foreignKey: 'owner_id', orderBy: 'id' }] },
  })
  const Pet = defineResource({
    name: 'Pet',
    table: 'pets',
    schema: schemas.pet,
    fields: ['id', 'name', 'owner'],
    columns: { owner: 'owner_id' },
    expandable: { owner: Person },
  })
  const app = Fastify()
  t.teardown(() => app.close())
  app.addHook('onClose', () => db.destroy())
  await app.register(expandPlugin, { db, resources: [Company, Person, Pet] })
  app.expand.routes('/pets', Pet)
  app.expand.routes('/people', Person)
  app.get('/interface-rows', { expandable: { resource: Pet, list: true } }, async (request) => {
    const rows: PetRow[] = await db.selectFrom('pets').select(['id', 'name', 'owner_id as owner']).orderBy('id').execute()
    return app.expand.load(request, rows)
  })
  app.get('/class-rows', { expandable: { resource: Pet, list: true } }, async (request) => {
    const rows = [new PetRecord(1, 'Garfield', 1), new PetRecord(3, 'Nermal', 2)]
    return app.expand.load(request, rows)
  })
  const bodies: unknown[] = []
  for (const url of requests) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 200, `${url}: 200`)
    bodies.push(response.json())
  }
  const serializer = createSerializer(Person, { expand: 'employer', resources: [Company, Person, Pet] })
  const serialized = serializer.stringify({ id: 2, name: 'Liz', nickname: null, employer: { id: 1, name: 'Acme', founded: 1900 }, secret: true })
  return { bodies, serialized }
}

t.test('both TypeBox lines give the same responses, and their schemas are left as they were', async (t) => {
  const results = []
  for (const [name, build] of Object.entries(builders)) {
    const schemas = build()
    const before = JSON.stringify(schemas)
    results.push(await answers(t, schemas))
    t.equal(JSON.stringify(schemas), before, `${name}: the schemas are unchanged`)
  }
  const [sinclair, typebox1] = results
  t.same(typebox1!.bodies, sinclair!.bodies, 'typebox 1.x answers as @sinclair/typebox 0.34 does')
  t.equal(typebox1!.serialized, sinclair!.serialized)
  t.equal(sinclair!.serialized, '{"id":2,"name":"Liz","nickname":null,"employer":{"id":1,"name":"Acme"}}')
  const page = sinclair!.bodies[1] as { data: unknown[] }
  t.same(page.data, [
    { id: 1, name: 'Garfield', owner: { id: 1, name: 'Jon', nickname: 'J', employer: { id: 1, name: 'Acme' } } },
    { id: 2, name: 'Odie', owner: { id: 1, name: 'Jon', nickname: 'J', employer: { id: 1, name: 'Acme' } } },
    { id: 3, name: 'Nermal', owner: { id: 2, name: 'Liz', nickname: null, employer: null } },
  ])
  t.same(sinclair!.bodies[4], { id: 1, pets: [{ name: 'Garfield' }, { name: 'Odie' }] })
  t.same(sinclair!.bodies[5], page.data, 'rows typed by an interface load as the generated route\'s rows do')
  t.same(sinclair!.bodies[6], [
    { id: 1, name: 'Garfield', owner: { id: 1, name: 'Jon', nickname: 'J', employer: 1 } },
    { id: 3, name: 'Nermal', owner: { id: 2, name: 'Liz', nickname: null, employer: null } },
  ], 'class instances load too')
})
