// Smoke test of the packed package, run in a scratch project that installed
// only the tarball and the peers a user installs: two resources, the generated
// routes, and an expanded request on SQLite, checked byte for byte.
import assert from 'node:assert/strict'
import { createSerializer, requestErrorCodes } from 'fastify-expand'
import { peopleApp } from './people-app.mjs'

const { app, db, Company, Person } = await peopleApp()

const expanded = await app.inject({ method: 'GET', url: '/people?expand=employer' })
assert.equal(expanded.statusCode, 200, expanded.body)
assert.equal(expanded.headers['content-type'], 'application/json; charset=utf-8')
assert.equal(expanded.body,
  '{"data":[{"id":1,"name":"Jon","employer":{"id":1,"name":"Acme"}},{"id":2,"name":"Liz","employer":null}],' +
  '"limit":20,"offset":0,"total":2}')

const one = await app.inject({ method: 'GET', url: '/people/1?fields=name,employer' })
assert.equal(one.statusCode, 200, one.body)
assert.equal(one.body, '{"name":"Jon","employer":1}')

const unknown = await app.inject({ method: 'GET', url: '/people/1?expand=boss' })
assert.equal(unknown.statusCode, 400)
assert.ok(requestErrorCodes.includes(JSON.parse(unknown.body).code), unknown.body)

const serialize = createSerializer(Person, { resources: [Company], expand: 'employer' })
assert.equal(serialize.stringify({ id: 3, name: 'Ann', employer: { id: 1, name: 'Acme' } }),
  '{"id":3,"name":"Ann","employer":{"id":1,"name":"Acme"}}')

await app.close()
await db.destroy()
console.log('pack smoke test: ok')
