// Everything that differs between the databases lives in plugin/sql/dialects/
// (and the drivers' own wrappers in plugin/drivers/): no other module imports
// a Kysely adapter or names a database in its code, so a new database is one
// more dialect file, and a new difference one more member of ExpandDialect.
import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'

const root = new URL('../../plugin/', import.meta.url)
/**
 * Where databases may be named: the dialects, the wrappers of one driver each, and `fastify-expand pull`
 * (plugin/pull/), a command apart from the plugin that reads each database's catalog with its own driver.
 */
const allowed = ['sql/dialects/', 'drivers/', 'pull/']

/** The code of a source, without its comments (the prose may say which database a rule is for). */
function withoutComments (source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/.*$/gm, '$1')
}

/** The entry's re-exports of the drivers' wrappers, whose names may say which driver each is for. */
function withoutDriverExports (code: string): string {
  return code.replace(/^export \{[^}]*\} from '\.\/drivers\/[\w-]+\.js'$/gm, '')
}

const sources = readdirSync(root, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts') && !allowed.some((folder) => name.startsWith(folder)))
  .map((name) => [name, withoutDriverExports(withoutComments(readFileSync(new URL(name, root), 'utf8')))] as const)

t.ok(sources.length > 30, 'the plugin sources are read')

t.test('no module outside sql/dialects/ imports an adapter or names a database', async (t) => {
  for (const [name, code] of sources) {
    t.notMatch(code, /\b(Sqlite|Postgres|Mysql|Mssql)(Adapter|Dialect|Introspector|QueryCompiler)\b/, `${name}: no adapter`)
    t.notMatch(code, /sqlite|postgres|mysql|mssql|\bpg\b|julianday|row_number|instr\(|57014/i, `${name}: no database named`)
  }
})

t.test('the check reads code, and sees a database named in it', async (t) => {
  const code = withoutComments("// SQLite writes it so\nconst onSqlite = adapter instanceof SqliteAdapter /* pg */\nconst url = 'http://x'")
  t.match(code, /onSqlite/)
  t.match(code, /SqliteAdapter/)
  t.notMatch(code, /SQLite writes|pg/)
  t.match(code, /http:\/\/x/, 'a URL is not a comment')
  const entry = withoutDriverExports("export { prepareMysqlStatements } from './drivers/prepared-mysql-statements.js'\nexport const onMysql = true")
  t.notMatch(entry, /prepareMysqlStatements/, 'a driver wrapper re-exported by the entry may name its driver')
  t.match(entry, /onMysql/, 'anything else may not')
})
