// Each relation kind as the graph builds it, the kind tables every stage reads
// it through (`relationKinds`, `ownerColumn`), and the combinations of options
// that make no kind: each fails when the resource is defined or the plugin
// starts, never as a statement later.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { ownerColumn, relationKinds, ResourceGraph, type RelationKind } from '../../plugin/graph/resource-graph.js'
import { defineResource, InvalidDefinitionError } from '../../plugin/index.js'

const Tag = defineResource({ name: 'Tag', table: 'tags', schema: Type.Object({ id: Type.Integer(), label: Type.String() }), fields: ['id', 'label'] })
const Person = defineResource({ name: 'Person', table: 'people', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
const Post = defineResource({
  name: 'Post',
  table: 'posts',
  schema: Type.Object({
    id: Type.Integer(),
    author: Type.Integer(),
    editor: Type.Integer(),
    comments: Type.Array(Type.Integer()),
    tags: Type.Array(Type.Integer()),
  }),
  fields: ['id'],
  expandable: {
    author: Person,
    editor: [Person, { column: 'editor_id' }],
    comments: [Tag, { many: true, foreignKey: 'post_id' }],
    tags: [Tag, { many: true, through: { table: 'post_tags', from: 'post_id', to: 'tag_id' } }],
  },
})

t.test('each kind with the keys it needs, and its traits from the kind table', async (t) => {
  const node = new ResourceGraph([Post], { loadsFromDatabase: true }).node(Post)
  const links = Object.fromEntries([...node.relations].map(([field, edge]) => [field, edge.link]))
  t.same(links, {
    author: { kind: 'to-one', column: 'author' },
    editor: { kind: 'to-one', column: 'editor_id' },
    comments: { kind: 'to-many', foreignKey: 'post_id' },
    tags: { kind: 'many-to-many', through: { table: 'post_tags', from: 'post_id', to: 'tag_id' } },
  })
  for (const edge of node.relations.values()) {
    t.equal(edge.many, relationKinds[edge.link.kind].many, `${edge.field}: many from its kind`)
    t.ok(Object.isFrozen(edge.link), `${edge.field}: its link is frozen`)
  }
  t.same(Object.keys(relationKinds).sort(), ['function', 'many-to-many', 'to-many', 'to-one'] satisfies RelationKind[])
  t.same([...node.relations.values()].map((edge) => ownerColumn(edge.link)), ['author', 'editor_id', undefined, undefined])
})

t.test('options that make no kind fail when the resource is defined', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), other: Type.Integer() })
  const define = (options: Record<string, unknown>) => () => defineResource({
    name: 'Bad', table: 'bad', schema, fields: ['id'], expandable: { other: [Tag, options as never] },
  })
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ through: { table: 'x', from: 'a', to: 'b' } }, /through needs many: true/],
    [{ foreignKey: 'bad_id' }, /foreignKey needs many: true/],
    [{ many: true, column: 'other_id' }, /column is for to-one relations/],
    [{ many: true, foreignKey: 'bad_id', through: { table: 'x', from: 'a', to: 'b' } }, /either foreignKey or through, not both/],
    [{ many: true, through: { table: 'x', from: 'a' } }, /through must be \{ table, from, to \}/],
  ]
  for (const [options, message] of cases) t.throws(define(options), { code: 'FST_EXPAND_INVALID_DEFINITION', message }, JSON.stringify(options))
})

t.test('a to-many relation between tables without its keys fails at startup, and is allowed where a handler fills it', async (t) => {
  const Owner = defineResource({
    name: 'Owner',
    table: 'owners',
    schema: Type.Object({ id: Type.Integer(), tags: Type.Array(Type.Integer()) }),
    fields: ['id'],
    expandable: { tags: [Tag, { many: true }] },
  })
  t.throws(() => new ResourceGraph([Owner], { loadsFromDatabase: true }), InvalidDefinitionError)
  t.throws(() => new ResourceGraph([Owner], { loadsFromDatabase: true }), { message: /a to-many relation loaded from Tag's table needs foreignKey/ })
  t.throws(() => new ResourceGraph([Owner]), { message: /needs foreignKey/ }, 'between two tables even without a database')
  const Handled = defineResource({
    name: 'Handled',
    schema: Type.Object({ id: Type.Integer(), tags: Type.Array(Type.Integer()) }),
    fields: ['id'],
    expandable: { tags: [Tag, { many: true }] },
  })
  const edge = new ResourceGraph([Handled]).node(Handled).relations.get('tags')!
  t.same(edge.link, { kind: 'to-many', foreignKey: undefined }, 'rows a handler gives: no keys needed')
})
