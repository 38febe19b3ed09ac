import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import t from 'tap'
import { pull, usage } from '../../plugin/pull/cli.js'
import { databaseLocation, importDriver, mistake, redacted } from '../../plugin/pull/connect.js'
import { generateModule } from '../../plugin/pull/generate.js'
import { introspectSqlite } from '../../plugin/pull/sqlite.js'
import { createMusic } from '../fixtures/music.js'

// The command line of `fastify-expand pull` on a SQLite file named by URL or path: what it writes and prints, the
// exit codes, a file never overwritten without --force, and one line for each mistake (never a stack).

const root = fileURLToPath(new URL('../../', import.meta.url))

async function musicFile (directory: string): Promise<string> {
  const path = join(directory, 'music.db')
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(path) }) })
  await createMusic(db, 'sqlite')
  await db.destroy()
  return path
}

/** The module the generator writes for the file, read as the command reads it. */
async function expectedText (path: string, naming: 'camel' | 'snake' | 'keep' = 'camel'): Promise<string> {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(path, { readonly: true }) }) })
  try {
    return generateModule(await introspectSqlite(db), { naming }).text
  } finally {
    await db.destroy()
  }
}

async function run (...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await pull(argv, { stdout: (text) => { stdout += text }, stderr: (text) => { stderr += text } })
  return { code, stdout, stderr }
}

const skippedLines = [
  'skipped notes: no primary key',
  'skipped employees.photo: unsupported type blob',
].map((line) => `${line}\n`).join('')

t.test('writes the module to --out, prints what it skipped, and never overwrites without --force', async (t) => {
  const directory = t.testdir({})
  const path = await musicFile(directory)
  const out = join(directory, 'resources.ts')
  const url = `file:${path}`
  const text = await expectedText(path)

  t.same(await run('pull', '--database-url', url, '--out', out), { code: 0, stdout: '', stderr: `${skippedLines}wrote ${out}: 9 resources from ${url}\n` })
  t.equal(await readFile(out, 'utf8'), text)

  await writeFile(out, '// mine\n')
  t.same(await run('pull', '--database-url', url, '--out', out), {
    code: 1, stdout: '', stderr: `fastify-expand pull: ${out} exists: pass --force to overwrite it\n`,
  }, 'refused before reading the database')
  t.equal(await readFile(out, 'utf8'), '// mine\n', 'the file is left as it was')

  t.same(await run('pull', '--database-url', path, '--out', out, '--force'), { code: 0, stdout: '', stderr: `${skippedLines}wrote ${out}: 9 resources from ${path}\n` },
    'a bare path, and --force')
  t.equal(await readFile(out, 'utf8'), text)

  t.same(await run('pull', '--database-url', pathToFileURL(path).href, '--naming', 'snake'), { code: 0, stdout: await expectedText(path, 'snake'), stderr: skippedLines },
    'a file:// URL, and standard output without --out')
  t.same(await run('pull', '--naming', 'keep', `--database-url=${url}`), { code: 0, stdout: await expectedText(path, 'keep'), stderr: skippedLines })

  const missing = join(directory, 'no', 'such', 'dir.ts')
  const cannotWrite = await run('pull', '--database-url', url, '--out', missing)
  t.equal(cannotWrite.code, 1)
  t.match(cannotWrite.stderr, new RegExp(`^${skippedLines.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}fastify-expand pull: cannot write ${missing}: ENOENT[^\n]*\n$`))
})

t.test('docs/start-from-a-database.md shows the module and the lines pull writes for the fixture, exactly', async (t) => {
  const page = await readFile(join(root, 'docs', 'start-from-a-database.md'), 'utf8')
  const directory = t.testdir({})
  const path = await musicFile(directory)
  const shown = /```typescript\n(\/\/ Generated [\s\S]*?)```\n/.exec(page)?.[1]
  t.equal(shown, await expectedText(path), 'the module')
  const printed = skippedLines.split('\n').filter((line) => line !== '').map((line) => `# ${line}\n`).join('')
  t.ok(page.includes(`${printed}# wrote resources.ts: 9 resources from file:music.db\n`), 'what it skipped, as printed')
})

