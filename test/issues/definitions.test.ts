import { Type, type TObject } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, SqliteDialect } from 'kysely'
import t, { type Test } from 'tap'
import expandPlugin, { defineResource, type AnyResource, type ExpandPluginOptions, type ResourceDefinition } from '../../plugin/index.js'

// Every mistake in a definition, a relation or a route option fails at
// defineResource, register or ready(), with a message naming the resource,
// the field and what to do: never a 500 at request time, never ignored.

const definitionError = (message: string) => ({ code: 'FST_EXPAND_INVALID_DEFINITION', message })
const optionError = (message: string) => ({ code: 'FST_EXPAND_INVALID_OPTION', message })

/** A database that is never queried: ready() does not connect. */
function unusedDatabase (t: Test): Kysely<any> {
  const db = new Kysely({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })
  t.teardown(() => db.destroy())
  return db
}

async function start (
  t: Test,
  options: ExpandPluginOptions,
  addRoutes: (app: FastifyInstance) => void = () => {}
): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close().catch(() => {}))
  await app.register(expandPlugin, options)
  addRoutes(app)
  await app.ready()
  return app
}

/** The failure of defineResource(definition). */
function defineFails (t: Test, definition: unknown, message: string, label: string): void {
  t.throws(() => defineResource(definition as ResourceDefinition<TObject>), definitionError(message), label)
}

