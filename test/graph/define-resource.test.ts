import { Type, type TObject } from '@sinclair/typebox'
import t from 'tap'
import { createSerializer, defineResource, isResource, type AnyResource } from '../../plugin/index.js'
import { buildApp, getJson, MemoryStore } from '../helpers/app.js'

const Maker = defineResource({
  name: 'Maker',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), country: Type.String() }),
  fields: ['id', 'name', 'country'],
})

t.test('the four relation forms', async (t) => {
  const Gadget = defineResource({
    name: 'Gadget',
    schema: Type.Object({
      id: Type.Integer(),
      byObject: Type.Integer(),
      byTuple: Type.Integer(),
      byName: Type.Integer(),
      byThunk: Type.Integer(),
      byNameTuple: Type.Array(Type.Integer()),
      byThunkTuple: Type.Integer(),
    }),
    fields: ['id', 'byObject', 'byTuple', 'byName', 'byThunk', 'byNameTuple', 'byThunkTuple'],
    expandable: {
      byObject: Maker,
      byTuple: [Maker, { fields: ['name'] }],
      byName: 'Maker',
      byThunk: () => Maker,
      byNameTuple: ['Maker', { many: true, omit: ['country'] }],
      byThunkTuple: [() => Maker, { omit: ['id', 'name'] }],
    },
  })
  const store = new MemoryStore(
    {
      Gadget: { 1: { id: 1, byObject: 9, byTuple: 9, byName: 9, byThunk: 9, byNameTuple: [9, 9], byThunkTuple: 9 } },
      Maker: { 9: { id: 9, name: 'Bosch', country: 'DE' } },
    },
    { Gadget: Object.fromEntries(['byObject', 'byTuple', 'byName', 'byThunk', 'byNameTuple', 'byThunkTuple'].map((field) => [field, { type: 'Maker', many: field === 'byNameTuple' }])) }
  )
  const app = await buildApp({ resources: [Gadget] }, (app) => {
    app.get('/g', { expandable: { resource: Gadget } }, async (request) => store.shape(request, 'Gadget', store.get('Gadget', 1)!))
  })
  t.equal((await getJson(app, '/g')).text, '{"id":1,"byObject":9,"byTuple":9,"byName":9,"byThunk":9,"byNameTuple":[9,9],"byThunkTuple":9}')
  const maker = { id: 9, name: 'Bosch', country: 'DE' }
  t.same((await getJson(app, '/g?expand=*')).body, {
    id: 1,
    byObject: maker,
    byTuple: { name: 'Bosch' },
    byName: maker,
    byThunk: maker,
    byNameTuple: [{ id: 9, name: 'Bosch' }, { id: 9, name: 'Bosch' }],
    byThunkTuple: { country: 'DE' },
  })
})

t.test('defineResource returns a frozen resource and keeps what it was given', async (t) => {
  t.ok(isResource(Maker))
  t.notOk(isResource({ name: 'Maker' }))
  t.ok(Object.isFrozen(Maker))
  t.ok(Object.isFrozen(Maker.fields))
  t.equal(Maker.name, 'Maker')
  t.equal(Maker.primaryKey, 'id')
  t.same(Maker.fields, ['id', 'name', 'country'])
})

/** Every definition error is FST_EXPAND_INVALID_DEFINITION with a message naming the parts at fault. */
t.test('definition errors', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), name: Type.String(), maker: Type.Integer() })
  const cases: [string, () => unknown, RegExp][] = [
    ['unknown field in fields', () => defineResource({ name: 'Tool', schema, fields: ['id', 'nope' as 'id'] }), /Resource 'Tool'.*'nope'/],
    ['field listed twice', () => defineResource({ name: 'Tool', schema, fields: ['id', 'id'] }), /Resource 'Tool'.*'id' twice/],
    ['unknown field in expandable', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { vendor: Maker } as never }), /Resource 'Tool'.*expandable.*'vendor'/],
    ['unknown field in nested', () => defineResource({ name: 'Tool', schema, fields: ['id'], nested: { vendor: Maker } as never }), /Resource 'Tool'.*nested.*'vendor'/],
    ['unknown option', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandables: {} } as never), /Resource 'Tool'.*unknown option 'expandables'/],
    ['unknown relation option', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: [Maker, { manny: true }] } as never }),
      /Resource 'Tool'.*field 'maker'.*unknown option 'manny'/],
    ['bad reference: a number', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: 42 } as never }), /Resource 'Tool'.*field 'maker'.*'42'/],
    ['bad reference: malformed name', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: 'app..Maker' } }), /Resource 'Tool'.*field 'maker'.*'app\.\.Maker'/],
    ['bad reference: a plain object', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: { name: 'Maker' } } as never }), /Resource 'Tool'.*field 'maker'/],
    ['tuple of the wrong length', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: [Maker] } as never }), /Resource 'Tool'.*field 'maker'/],
    ['many not a boolean', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: [Maker, { many: 'yes' }] } as never }), /field 'maker'.*many/],
    ['relation fields not a list', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: [Maker, { fields: 'name' }] } as never }), /field 'maker'.*fields/],
    ['both expandable and nested', () => defineResource({ name: 'Tool', schema, fields: ['id'], expandable: { maker: Maker }, nested: { maker: Maker } }), /'maker' is both expandable and nested/],
    ['name not an identifier', () => defineResource({ name: 'my tool', schema, fields: ['id'] }), /name/],
    ['schema not an object schema', () => defineResource({ name: 'Tool', schema: Type.String() as unknown as TObject, fields: [] }), /Resource 'Tool'.*schema/],
    ['fields not a list', () => defineResource({ name: 'Tool', schema, fields: 'id' as never }), /Resource 'Tool'.*fields/],
    ['maxDepth zero', () => defineResource({ name: 'Tool', schema, fields: ['id'], maxDepth: 0 }), /Resource 'Tool'.*maxDepth/],
    // The plugin's statements name their own columns and tables __expand_...: a field or table so named would be read in their place.
    ['a field named as the plugin\'s own columns', () => defineResource({
      name: 'Tool', table: 'tools', schema: Type.Object({ id: Type.Integer(), __expand_total: Type.Integer() }), fields: ['id', '__expand_total'],
    }), /^Resource 'Tool': field '__expand_total' begins with __expand_, which the statements of fastify-expand keep for their own names: rename it$/],
    ['an aggregate named so', () => defineResource({
      name: 'Tool',
      table: 'tools',
      schema: Type.Object({ id: Type.Integer(), parts: Type.Array(Type.Integer()) }),
      fields: ['id'],
      expandable: { parts: [Maker, { many: true, foreignKey: 'tool_id' }] },
      aggregates: { __expand_parent: { count: 'parts' } },
    }), /^Resource 'Tool': aggregate '__expand_parent' begins with __expand_/],
    ['a computed field named so', () => defineResource({
      name: 'Tool', table: 'tools', schema, fields: ['id'], computed: { __expand_row: { schema: Type.Integer(), sql: () => null } } as never,
    }), /^Resource 'Tool': computed field '__expand_row' begins with __expand_/],
    ['a table named so', () => defineResource({ name: 'Tool', table: '__expand_source_0', schema, fields: ['id'] }),
      /^Resource 'Tool': table '__expand_source_0' begins with __expand_/],
  ]
  for (const [label, define, message] of cases) {
    t.throws(define, { code: 'FST_EXPAND_INVALID_DEFINITION', message }, label)
  }
})

