import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource } from '../../../plugin/index.js'
import { dialects, namesAsWrittenOn, type TestDatabase } from '../../fixtures/dialects.js'
import { Animal, listResources, openListTables } from '../../fixtures/list-tables.js'

// Attack: learn a field `fieldsFor` hides without ever seeing it, through what
// it decides rather than what it shows: the order of a relation sorted by it
// (a roster ordered by salary ranks the salaries), a hidden primary key shown
// as a to-many id array, the type of a hidden filter field told by a 400 on its
// value or operator, and the names of hidden filters and sort fields listed in
// a 400's message. What must hold: a hidden field never orders, filters or
// appears for that caller, in any form. A relation ordered by a hidden column
// is ordered by the related key for that caller (and its `limit` keeps the
// first rows in that order); a to-many relation whose target's primary key is
// hidden has no id array unless expanded; a filter or sort key naming a hidden
// field is 403 whatever is written with it; messages list only what the caller
// may use. (Cursors, which carried hidden values in clear, are cursors.test.ts.)

const Member = defineResource({
  name: 'Member',
  table: 'members',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), salary: Type.Integer(), team: Type.Integer() }),
  fields: ['id', 'name', 'salary', 'team'],
  expandable: { team: ['Team', { column: 'team_id' }] },
  // x-role admin: everything; user: no salary; anonymous: the name alone (not even the key).
  fieldsFor: (request) => {
    const role = request.headers['x-role']
    return role === 'admin' ? undefined : role === 'user' ? ['id', 'name', 'team'] : ['name']
  },
})

const Team = defineResource({
  name: 'Team',
  table: 'teams',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), roster: Type.Array(Type.Integer()), top: Type.Array(Type.Integer()) }),
  fields: ['id', 'name', 'roster'],
  expandable: {
    roster: [Member, { many: true, foreignKey: 'team_id', orderBy: '-salary' }],
    top: [Member, { many: true, foreignKey: 'team_id', orderBy: '-salary', limit: 2 }],
  },
})

// Salaries rank Bob, Cid, Dee, Ann: key order is Ann, Bob, Cid, Dee.
const members = [
  { id: 1, team_id: 1, name: 'Ann', salary: 50 },
  { id: 2, team_id: 1, name: 'Bob', salary: 90 },
  { id: 3, team_id: 1, name: 'Cid', salary: 70 },
  { id: 4, team_id: 1, name: 'Dee', salary: 60 },
  { id: 5, team_id: 2, name: 'Eve', salary: 10 },
]

async function openTeams (t: Test, dialect: ReturnType<typeof dialects>[number]): Promise<TestDatabase> {
  const database = await dialect.open()
  t.teardown(() => database.close())
  const { db } = database
  await db.schema.createTable('teams').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text', (c) => c.notNull()).execute()
  await db.schema.createTable('members').addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('team_id', 'integer', (c) => c.notNull()).addColumn('name', 'text', (c) => c.notNull())
    .addColumn('salary', 'integer', (c) => c.notNull()).execute()
  await db.insertInto('teams').values([{ id: 1, name: 'Red' }, { id: 2, name: 'Blue' }]).execute()
  await db.insertInto('members').values(members).execute()
  return database
}

async function buildTeams (t: Test, database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [Team, Member] })
  app.expand.routes('/teams', Team)
  app.expand.routes('/members', Member, { pagination: 'cursor', sort: ['name'], pageSize: 2 })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

type Role = 'admin' | 'user' | 'anonymous'

async function get (app: FastifyInstance, database: TestDatabase, url: string, role: Role) {
  database.reset()
  const response = await app.inject({ url, headers: role === 'anonymous' ? {} : { 'x-role': role } })
  return { status: response.statusCode, body: response.json(), text: response.body, statements: [...database.statements] }
}

const forbidden = (message: string) => ({ statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message })
const badRequest = (code: string, message: string) => ({ statusCode: 400, code, error: 'Bad Request', message })

