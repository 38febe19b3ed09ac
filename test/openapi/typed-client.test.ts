import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import swagger from '@fastify/swagger'
import Fastify from 'fastify'
import createClient from 'openapi-fetch'
import openapiTS, { astToString } from 'openapi-typescript'
import t0, { test } from 'tap'
import ts from 'typescript'
import { inMemoryDemo } from '../../demo/readme-examples.js'
import expandPlugin, { expandOpenApi } from '../../plugin/index.js'
import { Pet, resources } from '../fixtures/pets.js'

/*
 * A typed client generated from the documents, as an application would use
 * one: openapi-typescript writes the types, openapi-fetch makes the calls,
 * and the TypeScript compiler checks them (the `@ts-expect-error` lines are
 * checks too: an expectation that no longer fails is an error). The same
 * calls then run against the demo. And Redocly's linter reads the demo's
 * document, offline.
 */

type Json = Record<string, any>

const root = fileURLToPath(new URL('../..', import.meta.url))
const require = createRequire(import.meta.url)
const directory = mkdtempSync(join(tmpdir(), 'fastify-expand-client-'))
t0.teardown(() => rmSync(directory, { recursive: true, force: true }))

const demo = await inMemoryDemo()
t0.teardown(demo.close)
const demoDocument: Json = (await demo.app.inject('/docs/json')).json()

/** A document with writes: expandable POST routes, documented under 2XX. */
async function writesDocument (): Promise<Json> {
  const app = Fastify()
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'writes', version: '1' } }, transform: expandOpenApi({ resources }).transform })
  await app.register(expandPlugin, { resources })
  app.post('/pets', { expandable: { resource: Pet } }, async (_request, reply) => reply.code(201).send({ id: 1, name: 'a', species: 'cat', owner: 2, sold_from: null, toys: [] }))
  await app.ready()
  const document = app.swagger() as Json
  await app.close()
  return document
}

// Type-only imports: at run time the module needs nothing but the client it is given.
const calls = `import type { Client } from 'openapi-fetch'
import type { paths } from './demo-api.js'
import type { paths as writes } from './writes-api.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function assertType<T extends true> (): void {}
type PetBody = paths['/pets/{id}']['get']['responses'][200]['content']['application/json']
type NotFoundBody = paths['/pets/{id}']['get']['responses'][404]['content']['application/json']
type BadRequestBody = paths['/pets/{id}']['get']['responses'][400]['content']['application/json']

export async function detail (client: Client<paths>) {
  const { data, error } = await client.GET('/pets/{id}', { params: { path: { id: 10 }, query: { expand: ['owner.employer', 'sold_from'] } } })
  if (error !== undefined) throw new Error('expected a pet')
  assertType<Equal<typeof data, PetBody>>()
  // No field is required: fields and omit may leave any out, and the types say so.
  const name: string | undefined = data.name
  // @ts-expect-error a field may be absent
  const certain: string = data.name
  void certain
  const owner = data.owner
  if (owner === undefined) throw new Error('expected an owner')
  // @ts-expect-error an owner may be its identifier: it must be narrowed first
  owner.name
  // @ts-expect-error visits is deferred: absent unless expanded
  const visits: unknown[] = data.visits
  void visits
  return { name, owner: typeof owner === 'number' ? owner : { name: owner.name, employer: owner.employer } }
}

export async function list (client: Client<paths>) {
  const { data, error } = await client.GET('/pets', { params: { query: { limit: 2, offset: 10, expand: ['owner'], fields: ['id', 'name', 'owner.name'] } } })
  if (error !== undefined) throw new Error('expected a page')
  const total: number = data.total
  const limit: number = data.limit
  const first = data.data[0]!
  // @ts-expect-error a list of pets never shows visits: not permitted on /pets
  first.visits
  return { total, limit, ids: data.data.map((pet) => pet.id), owner: typeof first.owner === 'object' ? first.owner.name : first.owner }
}

export async function missing (client: Client<paths>) {
  const { data, error, response } = await client.GET('/pets/{id}', { params: { path: { id: 999999 } } })
  if (data !== undefined) throw new Error('expected no pet')
  // @ts-expect-error the error is any of the 400, 404 and 500 bodies until narrowed
  const unnarrowed: 'FST_EXPAND_NOT_FOUND' = error.code
  void unnarrowed
  if (error.statusCode === 404) {
    assertType<Equal<typeof error, NotFoundBody>>()
    const code: 'FST_EXPAND_NOT_FOUND' = error.code
    // @ts-expect-error the 404 body is not the 400 one
    const badRequest: BadRequestBody = error
    void badRequest
    return { status: response.status, code, message: error.message }
  }
  throw new Error(\`expected a 404, got \${response.status}\`)
}

/** Checked by the compiler only: calls the document does not allow. */
export async function neverRun (client: Client<paths>, writing: Client<writes>) {
  // @ts-expect-error visits is not permitted on the /pets list
  await client.GET('/pets', { params: { query: { expand: ['visits'] } } })
  // @ts-expect-error no such relation
  await client.GET('/pets/{id}', { params: { path: { id: 1 }, query: { expand: ['vet'] } } })
  await client.GET('/pets/{id}', { params: { path: { id: 1 }, query: { expand: ['*', '~all', 'visits.vet'] } } })
  // @ts-expect-error pet stores have no relation: no expand parameter
  await client.GET('/pet-stores/{id}', { params: { path: { id: 1 }, query: { expand: ['*'] } } })
  // A POST documented under 2XX: its body is the success data, not an error.
  const created = await writing.POST('/pets')
  if (created.data !== undefined) {
    const name: string | undefined = created.data.name
    void name
  } else {
    // @ts-expect-error the error is a 400 or 500 body, never a pet
    const name: string = created.error.name
    void name
  }
}
`