t.test('relation options checked against the related resource fail when the registry is built', async (t) => {
  const Tool = defineResource({
    name: 'Tool',
    schema: Type.Object({ id: Type.Integer(), maker: Type.Integer() }),
    fields: ['id', 'maker'],
    expandable: { maker: [Maker, { omit: ['vat'] }] },
  })
  t.throws(() => createSerializer(Tool), { code: 'FST_EXPAND_INVALID_DEFINITION', message: /Resource 'Tool', field 'maker': omit names 'vat', which Maker does not have/ })
})

/** A copy that keeps TypeBox's symbol keys, which JSON and t.same would not see. */
function deepCopy (value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  const copy: Record<string | symbol, unknown> = Array.isArray(value) ? [] as unknown as Record<string, unknown> : {}
  for (const key of Reflect.ownKeys(value)) copy[key] = deepCopy((value as Record<string | symbol, unknown>)[key])
  return copy
}

function sameDeep (a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b)
  const keysA = Reflect.ownKeys(a)
  const keysB = Reflect.ownKeys(b)
  if (keysA.length !== keysB.length) return false
  return keysA.every((key, index) => key === keysB[index] &&
    sameDeep((a as Record<string | symbol, unknown>)[key], (b as Record<string | symbol, unknown>)[key]))
}

t.test('defineResource, the registry and compiled serializers never change the TypeBox schema', async (t) => {
  const schema = Type.Object({
    id: Type.Integer(),
    made: Type.Date(),
    label: Type.Union([Type.String(), Type.Null()]),
    maker: Type.Integer(),
    tags: Type.Array(Type.String()),
  })
  const before = deepCopy(schema)
  const Tool = defineResource({ name: 'Tool', schema, fields: ['id', 'made', 'label', 'maker', 'tags'], expandable: { maker: Maker } })
  t.equal(Tool.schema, schema, 'the same schema object is kept')
  const app = await buildApp({ resources: [Tool] }, (app) => {
    app.get('/tool', { expandable: { resource: Tool } }, async () => ({ id: 1, made: new Date(0), label: null, maker: { id: 2, name: 'M', country: 'FR' }, tags: [] }))
  })
  const reply = await getJson(app, '/tool?expand=maker')
  t.equal(reply.text, '{"id":1,"made":"1970-01-01T00:00:00.000Z","label":null,"maker":{"id":2,"name":"M","country":"FR"},"tags":[]}')
  createSerializer(Tool, { expand: 'maker', fields: 'id,maker.name' }).stringify({ id: 1, maker: { name: 'x' } })
  t.ok(sameDeep(schema, before), 'deep-equal, symbols included, after definition, registration and compilation')
  t.same(schema, before)
})

t.test('a definition object is not changed either', async (t) => {
  const definition = {
    name: 'Tool',
    schema: Type.Object({ id: Type.Integer(), maker: Type.Integer() }),
    fields: ['id', 'maker'] as ('id' | 'maker')[],
    expandable: { maker: [Maker, { fields: ['name'] }] as [AnyResource, { fields: string[] }] },
  }
  const before = deepCopy(definition)
  const Tool = defineResource(definition)
  createSerializer(Tool, { expand: 'maker' })
  t.ok(sameDeep(definition, before))
  definition.fields.push('id')
  t.same(Tool.fields, ['id', 'maker'], 'later changes to the definition do not reach the resource')
})
