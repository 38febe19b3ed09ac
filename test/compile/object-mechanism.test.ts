import fastJson from 'fast-json-stringify'
import t from 'tap'
import { compileOptions } from '../../plugin/compile/mechanisms.js'
import { responseSchema } from '../../plugin/compile/response-schema.js'
import { planRequest } from '../../plugin/plan/request-plan.js'
import { resources } from '../fixtures/pets.js'
import { buildApp } from '../helpers/app.js'
import { petStore } from '../helpers/pet-world.js'

/*
 * fast-json-stringify's objectMechanism 'native', which it turns on only where
 * V8 has the JSON.stringify fast path (Node 25+), against its generated code
 * (`compileOptions`) on the plugin's schemas. Its test switch `forceProjection`
 * runs the projection here too, so every runtime checks that both write the
 * same bytes. The plugin does not serialize with it (serializer-cache.ts).
 */
t.test('the native object mechanism writes the bytes of the generated code', async (t) => {
  let projected = 0
  const compared: string[] = []
  const app = await buildApp({ resources }, (app) => {
    app.addHook('preSerialization', async (request, _reply, payload) => {
      const plan = planRequest(request)
      if (plan === null) return payload
      const schema = responseSchema(plan.expansion)
      const options = { ...compileOptions, objectMechanism: 'native', forceProjection: true } as Parameters<typeof fastJson>[1]
      const { code } = fastJson(schema, { ...options, mode: 'debug' }) as unknown as { code: string }
      if (!code.includes('anonymous0')) projected++
      t.equal(fastJson(schema, options)(payload), fastJson(schema, compileOptions)(payload), `${request.url}: same bytes`)
      compared.push(request.url)
      return payload
    })
    app.get<{ Params: { id: string } }>('/pets/:id', { expandable: { resource: 'Pet' } }, async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', request.params.id)!))
    app.get('/pets', { expandable: { resource: 'Pet', list: true } }, async (request) => petStore.shapeAll(request, 'Pet'))
  })
  t.teardown(() => app.close())
  const urls = [
    '/pets/1?fields=id,name,species',
    '/pets/1?fields=id,name,toys',
    '/pets/1?expand=toys&fields=id,toys',
    '/pets?fields=id,name,species',
    '/pets?expand=toys&omit=owner,sold_from',
    '/pets/1',
    '/pets/1?expand=owner.employer,toys,sold_from',
    '/pets?expand=owner',
  ]
  for (const url of urls) t.equal((await app.inject(url)).statusCode, 200, url)
  t.same(compared, urls, 'every response compared')
  t.ok(projected >= 3, `the projection took ${projected} of the schemas (those without nullable relations)`)
})
