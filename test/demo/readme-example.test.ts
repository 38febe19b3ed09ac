import { readdirSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import ts from 'typescript'

/*
 * The README's complete example, as an application would paste it: its code
 * block is written to a file and run, every request shown after it is made in
 * order and must get the response printed there, byte for byte. The pages of
 * docs/ continue it: every ts block of the README and of each page is
 * type-checked with the example as one module, with 'fastify-expand' resolved
 * to this repository's source; a page that shows requests has its snippets run
 * with the example, and each of its requests replayed. docs/access.md holds a
 * program of its own, run and replayed the same way.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const pluginEntry = join(root, 'plugin', 'index.ts')
const readme = await readFile(join(root, 'README.md'), 'utf8')
/** Every page of docs/, by file name, in name order. */
const pages = new Map<string, string>()
for (const name of readdirSync(join(root, 'docs')).filter((file) => file.endsWith('.md')).sort()) {
  pages.set(name, await readFile(join(root, 'docs', name), 'utf8'))
}
const exampleBase = 'http://localhost:3000'
/**
 * The key the pages' cursors were made with (published: the tests' only). The
 * snippets read it from CURSOR_SECRET, as an application behind a load
 * balancer would.
 */
const pagesCursorSecret = 'published cursor key of the documentation examples'

function between (text: string, start: string, end: string, where: string): string {
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 || to < from) throw new Error(`${where} needs the markers ${start} and ${end}`)
  return text.slice(from + start.length, to)
}

/** `text` without the part between the markers, markers included (unchanged when it has none). */
function without (text: string, start: string, end: string): string {
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 && to === -1) return text
  if (from === -1 || to < from) throw new Error(`unbalanced markers ${start} and ${end}`)
  return text.slice(0, from) + text.slice(to + end.length)
}

/** The ts blocks of a markdown text, indented ones (in a list item) dedented. */
const tsBlocks = (text: string) => [...text.matchAll(/^( *)```ts\n([\s\S]*?)\n\1```$/gm)]
  .map((match) => match[2].split('\n').map((line) => line.slice(match[1].length)).join('\n'))
const exampleMarkers = ['<!-- example:start -->', '<!-- example:end -->'] as const
const accessMarkers = ['<!-- access-example:start -->', '<!-- access-example:end -->'] as const
const section = between(readme, ...exampleMarkers, 'README.md')
const codeBlocks = tsBlocks(section)
const accessPage = pages.get('access.md')
if (accessPage === undefined) throw new Error('docs/access.md is missing')
/** The access section's own example: a program, its requests, and the snippet that continues it. */
const accessSection = between(accessPage, ...accessMarkers, 'docs/access.md')
/** Every page's text but the access example's program. */
const continuingPages = new Map([...pages].map(([name, text]) => [name, without(text, ...accessMarkers)]))
/** The ts blocks that continue the example: the README's after it, then every page's, but for the access example's. */
const continuation = [
  ...tsBlocks(without(readme, ...exampleMarkers)),
  ...[...continuingPages.values()].flatMap(tsBlocks),
]

interface ExampleRequest { command: string; method: string; url: string; headers: Record<string, string>; payload?: string; body: string }

/** The arguments of a shell command, single-quoted ones unquoted. */
function shellWords (command: string): string[] {
  return [...command.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2])
}

function parseCurl (command: string, body: string): ExampleRequest {
  const words = shellWords(command)
  if (words[0] !== 'curl') throw new Error(`not a curl command: ${command}`)
  const request: ExampleRequest = { command, method: 'GET', url: '', headers: {}, body }
  for (let index = 1; index < words.length; index++) {
    const word = words[index]
    if (word === '-s') continue
    if (word === '-X') request.method = words[++index]
    else if (word === '-H') {
      const [name, ...value] = words[++index].split(':')
      request.headers[name.trim().toLowerCase()] = value.join(':').trim()
    } else if (word === '-d') request.payload = words[++index]
    else if (word.startsWith(exampleBase)) request.url = word.slice(exampleBase.length)
    else throw new Error(`unexpected curl argument '${word}' in ${command}`)
  }
  if (request.url === '') throw new Error(`no ${exampleBase} URL in ${command}`)
  return request
}

