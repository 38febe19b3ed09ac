import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, isExpanded, isIncluded } from '../../../plugin/index.js'
import { asWrittenOn, dialects, pageAsSent, type Dialect, type TestDatabase } from '../../fixtures/dialects.js'

// Attack: authentication runs as a route preHandler (as @fastify/auth is
// used), and the plugin planned the request before it: `fieldsFor` answered
// for an anonymous caller (every field shown, `salary` included) while `scope`
// and the filter and sort checks answered for the authenticated one. One
// request, two identities.
//
// What must hold: a request has one identity. The plan is made when it is
// first needed, after the route's preHandler hooks that run before the asking
// one: the body, isExpanded/isIncluded in a later preHandler, the filter and
// sort 403s and the cursor all follow the authenticated caller, and `fieldsFor`
// is asked once per request. A request its preHandler refuses is never planned.

interface User { id: number; admin: boolean; tenant: number }

declare module 'fastify' {
  interface FastifyRequest {
    user?: User
  }
}

const users: Record<string, User> = {
  'Bearer bob': { id: 2, admin: true, tenant: 1 },
  'Bearer ann': { id: 1, admin: false, tenant: 1 },
}

const Department = defineResource({
  name: 'Department',
  table: 'departments',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), budget: Type.Integer() }),
  fields: ['id', 'name', 'budget'],
})

/** How often `fieldsFor` was asked. */
const asked = { fieldsFor: 0 }

// The rule trusts authentication to have run: without a user it restricts nothing.
const Employee = defineResource({
  name: 'Employee',
  table: 'employees',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    salary: Type.Integer(),
    tenant: Type.Integer(),
    department: Type.Integer(),
  }),
  fields: ['id', 'name', 'salary', 'tenant', 'department'],
  columns: { tenant: 'tenant_id', department: 'department_id' },
  expandable: { department: Department },
  scope: (eb, request) => (request.user === undefined || request.user.admin ? undefined : eb('employees.tenant_id', '=', request.user.tenant)),
  fieldsFor: (request) => {
    asked.fieldsFor++
    return request.user !== undefined && !request.user.admin ? ['id', 'name', 'tenant'] : undefined
  },
})

const departments = [{ id: 1, name: 'Sales', budget: 1000 }, { id: 2, name: 'Ops', budget: 500 }]
const employees = [
  { id: 1, name: 'Ann', salary: 5000, tenant_id: 1, department_id: 1 },
  { id: 2, name: 'Bob', salary: 7000, tenant_id: 1, department_id: 2 },
  { id: 3, name: 'Cid', salary: 6000, tenant_id: 2, department_id: 1 },
  { id: 4, name: 'Dee', salary: 4000, tenant_id: 1, department_id: 1 },
]

async function openEmployees (t: Test, dialect: Dialect): Promise<TestDatabase> {
  const database = await dialect.open()
  t.teardown(() => database.close())
  const { db } = database
  await db.schema.createTable('departments').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull()).addColumn('budget', 'integer', (c) => c.notNull()).execute()
  await db.schema.createTable('employees').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull()).addColumn('salary', 'integer', (c) => c.notNull())
    .addColumn('tenant_id', 'integer', (c) => c.notNull()).addColumn('department_id', 'integer', (c) => c.notNull()).execute()
  await db.insertInto('departments').values(departments).execute()
  await db.insertInto('employees').values(employees).execute()
  return database
}

/** The route's authentication, as `@fastify/auth` runs it: a preHandler that sets request.user or answers 401. */
async function authenticate (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const user = users[request.headers.authorization ?? '']
  if (user === undefined) {
    await reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'sign in' })
    return
  }
  request.user = user
}

async function build (t: Test, database: TestDatabase, seen: string[]): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Department, Employee] })
  // A hook after authentication asking what the response shows.
  const probe = async (request: FastifyRequest) => {
    seen.push(`user ${request.user!.id}: department ${isExpanded(request, 'department')}, salary ${isIncluded(request, 'salary')}`)
  }
  app.expand.routes('/employees', Employee, {
    filter: { salary: ['gte'], name: ['eq'] },
    sort: ['salary', 'name'],
    defaultExpand: ['department'],
    route: { preHandler: [authenticate, probe] },
  })
  app.expand.routes('/feed', Employee, {
    pagination: 'cursor',
    pageSize: 2,
    sort: ['salary', 'name'],
    route: { preHandler: authenticate },
  })
  app.get('/me', { expandable: { resource: Employee }, preHandler: authenticate }, async (request) => {
    const rows = await app.expand.select(request).where('employees.id', '=', request.user!.id).execute()
    const [me] = await app.expand.load(request, rows)
    return me
  })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

const ann = { authorization: 'Bearer ann' }
const bob = { authorization: 'Bearer bob' }
const forbidden = (message: string) => ({ statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message })

