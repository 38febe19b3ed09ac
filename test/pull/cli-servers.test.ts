import { sql } from 'kysely'
import t from 'tap'
import { pull } from '../../plugin/pull/cli.js'
import { generateModule } from '../../plugin/pull/generate.js'
import { introspectMysql } from '../../plugin/pull/mysql.js'
import { introspectPostgres } from '../../plugin/pull/postgres.js'
import { databaseOf } from '../fixtures/databases.js'
import { dialects } from '../fixtures/dialects.js'
import { createMusic } from '../fixtures/music.js'

// `fastify-expand pull` given a server's URL: the music fixture's schema (PostgreSQL: the URL's search_path) or
// database (MariaDB: the URL's path), read through the command's own connection, gives the module the
// introspection of the test's connection gives.

const servers = dialects().filter((candidate) => candidate.name === 'postgres' || candidate.name === 'mariadb')
if (servers.length === 0) t.pass('no server to read: DATABASE_URL and MARIADB_URL are not set')
for (const dialect of servers) {
  t.test(`${dialect.name}: pull by URL`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    const on = databaseOf(dialect)
    await createMusic(database.db, on)
    let url: string
    if (on === 'postgres') {
      const { rows: [row] } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)
      const address = new URL(process.env.DATABASE_URL!)
      address.searchParams.set('options', `-c search_path=${row!.schema}`)
      url = address.href
    } else {
      const { rows: [row] } = await sql<{ name: string }>`select database() as name`.execute(database.db)
      const address = new URL(process.env.MARIADB_URL!.replace(/^mysql:/, 'mariadb:'))
      address.pathname = `/${row!.name}`
      url = address.href
    }
    const model = on === 'postgres' ? await introspectPostgres(database.db) : await introspectMysql(database.db)
    let stdout = ''
    let stderr = ''
    const code = await pull(['pull', '--database-url', url], { stdout: (text) => { stdout += text }, stderr: (text) => { stderr += text } })
    t.equal(code, 0)
    t.equal(stdout, generateModule(model, { naming: 'camel' }).text)
    t.match(stderr, /^skipped notes: no primary key\n/)
  })
}
