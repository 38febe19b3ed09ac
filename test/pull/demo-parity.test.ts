import { execFile } from 'node:child_process'
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import SQLite from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import { Kysely, SqliteDialect } from 'kysely'
import t, { type Test } from 'tap'
import ts from 'typescript'
import { buildApp, docsPath, type DemoResources } from '../../demo/app.js'
import { connect, type DemoDatabase } from '../../demo/database.js'
import { walkthroughSteps } from '../../demo/readme-examples.js'
import { seedIfEmpty } from '../../demo/seed.js'
import { generateModule } from '../../plugin/pull/generate.js'
import type { DatabaseModel } from '../../plugin/pull/model.js'
import { introspectMysql } from '../../plugin/pull/mysql.js'
import { introspectPostgres } from '../../plugin/pull/postgres.js'
import { introspectSqlite } from '../../plugin/pull/sqlite.js'
import { databaseOf, onDatabase, type Database } from '../fixtures/databases.js'
import { dialects } from '../fixtures/dialects.js'
import { applyHunks, hunksOf } from '../helpers/unified-diff.js'

// The demo's database pulled as docs/start-from-a-database.md's section "From pulled definitions to the demo" says
// (its command line, run through the bin), edited by the diffs that section shows, type-checked, and served with the
// demo's routes and options (buildApp of demo/app.ts): every request of the walkthrough (demo/readme-examples.ts, the
// source of docs/walkthrough.md), each request demo/server.ts prints, and a few of each route besides are
// answered with the hand-written demo's status, content type and bytes, and the OpenAPI document is the demo's but
// for descriptions. On SQLite, PostgreSQL and MariaDB, each database seeded once by the demo's own code and served
// by both apps.

const root = fileURLToPath(new URL('../../', import.meta.url))
const pluginEntry = join(root, 'plugin', 'index.ts')
const page = await readFile(join(root, 'docs', 'start-from-a-database.md'), 'utf8')
const sectionTitle = '## From pulled definitions to the demo\n'
if (!page.includes(sectionTitle)) throw new Error(`docs/start-from-a-database.md has no section ${sectionTitle}`)
const section = page.slice(page.indexOf(sectionTitle))
const blocks = (language: string) => [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\`\\n`, 'g'))].map((match) => match[1]!)
const hunks = blocks('diff').flatMap(hunksOf)

/** The pull command the section shows, as the bin's arguments (after `npx fastify-expand`). */
function pullArguments (): string[] {
  const line = blocks('sh').flatMap((block) => block.split('\n')).find((candidate) => candidate.startsWith('npx fastify-expand pull '))
  if (line === undefined) throw new Error('the section shows no pull command')
  return line.split(' ').slice(2)
}

/** The requests `npm start` prints on starting (demo/server.ts), as paths. */
async function printedRequests (): Promise<string[]> {
  const server = await readFile(join(root, 'demo', 'server.ts'), 'utf8')
  return [...server.matchAll(/^ {2}curl '\$\{base\}([^']+)'$/gm)].map((match) => match[1]!)
}

/** Route prefixes of demo/app.ts: each route's first row, and an unknown expansion, whose message lists the relations in order. */
const routePrefixes = ['/companies', '/people', '/pets', '/pet-stores', '/toys', '/vets', '/visits']
/** The relation no request above expands. */
const companyEmployees = '/companies/1?expand=employees'

const introspect = {
  sqlite: introspectSqlite,
  postgres: introspectPostgres,
  mariadb: introspectMysql,
} satisfies Record<Database, (db: Kysely<any>) => Promise<DatabaseModel>>

const naming = (): 'snake' => {
  const argument = pullArguments()
  const value = argument[argument.indexOf('--naming') + 1]
  if (value !== 'snake') throw new Error(`the section pulls with --naming ${value}: the test expects snake`)
  return value
}

/** Type errors of the module at `file`, with 'fastify-expand' resolved to this repository's source. */
function typeErrors (file: string): string[] {
  const configured = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root)
  const program = ts.createProgram([file], { ...configured.options, noEmit: true, paths: { 'fastify-expand': [pluginEntry] } })
  // The module's own diagnostics: the plugin's files are type-checked by `tsc --noEmit`, and checking them again is slow.
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => ts.formatDiagnostic(diagnostic, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  }))
}

