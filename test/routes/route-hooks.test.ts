import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import t from 'tap'
import expandPlugin, { isExpanded } from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { buildApp } from '../helpers/app.js'

/*
 * What the hooks an application adds to an expandable route see, and when:
 * the plugin's own work on the route (the plan, the choice of the compiled
 * serializer, the check of the body) must leave Fastify's order and every
 * hook's view as they are on any route. The handler's data holds a field the
 * resource does not declare (`secret`): only the compiled serializer leaves
 * it out, so a body holding it was not written by the plan.
 */
const garfield = () => ({ id: 1, name: 'Garfield', species: 'cat', secret: 'lasagna', owner: 8, sold_from: null, toys: [] })
const written = '{"id":1,"name":"Garfield","species":"cat","owner":8,"sold_from":null,"toys":[]}'
const json = 'application/json; charset=utf-8'

type Seen = string[]
type PayloadDone = (error: Error | null, payload?: unknown) => void

/** Hooks of both styles, with and without a payload: each records its name and what it saw. */
function recordingHooks (seen: Seen, see: (request: FastifyRequest, reply: FastifyReply, payload?: unknown) => string) {
  return {
    async: (name: string) => async (request: FastifyRequest, reply: FastifyReply) => {
      seen.push(`${name}: ${see(request, reply)}`)
    },
    callback: (name: string) => (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      seen.push(`${name}: ${see(request, reply)}`)
      done()
    },
    asyncPayload: (name: string) => async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      seen.push(`${name}: ${see(request, reply, payload)}`)
      return payload
    },
    callbackPayload: (name: string) => (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadDone) => {
      seen.push(`${name}: ${see(request, reply, payload)}`)
      done(null, payload)
    },
  }
}

t.test("application and route hooks run in Fastify's order, async and callback alike, each seeing what it sees on any route", async (t) => {
  const seen: Seen = []
  let handed: unknown
  const describe = (_request: FastifyRequest, reply: FastifyReply, payload?: unknown) => {
    if (payload === undefined) return `expanded owner ${String(isExpanded(_request, 'owner'))}`
    if (typeof payload === 'string') return `${payload} as ${String(reply.getHeader('content-type'))}`
    return Object.is(payload, handed) ? 'the handler\'s object' : 'another object'
  }
  const hooks = recordingHooks(seen, describe)
  const app = await buildApp({ resources }, (app) => {
    app.addHook('preHandler', hooks.async('app preHandler'))
    app.addHook('preHandler', hooks.callback('app preHandler (callback)'))
    app.addHook('preSerialization', hooks.asyncPayload('app preSerialization'))
    app.addHook('preSerialization', hooks.callbackPayload('app preSerialization (callback)'))
    app.addHook('onSend', hooks.asyncPayload('app onSend'))
    app.addHook('onSend', hooks.callbackPayload('app onSend (callback)'))
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      preHandler: [hooks.async('route preHandler'), hooks.callback('route preHandler (callback)')],
      preSerialization: [hooks.asyncPayload('route preSerialization'), hooks.callbackPayload('route preSerialization (callback)')],
      onSend: [hooks.asyncPayload('route onSend'), hooks.callbackPayload('route onSend (callback)')],
    }, async (request) => {
      seen.push(`handler: expanded owner ${String(isExpanded(request, 'owner'))}`)
      handed = garfield()
      return handed
    })
  })
  t.teardown(() => app.close())
  const response = await app.inject('/pets/1')
  t.equal(response.statusCode, 200)
  t.equal(response.body, written)
  t.equal(response.headers['content-type'], json)
  t.same(seen.splice(0), [
    'app preHandler: expanded owner false',
    'app preHandler (callback): expanded owner false',
    'route preHandler: expanded owner false',
    'route preHandler (callback): expanded owner false',
    'handler: expanded owner false',
    "app preSerialization: the handler's object",
    "app preSerialization (callback): the handler's object",
    "route preSerialization: the handler's object",
    "route preSerialization (callback): the handler's object",
    `app onSend: ${written} as ${json}`,
    `app onSend (callback): ${written} as ${json}`,
    `route onSend: ${written} as ${json}`,
    `route onSend (callback): ${written} as ${json}`,
  ])

  await app.inject('/pets/1?expand=owner')
  t.same(seen.slice(0, 5), [
    'app preHandler: expanded owner true',
    'app preHandler (callback): expanded owner true',
    'route preHandler: expanded owner true',
    'route preHandler (callback): expanded owner true',
    'handler: expanded owner true',
  ], 'every preHandler and the handler see the plan')
})

