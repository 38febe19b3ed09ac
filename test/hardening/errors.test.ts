import Fastify, { type FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import expandPlugin, { isExpanded } from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { openSeeded, Person, Pet, resources as tableResources, handlerPetColumns } from '../fixtures/tables.js'
import { resources } from '../fixtures/pets.js'

interface Answer { statusCode: number; body: string; headers: Record<string, unknown> }

/**
 * A server error as Fastify's default handler writes it: one complete JSON
 * document, the four keys of its shape (code when the error has one), no SQL
 * and no stack trace.
 */
function checkServerError (t: Test, answer: Answer, label: string): Record<string, unknown> {
  t.equal(answer.statusCode, 500, `${label}: 500`)
  t.equal(answer.headers['content-type'], 'application/json; charset=utf-8', `${label}: JSON content type`)
  t.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.body), `${label}: the whole body was written`)
  let body: Record<string, unknown> = {}
  t.doesNotThrow(() => { body = JSON.parse(answer.body) }, `${label}: one complete JSON document`)
  const keys = Object.keys(body)
  t.ok(['statusCode,error,message', 'statusCode,code,error,message'].includes(keys.join(',')), `${label}: Fastify's error keys (${keys.join(',')})`)
  t.equal(body.statusCode, 500)
  t.equal(body.error, 'Internal Server Error')
  t.notMatch(answer.body, /select/i, `${label}: no SQL`)
  t.notMatch(answer.body, /at /, `${label}: no stack trace`)
  t.notMatch(answer.body, /password|never-read|secret/i, `${label}: no row data`)
  return body
}

t.test('a handler that throws on an expandable route: the default 500 shape, nothing of the plan', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.get('/sync', { expandable: { resource: 'Pet' } }, () => { throw new Error('boom') })
  app.get('/async', { expandable: { resource: 'Pet', list: true } }, async (request) => {
    if (isExpanded(request, 'owner')) throw new TypeError('cannot load owners')
    return []
  })
  app.get('/rejects-late', { expandable: { resource: 'Pet' } }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    throw Object.assign(new Error('late'), { statusCode: 503 })
  })
  await app.ready()
  t.teardown(() => app.close())

  const sync = await app.inject('/sync?expand=owner')
  t.same(checkServerError(t, sync, 'sync'), { statusCode: 500, error: 'Internal Server Error', message: 'boom' })
  const async = await app.inject('/async?expand=owner.employer')
  t.same(checkServerError(t, async, 'async'), { statusCode: 500, error: 'Internal Server Error', message: 'cannot load owners' })
  const late = await app.inject('/rejects-late?expand=toys')
  t.equal(late.statusCode, 503)
  t.same(JSON.parse(late.body), { statusCode: 503, error: 'Service Unavailable', message: 'late' }, 'a non-2xx error keeps Fastify\'s own serializer')
  const listOk = await app.inject('/async')
  t.equal(listOk.body, '[]', 'the route still serves')
})

t.test('data that does not match the plan: a 500 from the compiled serializer, never half a body', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  const garfield = { id: 1, name: 'Garfield', species: 'cat', owner: 8, sold_from: null, toys: [1, 2] }
  // The handler ignores the plan: an object where an integer id is planned.
  app.get('/expanded-when-not-asked', { expandable: { resource: 'Pet' } }, async () => ({ ...garfield, owner: { id: 8, name: 'Jon' } }))
  app.get('/list-item-wrong', { expandable: { resource: 'Pet', list: true } }, async () => [garfield, { ...garfield, toys: [{ id: 1 }] }])
  await app.ready()
  t.teardown(() => app.close())
  for (const url of ['/expanded-when-not-asked', '/list-item-wrong']) {
    const answer = await app.inject(url)
    checkServerError(t, answer, url)
    t.notMatch(answer.body, /Garfield/, `${url}: nothing of the payload`)
  }
})

async function buildTablesApp (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: tableResources })
  app.expand.routes('/pets', Pet)
  app.expand.routes('/people', Person)
  app.get('/handler-pets', { expandable: { resource: Pet, list: true } }, async (request) => {
    const rows = await database.db.selectFrom('pets').select(handlerPetColumns).orderBy('id').execute()
    return app.expand.load(request, rows)
  })
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`database errors inside expanded loading on ${dialect.name}: 500, no SQL, no stack, then recovery`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = await buildTablesApp(database)
    t.teardown(() => app.close())

    const before = await app.inject('/pets/1?expand=owner')
    t.equal(before.statusCode, 200)

    await sql`drop table people`.execute(database.db)
    for (const url of ['/pets/1?expand=owner', '/pets?expand=owner.employer', '/handler-pets?expand=owner', '/people/1', '/people']) {
      checkServerError(t, await app.inject(url), url)
    }
    const unaffected = await app.inject('/pets/1?expand=toys,sold_from')
    t.equal(unaffected.statusCode, 200, 'paths that do not touch the dropped table still load')
    t.same(JSON.parse(unaffected.body), { id: 1, name: 'Garfield', species: 'cat', owner: 1, sold_from: { id: 1, name: 'Pet Place' }, toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }] })

    await sql`drop table pet_toys`.execute(database.db)
    checkServerError(t, await app.inject('/pets/1'), 'to-many ids through a dropped join table')
    checkServerError(t, await app.inject('/pets?expand=toys'), 'to-many expansion through a dropped join table')

    await sql`create table if not exists people (id integer primary key, name text not null, hobbies text not null, employer_id integer, password_hash text not null)`.execute(database.db)
    await sql`create table if not exists pet_toys (pet_id integer not null, toy_id integer not null)`.execute(database.db)
    await database.db.insertInto('people').values({ id: 1, name: 'Fred', hobbies: 'sailing', employer_id: null, password_hash: 'never-read-1' }).execute()
    const recovered = await app.inject('/pets/1?expand=owner,toys')
    t.equal(recovered.statusCode, 200, 'the app recovers once the tables exist again')
    t.same(JSON.parse(recovered.body), { id: 1, name: 'Garfield', species: 'cat', owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: null }, sold_from: 1, toys: [] })
  })
}