for (const dialect of dialects()) {
  t.test(`a relation ordered by a hidden field on ${dialect.name}`, async (t) => {
    const database = await openTeams(t, dialect)
    const app = await buildTeams(t, database)
    const bySalary = /order by "members"."team_id", "members"."salary" desc, "members"."id" limit \d+(\)|$)/m
    const rosterBySalary = new RegExp(namesAsWrittenOn(dialect, bySalary.source), bySalary.flags)

    t.test('ids: by key for a caller who may not see the salary, by salary for one who may', async (t) => {
      // Alternating callers: each plan keeps its own statements.
      for (let round = 0; round < 2; round++) {
        const user = await get(app, database, '/teams/1', 'user')
        t.equal(user.text, '{"id":1,"name":"Red","roster":[1,2,3,4]}')
        t.notMatch(user.statements.join('\n'), /salary/, 'no statement reads the hidden column')
        const admin = await get(app, database, '/teams/1', 'admin')
        t.equal(admin.text, '{"id":1,"name":"Red","roster":[2,3,4,1]}')
        t.match(admin.statements.join('\n'), rosterBySalary)
      }
      const list = await get(app, database, '/teams', 'user')
      t.equal(list.text, '{"data":[{"id":1,"name":"Red","roster":[1,2,3,4]},{"id":2,"name":"Blue","roster":[5]}],"limit":20,"offset":0,"total":2}')
    })

    t.test('expanded rows, and the rows a relation limit keeps', async (t) => {
      t.equal((await get(app, database, '/teams/1?expand=roster&fields=roster', 'user')).text,
        '{"roster":[{"id":1,"name":"Ann","team":1},{"id":2,"name":"Bob","team":1},{"id":3,"name":"Cid","team":1},{"id":4,"name":"Dee","team":1}]}')
      t.equal((await get(app, database, '/teams/1?expand=roster&fields=roster', 'admin')).text,
        '{"roster":[{"id":2,"name":"Bob","salary":90,"team":1},{"id":3,"name":"Cid","salary":70,"team":1},{"id":4,"name":"Dee","salary":60,"team":1},{"id":1,"name":"Ann","salary":50,"team":1}]}')
      const user = await get(app, database, '/teams/1?expand=top&fields=top.id', 'user')
      t.equal(user.text, '{"top":[{"id":1},{"id":2}]}', 'the first two by key, not the two best paid')
      t.notMatch(user.statements.join('\n'), /salary/)
      t.equal((await get(app, database, '/teams/1?expand=top&fields=top.id', 'admin')).text, '{"top":[{"id":2},{"id":3}]}')
    })
  })

  t.test(`a hidden primary key on ${dialect.name}`, async (t) => {
    const database = await openTeams(t, dialect)
    const app = await buildTeams(t, database)

    t.test('no id array unless expanded', async (t) => {
      const plain = await get(app, database, '/teams/1', 'anonymous')
      t.equal(plain.text, '{"id":1,"name":"Red"}')
      t.equal(plain.statements.length, 1, 'no statement for the ids')
      t.equal((await get(app, database, '/teams?fields=id,roster', 'anonymous')).text,
        '{"data":[{"id":1},{"id":2}],"limit":20,"offset":0,"total":2}')
      t.equal((await get(app, database, '/teams/1?expand=roster&fields=roster', 'anonymous')).text,
        '{"roster":[{"name":"Ann"},{"name":"Bob"},{"name":"Cid"},{"name":"Dee"}]}', 'expanded: the fields it may see, in key order')
    })

    t.test('a cursor holds the hidden key, but nothing of it shows', async (t) => {
      const first = await get(app, database, '/members?sort=name', 'anonymous')
      t.same(first.body.data, [{ name: 'Ann' }, { name: 'Bob' }])
      const text = Buffer.from(first.body.next as string, 'base64url').toString('latin1')
      t.notOk(text.includes('Bob'), 'not the sort value')
      t.notOk(text.includes('["Bob",2]'), 'not the key')
      const second = await get(app, database, `/members?sort=name&after=${encodeURIComponent(first.body.next)}`, 'anonymous')
      t.same(second.body.data, [{ name: 'Cid' }, { name: 'Dee' }])
    })
  })

  t.test(`filters and sort keys on hidden fields on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: listResources })
    app.expand.routes('/animals', Animal, {
      filter: { species: ['eq'], born: ['gte', 'lt'], name: ['contains'], 'keeper.name': ['contains'], 'keeper.vip': ['eq'] },
      sort: ['born', 'name', 'weight'],
    })
    await app.ready()
    t.teardown(() => app.close())
    const guest = { 'x-role': 'guest' }
    const ask = async (url: string, headers: Record<string, string> = guest) => {
      database.reset()
      const response = await app.inject({ url, headers })
      return { body: response.json(), statements: database.statements.length }
    }

    t.test('403 whatever the operator or value written with it, before either is read', async (t) => {
      const hiddenBorn = forbidden("Cannot filter by 'born': it is not available to this request")
      for (const query of ['filter[born][gte]=2020-01-01', 'filter[born][gte]=not-a-date', 'filter[born][like]=x', 'filter[born]=x', 'filter[born][null]=maybe']) {
        const reply = await ask(`/animals?${query}`)
        t.same(reply.body, hiddenBorn, query)
        t.equal(reply.statements, 0, `${query}: no statement`)
      }
      t.same((await ask('/animals?filter[keeper.vip]=maybe')).body, forbidden("Cannot filter by 'keeper.vip': it is not available to this request"))
      t.same((await ask('/animals?filter[keeper.vip][gt]=1')).body, forbidden("Cannot filter by 'keeper.vip': it is not available to this request"))
      t.same((await ask('/animals?sort=-weight,weight')).body, forbidden("Cannot sort by 'weight': it is not available to this request"))
      t.same((await ask('/animals?filter[born][gte]=not-a-date', {})).body,
        badRequest('FST_EXPAND_BAD_FILTER', "'filter[born][gte]' must be a date (YYYY-MM-DD), got 'not-a-date'"), 'a caller who may see it is told what is wrong')
    })

    t.test('400 messages list only the filters and sort fields the caller may use', async (t) => {
      t.same((await ask('/animals?filter[colour]=red')).body,
        badRequest('FST_EXPAND_BAD_FILTER', "Cannot filter Animal by 'colour': filters are species, name, keeper.name"))
      t.same((await ask('/animals?filter[colour]=red', {})).body,
        badRequest('FST_EXPAND_BAD_FILTER', "Cannot filter Animal by 'colour': filters are species, born, name, keeper.name, keeper.vip"))
      t.same((await ask('/animals?sort=colour')).body, badRequest('FST_EXPAND_BAD_SORT', "Cannot sort Animal by 'colour': sort fields are name"))
      t.same((await ask('/animals?sort=colour', {})).body, badRequest('FST_EXPAND_BAD_SORT', "Cannot sort Animal by 'colour': sort fields are born, name, weight"))
    })
  })
}
