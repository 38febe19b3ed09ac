import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, expandOpenApi } from '../../plugin/index.js'
import { resources as petResources } from '../fixtures/pets.js'
import { petStore } from '../helpers/pet-world.js'

// A schema field that is neither in the resource's fields, nor expandable, nor
// nested can never be shown, so for clients it does not exist: naming it in
// fields or omit is the 400 of an unknown name, and neither error messages
// nor the OpenAPI document reveal it. The same holds for the fields a relation's
// options leave out (Pet.toys omits Toy's secret, Pet.sold_from shows only
// PetStore's id and name).

const Author = defineResource({
  name: 'Author',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String(), password_hash: Type.String() }),
  fields: ['id', 'name', 'email'],
})

const stored = { id: 1, name: 'Ann', email: 'ann@example.com', password_hash: 'never-shown' }

async function build (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { resources: [Author, ...petResources] })
  app.get('/authors/1', { expandable: { resource: Author } }, async () => stored)
  app.get('/authors', { expandable: { resource: Author, list: true } }, async () => [stored])
  app.get('/pets/1', { expandable: { resource: 'Pet' } }, async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', 1)!))
  await app.ready()
  return app
}

interface ErrorBody { statusCode: number; code: string; error: string; message: string }

const unknownName = 'no_such_field'

async function errorOf (t: Test, app: FastifyInstance, url: string): Promise<ErrorBody> {
  const response = await app.inject(url)
  const body = response.json() as ErrorBody
  t.equal(response.statusCode, 400, `${url}: status`)
  t.same({ ...body, message: typeof body.message }, { statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message: 'string' }, `${url}: body`)
  return body
}

/**
 * `url` names `hidden`: its 400 must be the one the same URL gets with an
 * unknown name in its place (only the name the client typed differs), and
 * that one must not reveal `hidden`.
 */
async function sameAsUnknown (t: Test, app: FastifyInstance, url: string, hidden: string): Promise<void> {
  const unknown = await errorOf(t, app, url.replaceAll(hidden, unknownName))
  const named = await errorOf(t, app, url)
  t.notOk(unknown.message.includes(hidden), `${url}: an unknown name's message does not list '${hidden}': ${unknown.message}`)
  t.same(named, { ...unknown, message: unknown.message.replaceAll(unknownName, hidden) }, `${url}: the same 400 as an unknown name: ${named.message}`)
}

t.test('a field outside fields, expandable and nested does not exist for clients', async (t) => {
  const app = await build()
  t.teardown(() => app.close())

  await sameAsUnknown(t, app, '/authors/1?fields=password_hash', 'password_hash')
  await sameAsUnknown(t, app, '/authors/1?omit=password_hash', 'password_hash')
  await sameAsUnknown(t, app, '/authors/1?fields=id,password_hash', 'password_hash')
  await sameAsUnknown(t, app, '/authors?fields=password_hash', 'password_hash')
  await sameAsUnknown(t, app, '/authors?omit=password_hash', 'password_hash')

  for (const url of ['/authors/1', '/authors/1?fields=*', '/authors/1?omit=email', '/authors/1?fields=id,name']) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 200, `${url}: status`)
    t.notOk(response.body.includes('password_hash') || response.body.includes('never-shown'), `${url}: never shown`)
  }
  const plain = await app.inject('/authors/1')
  t.same({ status: plain.statusCode, body: plain.body }, { status: 200, body: '{"id":1,"name":"Ann","email":"ann@example.com"}' })
})

t.test('fields a relation leaves out do not exist inside it', async (t) => {
  const app = await build()
  t.teardown(() => app.close())

  await sameAsUnknown(t, app, '/pets/1?expand=toys&fields=toys.secret', 'secret')
  await sameAsUnknown(t, app, '/pets/1?expand=toys&fields=id,toys.id,toys.secret', 'secret')
  await sameAsUnknown(t, app, '/pets/1?expand=toys&omit=toys.secret', 'secret')
  await sameAsUnknown(t, app, '/pets/1?expand=sold_from&fields=sold_from.address', 'address')

  const toys = await app.inject('/pets/1?expand=toys&fields=id,toys.name')
  t.same({ status: toys.statusCode, body: toys.body }, { status: 200, body: '{"id":1,"toys":[{"name":"paper ball"},{"name":"string"}]}' })
  const control = await app.inject('/pets/1?expand=owner&fields=owner.hobbies')
  t.same({ status: control.statusCode, body: control.body }, { status: 200, body: '{"owner":{"hobbies":"lasagna"}}' }, 'a visible nested field is still accepted')
})

t.test('the OpenAPI description does not reveal them', async (t) => {
  const documentation = expandOpenApi({ resources: [Author, ...petResources] })
  const author = JSON.stringify([
    documentation.describeRoute({ resource: Author }),
    documentation.describeRoute({ resource: Author, list: true }),
    documentation.components(),
  ])
  t.notOk(author.includes('password_hash'), 'Author: no password_hash')
  t.ok(author.includes('email'), 'Author: its fields are described')

  const pets = expandOpenApi({ resources: petResources })
  const pet = JSON.stringify([pets.describeRoute({ resource: 'Pet' }), pets.describeRoute({ resource: 'Pet', list: true }), pets.components()])
  t.notOk(pet.includes('secret'), "Pet: not the toys' secret")
  t.notOk(pet.includes('address'), "Pet: not the store's address")
})