t.test('each mistake is one line on standard error and exit code 1', async (t) => {
  const directory = t.testdir({})
  const one = (message: string) => ({ code: 1, stdout: '', stderr: `fastify-expand pull: ${message}\n` })
  t.same(await run('pull', '--database-url', 'http://example.com/db'),
    one("'http://example.com/db' is not a database URL: give file:path.db (or a path), postgres://… or mysql://… (mariadb://…)"))
  t.same(await run('pull', '--database-url', 'postgres://user:secret@[bad'),
    one("'postgres://user:***@[bad' is not a database URL: give file:path.db (or a path), postgres://… or mysql://… (mariadb://…)"),
    'a URL that does not parse, its password hidden')
  t.same(await run('pull', '--database-url', 'file://elsewhere/music.db'), one("'file://elsewhere/music.db' is not a file URL"))
  t.same(await run('pull'), one('--database-url is required: file:path.db, postgres://… or mysql://…'))
  t.same(await run('pull', '--database-url', 'x.db', '--naming', 'kebab'), one("--naming is 'kebab': expected one of camel, snake, keep"))
  t.same(await run('push', '--database-url', 'x.db'), one(`expected the command pull (${usage.split('\n')[0]})`))
  t.same(await run('pull', '--database-url', 'x.db', '--outfile', 'x.ts'), one(
    "Unknown option '--outfile'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--outfile\"")
  )
  const missing = join(directory, 'missing.db')
  t.same(await run('pull', '--database-url', `file:${missing}`), one(`cannot open the SQLite database ${missing}: unable to open database file`),
    'a SQLite file that does not exist is not created')
  t.same(await run('pull', '--database-url', 'postgres://user:secret@127.0.0.1:1/db'), one('cannot read the database: connect ECONNREFUSED 127.0.0.1:1'))
  t.same(await run('pull', '--database-url', 'mariadb://user:secret@127.0.0.1:1/db'), one('cannot read the database: connect ECONNREFUSED 127.0.0.1:1'))
  t.same(await run('--help'), { code: 0, stdout: usage, stderr: '' })
  let stderr = ''
  const closed = await pull(['--help'], { stdout: () => { throw new Error('standard output is closed') }, stderr: (text) => { stderr += text } })
  t.same({ closed, stderr }, { closed: 1, stderr: 'fastify-expand pull: unexpected error: standard output is closed\n' }, 'any other failure is one line too')
})

t.test('database URLs and paths', async (t) => {
  t.same(databaseLocation('music.db'), { dialect: 'sqlite', path: 'music.db' })
  t.same(databaseLocation('C:\\data\\music.db'), { dialect: 'sqlite', path: 'C:\\data\\music.db' }, 'a Windows path is no scheme')
  t.same(databaseLocation('file:data/my%20music.db'), { dialect: 'sqlite', path: 'data/my music.db' })
  t.same(databaseLocation('postgresql://u@h/d'), { dialect: 'postgres', url: 'postgresql://u@h/d' })
  t.same(databaseLocation('mariadb://u:p@h:3307/d'), { dialect: 'mysql', url: 'mysql://u:p@h:3307/d' })
  t.same(databaseLocation('MySQL://u@h/d'), { dialect: 'mysql', url: 'mysql://u@h/d' })
  t.same(databaseLocation('file:%E0'), mistake("'file:%E0' is not a file URL"))
  t.equal(redacted('mysql://user:p%40ss@host/db'), 'mysql://user:***@host/db')
  t.equal(redacted('postgres://user@host/db'), 'postgres://user@host/db')
})

t.test('a driver that is not installed is named', async (t) => {
  const missing = Object.assign(new Error("Cannot find package 'pg'"), { code: 'ERR_MODULE_NOT_FOUND' })
  t.same(await importDriver('postgres', () => Promise.reject(missing)),
    mistake('reading this database needs the driver pg: install it beside fastify-expand'))
  const other = new Error('broken')
  await t.rejects(importDriver('mysql', () => Promise.reject(other)), other, 'any other failure is its own')
  t.equal(await importDriver('sqlite', () => Promise.resolve('loaded')), 'loaded')
})

t.test('the bin: exit codes and messages of the process', async (t) => {
  const directory = t.testdir({ 'resources.ts': '// mine\n' })
  const bin = join(root, 'plugin', 'pull', 'bin.ts')
  const spawn = async (...argv: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', bin, ...argv], { cwd: root })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string }
      return { code, stdout, stderr }
    }
  }
  const out = join(directory, 'resources.ts')
  t.same(await spawn('pull', '--database-url', 'file:x.db', '--out', out),
    { code: 1, stdout: '', stderr: `fastify-expand pull: ${out} exists: pass --force to overwrite it\n` })
  t.same(await spawn('--help'), { code: 0, stdout: usage, stderr: '' })
})