const requestsOf = (text: string) => [...text.matchAll(/```sh\n(curl [^\n]+)\n```\s*```json\n([^\n]+)\n```/g)].map((match) => parseCurl(match[1], match[2]))
/** The curl commands of a text. */
const curlCommands = (text: string) => [...text.matchAll(/```sh\n(curl [^\n]+)\n```/g)].map((match) => match[1])
/** The page the demo's walkthrough is generated in, with the demo's address: test/demo/readme.test.ts replays it. */
const walkthroughPage = 'walkthrough.md'
const requests = requestsOf(section)

t.test('the example section holds one program and its requests', async (t) => {
  t.equal(codeBlocks.length, 1, 'one ts block')
  t.equal(section.match(/```sh/g)?.length, requests.length, 'every curl block is followed by a one-line JSON response')
  t.ok(requests.length >= 8, `${requests.length} requests`)
  t.match(codeBlocks[0], /from 'fastify-expand'/)
  t.match(codeBlocks[0], /app\.expand\.routes\(/)
  t.match(codeBlocks[0], /app\.expand\.load\(request, rows\)/)
  t.match(codeBlocks[0], /\{ db: trx \}/)
  t.match(codeBlocks[0], /await app\.listen\(/)
})

/** Runs a program of the documentation as an application would (NODE_ENV=test skips listen) and replays its requests. */
async function replay (t: Test, program: string, exampleRequests: ExampleRequest[]): Promise<void> {
  const directory = t.testdir({})
  const file = join(directory, 'app.ts')
  // The application imports the package; here the package is this repository's source.
  await writeFile(file, program.replace("from 'fastify-expand'", `from ${JSON.stringify(pathToFileURL(pluginEntry).href)}`))
  const previous = { NODE_ENV: process.env.NODE_ENV, CURSOR_SECRET: process.env.CURSOR_SECRET }
  process.env.NODE_ENV = 'test'
  process.env.CURSOR_SECRET = pagesCursorSecret
  let app: FastifyInstance
  try {
    app = (await import(pathToFileURL(file).href) as { default: FastifyInstance }).default
  } finally {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
  t.teardown(() => app.close())
  await app.ready()
  t.equal(app.server.listening, false, 'NODE_ENV=test skips listen')
  for (const request of exampleRequests) {
    const response = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload })
    t.equal(response.body, request.body, request.command)
    const printed = JSON.parse(request.body) as { statusCode?: number }
    const expected = printed.statusCode ?? (request.method === 'POST' ? 201 : 200)
    t.equal(response.statusCode, expected, `${request.command}: status ${expected}`)
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8', `${request.command}: content type`)
  }
}

t.test('the example runs and answers every request as printed', async (t) => {
  await replay(t, codeBlocks[0], requests)
})

t.test('the access example runs and answers every request as printed', async (t) => {
  const accessRequests = requestsOf(accessSection)
  t.ok(accessRequests.length >= 6, `${accessRequests.length} requests`)
  t.equal(accessSection.match(/```sh/g)?.length, accessRequests.length, 'every curl block is followed by a one-line JSON response')
  await replay(t, tsBlocks(accessSection)[0], accessRequests)
})

t.test("the README's requests outside the example are the example's own, answered as printed there", async (t) => {
  const outside = requestsOf(without(readme, ...exampleMarkers))
  t.ok(outside.length >= 1, `${outside.length} requests`)
  t.equal(curlCommands(without(readme, ...exampleMarkers)).length, outside.length, 'every curl block is followed by a one-line JSON response')
  for (const request of outside) {
    t.ok(requests.some((shown) => shown.command === request.command && shown.body === request.body), `${request.command} is in the example, with the same response`)
  }
})

/**
 * The example's program continued by a page's blocks, as one module: a block
 * that declares a resource goes with the example's resources and joins the
 * plugin's `resources` (as the pages say to do), any other block is added
 * before the program exports the app.
 */
