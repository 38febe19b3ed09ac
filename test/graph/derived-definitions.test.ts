import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, type AnyResource } from '../../plugin/index.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { dialects } from '../fixtures/dialects.js'
import { DerivedPerson, derivedResources } from '../fixtures/derived.js'

// Aggregates and computed fields: every mistake in their definitions is a definition error naming it.

const Toy = defineResource({
  name: 'Toy', table: 'toys', schema: Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number(), kind: Type.Integer() }), fields: ['id'],
})
const schema = Type.Object({ id: Type.Integer(), name: Type.String(), toys: Type.Array(Type.Integer()), maker: Type.Integer() })
const base = {
  name: 'Pet',
  table: 'pets',
  schema,
  fields: ['id'],
  expandable: { toys: [Toy, { many: true, foreignKey: 'pet_id' }], maker: Toy },
}
// Mistakes a definition may hold at runtime, whatever its types say.
const define = (extra: Record<string, unknown>) => () => defineResource({ ...base, ...extra } as never)

t.test('defineResource checks each aggregate and computed field', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ aggregates: [] }, /aggregates must be an object of field name -> definition/],
    [{ aggregates: { 'bad name': { count: 'toys' } } }, /aggregates\.bad name/],
    [{ aggregates: { name: { count: 'toys' } } }, /aggregates\.name is also a field of schema/],
    [{ aggregates: { n: { count: 'toys', max: ['toys', 'price'] } } }, /aggregates\.n: an aggregate is an object with exactly one of count, min, max, sum, avg/],
    [{ aggregates: { n: {} } }, /exactly one of count/],
    [{ aggregates: { n: { count: 'toys', having: 1 } } }, /unknown option 'having'/],
    [{ aggregates: { n: { count: ['toys'] } } }, /count takes the name of a to-many relation/],
    [{ aggregates: { n: { max: 'toys' } } }, /max takes a to-many relation and a field of the related resource/],
    [{ aggregates: { n: { count: 'toys', where: 'price > 1' } } }, /where must be a function/],
    [{ aggregates: { n: { count: 'maker' } } }, /aggregates\.n reads 'maker', which is not a to-many relation/],
    [{ aggregates: { n: { count: 'nope' } } }, /reads 'nope'/],
    [{ computed: { c: { schema: Type.String() } } }, /computed\.c must be \{ schema, sql \}/],
    [{ computed: { c: { schema: Type.String(), sql: () => null, index: true } } }, /computed\.c: unknown option 'index'/],
    [{ computed: { id: { schema: Type.String(), sql: () => null } } }, /computed\.id is also a field of schema/],
    [{ aggregates: { c: { count: 'toys' } }, computed: { c: { schema: Type.String(), sql: () => null } } }, /'c' is both an aggregate and a computed field/],
    [{ table: undefined, expandable: {}, computed: { c: { schema: Type.String(), sql: () => null } } }, /aggregates and computed fields need a table/],
    [{ fields: ['id', 'nope'], aggregates: { n: { count: 'toys' } } }, /nope/],
  ]
  for (const [extra, message] of cases) t.throws(define(extra), { code: 'FST_EXPAND_INVALID_DEFINITION', message }, JSON.stringify(Object.keys(extra)))
  t.doesNotThrow(define({ fields: ['id', 'n', 'c'], aggregates: { n: { count: 'toys' } }, computed: { c: { schema: Type.String(), sql: () => null } } }))
})

t.test('the graph checks what an aggregate reads on the related resource', async (t) => {
  const graphOf = (resource: AnyResource) => () => new ResourceGraph([resource], { loadsFromDatabase: true })
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ aggregates: { n: { max: ['toys', 'nope'] } } }, /aggregates\.n: 'nope' is not a value field of Toy/],
    [{ aggregates: { n: { sum: ['toys', 'name'] } } }, /sum needs a number or integer field, and 'name' is not one/],
    [{ aggregates: { n: { avg: ['toys', 'name'] } } }, /avg needs a number or integer field/],
    [{ expandable: { toys: [Toy, { many: true }], maker: Toy }, aggregates: { n: { count: 'toys' } } }, /'toys' cannot be aggregated/],
    [{ expandable: { toys: [Toy, { many: true, load: async () => new Map() }], maker: Toy }, aggregates: { n: { count: 'toys' } } }, /'toys' cannot be aggregated/],
  ]
  for (const [extra, message] of cases) {
    t.throws(() => graphOf(defineResource({ ...base, ...extra } as never))(), { code: 'FST_EXPAND_INVALID_DEFINITION', message })
  }
  const graph = new ResourceGraph([defineResource({ ...base, aggregates: { low: { min: ['toys', 'price'] }, mean: { avg: ['toys', 'kind'] }, n: { count: 'toys' } } } as never)])
  const node = graph.node('Pet')
  t.same([node.fieldSchemas.get('low'), node.fieldSchemas.get('mean'), node.fieldSchemas.get('n')], [
    { type: ['number', 'null'], readOnly: true }, { type: ['number', 'null'], readOnly: true }, { type: 'integer', readOnly: true },
  ], 'min the field type or null, avg a number or null, count an integer; all read-only')
  t.same([...node.clientFields], ['id', 'toys', 'maker', 'low', 'mean', 'n'], 'names a client may use: after the relations')
})

t.test('lists filter and sort by derived fields of their own resource only', async (t) => {
  const database = await dialects()[0]!.open()
  t.teardown(() => database.close())
  const attempt = async (options: Record<string, unknown>) => {
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: derivedResources })
    try {
      app.expand.routes('/people', DerivedPerson, options)
      await app.ready()
      return 'ready'
    } catch (error) {
      return (error as Error).message
    } finally {
      await app.close()
    }
  }
  t.match(await attempt({ filter: { 'pets.toy_count': ['eq'] } }),
    /filter 'pets\.toy_count': 'toy_count' is an aggregate or computed field of Pet: a list filters and sorts by those of its own resource only/)
  t.match(await attempt({ sort: ['pets.label'] }), /sort 'pets\.label'|sortThroughMany|to-many/)
  t.match(await attempt({ sort: ['manager.shout'] }), /sort 'manager\.shout': 'shout' is an aggregate or computed field of Person/)
  t.match(await attempt({ filter: { 'pet_count.x': ['eq'] } }), /filter 'pet_count\.x': 'pet_count' is an aggregate or computed value, with no fields below it/)
  t.match(await attempt({ filter: { pet_count: ['contains'] } }), /contains/)
  t.equal(await attempt({ filter: { pet_count: ['eq', 'lt'], shout: ['contains'] }, sort: ['pet_id_avg', 'shout'] }), 'ready')
  t.match(await attempt({ expandedLists: { pets: { sort: ['toy_count'] } } }),
    /expandedLists 'pets': 'toy_count' is an aggregate or computed field: an expanded array is filtered and ordered by its stored fields/)
  t.match(await attempt({ expandedLists: { pets: { filter: { label: ['eq'] } } } }), /expandedLists 'pets': 'label' is an aggregate or computed field/)
})