test('a client generated by openapi-typescript type-checks with openapi-fetch and gets what its types say', async (t) => {
  writeFileSync(join(directory, 'demo-api.ts'), astToString(await openapiTS(demoDocument as never)))
  writeFileSync(join(directory, 'writes-api.ts'), astToString(await openapiTS(await writesDocument() as never)))
  const callsFile = join(directory, 'calls.ts')
  writeFileSync(callsFile, calls)

  const program = ts.createProgram({
    rootNames: [callsFile],
    options: {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
      // The temporary directory has no node_modules: the client library is this project's.
      paths: { 'openapi-fetch': [join(dirname(require.resolve('openapi-fetch')), 'index.d.mts')] },
    },
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
  t.same(diagnostics, [], 'every call type-checks and every expected error is one')

  const module = await import(pathToFileURL(callsFile).href) as {
    detail: (client: unknown) => Promise<unknown>
    list: (client: unknown) => Promise<unknown>
    missing: (client: unknown) => Promise<unknown>
  }
  const client = createClient({
    baseUrl: 'http://demo.test',
    fetch: async (request: Request) => {
      const url = new URL(request.url)
      const reply = await demo.app.inject({ method: request.method as 'GET', url: url.pathname + url.search })
      return new Response(reply.body, { status: reply.statusCode, headers: { 'content-type': String(reply.headers['content-type']) } })
    },
  })
  t.same(await module.detail(client), { name: 'Juno', owner: { name: 'Wen Costa', employer: { id: 147, name: 'Nimbus Labs 147', public: false, founded: 1988 } } })
  t.same(await module.list(client), { total: 15000, limit: 2, ids: [11, 12], owner: 'Zoe Jensen' }, 'repeated expand and fields values, as openapi-fetch writes arrays')
  t.same(await module.missing(client), { status: 404, code: 'FST_EXPAND_NOT_FOUND', message: 'Pet 999999 not found' })
})

/** An OpenAPI 3.0 document of handler routes: components converted by the plugin rather than by @fastify/swagger. */
async function version30Document (): Promise<Json> {
  const app = Fastify()
  await app.register(swagger, { openapi: { openapi: '3.0.3', info: { title: 'handlers', version: '1' } }, transform: expandOpenApi({ resources }).transform })
  await app.register(expandPlugin, { resources })
  const pet = { id: 1, name: 'a', species: 'cat', owner: 2, sold_from: null, toys: [] }
  app.get('/pets/:id', { expandable: { resource: Pet } }, async () => pet)
  app.get('/pets', { expandable: { resource: Pet, list: true, envelope: 'items', permitListExpands: ['owner', 'toys'] } }, async () => ({ items: [pet] }))
  app.post('/pets', { expandable: { resource: Pet } }, async () => pet)
  await app.ready()
  const document = app.swagger() as Json
  await app.close()
  return document
}

test("Redocly's recommended rules find nothing in the demo's document, nor in an OpenAPI 3.0 one", async (t) => {
  const documentFile = join(directory, 'demo-openapi.json')
  writeFileSync(documentFile, JSON.stringify(demoDocument))
  const version30File = join(directory, 'handlers-openapi-3.0.json')
  writeFileSync(version30File, JSON.stringify(await version30Document()))
  const configFile = join(directory, 'redocly.yaml')
  // Off: what an application decides, not the plugin: operation summaries and ids,
  // security, servers, the license, and the demo's own /health route having no 4xx.
  writeFileSync(configFile, [
    'extends:',
    '  - recommended',
    'rules:',
    ...['operation-summary', 'operation-operationId', 'security-defined', 'no-empty-servers', 'info-license', 'operation-4xx-response'].map((rule) => `  ${rule}: off`),
    '',
  ].join('\n'))
  const cli = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')
  for (const file of [documentFile, version30File]) {
    const run = spawnSync(process.execPath, [cli, 'lint', '--config', configFile, '--format', 'json', file], {
      encoding: 'utf8',
      timeout: 60_000,
      // Offline: no usage data, no look-up of a newer version.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    })
    t.equal(run.error, undefined)
    const report = JSON.parse(run.stdout) as { totals: Json; problems: Json[] }
    t.same(report.problems.map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer}`), [], basename(file))
    t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 })
    t.equal(run.status, 0)
  }
})
