import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import ts from 'typescript'

/*
 * The README's complete example, as an application would paste it: its code
 * block is written to a file and run, every request shown after it is made in
 * order and must get the response printed there, byte for byte. The example
 * and the snippets that continue it are type-checked as one module, with
 * 'fastify-expand' resolved to this repository's source.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const pluginEntry = join(root, 'plugin', 'index.ts')
const readme = await readFile(join(root, 'README.md'), 'utf8')
const exampleBase = 'http://localhost:3000'

function between (text: string, start: string, end: string): string {
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 || to < from) throw new Error(`README.md needs the markers ${start} and ${end}`)
  return text.slice(from + start.length, to)
}

const tsBlocks = (text: string) => [...text.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((match) => match[1])
const section = between(readme, '<!-- example:start -->', '<!-- example:end -->')
const codeBlocks = tsBlocks(section)
/** The access section's own example: a program, its requests, and the snippet that continues it. */
const accessSection = between(readme, '<!-- access-example:start -->', '<!-- access-example:end -->')
/** The ts blocks after the example, up to the walkthrough, but for the access example's: the snippets that continue it. */
const continuation = [
  ...tsBlocks(between(readme, '<!-- example:end -->', '<!-- access-example:start -->')),
  ...tsBlocks(between(readme, '<!-- access-example:end -->', '<!-- walkthrough:start -->')),
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

/** Runs a program of the README as an application would (NODE_ENV=test skips listen) and replays its requests. */
async function replay (t: Test, program: string, exampleRequests: ExampleRequest[]): Promise<void> {
  const directory = t.testdir({})
  const file = join(directory, 'app.ts')
  // The application imports the package; here the package is this repository's source.
  await writeFile(file, program.replace("from 'fastify-expand'", `from ${JSON.stringify(pathToFileURL(pluginEntry).href)}`))
  const previous = process.env.NODE_ENV
  process.env.NODE_ENV = 'test'
  let app: FastifyInstance
  try {
    app = (await import(pathToFileURL(file).href) as { default: FastifyInstance }).default
  } finally {
    process.env.NODE_ENV = previous
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

/** Type errors of one module made of README blocks, with 'fastify-expand' resolved to this repository's source. */
async function typeErrors (t: Test, blocks: string[]): Promise<string[]> {
  const directory = t.testdir({})
  const file = join(directory, 'app.ts')
  await writeFile(file, mergedModule(blocks))
  const configured = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root)
  const program = ts.createProgram([file], {
    ...configured.options,
    noEmit: true,
    paths: { 'fastify-expand': [pluginEntry] },
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.formatDiagnostic(diagnostic, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => directory,
    getNewLine: () => '\n',
  }))
}

t.test('the example and the snippets that continue it type-check', async (t) => {
  t.ok(continuation.length >= 4, `${continuation.length} snippets continue the example`)
  t.same(await typeErrors(t, [codeBlocks[0], ...continuation]), [], 'no type errors')
})

t.test('the access example and its row-level security snippet type-check', async (t) => {
  const blocks = tsBlocks(accessSection)
  t.equal(blocks.length, 2, 'the program and the snippet')
  t.same(await typeErrors(t, blocks), [], 'no type errors')
})
