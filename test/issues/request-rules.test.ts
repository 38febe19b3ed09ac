import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource, isExpanded, type AnyResource } from '../../plugin/index.js'
import { buildApp, getJson, MemoryStore } from '../helpers/app.js'
import { resources } from '../fixtures/pets.js'
import { buildPetApp, defaults, petStore } from '../helpers/pet-world.js'

// How requests are read and bounded: what maxPaths and maxObjects count, key
// order when a relation's options leave a field out, wildcards in every
// parameter, and bracketed parameter forms.

const { garfield, jon, acme } = defaults
const badRequest = (code: string, message: string) => ({ statusCode: 400, code, error: 'Bad Request', message })

t.test('maxPaths counts the relations the query expands: not the root, not what definitions always expand', async (t) => {
  const one = await buildPetApp({ maxPaths: 1 })
  t.same((await getJson(one, '/pets/1?expand=owner')).body, { ...garfield, owner: jon })
  t.same((await getJson(one, '/pets/1?expand=owner.employer')).body,
    badRequest('FST_EXPAND_MALFORMED', 'The request expands more than 1 relations'))

  // A nested field (always shown) and a relation `expand` option are the definition's, not the client's.
  const Tag = defineResource({ name: 'Tag', schema: Type.Object({ id: Type.Integer(), label: Type.String() }), fields: ['id', 'label'] })
  const Author = defineResource({
    name: 'Author',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), tag: Type.Integer() }),
    fields: ['id', 'name'],
    expandable: { tag: Tag },
  })
  const Post = defineResource({
    name: 'Post',
    schema: Type.Object({ id: Type.Integer(), tag: Type.Integer(), author: Type.Integer() }),
    fields: ['id', 'tag', 'author'],
    nested: { tag: Tag },
    expandable: { author: [Author, { expand: ['tag'] }] },
  })
  const post = { id: 1, tag: { id: 2, label: 'news' }, author: { id: 3, name: 'Ann', tag: { id: 2, label: 'news' } } }
  const app = await buildApp({ resources: [Post], maxPaths: 1 }, (app) => {
    app.get('/posts/1', { expandable: { resource: Post } }, async (request) => (isExpanded(request, 'author') ? post : { ...post, author: 3 }))
  })
  t.same((await getJson(app, '/posts/1')).body, { id: 1, tag: { id: 2, label: 'news' }, author: 3 })
  t.same((await getJson(app, '/posts/1?expand=author')).body, post)
})

