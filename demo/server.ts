import { buildApp, docsPath } from './app.js'
import { connect } from './database.js'
import { countRows, seedIfEmpty } from './seed.js'

/*
 * `npm start`: the demo API. Environment:
 *   PORT          default 3000
 *   HOST          default 127.0.0.1
 *   DATABASE_URL  a PostgreSQL connection string; without it, SQLite:
 *   SQLITE_FILE   the SQLite file, default ./demo.db
 *   LOG_LEVEL     pino's level, default info
 */
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, not '${process.env.PORT}'`)
  process.exit(1)
}

const db = connect({ databaseUrl: process.env.DATABASE_URL, sqliteFile: process.env.SQLITE_FILE })
const app = await buildApp({ db, logger: { level: process.env.LOG_LEVEL ?? 'info' } })

try {
  const started = performance.now()
  const seeded = await seedIfEmpty(db)
  const counts = await countRows(db)
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0)
  app.log.info({ counts, ms: Math.round(performance.now() - started) }, seeded ? `seeded ${total} rows` : `database holds ${total} rows`)
  await app.listen({ port, host })
} catch (error) {
  app.log.error(error)
  await db.destroy()
  process.exit(1)
}

const base = `http://${host.includes(':') ? `[${host}]` : host}:${(app.server.address() as { port: number }).port}`
console.log(`
fastify-expand demo on ${base} (${process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'})
  documentation: ${base}${docsPath}

  curl '${base}/pets/1?expand=owner.employer,toys'
  curl '${base}/pets?limit=2&expand=owner&fields=id,name,owner.name'
  curl '${base}/people/3?expand=pets&omit=email,hobbies'
`)

let closing = false
async function shutdown (signal: string): Promise<void> {
  if (closing) return
  closing = true
  app.log.info({ signal }, 'shutting down')
  try {
    await app.close()
    await db.destroy()
    process.exit(0)
  } catch (error) {
    app.log.error(error)
    process.exit(1)
  }
}
process.once('SIGINT', () => { void shutdown('SIGINT') })
process.once('SIGTERM', () => { void shutdown('SIGTERM') })
