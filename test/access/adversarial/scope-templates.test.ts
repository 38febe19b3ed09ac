import { Type } from '@sinclair/typebox'
import fc from 'fast-check'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import t from 'tap'
import expandPlugin, { defineResource } from '../../../plugin/index.js'
import { dialects } from '../../fixtures/dialects.js'
import { openRelationTables, personSchema, petSchema } from '../../fixtures/relation-lists.js'
import { propertyParameters } from '../../hardening/support.js'

// A list's statement is compiled once and run again with other values (plugin/sql/statement-templates.ts), so
// whatever the request's scopes write into it must tell its templates apart, with values or without. Here an
// admin's scopes answer undefined and everyone else's write a condition without a parameter (a literal): only the
// condition's shape tells the two texts apart. Each request is asked by the admin first, then by a user, on one
// app: the user's answer is the one the user gets alone. The scopes reach a list's statement through the table
// a sort key joins (`employer.name`) and through the aggregates a filter or a sort key reads (`pet_count`).

const isAdmin = (request: FastifyRequest) => request.headers['x-admin'] === '1'
/** A scope: every row for an admin, for anyone else the rows whose `column` is 0, written as a literal. */
const zeroForUsers = (column: 'companies.hidden' | 'pets.deleted') =>
  (eb: ExpressionBuilder<any, any>, request: FastifyRequest) => (isAdmin(request) ? undefined : eb(column, '=', sql.lit(0)))

const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
  scope: zeroForUsers('companies.hidden'),
})
const Pet = defineResource({
  name: 'Pet',
  table: 'pets',
  schema: petSchema,
  fields: ['id', 'name'],
  columns: { owner: 'owner_id' },
  scope: zeroForUsers('pets.deleted'),
})
const Person = defineResource({
  name: 'Person',
  table: 'people',
  schema: personSchema,
  fields: ['id', 'name'],
  columns: { employer: 'employer_id' },
  expandable: { employer: Company, pets: [Pet, { many: true, foreignKey: 'owner_id' }] },
  aggregates: { pet_count: { count: 'pets' } },
})

const listOptions = { filter: { pet_count: ['gte'] }, sort: ['name', 'pet_count', 'employer.name'] } as const

async function build (database: { db: Kysely<any> }): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Company, Pet, Person] })
  app.expand.routes('/people', Person, listOptions)
  app.expand.routes('/feed', Person, { ...listOptions, pagination: 'cursor', pageSize: 3 })
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`a list's statement written under one request's scopes is never run for another's on ${dialect.name}`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const app = await build(database)
    t.teardown(() => app.close())
    const names = (body: { data: Array<{ name: string }> }) => body.data.map((row) => row.name)
    const askedTwice = async (url: string) => {
      const asAdmin = (await app.inject({ url, headers: { 'x-admin': '1' } })).json()
      const asUser = (await app.inject(url)).json()
      return { asAdmin, asUser }
    }

    t.test('a filter on an aggregate: the page and its count', async (t) => {
      // Bea's cat Garfield is deleted: the admin counts two pets of hers, a user one.
      const { asAdmin, asUser } = await askedTwice('/people?filter[pet_count][gte]=2&fields=id,name,pet_count&limit=1')
      t.same(asAdmin, { data: [{ id: 1, name: 'Ana', pet_count: 2 }], limit: 1, offset: 0, total: 2 })
      t.same(asUser, { data: [{ id: 1, name: 'Ana', pet_count: 2 }], limit: 1, offset: 0, total: 1 }, 'Bea is not counted')
      const page = await askedTwice('/people?filter[pet_count][gte]=2&fields=id,name,pet_count')
      t.same(names(page.asAdmin), ['Ana', 'Bea'])
      t.same(page.asUser.data, [{ id: 1, name: 'Ana', pet_count: 2 }], 'no Bea with one pet under gte 2')
    })

    t.test('a sort by an aggregate, on a cursor page', async (t) => {
      const { asAdmin, asUser } = await askedTwice('/feed?sort=-pet_count,-name&fields=name,pet_count')
      t.same(asAdmin.data, [{ name: 'Bea', pet_count: 2 }, { name: 'Ana', pet_count: 2 }, { name: 'Edu', pet_count: 1 }])
      t.same(asUser.data, [{ name: 'Ana', pet_count: 2 }, { name: 'Edu', pet_count: 1 }, { name: 'Caio', pet_count: 1 }], 'Bea after Edu and Caio')
    })

    t.test('a sort through a to-one relation whose scope has no parameter', async (t) => {
      // Caio's employer, Shadow, is hidden: for a user Caio has none, and no name sorts last.
      const { asAdmin, asUser } = await askedTwice('/people?sort=employer.name,name&fields=name')
      t.same(names(asAdmin), ['Bea', 'Edu', 'Caio', 'Ana', 'Dora'])
      t.same(names(asUser), ['Bea', 'Edu', 'Ana', 'Caio', 'Dora'])
    })
  })
}

// The same, at random: a sequence of list requests, each by an admin or a user, to one app, answers exactly what two
// apps over the same rows answer, each asked by one of them alone (whose statements never met another's scopes).
const requestArbitrary = fc.record({
  admin: fc.boolean(),
  route: fc.constantFrom('/people', '/feed'),
  filter: fc.option(fc.constantFrom('0', '1', '2', '3'), { nil: undefined }),
  sort: fc.subarray(['pet_count', 'employer.name', 'name'], { maxLength: 3 }).chain((keys) => fc.tuple(...keys.map((key) => fc.constantFrom(key, `-${key}`)))),
  limit: fc.constantFrom(1, 2, 5),
  offset: fc.constantFrom(0, 1, 3),
  expand: fc.boolean(),
})

for (const dialect of dialects()) {
  t.test(`random lists by an admin and a user on one app answer as on apps of their own on ${dialect.name}`, async (t) => {
    const database = await openRelationTables(t, dialect)
    const [shared, adminOnly, userOnly] = await Promise.all([build(database), build(database), build(database)])
    t.teardown(async () => { await shared.close(); await adminOnly.close(); await userOnly.close() })
    await fc.assert(fc.asyncProperty(fc.array(requestArbitrary, { minLength: 1, maxLength: 6 }), async (requests) => {
      for (const request of requests) {
        const query = [`fields=id,name${request.expand ? ',pet_count,employer' : ''}`]
        if (request.expand) query.push('expand=employer')
        if (request.filter !== undefined) query.push(`filter[pet_count][gte]=${request.filter}`)
        if (request.sort.length > 0) query.push(`sort=${request.sort.join(',')}`)
        query.push(`limit=${request.limit}`)
        if (request.route === '/people') query.push(`offset=${request.offset}`)
        const url = `${request.route}?${query.join('&')}`
        const headers = request.admin ? { 'x-admin': '1' } : {}
        const alone = request.admin ? adminOnly : userOnly
        const [answered, expected] = await Promise.all([shared.inject({ url, headers }), alone.inject({ url, headers })])
        // Cursors are sealed with a key of each app's own: compared by whether there is one.
        const comparable = (body: string) => body.replace(/"(next|prev)":"[^"]+"/g, '"$1":"<cursor>"')
        if (answered.statusCode !== expected.statusCode || comparable(answered.body) !== comparable(expected.body)) {
          const who = request.admin ? 'admin' : 'user'
          throw new Error(`${who} ${url}\n  shared ${answered.statusCode} ${answered.body}\n  alone  ${expected.statusCode} ${expected.body}`)
        }
      }
    }), propertyParameters(60))
  })
}
