import { createCipheriv, createHmac, randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { type ResourceRoutesOptions } from '../../../plugin/index.js'
import { dialects, type TestDatabase } from '../../fixtures/dialects.js'
import { Animal, listResources, openListTables } from '../../fixtures/list-tables.js'

// Attack: reuse, forge or read a cursor. A cursor of one list replayed on
// another (another mount of the same list under another prefix, other
// filters that once shared its binding text because raw values were joined
// with `&`, another caller's cursor), a value of the wrong type inside a
// validly made cursor (once bound as it was: a 500), a cursor whose sort key
// the caller may not use (dropped under onInvalidExpand 'ignore': a 500 or a
// broken next page), and the sort values read in clear from the cursor.
// What must hold: a cursor is bound canonically to the route's method and
// full URL, the typed filters and the effective sort (and, with
// `cursorBinding`, the caller's identity); anything else is 400
// FST_EXPAND_BAD_CURSOR, never a 500; the values inside are encrypted
// (AES-256-GCM) and checked against each key's type before they are bound.

const cursorSecret = 'a cursor secret of 32 characters'
const filter: ResourceRoutesOptions['filter'] = { species: ['eq', 'ne', 'in'], name: ['contains'], born: ['gte'] }
const feed: ResourceRoutesOptions = { filter, sort: ['born', 'name', 'weight'], pagination: 'cursor', pageSize: 2, cursorSecret }

async function build (t: Test, database: TestDatabase, onInvalidExpand: 'error' | 'ignore' = 'error'): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: listResources, onInvalidExpand })
  app.expand.routes('/feed', Animal, feed)
  // One list mounted twice, by routes() inside plugins with prefixes of their own.
  for (const prefix of ['/public', '/internal']) await app.register(async (child) => { child.expand.routes('/feed', Animal, feed) }, { prefix })
  app.expand.routes('/adopted', Animal, { sort: ['adopted'], pagination: 'cursor', pageSize: 2, cursorSecret })
  app.expand.routes('/mine', Animal, { ...feed, cursorBinding: (request) => String(request.headers['x-user'] ?? '') })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

async function get (app: FastifyInstance, database: TestDatabase, url: string, headers: Record<string, string> = {}) {
  database.reset()
  const response = await app.inject({ url, headers })
  return { status: response.statusCode, body: response.json(), statements: database.statements.length }
}

const badCursor = {
  statusCode: 400,
  code: 'FST_EXPAND_BAD_CURSOR',
  error: 'Bad Request',
  message: "'after' is not a cursor of this list for this sort and these filters: ask again from the first page",
}
const ids = (body: { data: Array<{ id: number }> }) => body.data.map((row) => row.id)
const after = (cursor: string) => `after=${encodeURIComponent(cursor)}`

/** A cursor made with the route's secret, as the plugin makes them, holding any values: what only a holder of the secret can write. */
function forge (binding: readonly unknown[], values: unknown): string {
  const key = createHmac('sha256', cursorSecret).update('fastify-expand cursor key').digest()
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(Buffer.from(JSON.stringify(binding)))
  const encrypted = Buffer.concat([cipher.update(JSON.stringify(values)), cipher.final()])
  return Buffer.concat([nonce, encrypted, cipher.getAuthTag()]).toString('base64url')
}

