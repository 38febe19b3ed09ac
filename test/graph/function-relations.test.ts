// A relation resolved by a function (its `load` option) as defineResource
// checks it and the graph links it, and the places that need a table's
// statement refusing it at startup with a message that says why: list
// filters and sort keys through it, `exists` on it, expanded lists of it.
// The OpenAPI document writes it as the to-one or to-many relation it is.
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import expandPlugin, { defineResource, expandOpenApi, type RelationLoad } from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'

const load: RelationLoad = async () => new Map()

const Weather = defineResource({
  name: 'Weather',
  schema: Type.Object({ id: Type.Integer(), sky: Type.String() }),
  fields: ['id', 'sky'],
})

const City = defineResource({
  name: 'City',
  table: 'cities',
  schema: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    weather: Type.Union([Type.Integer(), Type.Null()]),
    forecasts: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'name', 'weather', 'forecasts'],
  expandable: {
    weather: [Weather, { column: 'weather_id', load }],
    forecasts: [Weather, { many: true, load }],
  },
})

t.test('the function kind: to-one by its column, to-many by the owner\'s primary key; its target needs no table', async (t) => {
  const node = new ResourceGraph([City], { loadsFromDatabase: true }).node(City)
  const weather = node.relations.get('weather')!
  const forecasts = node.relations.get('forecasts')!
  t.same(weather.link, { kind: 'function', many: false, column: 'weather_id', load })
  t.same(forecasts.link, { kind: 'function', many: true, load })
  t.same([weather.many, forecasts.many], [false, true])
  t.ok(Object.isFrozen(weather.link))
  const Plain = defineResource({
    name: 'Plain',
    table: 'plain',
    schema: Type.Object({ id: Type.Integer(), weather: Type.Integer() }),
    fields: ['id', 'weather'],
    expandable: { weather: [Weather, { load }] },
  })
  const plain = new ResourceGraph([Plain], { loadsFromDatabase: true }).node(Plain).relations.get('weather')!
  t.same(plain.link, { kind: 'function', many: false, column: 'weather', load }, "the field's column by default")
})

t.test('a to-many function relation needs its owner\'s primary key, which its keys are', async (t) => {
  const Keyless = defineResource({
    name: 'Keyless',
    schema: Type.Object({ code: Type.String(), forecasts: Type.Array(Type.Integer()) }),
    fields: ['code'],
    expandable: { forecasts: [Weather, { many: true, load }] },
  })
  t.throws(() => new ResourceGraph([Keyless]), {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: "Resource 'Keyless', field 'forecasts': the related rows are found by Keyless's primary key 'id', which is not in its schema; " +
      'set primaryKey to the field holding the key',
  })
})

t.test('load options that make no relation fail when the resource is defined', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), one: Type.Integer(), many: Type.Array(Type.Integer()) })
  const define = (field: 'one' | 'many', options: Record<string, unknown>) => () => defineResource({
    name: 'Bad', table: 'bad', schema, fields: ['id'], expandable: { [field]: [Weather, options] } as never,
  })
  const prefix = (field: string) => `Resource 'Bad': expandable field '${field}': `
  const keysMessage = (option: string) =>
    `load resolves the relation itself: ${option} is for relations read from the database; remove it (a to-one load may take column, the column holding its key)`
  const cases: Array<['one' | 'many', Record<string, unknown>, string]> = [
    ['one', { load: 'fetchWeather' }, 'load must be a function (keys, { request, signal }) returning a Promise of a Map from key to row (or to rows with many: true)'],
    ['many', { many: true, load, through: { table: 'x', from: 'a', to: 'b' } }, keysMessage('through')],
    ['many', { many: true, load, foreignKey: 'bad_id' }, keysMessage('foreignKey')],
    ['many', { many: true, load, orderBy: 'sky' }, keysMessage('orderBy')],
    ['many', { many: true, load, limit: 3 }, keysMessage('limit')],
    ['many', { many: true, load, column: 'x' }, 'column is for to-one relations; a to-many relation takes foreignKey or through'],
  ]
  for (const [field, options, message] of cases) {
    t.throws(define(field, options), { code: 'FST_EXPAND_INVALID_DEFINITION', message: prefix(field) + message }, JSON.stringify(options))
  }
})

t.test('lists cannot filter or sort through a function relation, nor list it as an expanded list', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources: [City] })
  t.teardown(() => app.close())
  const attempt = (options: Parameters<typeof app.expand.routes>[2]) => {
    try {
      app.expand.routes(`/cities${Math.random()}`, City, options)
      return 'registered'
    } catch (error) {
      return (error as Error).message.replace(/^expand\.routes\('[^']+'\): /, '')
    }
  }
  const noTable = 'its rows are in no table a statement reads, so a list cannot filter by them'
  t.equal(attempt({ filter: { 'weather.sky': ['eq'] } }), `filter 'weather.sky': 'weather' of City is resolved by a function (load): ${noTable}`)
  t.equal(attempt({ filter: { forecasts: ['exists'] } }), `filter 'forecasts': 'forecasts' of City is resolved by a function (load): ${noTable}`)
  t.equal(attempt({ sort: ['weather.sky'] }), "sort: 'weather.sky' goes through 'weather' of City, which is resolved by a function (load): " +
    'its rows are in no table a statement reads, so they cannot order a list')
  t.match(attempt({ expandedLists: { forecasts: {} } }), "expandedLists 'forecasts' is not a path of expandable relations ending in a to-many one: " +
    'City.forecasts is resolved by a function (load), which returns its rows as they are: a statement cannot order, limit or filter them')
  t.equal(attempt({ filter: { weather: ['eq', 'null'] }, sort: ['weather'] }), 'registered', "a to-one function relation's own column filters and sorts")
})

t.test('the OpenAPI document writes a function relation as the to-one or to-many relation it is', async (t) => {
  const app = Fastify()
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: expandOpenApi({ resources: [City] }).transform })
  await app.register(expandPlugin, { resources: [City] })
  app.get('/cities/:id', { expandable: { resource: City } }, async () => ({}))
  await app.ready()
  t.teardown(() => app.close())
  const { components } = app.swagger() as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }
  t.same(components.schemas.City!.properties.weather, {
    description: 'Identifier of the Weather; the object when expanded',
    anyOf: [{ type: ['integer', 'null'] }, { $ref: '#/components/schemas/Weather' }],
  })
  t.same(components.schemas.City!.properties.forecasts, {
    description: 'Identifiers of the Weather list; the objects when expanded',
    anyOf: [{ type: 'array', items: { type: 'integer' } }, { type: 'array', items: { $ref: '#/components/schemas/Weather' } }],
  })
})
