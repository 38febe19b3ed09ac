import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources } from '../fixtures/tables.js'

// Numbers in the URL of the generated routes: an id of the primary key's
// schema type that the column cannot hold is simply not found; anything that
// is not a safe integer (past 2^53 - 1, a fraction, infinite), and limit or
// offset values outside their range, are 400s on every dialect, never a 500
// from a driver that could not bind them. pets.id is `integer` (int4 on PostgreSQL).

const validation = (message: RegExp) => ({ statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message })

for (const dialect of dialects()) {
  t.test(`numbers in the URL on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources })
    app.expand.routes('/pets', Pet, { maxPageSize: 50 })
    t.teardown(() => app.close())
    await app.ready()
    const get = async (url: string) => {
      const response = await app.inject(url)
      return { status: response.statusCode, body: response.json() }
    }

    t.test('an id the column cannot hold is not found', async (t) => {
      t.same(await get('/pets/2147483648'), {
        status: 404,
        body: { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'Pet 2147483648 not found' },
      })
      t.same(await get('/pets/-2147483649'), {
        status: 404,
        body: { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'Pet -2147483649 not found' },
      })
      t.same(await get('/pets/9007199254740991'), {
        status: 404,
        body: { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'Pet 9007199254740991 not found' },
      }, 'the largest safe integer')
    })

    t.test('an id that is not a safe integer is a 400', async (t) => {
      for (const id of ['9007199254740992', '99999999999999999999', '1.5', '1e400', '-Infinity', 'Infinity', 'NaN']) {
        const { status, body } = await get(`/pets/${id}`)
        t.equal(status, 400, `${id}: status`)
        t.match(body, validation(/id/), `${id}: body`)
      }
    })

    t.test('limit and offset out of their range are 400s', async (t) => {
      const cases: Array<[string, RegExp]> = [
        ['offset=9223372036854775807', /offset/],
        ['offset=9007199254740992', /offset/],
        ['offset=1e20', /offset/],
        ['offset=Infinity', /offset/],
        ['offset=-1', /offset/],
        ['offset=1.5', /offset/],
        ['limit=-Infinity', /limit/],
        ['limit=Infinity', /limit/],
        ['limit=0', /limit/],
        ['limit=-1', /limit/],
        ['limit=1e20', /limit/],
        ['limit=1.5', /limit/],
      ]
      for (const [query, message] of cases) {
        const { status, body } = await get(`/pets?${query}&fields=id`)
        t.equal(status, 400, `${query}: status`)
        t.match(body, validation(message), `${query}: body`)
      }
    })

    t.test('in range: served, and a larger limit is clamped to maxPageSize', async (t) => {
      const all = [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }]
      t.same(await get('/pets?limit=1000&fields=id'), { status: 200, body: { data: all, limit: 50, offset: 0, total: 4 } })
      t.same(await get('/pets?limit=9007199254740991&fields=id'), { status: 200, body: { data: all, limit: 50, offset: 0, total: 4 } }, 'the largest safe integer, clamped')
      t.same(await get('/pets?limit=2&offset=3&fields=id'), { status: 200, body: { data: [{ id: 4 }], limit: 2, offset: 3, total: 4 } })
      t.same(await get('/pets?offset=2147483648&fields=id'), { status: 200, body: { data: [], limit: 20, offset: 2147483648, total: 4 } }, 'an offset past int4 is just past the end')
      t.same(await get('/pets/2?fields=id,name'), { status: 200, body: { id: 2, name: 'Odie' } })
    })
  })
}
