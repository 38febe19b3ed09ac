import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet, resources } from '../fixtures/tables.js'

t.test('explain shows the plan, the statements of each path and the generated serializer', async (t) => {
  const database = await dialects()[0].open()
  t.teardown(() => database.close())
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  let explanation: ReturnType<typeof app.expand.explain> | undefined
  app.get('/explain/pets', { expandable: { resource: Pet, list: true } }, async (request) => {
    explanation = app.expand.explain(request)
    return []
  })
  await app.inject('/explain/pets?expand=owner.employer,toys&fields=id,owner,toys,sold_from')
  t.ok(explanation)
  const { key, expanded, included, serializer, statements } = explanation!
  t.equal(key, 'list:|Pet{id,owner(people.Person{id,name,hobbies,employer(Company{id,name,public})}),sold_from,toys(*Toy{id,name})}')
  t.same(expanded, ['owner', 'owner.employer', 'toys'])
  t.same(included, ['id', 'owner', 'owner.id', 'owner.name', 'owner.hobbies', 'owner.employer', 'owner.employer.id', 'owner.employer.name', 'owner.employer.public', 'sold_from', 'toys', 'toys.id', 'toys.name'])
  t.ok(serializer.includes('"{\\"id\\":"') && serializer.includes('\\"toys\\":'), 'the generated code writes the keys it was compiled for')
  t.same(statements, [
    { path: '', sql: 'select "pets"."id" as "id", "pets"."owner_id" as "owner", "pets"."sold_from_id" as "sold_from" from "pets"' },
    { path: 'owner', sql: 'select "people"."id" as "id", cast("people"."name" as text) as "name", cast("people"."hobbies" as text) as "hobbies", "people"."employer_id" as "employer" from "people" where "people"."id" in (+?)' },
    { path: 'owner.employer', sql: 'select "companies"."id" as "id", cast("companies"."name" as text) as "name", "companies"."public" as "public" from "companies" where "companies"."id" in (+?)' },
    { path: 'toys', sql: 'select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" from "toys" inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" where "pet_toys"."pet_id" in (+?) order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384' },
  ])
})