for (const dialect of dialects()) {
  t.test(`cursors on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database)

    t.test('a cursor shows none of its values', async (t) => {
      const first = await get(app, database, '/feed?fields=id,name&sort=name')
      t.same(first.body.data, [{ id: 4, name: '100%_Pure\\Fun' }, { id: 5, name: 'Ajax' }])
      const text = Buffer.from(first.body.next as string, 'base64url').toString('latin1')
      t.notOk(text.includes('Ajax'), 'not the sort value')
      t.notOk(text.includes('["Ajax",5]'), 'not the values as JSON')
      const again = await get(app, database, '/feed?fields=id,name&sort=name')
      t.equal(again.body.next, first.body.next, 'the same position of the same list gives the same cursor')
    })

    t.test("another mount's cursor is 400: a cursor is bound to the route's full URL", async (t) => {
      const first = await get(app, database, '/public/feed?fields=id&sort=name')
      const next = first.body.next as string
      t.same(ids((await get(app, database, `/public/feed?fields=id&sort=name&${after(next)}`)).body), [3, 1], 'its own mount')
      for (const url of ['/internal/feed', '/feed']) {
        const reply = await get(app, database, `${url}?fields=id&sort=name&${after(next)}`)
        t.same(reply.body, badCursor, url)
        t.equal(reply.statements, 0, `${url}: no statement`)
      }
    })

    t.test('two filter sets whose raw text once joined the same no longer share a cursor', async (t) => {
      // filter[name][contains]=j with filter[species][ne]=dog, and one filter whose value is 'j&species[ne]=dog'.
      const two = '/feed?fields=id&filter[name][contains]=j&filter[species][ne]=dog'
      const one = `/feed?fields=id&filter[name][contains]=${encodeURIComponent('j&species[ne]=dog')}`
      const first = await get(app, database, two)
      t.same(ids(first.body), [1, 3])
      const second = (await get(app, database, `${two}&${after(first.body.next)}`)).body
      t.same(second, { data: [{ id: 6 }], limit: 2, next: null, prev: second.prev })
      t.type(second.prev, 'string')
      t.same((await get(app, database, `${one}&${after(first.body.next)}`)).body, badCursor)
      t.same((await get(app, database, `${two.replace('=dog', '=cat')}&${after(first.body.next)}`)).body, badCursor, 'another value')
    })

    t.test('a validly made cursor holding a value of the wrong type is 400, never bound', async (t) => {
      const byName = ['fastify-expand cursor 2', 'Animal', 'GET /feed', null, [], [['name', false], ['id', false]]]
      const valid = await get(app, database, `/feed?fields=id&sort=name&${after(forge(byName, ['Ajax', 5]))}`)
      t.same(valid.body, { data: [{ id: 3 }, { id: 1 }], limit: 2, next: valid.body.next, prev: valid.body.prev }, 'the same binding with values of the right types')
      const wrong: unknown[] = [[{ x: 1 }, 5], ['Ajax', 'five'], ['Ajax', 5.5], ['Ajax', { id: 5 }], [5, 5], [null, 5], ['Ajax'], ['Ajax', 5, 6], { v: ['Ajax', 5] }]
      for (const values of wrong) {
        const reply = await get(app, database, `/feed?fields=id&sort=name&${after(forge(byName, values))}`)
        t.same(reply.body, badCursor, JSON.stringify(values))
        t.equal(reply.statements, 0)
      }
      const byBorn = ['fastify-expand cursor 2', 'Animal', 'GET /feed', null, [], [['born', true], ['id', false]]]
      t.same((await get(app, database, `/feed?fields=id&sort=-born&${after(forge(byBorn, ['not a date', 1]))}`)).body, badCursor, 'a date key')
      t.equal((await get(app, database, `/feed?fields=id&sort=-born&${after(forge(byBorn, ['2020-01-01', 4]))}`)).status, 200)
      const byWeight = ['fastify-expand cursor 2', 'Animal', 'GET /feed', null, [], [['weight', false], ['id', false]]]
      t.same((await get(app, database, `/feed?fields=id&sort=weight&${after(forge(byWeight, [true, 4]))}`)).body, badCursor, 'a number key')
      t.same((await get(app, database, `/feed?fields=id&sort=weight&${after(forge(byWeight, ['1e999', 4]))}`)).body, badCursor, 'an infinite number')
      t.same(ids((await get(app, database, `/feed?fields=id&sort=weight&${after(forge(byWeight, [0.3, 4]))}`)).body), [3, 1], 'after (0.3, 4)')
      t.same(ids((await get(app, database, `/feed?fields=id&sort=name&${after(forge(byName, ['Ajax', '5']))}`)).body), [3, 1], 'an integer as its decimal text (pg gives int8 so)')
      const byAdopted = ['fastify-expand cursor 2', 'Animal', 'GET /adopted', null, [], [['adopted', false], ['id', false]]]
      t.same((await get(app, database, `/adopted?fields=id&sort=adopted&${after(forge(byAdopted, [true, 1]))}`)).body, badCursor, 'a boolean key holds 1 or 0')
      t.same(ids((await get(app, database, `/adopted?fields=id&sort=adopted&${after(forge(byAdopted, [0, 6]))}`)).body), [1, 4], 'after (false, 6)')
      const typed = ['fastify-expand cursor 2', 'Animal', 'GET /feed', null, [['born', 'gte', '2020-01-01']], [['id', false]]]
      t.same(ids((await get(app, database, `/feed?fields=id&filter[born][gte]=2020-01-01&${after(forge(typed, [3]))}`)).body), [4, 6], 'filters bound as typed values')
    })

    t.test('a walk by a boolean key, as each driver gives it', async (t) => {
      const seen: number[] = []
      let url: string | null = '/adopted?fields=id&sort=-adopted'
      while (url !== null) {
        const reply = await get(app, database, url)
        seen.push(...ids(reply.body))
        url = reply.body.next === null ? null : `/adopted?fields=id&sort=-adopted&${after(reply.body.next)}`
      }
      t.same(seen, [1, 4, 5, 2, 3, 6])
    })

    t.test('with cursorBinding, a cursor answers only the identity it was made for', async (t) => {
      const first = await get(app, database, '/mine?fields=id', { 'x-user': 'ana' })
      t.same(ids(first.body), [1, 2])
      const mine = await get(app, database, `/mine?fields=id&${after(first.body.next)}`, { 'x-user': 'ana' })
      t.same(ids(mine.body), [3, 4])
      for (const headers of [{ 'x-user': 'rui' }, {}] as Array<Record<string, string>>) {
        t.same((await get(app, database, `/mine?fields=id&${after(first.body.next)}`, headers)).body, badCursor, JSON.stringify(headers))
      }
      t.same((await get(app, database, `/feed?fields=id&${after(first.body.next)}`, { 'x-user': 'ana' })).body, badCursor, 'an unbound route')
    })
  })

  t.test(`cursors under onInvalidExpand 'ignore' on ${dialect.name}`, async (t) => {
    const database = await openListTables(t, dialect)
    const app = await build(t, database, 'ignore')
    const guest = { 'x-role': 'guest' }

    t.test('a dropped hidden sort key: the pages follow the key, and the next page works', async (t) => {
      const seen: number[] = []
      let url: string | null = '/feed?fields=id&sort=-weight'
      while (url !== null) {
        const reply = await get(app, database, url, guest)
        t.equal(reply.status, 200)
        seen.push(...ids(reply.body))
        url = reply.body.next === null ? null : `/feed?fields=id&sort=-weight&${after(reply.body.next)}`
      }
      t.same(seen, [1, 2, 3, 4, 5, 6], 'by key: the weights decide nothing')
    })

    t.test("another caller's cursor is 400, not a 500", async (t) => {
      const admin = await get(app, database, '/feed?fields=id&sort=-weight')
      t.same(ids(admin.body), [2, 5])
      const replayed = await get(app, database, `/feed?fields=id&sort=-weight&${after(admin.body.next)}`, guest)
      t.same(replayed.body, badCursor)
      t.equal(replayed.statements, 0)
      const guests = await get(app, database, '/feed?fields=id&sort=-weight', guest)
      t.same((await get(app, database, `/feed?fields=id&sort=-weight&${after(guests.body.next)}`)).body, badCursor, "the guest's cursor, replayed by the admin")
      const hiddenFilter = await get(app, database, '/feed?fields=id&filter[born][gte]=2020-01-01')
      t.same((await get(app, database, `/feed?fields=id&filter[born][gte]=2020-01-01&${after(hiddenFilter.body.next)}`, guest)).body, badCursor, 'a dropped hidden filter')
    })
  })
}

t.test('cursorBinding is checked at startup and its answer at request time', async (t) => {
  const database = await openListTables(t, dialects()[0]!)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: listResources })
  t.throws(() => app.expand.routes('/a', Animal, { pagination: 'cursor', cursorBinding: 'user' as never }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "expand.routes('/a'): cursorBinding must be a function of the request returning a string" })
  t.throws(() => app.expand.routes('/b', Animal, { cursorBinding: () => 'user' }),
    { code: 'FST_EXPAND_INVALID_OPTION', message: "expand.routes('/b'): cursorBinding applies to cursor pages only" })
  app.expand.routes('/c', Animal, { pagination: 'cursor', cursorBinding: () => 42 as never })
  await app.ready()
  t.teardown(() => app.close())
  const reply = await app.inject('/c')
  t.equal(reply.statusCode, 500)
  t.equal(reply.json().code, 'FST_EXPAND_INVALID_OPTION')
})