t.test('a preSerialization hook may replace the payload: the replacement is written by the plan and checked', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      preSerialization: async (request) => ({ ...garfield(), name: String(request.headers['x-name'] ?? 'Odie') }),
    }, async () => garfield())
    app.get('/pets/2', {
      expandable: { resource: 'Pet' },
      preSerialization: (_request, _reply, _payload, done) => done(null, { ...garfield(), owner: 'not a key' }),
    }, async () => garfield())
    app.addHook('preSerialization', async (request, _reply, payload) => request.routeOptions.url === '/pets/3' ? { ...garfield(), id: 3 } : payload)
    app.get('/pets/3', { expandable: { resource: 'Pet' } }, async () => garfield())
  })
  t.teardown(() => app.close())
  const replaced = await app.inject('/pets/1?fields=id,name')
  t.equal(replaced.statusCode, 200)
  t.equal(replaced.body, '{"id":1,"name":"Odie"}', "the replacement, by the request's plan")
  const refused = await app.inject('/pets/2')
  t.equal(refused.statusCode, 500)
  t.equal(refused.json().code, 'FST_EXPAND_INVALID_DATA', 'a replacement that does not fit is refused as the handler\'s would be')
  const byApplication = await app.inject('/pets/3?fields=id')
  t.equal(byApplication.body, '{"id":3}', "an application hook's replacement too")
})

t.test("an onSend hook sees the compiled body and may replace it, as on any route; a hook's own error goes to the error handler", async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
      reply.code(error.statusCode ?? 500).send({ handled: (error as { code?: string }).code ?? error.message })
    })
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      onSend: async (_request, reply, payload) => {
        reply.header('x-length', String((payload as string).length))
        return (payload as string).toUpperCase()
      },
    }, async () => garfield())
    app.get('/pets/2', {
      expandable: { resource: 'Pet' },
      // Fails once: the error handler's reply passes it.
      onSend: (_request, reply, payload, done) => reply.statusCode === 200 ? done(new Error('onSend failed')) : done(null, payload),
    }, async () => garfield())
  })
  t.teardown(() => app.close())
  const response = await app.inject('/pets/1?fields=id')
  t.equal(response.body, '{"ID":1}')
  t.equal(response.headers['x-length'], String('{"id":1}'.length))
  const failed = await app.inject('/pets/2')
  t.equal(failed.statusCode, 500)
  t.same(failed.json(), { handled: 'onSend failed' })
})

t.test("errors of the plan go through the application's error handler; an error handler's 2xx reply is written by the plan", async (t) => {
  const handled: string[] = []
  const app = await buildApp({ resources }, (app) => {
    app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      handled.push(`${request.url}: ${(error as { code?: string }).code}`)
      if (request.headers['x-recover'] === 'yes') {
        reply.code(200).send(garfield())
        return
      }
      reply.code(error.statusCode ?? 500).send({ refused: (error as { code?: string }).code })
    })
    app.get('/pets/1', { expandable: { resource: 'Pet' } }, async () => garfield())
    app.get('/pets/2', { expandable: { resource: 'Pet' } }, async () => { throw Object.assign(new Error('gone'), { statusCode: 410, code: 'GONE' }) })
  })
  t.teardown(() => app.close())
  const refused = await app.inject('/pets/1?expand=nope')
  t.equal(refused.statusCode, 400)
  t.same(refused.json(), { refused: 'FST_EXPAND_UNKNOWN_FIELD' })
  const recovered = await app.inject({ url: '/pets/2?fields=id,name', headers: { 'x-recover': 'yes' } })
  t.equal(recovered.statusCode, 200)
  t.equal(recovered.body, '{"id":1,"name":"Garfield"}', 'the 2xx body of the error handler is the plan\'s')
  t.same(handled, ['/pets/1?expand=nope: FST_EXPAND_UNKNOWN_FIELD', '/pets/2?fields=id,name: GONE'])
})

t.test("non-2xx bodies keep Fastify's serializer: the route's response schema of that status, or JSON.stringify", async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get<{ Params: { id: string } }>('/pets/:id', {
      expandable: { resource: 'Pet' },
      schema: { response: { 404: { type: 'object', properties: { missing: { type: 'string' } } } } },
    }, async (request, reply) => reply.code(request.params.id === '404' ? 404 : 409).send({ missing: request.params.id, secret: 'kept or not' }))
  })
  t.teardown(() => app.close())
  const missing = await app.inject('/pets/404?fields=id')
  t.equal(missing.statusCode, 404)
  t.equal(missing.body, '{"missing":"404"}', "the 404 schema's serializer")
  t.equal(missing.headers['content-type'], json)
  const conflict = await app.inject('/pets/409?fields=id')
  t.equal(conflict.statusCode, 409)
  t.equal(conflict.body, '{"missing":"409","secret":"kept or not"}', 'JSON.stringify where the route has no schema for the status')
})

