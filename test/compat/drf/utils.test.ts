// Port of drf-flex-fields' tests/test_utils.py: is_expanded / is_included.
// There they read the raw query; here they read the validated plan of the
// request, so the names must exist: the resource X has relations a, b, c, d
// (each to X again) and the fields name, address, hobby, friend.
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import t from 'tap'
import { defineResource, isExpanded, isIncluded, type AnyResource } from '../../../plugin/index.js'
import { buildApp, getJson } from '../../helpers/app.js'

const X: AnyResource = defineResource({
  name: 'X',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    address: Type.String(),
    hobby: Type.String(),
    a: Type.Integer(),
    b: Type.Integer(),
    c: Type.Integer(),
    d: Type.Integer(),
    friend: Type.Integer(),
  }),
  fields: ['id', 'name', 'address', 'hobby', 'a', 'b', 'c', 'd', 'friend'],
  expandable: { a: 'X', b: 'X', c: 'X', d: 'X', friend: 'X' },
})

/** Answers for each of `paths`, from a handler that returns data shaped by isExpanded. */
async function answers (query: string, paths: string[], ask: (request: FastifyRequest, path: string) => boolean) {
  let seen: boolean[] = []
  const shape = (request: FastifyRequest, prefix: string): Record<string, unknown> => {
    const record: Record<string, unknown> = { id: 1, name: 'n', address: 'ad', hobby: 'h' }
    for (const field of ['a', 'b', 'c', 'd', 'friend']) {
      record[field] = isExpanded(request, prefix + field) ? shape(request, `${prefix}${field}.`) : 1
    }
    return record
  }
  const app = await buildApp({ resources: [X] }, (app) => {
    app.get('/x', { expandable: { resource: X } }, async (request) => {
      seen = paths.map((path) => ask(request, path))
      return shape(request, '')
    })
  })
  const reply = await getJson(app, `/x?${query}`)
  t.equal(reply.status, 200, query)
  return seen
}

t.test('test_should_be_included', async (t) => {
  t.same(await answers('', ['name'], isIncluded), [true])
})

t.test('test_should_not_be_included', async (t) => {
  t.same(await answers('omit=name,address', ['name'], isIncluded), [false])
})

t.test('test_should_not_be_included_and_due_to_omit_and_has_dot_notation', async (t) => {
  // drf-flex-fields answers False for 'name' with omit=friend.name,address; here
  // omit=friend.name leaves the top-level name alone (only the nested one goes),
  // and without expand=friend it has no effect at all.
  t.same(await answers('omit=friend.name,address', ['name', 'address', 'friend', 'friend.name'], isIncluded), [true, false, true, false])
  t.same(await answers('expand=friend&omit=friend.name,address', ['name', 'friend.name', 'friend.hobby'], isIncluded), [true, false, true])
})

t.test('test_should_not_be_included_and_due_to_fields_and_has_dot_notation', async (t) => {
  t.same(await answers('fields=hobby,address', ['name', 'hobby', 'address'], isIncluded), [false, true, true])
})

t.test('test_is_expanded', async (t) => {
  const cases: [string, string, boolean][] = [
    ['a', 'a', true],
    ['a', 'b', false],
    ['a,b,c', 'a', true],
    ['a,b,c', 'b', true],
    ['a,b,c', 'c', true],
    ['a,b,c', 'd', false],
    ['a.b.c', 'a', true],
    ['a.b.c', 'a.b', true],
    ['a.b.c', 'a.b.c', true],
    ['a.b.c', 'b', false],
    ['a.b.c', 'c', false],
    ['a.b.c', 'd', false],
    ['a.b.c,d', 'a', true],
    ['a.b.c,d', 'd', true],
    ['*', 'a', true],
    ['*', 'a.b', false],
    ['~all', 'a', true],
    ['~all', 'a.b', false],
  ]
  for (const [expand, field, expected] of cases) {
    t.same(await answers(`expand=${expand}`, [field], isExpanded), [expected], `expand=${expand}: ${field}`)
  }
})
