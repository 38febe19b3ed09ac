import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { type ExpandPluginOptions } from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'

/** What `ready()` rejects with when the plugin is registered with these options. */
async function refusal (options: unknown): Promise<{ code: unknown, statusCode: unknown, message: unknown }> {
  const app = Fastify()
  try {
    await app.register(expandPlugin, options as ExpandPluginOptions)
    await app.ready()
  } catch (error) {
    const { code, statusCode, message } = error as { code: unknown, statusCode: unknown, message: unknown }
    return { code, statusCode, message }
  } finally {
    await app.close()
  }
  throw new Error('registered without an error')
}

const invalidOption = (message: string) => ({ code: 'FST_EXPAND_INVALID_OPTION', statusCode: 500, message: `fastify-expand: ${message}` })

t.test('a bad wildcards or db option fails register with a message naming it', async (t) => {
  const wildcards = 'wildcards must be an array of tokens without dots, commas or spaces, or null'
  t.same(await refusal({ resources, wildcards: 'all' }), invalidOption(wildcards))
  t.same(await refusal({ resources, wildcards: ['a.b'] }), invalidOption(wildcards))
  t.same(await refusal({ resources, wildcards: [1] }), invalidOption(wildcards))
  const db = 'db must be a Kysely instance or a function of the request returning one'
  t.same(await refusal({ resources, db: 'postgres://localhost' }), invalidOption(db))
  t.same(await refusal({ resources, db: null }), invalidOption(db))
  t.same(await refusal({ resources, db: { selectFrom: 'pets' } }), invalidOption(db))
})

t.test("an expandable route's querystring schema must be an object schema", async (t) => {
  for (const querystring of [{ type: 'string' }, { type: 'object', properties: 'expand' }]) {
    const app = Fastify()
    await app.register(expandPlugin, { resources })
    const added = new Promise((resolve) => {
      app.after(() => {
        try {
          app.get('/pets/:id', { expandable: { resource: 'Pet' }, schema: { querystring } }, async () => ({}))
          resolve(undefined)
        } catch (error) {
          resolve(error)
        }
      })
    })
    // ready() rejects with the same error: what matters here is the one app.get threw.
    await app.ready().then(() => {}, () => {})
    const error = await added as { code?: string, message?: string } | undefined
    t.equal(error?.code, 'FST_EXPAND_INVALID_OPTION', JSON.stringify(querystring))
    t.equal(error?.message, "Route GET /pets/:id: schema.querystring must be an object schema ({ type: 'object', properties }) so that fastify-expand can " +
      "declare 'expand', 'fields' and 'omit' in it", JSON.stringify(querystring))
    await app.close()
  }
})

t.test('maxCompilesPerSecond is a positive integer, checked at registration', async (t) => {
  for (const value of [0, -1, 1.5, '100', Infinity]) {
    t.same(await refusal({ resources, maxCompilesPerSecond: value }), invalidOption('maxCompilesPerSecond must be a positive integer'), String(value))
  }
})