t.test("a 2xx reply one of the route's hooks sends before the handler is written by the request's plan, in every phase; a raw one is refused", async (t) => {
  type Answer = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined
  const answer: Answer = (request, reply) => {
    if (request.headers['x-answer'] === 'object') return reply.send(garfield())
    if (request.headers['x-answer'] === 'string') return reply.type(json).send(written)
    if (request.headers['x-answer'] === 'denied') return reply.code(401).send({ denied: true, secret: 'kept' })
    return undefined
  }
  const app = await buildApp({ resources }, (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (request.headers['x-answer'] === 'application') return reply.code(401).send({ denied: 'by the application' })
    })
    const handler = async () => { throw new Error('not reached') }
    app.get('/on-request', { expandable: { resource: 'Pet' }, onRequest: async (request, reply) => { answer(request, reply) } }, handler)
    app.get('/pre-parsing', { expandable: { resource: 'Pet' }, preParsing: async (request, reply, payload) => { answer(request, reply); return payload } }, handler)
    app.get('/pre-validation', { expandable: { resource: 'Pet' }, preValidation: (request, reply, done) => { if (answer(request, reply) === undefined) done() } }, handler)
    app.get('/pre-handler', { expandable: { resource: 'Pet' }, preHandler: [(_request, _reply, done) => done(), async (request, reply) => { answer(request, reply) }] }, handler)
  })
  t.teardown(() => app.close())
  for (const url of ['/on-request', '/pre-parsing', '/pre-validation', '/pre-handler']) {
    const answered = await app.inject({ url: `${url}?fields=id,name`, headers: { 'x-answer': 'object' } })
    t.equal(answered.statusCode, 200, url)
    t.equal(answered.body, '{"id":1,"name":"Garfield"}', url)
    t.equal(answered.headers['content-type'], json, url)
    const refused = await app.inject({ url: `${url}?fields=nope`, headers: { 'x-answer': 'object' } })
    t.equal(refused.statusCode, 400, `${url}: planned when written`)
    t.equal(refused.json().code, 'FST_EXPAND_UNKNOWN_FIELD', url)
    const raw = await app.inject({ url, headers: { 'x-answer': 'string' } })
    t.equal(raw.statusCode, 500, url)
    t.equal(raw.json().code, 'FST_EXPAND_INVALID_DATA', url)
    const denied = await app.inject({ url: `${url}?expand=nope`, headers: { 'x-answer': 'denied' } })
    t.equal(denied.statusCode, 401, `${url}: a refusal before the plan is not planned: its invalid expand is not looked at`)
    t.equal(denied.body, '{"denied":true,"secret":"kept"}', `${url}: a non-2xx body is Fastify's to write`)
  }
  const application = await app.inject({ url: '/pre-handler?expand=nope', headers: { 'x-answer': 'application' } })
  t.equal(application.statusCode, 401)
  t.equal(application.body, '{"denied":"by the application"}', "an application hook's refusal comes first, as on any route")
})

t.test('a route of a child context keeps its context: its hooks, not a sibling\'s', async (t) => {
  const seen: string[] = []
  const app = Fastify()
  await app.register(expandPlugin, { resources })
  await app.register(async (child: FastifyInstance) => {
    child.addHook('preSerialization', async (_request, _reply, payload) => { seen.push('child'); return payload })
    child.get('/pets/1', { expandable: { resource: 'Pet' } }, async () => garfield())
  }, { prefix: '/child' })
  await app.register(async (sibling: FastifyInstance) => {
    sibling.addHook('preSerialization', async (_request, _reply, payload) => { seen.push('sibling'); return payload })
  })
  await app.ready()
  t.teardown(() => app.close())
  const response = await app.inject('/child/pets/1?fields=id')
  t.equal(response.body, '{"id":1}')
  t.same(seen, ['child'])
})

t.test("a body a preSerialization hook turns into a non-2xx reply is Fastify's to write", async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      preSerialization: async (_request, reply) => {
        reply.code(404)
        return { missing: 1, secret: 'kept' }
      },
    }, async () => garfield())
  })
  t.teardown(() => app.close())
  const response = await app.inject('/pets/1?fields=id')
  t.equal(response.statusCode, 404)
  t.equal(response.body, '{"missing":1,"secret":"kept"}')
  t.equal(response.headers['content-type'], json)
})

t.test('every body Fastify would send as it is is refused on a 2xx; one it serializes is written by the plan', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/bytes', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(new Uint8Array([123, 125])))
    app.get('/web-stream', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(new ReadableStream({ start: (controller) => controller.close() })))
    app.get('/response', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(new Response('{}')))
    app.get('/number', { expandable: { resource: 'Pet' } }, async () => 42)
    app.get('/null', { expandable: { resource: 'Pet' } }, async (_request, reply) => reply.send(null))
  })
  t.teardown(() => app.close())
  for (const [url, sent] of [['/bytes', 'a Buffer'], ['/web-stream', 'a stream'], ['/response', 'a stream']]) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 500, url)
    t.equal(response.json().message, `Data for Pet does not fit the response: the handler sent ${sent}; return the data itself and fastify-expand writes it`, url)
  }
  for (const url of ['/number', '/null']) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 500, url)
    t.equal(response.json().code, 'FST_EXPAND_INVALID_DATA', `${url}: the data check refuses it`)
  }
})
