import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin, { defineResource, expandOpenApi, type ExpandOpenApiOptions } from '../../plugin/index.js'

// A document names the components its own routes refer to, and no others: not those of the routes of another
// document built with the same transform, nor those of a route the document hides.

const Author = defineResource({ name: 'Author', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
const Article = defineResource({
  name: 'Article',
  schema: Type.Object({ id: Type.Integer(), title: Type.String(), author: Type.Integer() }),
  fields: ['id', 'title', 'author'],
  expandable: { author: Author },
})
const Salary = defineResource({
  name: 'Salary',
  schema: Type.Object({ id: Type.Integer(), amount: Type.Integer(), ssn: Type.String() }),
  fields: ['id', 'amount', 'ssn'],
})
const options = { resources: [Author, Article, Salary] }
const info = { title: 'test', version: '1' }
const article = async () => ({ id: 1, title: 'Hello', author: 2 })
const salary = async () => ({ id: 1, amount: 1, ssn: '000' })

type Document = { components?: { schemas?: Record<string, unknown> }; paths: Record<string, unknown> }

t.test('two documents of one transform: each holds the components of its own routes', async (t) => {
  const { transform } = expandOpenApi(options)
  const app = Fastify()
  const documents: Record<string, () => Document> = {}
  await app.register(async (admin) => {
    await admin.register(swagger, { openapi: { openapi: '3.1.0', info }, transform })
    await admin.register(expandPlugin, options)
    admin.get('/admin/salaries/:id', { expandable: { resource: Salary } }, salary)
    documents.admin = () => admin.swagger() as unknown as Document
  })
  await app.register(async (site) => {
    await site.register(swagger, { openapi: { openapi: '3.1.0', info }, transform })
    await site.register(expandPlugin, options)
    site.get('/articles/:id', { expandable: { resource: Article } }, article)
    documents.site = () => site.swagger() as unknown as Document
  })
  await app.ready()
  t.teardown(() => app.close())
  const admin = documents.admin!()
  const site = documents.site!()
  t.strictSame(Object.keys(site.paths), ['/articles/{id}'])
  t.strictSame(Object.keys(site.components!.schemas!).sort(), ['Article', 'Author'], 'the article, and the author it may expand')
  t.strictSame(Object.keys(admin.components!.schemas!), ['Salary'])
  t.notMatch(JSON.stringify(site), /ssn|Salary/, 'nothing of the admin document')
  // Asked again, in the other order: the same.
  t.strictSame(Object.keys((documents.site!() as Document).components!.schemas!).sort(), ['Article', 'Author'])
})

for (const [hiding, schema, documentation] of [
  ['schema.hide', { hide: true }, {}],
  ["@fastify/swagger's default hiddenTag", { tags: ['X-HIDDEN'] }, {}],
  ['a hiddenTag of its own', { tags: ['internal'] }, { hiddenTag: 'internal' }],
  ['hideUntagged', {}, { hideUntagged: true }],
] as const) {
  t.test(`a route hidden by ${hiding} adds no component`, async (t) => {
    const app = Fastify()
    // What hides a route is told to both: @fastify/swagger does not tell the transform.
    const transform = expandOpenApi(options, documentation as ExpandOpenApiOptions).transform
    await app.register(swagger, { openapi: { openapi: '3.1.0', info }, ...documentation, transform })
    await app.register(expandPlugin, options)
    app.get('/internal/salaries/:id', { schema, expandable: { resource: Salary } }, salary)
    app.get('/articles/:id', { schema: { tags: ['articles'] }, expandable: { resource: Article } }, article)
    await app.ready()
    t.teardown(() => app.close())
    const document = app.swagger() as unknown as Document
    t.strictSame(Object.keys(document.paths), ['/articles/{id}'])
    t.strictSame(Object.keys(document.components!.schemas!).sort(), ['Article', 'Author'])
  })
}