t.test('maxObjects counts what loading adds, never the rows a handler gives', async (t) => {
  const Row = defineResource({ name: 'Row', table: 'rows', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
  const rows = Array.from({ length: 12_000 }, (_, index) => ({ id: index + 1 }))
  // No statement runs when nothing is expanded: the database is never asked.
  const db = { selectFrom () { throw new Error('no statement expected') } }
  const app = await buildApp({ resources: [Row], db: db as never }, (app) => {
    app.get('/rows', { expandable: { resource: Row, list: true } }, async (request) => app.expand.load(request, rows.map((row) => ({ ...row }))))
  })
  const reply = await app.inject('/rows')
  t.equal(reply.statusCode, 200)
  t.equal(reply.json().length, 12_000)
})

// A relation's `fields` is the whole set of names below it (the Guarantees): `lead.employer`, which
// Team.lead's fields leave out, once expanded anyway and took its place in Person's order; it does not exist.
t.test('a relation left out by its options does not exist below them: expanding or selecting it is an unknown field', async (t) => {
  const Company = defineResource({ name: 'Company', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
  const Person = defineResource({
    name: 'Person',
    schema: Type.Object({ id: Type.Integer(), name: Type.String(), employer: Type.Integer(), born: Type.String() }),
    fields: ['id', 'name', 'employer', 'born'],
    expandable: { employer: Company },
  })
  const Team = defineResource({
    name: 'Team',
    schema: Type.Object({ id: Type.Integer(), lead: Type.Integer() }),
    fields: ['id', 'lead'],
    expandable: { lead: [Person, { fields: ['id', 'name', 'born'] }] },
  })
  const store = new MemoryStore(
    { Team: { 1: { id: 1, lead: 2 } }, Person: { 2: { id: 2, name: 'Ann', employer: 3, born: '1990' } }, Company: { 3: { id: 3, name: 'Acme' } } },
    { Team: { lead: { type: 'Person' } }, Person: { employer: { type: 'Company' } } }
  )
  const app = await buildApp({ resources: [Team] }, (app) => {
    app.get('/teams/1', { expandable: { resource: Team } }, async (request) => store.shape(request, 'Team', store.get('Team', 1)!))
  })
  t.equal((await getJson(app, '/teams/1?expand=lead')).text, '{"id":1,"lead":{"id":2,"name":"Ann","born":"1990"}}')
  t.same((await getJson(app, '/teams/1?expand=lead.employer')).body,
    badRequest('FST_EXPAND_UNKNOWN_FIELD', "Cannot expand 'lead.employer' on Person: it has no expandable fields"))
  t.same((await getJson(app, '/teams/1?expand=lead&fields=lead.born,lead.employer')).body,
    badRequest('FST_EXPAND_UNKNOWN_FIELD', "Unknown field 'lead.employer' in 'fields': Person has id, name, born"))
  t.equal((await getJson(app, '/teams/1?expand=lead&fields=lead.born')).text, '{"lead":{"born":"1990"}}')
})

t.test('wildcards: at the end of a fields path they keep the default set; anywhere else in fields or omit they are malformed', async (t) => {
  const app = await buildPetApp()
  t.same((await getJson(app, '/pets/1?fields=*')).body, garfield)
  t.same((await getJson(app, '/pets/1?expand=owner&fields=id,owner.*')).body, { id: 1, owner: jon })
  t.same((await getJson(app, '/pets/1?expand=owner&fields=*.name')).body,
    badRequest('FST_EXPAND_MALFORMED', "'fields' takes a wildcard only at the end of a path ('*', 'owner.*'), not in '*.name'"))
  t.same((await getJson(app, '/pets/1?fields=*.bogus')).body,
    badRequest('FST_EXPAND_MALFORMED', "'fields' takes a wildcard only at the end of a path ('*', 'owner.*'), not in '*.bogus'"))
  t.same((await getJson(app, '/pets/1?fields=~all.%00')).body,
    badRequest('FST_EXPAND_MALFORMED', "'fields' takes a wildcard only at the end of a path ('~all', 'owner.~all'), not in '~all.\u0000'"))
  t.same((await getJson(app, '/pets/1?omit=*')).body, badRequest('FST_EXPAND_MALFORMED', "'omit' takes field names, not the wildcard in '*'"))
  t.same((await getJson(app, '/pets/1?omit=*.id')).body, badRequest('FST_EXPAND_MALFORMED', "'omit' takes field names, not the wildcard in '*.id'"))
})

t.test('expand=*.name reaches name below every relation that has it, and names the path as sent when none has', async (t) => {
  const app = await buildPetApp()
  // Only owner (a Person) has an employer: sold_from and toys stay ids.
  t.same((await getJson(app, '/pets/1?expand=*.employer')).body, { ...garfield, owner: { ...jon, employer: acme } })
  // `*` as well: every relation, and employer where there is one.
  t.same((await getJson(app, '/pets/2?expand=*,*.employer')).body, {
    ...defaults.odie,
    owner: { ...defaults.fred, employer: defaults.mcdonalds },
    sold_from: defaults.petco,
    toys: [],
  })
  t.same((await getJson(app, '/pets/1?expand=*.nope')).body,
    badRequest('FST_EXPAND_UNKNOWN_FIELD', "Cannot expand '*.nope' on Pet: no relation at that level has 'nope'"))
  const ignoring = await buildPetApp({ onInvalidExpand: 'ignore' })
  t.same((await getJson(ignoring, '/pets/1?expand=*.nope')).body, garfield)
})

t.test('indexed brackets (expand[0]) are the repeated form; other brackets are malformed', async (t) => {
  const app = await buildPetApp()
  t.same((await getJson(app, '/pets/1?expand[0]=owner&expand[1]=owner.employer')).body, { ...garfield, owner: { ...jon, employer: acme } })
  t.same((await getJson(app, '/pets/1?expand[x]=owner')).body,
    badRequest('FST_EXPAND_MALFORMED', "'expand[x]' is not a form of 'expand': send expand=a,b, repeat expand, or use expand[]"))
  t.same((await getJson(app, '/pets/1?fields[0]=id')).body, { id: 1 })
  // A parameter whose name only starts like one of the three is not read.
  t.same((await getJson(app, '/pets/1?expanded=owner')).body, garfield)
})

t.test('with additionalProperties: false, every bracketed form still reaches the plugin', async (t) => {
  const app = await buildApp({ resources }, (app) => {
    app.get('/pets/1', {
      expandable: { resource: 'Pet' },
      schema: { querystring: { type: 'object', properties: {}, additionalProperties: false } },
    }, async (request) => petStore.shape(request, 'Pet', petStore.get('Pet', 1)!))
  })
  t.same((await getJson(app, '/pets/1?expand[0]=owner')).body, { ...garfield, owner: jon })
  t.same((await getJson(app, '/pets/1?expand[x]=owner')).body,
    badRequest('FST_EXPAND_MALFORMED', "'expand[x]' is not a form of 'expand': send expand=a,b, repeat expand, or use expand[]"))
})

t.test('a maxDepth above 32 serves deep self-expansions; a definition cycle is named once', async (t) => {
  const Node: AnyResource = defineResource({
    name: 'Node',
    schema: Type.Object({ id: Type.Integer(), parent: Type.Union([Type.Integer(), Type.Null()]) }),
    fields: ['id', 'parent'],
    expandable: { parent: (): AnyResource => Node },
  })
  const chain = (depth: number): Record<string, unknown> => ({ id: depth, parent: depth === 0 ? null : chain(depth - 1) })
  const app = await buildApp({ resources: [Node], maxDepth: 40 }, (app) => {
    app.get('/nodes/40', { expandable: { resource: Node } }, async () => chain(40))
  })
  const deep = await getJson(app, `/nodes/40?expand=${Array(40).fill('parent').join('.')}`)
  t.equal(deep.status, 200)
  t.same(deep.body, chain(40))

  const Owner: AnyResource = defineResource({
    name: 'Owner',
    schema: Type.Object({ id: Type.Integer(), pets: Type.Array(Type.Integer()) }),
    fields: ['id'],
    expandable: { pets: [(): AnyResource => Animal, { many: true, expand: ['owner'] }] },
  })
  const Animal: AnyResource = defineResource({
    name: 'Animal',
    schema: Type.Object({ id: Type.Integer(), owner: Type.Integer() }),
    fields: ['id', 'owner'],
    expandable: { owner: [Owner, { expand: ['pets'] }] },
  })
  await t.rejects(buildApp({ resources: [Owner] }), {
    code: 'FST_EXPAND_INVALID_DEFINITION',
    message: "The always-applied expansions of Owner (nested fields or relation 'expand' options) form a cycle: 'pets.owner' repeats without end",
  })
})