t.test('a relation between a table-bound resource and its target must be loadable when the plugin has a db', async (t) => {
  const Person = defineResource({ name: 'Person', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
  const Pet = defineResource({
    name: 'Pet',
    table: 'pets',
    schema: Type.Object({ id: Type.Integer(), owner: Type.Integer() }),
    fields: ['id', 'owner'],
    expandable: { owner: Person },
  })
  await t.rejects(start(t, { db: unusedDatabase(t), resources: [Pet] }),
    definitionError("Resource 'Pet', field 'owner': Person has no table, so it cannot be loaded from Pet's table; give Person a table"), 'to-one to a resource without a table')

  const Vet = defineResource({ name: 'Vet', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const Patient = defineResource({
    name: 'Patient',
    table: 'pets',
    schema: Type.Object({ id: Type.Integer(), vets: Type.Array(Type.Integer()) }),
    fields: ['id'],
    expandable: { vets: [Vet, { many: true, through: { table: 'pet_vets', from: 'pet_id', to: 'vet_id' } }] },
  })
  await t.rejects(start(t, { db: unusedDatabase(t), resources: [Patient] }),
    definitionError("Resource 'Patient', field 'vets': Vet has no table, so it cannot be loaded from Patient's table; give Vet a table"), 'to-many to a resource without a table')

  // Without db, the handler supplies the data: nothing is loaded, nothing to check.
  const app = await start(t, { resources: [Pet] }, (app) => {
    app.get('/pets/1', { expandable: { resource: Pet } }, async () => ({ id: 1, owner: { id: 8, name: 'Jon' } }))
  })
  t.equal((await app.inject('/pets/1?expand=owner')).body, '{"id":1,"owner":{"id":8,"name":"Jon"}}', 'without db a handler supplies the relation')
})

t.test('a to-many relation to a table needs foreignKey or through, whether or not its owner has a table', async (t) => {
  const Book = defineResource({ name: 'Book', table: 'books', schema: Type.Object({ id: Type.Integer(), title: Type.String() }), fields: ['id', 'title'] })
  const shelf = (name: string, table?: string) => defineResource({
    name,
    table,
    schema: Type.Object({ id: Type.Integer(), volumes: Type.Array(Type.Integer()) }),
    fields: ['id', 'volumes'],
    expandable: { volumes: [Book, { many: true }] },
  })
  const Shelf = shelf('Shelf')
  const message = "Resource 'Shelf', field 'volumes': a to-many relation loaded from Book's table needs foreignKey (the column of books holding the Shelf's key) or through (a join table: { table, from, to })"
  await t.rejects(start(t, { db: unusedDatabase(t), resources: [Shelf] }), definitionError(message), 'owner without a table')
  await t.rejects(start(t, { resources: [shelf('Bookcase', 'bookcases')] }),
    definitionError(message.replaceAll('Shelf', 'Bookcase')), 'both with tables: wrong with or without db')
  await start(t, { resources: [Shelf] })
  t.pass('without db, a handler supplies the books')

  // The parents are found by their primary key: it must be in the schema.
  const crate = (primaryKey?: 'code') => defineResource({
    name: 'Crate',
    primaryKey,
    schema: Type.Object({ code: Type.String(), volumes: Type.Array(Type.Integer()) }),
    fields: ['code', 'volumes'],
    expandable: { volumes: [Book, { many: true, foreignKey: 'crate_code' }] },
  })
  await t.rejects(start(t, { db: unusedDatabase(t), resources: [crate()] }),
    definitionError("Resource 'Crate', field 'volumes': the related rows are found by Crate's primary key 'id', which is not in its schema; set primaryKey to the field holding the key"))
  await start(t, { db: unusedDatabase(t), resources: [crate('code')] })
  t.pass('with primaryKey the crate is loadable')

  // A to-one relation from rows a handler gives, to a table: loadable by the id in the row.
  const Reader = defineResource({
    name: 'Reader',
    schema: Type.Object({ id: Type.Integer(), reading: Type.Integer() }),
    fields: ['id', 'reading'],
    expandable: { reading: Book },
  })
  await start(t, { db: unusedDatabase(t), resources: [Reader] })
  t.pass('to-one from a resource without a table')
})

t.test('many must match the schema of the field: an array for to-many, a single value for to-one', async (t) => {
  const Maker = defineResource({ name: 'Maker', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const schema = Type.Object({
    id: Type.Integer(),
    maker: Type.Integer(),
    previous: Type.Union([Type.Integer(), Type.Null()]),
    makers: Type.Array(Type.Integer()),
    old_makers: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  })
  const tool = (relations: Record<string, unknown>, where = 'expandable') => ({ name: 'Tool', schema, fields: ['id', ...(where === 'nested' ? Object.keys(relations) : [])], [where]: relations })
  defineFails(t, tool({ maker: [Maker, { many: true }] }),
    "Resource 'Tool': expandable field 'maker': many: true needs an array schema: declare 'maker' as Type.Array of the related identifier, or remove many", 'many on an integer')
  defineFails(t, tool({ previous: [Maker, { many: true }] }),
    "Resource 'Tool': expandable field 'previous': many: true needs an array schema: declare 'previous' as Type.Array of the related identifier, or remove many", 'many on a nullable integer')
  defineFails(t, tool({ makers: Maker }),
    "Resource 'Tool': expandable field 'makers': its schema is an array, so the relation is to-many: add many: true, or declare 'makers' as the related identifier", 'to-one on an array')
  defineFails(t, tool({ old_makers: ['Maker', {}] }),
    "Resource 'Tool': expandable field 'old_makers': its schema is an array, so the relation is to-many: add many: true, or declare 'old_makers' as the related identifier", 'to-one on a nullable array')
  defineFails(t, tool({ maker: [Maker, { many: true }] }, 'nested'),
    "Resource 'Tool': nested field 'maker': many: true needs an array schema: declare 'maker' as Type.Array of the related identifier, or remove many", 'nested, many on an integer')
  // What fits is accepted, nullable unions included; a schema that says nothing (Type.Any) is not judged.
  const references = { maker: Maker, previous: Maker, makers: [Maker, { many: true }], old_makers: [Maker, { many: true }] }
  t.ok(defineResource(tool(references) as ResourceDefinition<typeof schema>))
  t.ok(defineResource({ name: 'Loose', schema: Type.Object({ id: Type.Integer(), any: Type.Any() }), fields: ['id'], expandable: { any: [Maker, { many: true }] } }))
})

t.test('a nested field is always shown, so it must be listed in fields', async (t) => {
  const Company = defineResource({ name: 'Company', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['name'] })
  defineFails(t, {
    name: 'Employee',
    schema: Type.Object({ id: Type.Integer(), employer: Type.Integer() }),
    fields: ['id'],
    nested: { employer: Company },
  }, "Resource 'Employee': nested field 'employer': nested fields are always shown: list 'employer' in fields", 'nested field left out of fields')
})

t.test('permitListExpands on a detail route is an option error naming the route', async (t) => {
  const Maker = defineResource({ name: 'Maker', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const Tool = defineResource({ name: 'Tool', schema: Type.Object({ id: Type.Integer(), maker: Type.Integer() }), fields: ['id', 'maker'], expandable: { maker: Maker } })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(expandPlugin, { resources: [Tool] })
  const message = 'Route GET /tools/:id: expandable.permitListExpands needs list: true (detail routes are never restricted by it)'
  t.throws(() => app.get('/tools/:id', { expandable: { resource: Tool, permitListExpands: ['maker'] } }, async () => ({ id: 1, maker: 2 })), optionError(message))
  t.throws(() => app.get('/tools/:id', { config: { expandable: { resource: Tool, list: false, permitListExpands: [] } } }, async () => ({ id: 1, maker: 2 })),
    optionError(message), 'config.expandable, list: false')
})

t.test('orderBy is a column name, or -column for descending, and orders a to-many relation', async (t) => {
  const Comment = defineResource({ name: 'Comment', table: 'comments', schema: Type.Object({ id: Type.Integer(), created_at: Type.String() }), fields: ['id'] })
  const post = (options: Record<string, unknown>, field = 'comments') => ({
    name: 'Post',
    table: 'posts',
    schema: Type.Object({ id: Type.Integer(), comments: Type.Array(Type.Integer()), latest: Type.Integer() }),
    fields: ['id'],
    expandable: { [field]: [Comment, options] },
  })
  for (const orderBy of ['created_at desc', 'created_at; drop table comments', '--created_at', '-', 'comments.created_at', '"created_at"', '1']) {
    defineFails(t, post({ many: true, foreignKey: 'post_id', orderBy }),
      `Resource 'Post': expandable field 'comments': orderBy '${orderBy}' must be a column name (letters, digits and underscores), or '-' and a column name for descending order`, orderBy)
  }
  defineFails(t, post({ orderBy: 'created_at' }, 'latest'), "Resource 'Post': expandable field 'latest': orderBy orders the rows of a to-many relation: it needs many: true", 'orderBy on a to-one relation')
  t.ok(defineResource(post({ many: true, foreignKey: 'post_id', orderBy: '-created_at' }) as never), '-created_at')
  t.ok(defineResource(post({ many: true, foreignKey: 'post_id', orderBy: 'created_at' }) as never), 'created_at')
})

t.test('table and column names are identifiers, so no SQL can hide in them', async (t) => {
  const Maker = defineResource({ name: 'Maker', table: 'makers', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const schema = Type.Object({ id: Type.Integer(), code: Type.String(), maker: Type.Integer(), parts: Type.Array(Type.Integer()) })
  const tool = (definition: Record<string, unknown>) => ({ name: 'Tool', table: 'tools', schema, fields: ['id'], ...definition })
  const column = 'letters, digits and underscores'
  const cases: [string, Record<string, unknown>, string][] = [
    ['table with a statement', { table: 'tools; drop table tools' }, `table 'tools; drop table tools' must be a table name (${column}, or schema.table)`],
    ['table with three parts', { table: 'a.b.c' }, `table 'a.b.c' must be a table name (${column}, or schema.table)`],
    ['table not a string', { table: 7 }, `table '7' must be a table name (${column}, or schema.table)`],
    ['columns value with SQL', { columns: { maker: 'maker_id) or (1=1' } }, `columns.maker 'maker_id) or (1=1' must be a column name (${column})`],
    ['columns value qualified', { columns: { maker: 'tools.maker_id' } }, `columns.maker 'tools.maker_id' must be a column name (${column})`],
    ['primaryKey not an identifier', { schema: Type.Object({ 'the id': Type.Integer() }), fields: ['the id'], primaryKey: 'the id', columns: { 'the id': 'id' } },
      `primaryKey 'the id' must be a field whose name is an identifier (${column})`],
    ['primaryKey not in the schema', { primaryKey: 'uuid' }, "primaryKey 'uuid' is not in its schema"],
    ['a field read from a column of its name', { schema: Type.Object({ id: Type.Integer(), 'made by': Type.String() }), fields: ['id', 'made by'] },
      `field 'made by' is read from the column of the same name, which is not a column name (${column}): map it in columns`],
    ['relation column', { expandable: { maker: [Maker, { column: 'maker_id desc' }] } }, `expandable field 'maker': column 'maker_id desc' must be a column name (${column})`],
    ['foreignKey', { expandable: { parts: [Maker, { many: true, foreignKey: 'tool_id or 1=1' }] } }, `expandable field 'parts': foreignKey 'tool_id or 1=1' must be a column name (${column})`],
    ['through.table', { expandable: { parts: [Maker, { many: true, through: { table: 'x y', from: 'tool_id', to: 'maker_id' } }] } },
      `expandable field 'parts': through.table 'x y' must be a table name (${column}, or schema.table)`],
    ['through.from', { expandable: { parts: [Maker, { many: true, through: { table: 'tool_makers', from: 'tool id', to: 'maker_id' } }] } },
      `expandable field 'parts': through.from 'tool id' must be a column name (${column})`],
    ['through.to', { expandable: { parts: [Maker, { many: true, through: { table: 'tool_makers', from: 'tool_id', to: '' } }] } },
      `expandable field 'parts': through.to '' must be a column name (${column})`],
    ['columns for a to-many relation', { columns: { parts: 'part_ids' }, expandable: { parts: [Maker, { many: true, foreignKey: 'tool_id' }] } },
      "columns.parts: 'parts' is a to-many relation, which has no column of its own: its rows are found by foreignKey or through"],
    ['two columns for one relation', { columns: { maker: 'maker_id' }, expandable: { maker: [Maker, { column: 'made_by' }] } },
      "field 'maker' is given two columns, columns.maker 'maker_id' and the relation's column 'made_by': keep one"],
    ['through with another key', { expandable: { parts: [Maker, { many: true, through: { table: 'tool_makers', from: 'tool_id', to: 'maker_id', where: '1=1' } }] } },
      "expandable field 'parts': through has an unknown option 'where' (known: table, from, to)"],
  ]
  for (const [label, definition, message] of cases) defineFails(t, tool(definition), `Resource 'Tool': ${message}`, label)
  defineFails(t, { name: 'Label', primaryKey: 'uuid', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] },
    "Resource 'Label': primaryKey 'uuid' is not in its schema", 'a primaryKey given is in the schema, with or without a table')
  // Accepted: schema-qualified tables, mapped columns, field names that are not identifiers when mapped, or on resources without a table.
  t.ok(defineResource(tool({
    table: 'shop.tools',
    schema: Type.Object({ id: Type.Integer(), 'made by': Type.String(), maker: Type.Integer(), parts: Type.Array(Type.Integer()) }),
    fields: ['id', 'made by', 'maker', 'parts'],
    columns: { 'made by': 'made_by', maker: 'maker_id' },
    expandable: { maker: Maker, parts: [Maker, { many: true, through: { table: 'shop.tool_makers', from: 'tool_id', to: 'maker_id' } }] },
  }) as never))
  t.ok(defineResource({ name: 'Label', schema: Type.Object({ id: Type.Integer(), 'made by': Type.String() }), fields: ['id', 'made by'] }))
})

t.test('a resource reached only through a relation is checked too', async (t) => {
  const Owner: AnyResource = defineResource({ name: 'Owner', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const Dog = defineResource({ name: 'Dog', table: 'dogs', schema: Type.Object({ id: Type.Integer(), owner: Type.Integer() }), fields: ['id', 'owner'], expandable: { owner: () => Owner } })
  const Kennel = defineResource({ name: 'Kennel', schema: Type.Object({ id: Type.Integer(), dog: Type.Integer() }), fields: ['id', 'dog'], expandable: { dog: Dog } })
  await t.rejects(start(t, { db: unusedDatabase(t), resources: [Kennel] }),
    definitionError("Resource 'Dog', field 'owner': Owner has no table, so it cannot be loaded from Dog's table; give Owner a table"))
})