/** The edited module, written beside a copy of the demo's pricing service, importing this repository's plugin. */
async function servedModule (directory: string, edited: string): Promise<DemoResources> {
  await copyFile(join(root, 'schemas', 'price-service.ts'), join(directory, 'price-service.ts'))
  const plugin = relative(directory, join(root, 'plugin', 'index.js')).split('\\').join('/')
  const file = join(directory, 'served.ts')
  await writeFile(file, edited.replaceAll("'fastify-expand'", `'${plugin}'`))
  return await import(pathToFileURL(file).href) as DemoResources
}

interface Answer { status: number; contentType: unknown; body: string }

async function answer (app: FastifyInstance, url: string): Promise<Answer> {
  const response = await app.inject({ method: 'GET', url })
  return { status: response.statusCode, contentType: response.headers['content-type'], body: response.body }
}

/** Every request asked of both apps: the walkthrough's (following its cursor), the printed ones, and a few of each route. */
async function compare (t: Test, demo: FastifyInstance, pulled: FastifyInstance): Promise<void> {
  let previous: unknown
  let asked = 0
  const ask = async (url: string) => {
    const expected = await answer(demo, url)
    t.same(await answer(pulled, url), expected, url)
    asked++
    return expected
  }
  for (const step of walkthroughSteps) {
    if (step.path === undefined) continue
    const url = typeof step.path === 'function' ? step.path(previous) : step.path
    previous = JSON.parse((await ask(url)).body)
  }
  for (const url of await printedRequests()) await ask(url)
  for (const prefix of routePrefixes) {
    t.match(await ask(`${prefix}/1`), { status: 200 }, `${prefix}: a row`)
    t.match(await ask(`${prefix}/1?expand=nothing`), { status: 400, body: /"FST_EXPAND_UNKNOWN_FIELD"/ }, `${prefix}: its relations listed`)
  }
  t.match(await ask(companyEmployees), { status: 200, body: /"employees":\[\{"id":\d+,"name":"[^"]+"\},/ }, 'two fields of each employee')
  t.equal(asked, 20 + 5 + 2 * routePrefixes.length + 1, 'every request was asked')
  const documentOf = async (app: FastifyInstance) => withoutDescriptions((await app.inject({ method: 'GET', url: `${docsPath}/json` })).json())
  const document = await documentOf(demo)
  t.match(document, { paths: { '/pets/{id}': {} } }, 'the demo\'s document')
  t.same(await documentOf(pulled), document, 'the OpenAPI document, but for the descriptions of the demo\'s schemas')
}

/** A JSON value without the descriptions its objects hold (a text under the key `description`). */
function withoutDescriptions (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions)
  if (value === null || typeof value !== 'object') return value
  const kept = Object.entries(value).filter(([key, entry]) => key !== 'description' || typeof entry !== 'string')
  return Object.fromEntries(kept.map(([key, entry]) => [key, withoutDescriptions(entry)]))
}

/** The hand-written demo and the same routes over `definitions`, on one database. */
async function servePair (t: Test, db: DemoDatabase, definitions: DemoResources): Promise<Record<'demo' | 'pulled', FastifyInstance>> {
  const demo = await buildApp({ db })
  t.teardown(() => demo.close())
  const pulled = await buildApp({ db, definitions })
  t.teardown(() => pulled.close())
  return { demo, pulled }
}

t.test('the section shows the pull command, diffs that apply, and the demo\'s routes as demo/app.ts declares them', async (t) => {
  t.same(pullArguments(), ['pull', '--database-url', 'file:demo.db', '--naming', 'snake', '--out', 'resources.ts'])
  t.equal(hunks.length, 9, 'the hunks of one diff')
  const routes = blocks('typescript').find((block) => block.includes("app.expand.routes('/companies'"))
  const app = await readFile(join(root, 'demo', 'app.ts'), 'utf8')
  const indented = routes?.split('\n').map((line) => (line === '' ? line : `  ${line}`)).join('\n')
  t.ok(indented !== undefined && app.includes(indented), 'the routes, verbatim')
  t.match(section, 'The demo registers the plugin with `{ db, resources, maxDepth: 3 }`')
  t.match(app, 'const expandOptions: ExpandPluginOptions = { db: readsFrom, resources, maxDepth: 3 }', 'as demo/app.ts does')
})

t.test('a hunk applies where its header says, to the lines it names, or not at all', async (t) => {
  const text = 'a\nb\nc\nd\n'
  const [hunk] = hunksOf('@@ -2,2 +2,3 @@\n b\n-c\n+C\n+C2\n')
  t.equal(applyHunks(text, [hunk!]), 'a\nb\nC\nC2\nd\n')
  t.same(hunksOf('@@ -1 +1 @@\n\n'), [{ header: '@@ -1 +1 @@', oldStart: 1, newStart: 1, oldLines: [''], newLines: [''] }],
    'an empty line is a blank context line, as an editor leaves it')
  t.throws(() => applyHunks(text, hunksOf('@@ -3,1 +3,1 @@\n-b\n+B\n')), { message: '@@ -3,1 +3,1 @@: line 3 is "c", not "b"' })
  t.throws(() => applyHunks(text, hunksOf('@@ -2,1 +3,1 @@\n-b\n+B\n')), { message: '@@ -2,1 +3,1 @@: its new lines start at line 2' })
  t.throws(() => applyHunks(text, [...hunksOf('@@ -2,1 +2,1 @@\n-b\n+B\n'), ...hunksOf('@@ -1,1 +1,1 @@\n-a\n+A\n')]),
    { message: '@@ -1,1 +1,1 @@ overlaps the hunk before it' })
  t.throws(() => hunksOf('@@ -1,2 +1,2 @@\n a\n'), { message: '@@ -1,2 +1,2 @@ counts 1 old and 1 new lines' })
  t.throws(() => hunksOf(' a\n'), { message: 'a diff line before any hunk header:  a' })
  t.throws(() => hunksOf('@@ -1 +1 @@\n*a\n'), { message: 'not a diff line in @@ -1 +1 @@: *a' })
})

let sqliteModule: string | undefined

t.test('sqlite: the demo\'s file pulled through the bin and the module API, edited, type-checked and served alike', async (t) => {
  const directory = t.testdir({ edited: {} })
  const file = join(directory, 'demo.db')
  const db = connect({ sqliteFile: file })
  t.teardown(() => db.destroy())
  await seedIfEmpty(db)

  // The page's command, given this file and an output of the test's.
  const out = join(directory, 'resources.ts')
  const argv = pullArguments().map((argument) => ({ 'file:demo.db': `file:${file}`, 'resources.ts': out } as Record<string, string>)[argument] ?? argument)
  const bin = promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'plugin', 'pull', 'bin.ts'), ...argv], { cwd: root })

  const reader = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(file, { readonly: true }) }) })
  const model = await introspect.sqlite(reader).finally(() => reader.destroy())
  const pulled = generateModule(model, { naming: naming() }).text
  sqliteModule = pulled

  const { stdout, stderr } = await bin
  t.equal(stdout, '')
  t.equal(stderr, `wrote ${out}: 8 resources from file:${file}\n`, 'the bin skips nothing and says what it wrote')
  t.equal(await readFile(out, 'utf8'), pulled, 'the bin writes what the module API generates')

  // The edited module holds every line of the pulled one it keeps (test/pull/generated-module.test.ts type-checks
  // pull's modules as written): one program, which costs seconds.
  const edited = applyHunks(pulled, hunks)
  const editedFile = join(directory, 'edited', 'resources.ts')
  await writeFile(editedFile, edited)
  await copyFile(join(root, 'schemas', 'price-service.ts'), join(directory, 'edited', 'price-service.ts'))
  t.same(typeErrors(editedFile), [], 'the edited module type-checks')

  const { pulled: served, demo } = await servePair(t, db, await servedModule(directory, edited))
  await compare(t, demo, served)
})

for (const dialect of dialects().filter((candidate) => candidate.name === 'postgres' || candidate.name === 'mariadb')) {
  t.test(`${dialect.name}: the demo's database pulled, edited and served alike`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const db = database.db as DemoDatabase
    await seedIfEmpty(db)
    const pulled = generateModule(await introspect[databaseOf(dialect)](database.db), { naming: naming() }).text
    const named = onDatabase(dialect, { sqlite: 'SQLite', postgres: 'PostgreSQL', mariadb: 'MariaDB/MySQL' })
    t.equal(pulled, sqliteModule?.replace('a SQLite database', `a ${named} database`), 'the module SQLite gives, but its header')
    const { pulled: served, demo } = await servePair(t, db, await servedModule(t.testdir({}), applyHunks(pulled, hunks)))
    await compare(t, demo, served)
  })
}
