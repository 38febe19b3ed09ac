import { Readable } from 'node:stream'
import Fastify, { type FastifyReply } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { buildApp, getJson } from '../helpers/app.js'

// A string, a Buffer or a stream is sent as it is, past the serialization hooks:
// on an expandable route that would be a body no plan checked, so a 2xx is refused.
const invalidData = (sent: string) => ({
  statusCode: 500,
  code: 'FST_EXPAND_INVALID_DATA',
  error: 'Internal Server Error',
  message: `Data for Pet does not fit the response: the handler sent ${sent}; return the data itself and fastify-expand writes it`,
})

t.test('a 2xx body the compiled serializer did not write is a 500 FST_EXPAND_INVALID_DATA naming what was sent', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/string', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.type('application/json').send('{"id":1}'))
    app.get('/buffer', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(Buffer.from('{"id":1}')))
    app.get('/stream', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(Readable.from(['{"id":1}'])))
    app.get('/empty', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.code(201).send())
    app.get('/no-content', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.code(204).send())
  })
  t.teardown(() => app.close())
  for (const [url, sent] of [['/string', 'a string'], ['/buffer', 'a Buffer'], ['/stream', 'a stream'], ['/empty', 'no body']]) {
    const reply = await getJson(app, url)
    t.equal(reply.status, 500, url)
    t.equal(reply.text, JSON.stringify(invalidData(sent)), url)
  }
  const noContent = await app.inject('/no-content')
  t.equal(noContent.statusCode, 204, 'a 204 has no body to check')
  t.equal(noContent.body, '')
})

t.test('every reply in the plugin\'s scope keeps one shape: no reply is given a send of its own', async (t) => {
  const owns: Record<string, boolean> = {}
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request, reply) => {
      owns[request.url] = Object.hasOwn(reply, 'send')
      return { id: 1, name: 'Garfield' }
    })
    app.get('/plain', async (request, reply) => {
      owns[request.url] = Object.hasOwn(reply, 'send')
      return 'plain text'
    })
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/pets/1?fields=id')).body, '{"id":1}')
  const plain = await app.inject('/plain')
  t.same([plain.statusCode, plain.body], [200, 'plain text'], 'a route that is not expandable sends a string as ever')
  t.same(owns, { '/pets/1?fields=id': false, '/plain': false })
})

t.test('a send replaced per request (as a hook of another plugin may) still checks the bodies of an expandable route', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.addHook('onRequest', async (_request, reply) => {
      const send = reply.send
      reply.send = function (payload) {
        reply.header('x-wrapped', 'yes')
        return send.call(this, payload)
      }
    })
    app.get('/string', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.type('application/json').send('{"id":1}'))
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async () => ({ id: 1, name: 'Garfield' }))
  })
  t.teardown(() => app.close())
  const string = await getJson(app, '/string')
  t.same([string.status, string.text], [500, JSON.stringify(invalidData('a string'))])
  const pet = await app.inject('/pets/1?fields=name')
  t.same([pet.statusCode, pet.headers['x-wrapped'], pet.body], [200, 'yes', '{"name":"Garfield"}'])
})

t.test('registered in two sibling contexts: each checks the bodies of its own routes, once', async (t) => {
  const app = Fastify()
  for (const prefix of ['/a', '/b']) {
    app.register(async (child) => {
      await child.register(expandPlugin, { resources })
      child.get(`${prefix}/string`, { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send('{"id":1}'))
      child.get(`${prefix}/pets/1`, { expandable: { resource: 'Pet' } }, async () => ({ id: 1, name: 'Garfield' }))
      child.get(`${prefix}/plain`, async () => 'plain text')
    })
  }
  app.get('/plain', async () => 'plain text')
  t.teardown(() => app.close())
  t.equal((await app.inject('/plain')).body, 'plain text', 'outside both')
  for (const prefix of ['/a', '/b']) {
    const string = await getJson(app, `${prefix}/string`)
    t.same([string.status, string.text], [500, JSON.stringify(invalidData('a string'))], prefix)
    t.equal((await app.inject(`${prefix}/pets/1?fields=name`)).body, '{"name":"Garfield"}', prefix)
    t.equal((await app.inject(`${prefix}/plain`)).body, 'plain text', prefix)
  }
})

t.test('an application decorating reply.send itself in the plugin\'s scope fails at startup, naming the decorator', async (t) => {
  const app = Fastify()
  app.decorateReply('send', function (this: FastifyReply) { return this })
  app.register(expandPlugin, { resources })
  await t.rejects(async () => await app.ready(), { code: 'FST_ERR_DEC_ALREADY_PRESENT', message: "The decorator 'send' has already been added!" })
})

t.test('a child context decorating send for its own replies: the plugin\'s send stands in front of Fastify\'s alone', async (t) => {
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  app.register(async (child) => {
    child.decorateReply('send', function (this: FastifyReply, payload?: unknown) {
      this.header('x-child', 'yes')
      // The send of the context above this one: the plugin's.
      return (Object.getPrototypeOf(Object.getPrototypeOf(this)) as { send: FastifyReply['send'] }).send.call(this, payload)
    })
    child.get('/child/plain', async () => 'plain text')
    child.get('/child/string', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send('{"id":1}'))
  })
  app.get('/pets/1', { expandable: { resource: 'Pet' } }, async () => ({ id: 1, name: 'Garfield' }))
  app.get('/plain', async () => 'plain text')
  t.teardown(() => app.close())
  // The child's reply first: whichever reply reaches the plugin's send first, it finds Fastify's above itself.
  const childPlain = await app.inject('/child/plain')
  t.same([childPlain.statusCode, childPlain.headers['x-child'], childPlain.body], [200, 'yes', 'plain text'])
  const childString = await getJson(app, '/child/string')
  t.same([childString.status, childString.text], [500, JSON.stringify(invalidData('a string'))])
  const pet = await app.inject('/pets/1?fields=name')
  t.same([pet.statusCode, pet.headers['x-child'], pet.body], [200, undefined, '{"name":"Garfield"}'], 'never the child\'s send')
  const plain = await app.inject('/plain')
  t.same([plain.statusCode, plain.headers['x-child'], plain.body], [200, undefined, 'plain text'])
})