for (const dialect of dialects()) {
  t.test(`auth as a route preHandler, on ${dialect.name}`, async (t) => {
    const database = await openEmployees(t, dialect)
    const seen: string[] = []
    const app = await build(t, database, seen)
    const get = async (url: string, headers: Record<string, string> = {}) => {
      database.reset()
      asked.fieldsFor = 0
      const response = await app.inject({ method: 'GET', url, headers })
      return { status: response.statusCode, body: response.json(), statements: [...database.statements], fieldsFor: asked.fieldsFor }
    }
    const plain = (statement: string) => statement.replace(/\$\d+/g, '?')

    t.test('the body is the authenticated caller\'s: no salary, no department for a user; every field for an admin', async (t) => {
      const user = await get('/employees', ann)
      t.equal(user.status, 200)
      t.same(user.body, {
        data: [{ id: 1, name: 'Ann', tenant: 1 }, { id: 2, name: 'Bob', tenant: 1 }, { id: 4, name: 'Dee', tenant: 1 }],
        limit: 20,
        offset: 0,
        total: 3,
      })
      t.same(user.statements.map(plain), [
        pageAsSent(dialect,
          'select "employees"."id" as "id", cast("employees"."name" as text) as "name", "employees"."tenant_id" as "tenant" from "employees" where "employees"."tenant_id" = ? order by "employees"."id" limit ? offset ?',
          'select count(*) as "total" from "employees" where "employees"."tenant_id" = ?'),
      ].map((statement) => asWrittenOn(dialect, statement)), 'salary is never read for the user (and the short page tells its total: its count read with it in one wave, else none)')
      t.equal(user.fieldsFor, 1, 'fieldsFor is asked once')
      const admin = await get('/employees', bob)
      t.same(admin.body.data[1], { id: 2, name: 'Bob', salary: 7000, tenant: 1, department: { id: 2, name: 'Ops', budget: 500 } })
      t.equal(admin.body.total, 4)
      t.same(seen.splice(0), ['user 1: department false, salary false', 'user 2: department true, salary true'],
        'a preHandler after authentication sees the authenticated plan')
    })

    t.test('a hand-written route with auth as its preHandler', async (t) => {
      t.same((await get('/me', ann)).body, { id: 1, name: 'Ann', tenant: 1 })
      t.same((await get('/me', bob)).body, { id: 2, name: 'Bob', salary: 7000, tenant: 1, department: 2 })
      t.same((await get('/me?fields=id,salary', ann)).body, forbidden("Field 'salary' in 'fields' is not available to this request"))
    })

    t.test('filters and sorts are checked against the same answer', async (t) => {
      const filtered = await get('/employees?filter[salary][gte]=5000', ann)
      t.same(filtered.body, forbidden("Cannot filter by 'salary': it is not available to this request"))
      t.equal(filtered.fieldsFor, 1)
      t.same((await get('/employees?sort=salary', ann)).body, forbidden("Cannot sort by 'salary': it is not available to this request"))
      const byName = await get('/employees?filter[name]=Dee', ann)
      t.same(byName.body, { data: [{ id: 4, name: 'Dee', tenant: 1 }], limit: 20, offset: 0, total: 1 })
      t.equal(byName.fieldsFor, 1, 'asked once for the plan, the filter check and the statements')
      const admin = await get('/employees?filter[salary][gte]=5000&sort=-salary&fields=id,salary', bob)
      const richest = [{ id: 2, salary: 7000 }, { id: 3, salary: 6000 }, { id: 1, salary: 5000 }]
      t.same(admin.body, { data: richest, limit: 20, offset: 0, total: 3 })
      seen.length = 0
    })

    t.test('cursor pages follow the authenticated caller', async (t) => {
      t.same((await get('/feed?sort=-salary', ann)).body, forbidden("Cannot sort by 'salary': it is not available to this request"))
      const first = await get('/feed?sort=name', ann)
      t.same(first.body.data, [{ id: 1, name: 'Ann', tenant: 1 }, { id: 2, name: 'Bob', tenant: 1 }])
      const second = await get(`/feed?sort=name&after=${encodeURIComponent(first.body.next as string)}`, ann)
      t.same(second.body, { data: [{ id: 4, name: 'Dee', tenant: 1 }], limit: 2, next: null, prev: second.body.prev })
      t.type(second.body.prev, 'string')
      const admin = await get('/feed?sort=-salary&fields=id,salary', bob)
      t.same(admin.body.data, [{ id: 2, salary: 7000 }, { id: 3, salary: 6000 }])
    })

    t.test('a request its authentication refuses is never planned', async (t) => {
      const refused = await get('/employees?expand=nope')
      t.same(refused.body, { statusCode: 401, error: 'Unauthorized', message: 'sign in' }, 'a 401, not the 400 of its expand')
      t.equal(refused.fieldsFor, 0)
      t.same(refused.statements, [])
      t.same((await get('/me?fields=salary')).body, { statusCode: 401, error: 'Unauthorized', message: 'sign in' })
      t.same(seen, [])
    })
  })
}
