import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type Row } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Person, Pet, Toy, openSeeded, resources } from '../fixtures/tables.js'

// Rows app.expand.load fills are the handler's data: it may log them, cache
// them or return them from another route, so the loader's bookkeeping (the
// parent key a child row was fetched under, `__expand_parent`) must not stay
// on them. Children carry their fields and nothing else, at every depth.

interface Captured { passed: Row[]; returned: Row[] }

// The fixture's Person.pets keeps only `id, name`, so its pets' relations do not exist below it: this
// view of people keeps them, for paths through two to-many levels (pets.toys) and back (pets.owner.pets).
const PetOwner = defineResource({
  name: 'PetOwner',
  table: 'people',
  schema: Person.schema,
  fields: Person.fields,
  expandable: {
    employer: ['Company', { column: 'employer_id' }],
    pets: [Pet, { many: true, foreignKey: 'owner_id', omit: ['species', 'sold_from'] }],
  },
})

async function build (database: TestDatabase, captured: Captured[]): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [...resources, PetOwner] })
  app.get('/handler-people', { expandable: { resource: PetOwner, list: true } }, async (request) => {
    const passed: Row[] = await database.db.selectFrom('people').select(['id', 'name', 'hobbies', 'employer_id']).where('id', 'in', [1, 2]).orderBy('id').execute()
    const returned = await app.expand.load(request, passed)
    captured.push({ passed, returned })
    return returned
  })
  await app.ready()
  return app
}

/** The sorted keys of every object at `path` (dot-separated relation fields) below `rows`. */
function keysAt (rows: Row[], path: string): string[][] {
  let level: Row[] = rows
  for (const field of path.split('.')) {
    level = level.flatMap((row) => {
      const value = row[field]
      if (Array.isArray(value)) return value as Row[]
      return value === null || value === undefined ? [] : [value as Row]
    })
  }
  return level.map((row) => Object.keys(row).sort())
}

function allSame (keys: string[][], expected: string[]): boolean {
  return keys.length > 0 && keys.every((each) => JSON.stringify(each) === JSON.stringify(expected))
}

for (const dialect of dialects()) {
  t.test(`rows filled by app.expand.load carry only their fields on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const captured: Captured[] = []
    const app = await build(database, captured)
    t.teardown(() => app.close())

    t.test('two to-many levels (pets through a foreign key, their toys through a join table)', async (t) => {
      captured.length = 0
      const response = await app.inject('/handler-people?expand=pets.toys&fields=id,pets.id,pets.name,pets.toys')
      t.same({ status: response.statusCode, body: response.json() }, {
        status: 200,
        body: [
          { id: 1, pets: [{ id: 1, name: 'Garfield', toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }] }, { id: 2, name: 'Odie', toys: [{ id: 3, name: 'bone' }] }] },
          { id: 2, pets: [{ id: 3, name: 'Nemo', toys: [] }] },
        ],
      })
      const [{ passed, returned }] = captured
      t.equal(returned, passed, 'the rows passed are the rows returned')
      const pets = keysAt(returned, 'pets')
      const toys = keysAt(returned, 'pets.toys')
      t.ok(allSame(pets, ['id', 'name', 'toys']), `pets: ${JSON.stringify(pets)}`)
      t.ok(allSame(toys, ['id', 'name']), `pets.toys: ${JSON.stringify(toys)}`)
      t.notOk(JSON.stringify(returned).includes('__expand_parent'), 'no __expand_parent anywhere')
    })

    t.test('to-many, to-one, to-many', async (t) => {
      captured.length = 0
      const response = await app.inject('/handler-people?expand=pets.owner.pets&fields=id,pets.id,pets.owner')
      t.equal(response.statusCode, 200)
      const [{ returned }] = captured
      const pets = keysAt(returned, 'pets')
      const owners = keysAt(returned, 'pets.owner')
      const ownersPets = keysAt(returned, 'pets.owner.pets')
      t.ok(allSame(pets, ['id', 'owner']), `pets: ${JSON.stringify(pets)}`)
      t.ok(allSame(owners, ['employer', 'hobbies', 'id', 'name', 'pets']), `pets.owner: ${JSON.stringify(owners)}`)
      t.ok(allSame(ownersPets, ['id', 'name']), `pets.owner.pets: ${JSON.stringify(ownersPets)}`)
      t.notOk(JSON.stringify(returned).includes('__expand_parent'), 'no __expand_parent anywhere')
    })

    t.test('keys the loader needs beyond the requested fields are fields of the resource, nothing else', async (t) => {
      captured.length = 0
      const response = await app.inject('/handler-people?expand=pets.toys&fields=id,pets.name,pets.toys,pets.toys.name')
      t.same({ status: response.statusCode, body: response.json() }, {
        status: 200,
        body: [
          { id: 1, pets: [{ name: 'Garfield', toys: [{ name: 'ball' }, { name: 'string' }] }, { name: 'Odie', toys: [{ name: 'bone' }] }] },
          { id: 2, pets: [{ name: 'Nemo', toys: [] }] },
        ],
      })
      const [{ returned }] = captured
      // The primary key may stay (it is how the next level was found); a key column or a tag may not.
      const pets = keysAt(returned, 'pets')
      const toys = keysAt(returned, 'pets.toys')
      t.ok(pets.length > 0 && pets.every((keys) => keys.includes('name') && keys.includes('toys') && keys.every((key) => Pet.schema.properties[key as keyof typeof Pet.schema.properties] !== undefined)), `pets: ${JSON.stringify(pets)}`)
      t.ok(toys.length > 0 && toys.every((keys) => keys.includes('name') && keys.every((key) => Toy.schema.properties[key as keyof typeof Toy.schema.properties] !== undefined)), `pets.toys: ${JSON.stringify(toys)}`)
      t.notOk(JSON.stringify(returned).includes('__expand_parent'), 'no __expand_parent anywhere')
    })
  })
}