function exampleWith (blocks: string[]): string {
  const program = codeBlocks[0]
  const appStart = program.indexOf('\nconst app = Fastify(')
  const appEnd = program.indexOf('\nexport default app\n')
  const registered = 'resources: [Company, Person, Pet]'
  if (appStart === -1 || appEnd < appStart || !program.includes(registered)) {
    throw new Error(`the example creates the app, registers ${registered} and ends with export default app`)
  }
  const declaration = /^const (\w+) = defineResource\(/
  const declarations = blocks.filter((block) => declaration.test(block))
  const others = blocks.filter((block) => !declaration.test(block))
  const names = declarations.map((block) => declaration.exec(block)![1])
  const app = program.slice(appStart + 1, appEnd).replace(registered, `resources: [Company, Person, Pet${names.map((name) => `, ${name}`).join('')}]`)
  return mergedModule([program.slice(0, appStart), ...declarations, app, ...others, program.slice(appEnd + 1)])
}

for (const [name, text] of continuingPages) {
  if (name === walkthroughPage) continue
  const pageRequests = requestsOf(text)
  if (curlCommands(text).length === 0) continue
  t.test(`docs/${name}: its snippets run with the example, and answer every request as printed`, async (t) => {
    t.equal(curlCommands(text).length, pageRequests.length, 'every curl block is followed by a one-line JSON response')
    await replay(t, exampleWith(tsBlocks(text)), pageRequests)
  })
}

t.test('every request the documentation shows is replayed, here or by test/demo/readme.test.ts', async (t) => {
  const withRequests = [...continuingPages].filter(([name, text]) => name !== walkthroughPage && curlCommands(text).length > 0)
  t.same(withRequests.map(([name]) => name), ['derived.md', 'lists.md', 'routes.md'], 'the pages whose snippets continue the example with requests')
  const walkthrough = curlCommands(pages.get(walkthroughPage) ?? '')
  t.ok(walkthrough.every((command) => command.startsWith("curl -s 'http://127.0.0.1:3000/")), "the walkthrough's requests address the demo")
  const everyPage = [...pages.values()].flatMap(curlCommands).length
  const replayedHere = requestsOf(accessSection).length + withRequests.flatMap(([, text]) => requestsOf(text)).length
  t.equal(everyPage, replayedHere + walkthrough.length, 'each curl block of docs/ is the access example\'s, a replayed page\'s or the walkthrough\'s')
})

/** One module of the example and its continuation, their imports merged (the snippets repeat some). */
function mergedModule (blocks: string[]): string {
  const defaults = new Map<string, string>()
  const named = new Map<string, Set<string>>()
  const bodies: string[] = []
  const importLine = /^import (?:(\w+)(?:, )?)?(?:\{ ([^}]*) \})? from '([^']+)'$/
  for (const block of blocks) {
    const lines: string[] = []
    for (const line of block.split('\n')) {
      const match = importLine.exec(line)
      if (match === null) {
        lines.push(line)
        continue
      }
      const [, defaultName, names, specifier] = match
      if (defaultName !== undefined) {
        const known = defaults.get(specifier)
        if (known !== undefined && known !== defaultName) throw new Error(`${specifier} is imported as ${known} and ${defaultName}`)
        defaults.set(specifier, defaultName)
      }
      const set = named.get(specifier) ?? new Set<string>()
      for (const name of names?.split(',') ?? []) set.add(name.trim())
      named.set(specifier, set)
    }
    bodies.push(lines.join('\n'))
  }
  const imports = [...named.keys()].map((specifier) => {
    const parts = [defaults.get(specifier), named.get(specifier)!.size > 0 ? `{ ${[...named.get(specifier)!].join(', ')} }` : undefined]
    return `import ${parts.filter((part) => part !== undefined).join(', ')} from '${specifier}'`
  })
  return [...imports, ...bodies].join('\n')
}

/** Type errors of one module made of documentation blocks, with 'fastify-expand' resolved to this repository's source. */
async function typeErrors (t: Test, blocks: string[]): Promise<string[]> {
  const directory = t.testdir({})
  const file = join(directory, 'app.ts')
  await writeFile(file, mergedModule(blocks))
  const configured = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root)
  const program = ts.createProgram([file], {
    ...configured.options,
    noEmit: true,
    paths: { 'fastify-expand': [pluginEntry], 'fastify-expand/otel': [join(root, 'plugin', 'otel', 'index.ts')] },
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.formatDiagnostic(diagnostic, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => directory,
    getNewLine: () => '\n',
  }))
}

t.test('the example and the snippets that continue it, in the README and every docs page, type-check', async (t) => {
  t.ok(continuation.length >= 12, `${continuation.length} snippets continue the example`)
  t.same(await typeErrors(t, [codeBlocks[0], ...continuation]), [], 'no type errors')
})

t.test('the access example and its row-level security snippet type-check', async (t) => {
  const blocks = tsBlocks(accessSection)
  t.equal(blocks.length, 2, 'the program and the snippet')
  t.same(await typeErrors(t, blocks), [], 'no type errors')
})
