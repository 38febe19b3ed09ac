import { randomBytes } from 'node:crypto'
import { buildApp, docsPath } from './app.js'
import { connect, databaseOf } from './database.js'
import { countRows, seedIfEmpty } from './seed.js'
import { demoTracing } from './tracing.js'

/*
 * `npm start`: the demo API. Environment:
 *   PORT          default 3000
 *   HOST          default 127.0.0.1
 *   DATABASE_URL  a PostgreSQL (postgres://) or MariaDB/MySQL (mysql://) connection string;
 *                 without it, SQLite:
 *   SQLITE_FILE   the SQLite file, default ./demo.db
 *   REPLICA_URL   a hot standby of DATABASE_URL: GET requests read from it (demo/read-replica.ts)
 *   LOG_LEVEL     pino's level, default info
 *   DRAIN_MS      on SIGTERM/SIGINT, how long /health answers 503 'draining' while new
 *                 connections are still served, default 1000 (see shutdown below)
 *   SHUTDOWN_TIMEOUT_MS  how long in-flight requests may take after that, default 10000
 *   CURSOR_SECRET the key of /visits' cursors (16 characters at least), shared by every
 *                 instance; unset: a random key per process (logged as a warning)
 *   OTEL_CONSOLE  1: each request's spans printed to the console (demo/tracing.ts)
 */
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, not '${process.env.PORT}'`)
  process.exit(1)
}

const drainMs = Number(process.env.DRAIN_MS ?? 1000)
const shutdownTimeoutMs = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 10_000)
// The statement time limit per connection (0: none, as behind PgBouncer: see demo/database.ts).
const statementTimeoutMs = Number(process.env.STATEMENT_TIMEOUT_MS ?? 2000)
const durations = [['DRAIN_MS', drainMs], ['SHUTDOWN_TIMEOUT_MS', shutdownTimeoutMs], ['STATEMENT_TIMEOUT_MS', statementTimeoutMs]] as const
for (const [name, value] of durations) {
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a number of milliseconds, not '${process.env[name]}'`)
    process.exit(1)
  }
}

// Without CURSOR_SECRET, a key of this process alone: never a published one, which would let anyone make cursors.
const givenCursorSecret = process.env.CURSOR_SECRET
const cursorSecret = givenCursorSecret === undefined || givenCursorSecret === '' ? randomBytes(32).toString('base64url') : givenCursorSecret
const db = connect({ databaseUrl: process.env.DATABASE_URL, sqliteFile: process.env.SQLITE_FILE, statementTimeoutMs })
const replicaUrl = process.env.REPLICA_URL ?? ''
if (replicaUrl !== '' && databaseOf(process.env.DATABASE_URL) !== 'PostgreSQL') {
  // demo/read-replica.ts follows a write by PostgreSQL's WAL position.
  console.error('REPLICA_URL is a hot standby of a PostgreSQL DATABASE_URL: set DATABASE_URL to its primary')
  process.exit(1)
}
const replica = replicaUrl === '' ? undefined : connect({ databaseUrl: replicaUrl, statementTimeoutMs })
let draining = false
const tracing = process.env.OTEL_CONSOLE === '1' ? demoTracing() : undefined
const app = await buildApp({
  db,
  logger: { level: process.env.LOG_LEVEL ?? 'info' },
  draining: () => draining,
  cursorSecret,
  replica,
  beforeRoutes: tracing?.requestSpans,
})
if (cursorSecret !== givenCursorSecret) {
  app.log.warn('CURSOR_SECRET is not set: cursors are encrypted with a random key made at startup, so they will not survive a restart ' +
    'and other instances refuse them; set CURSOR_SECRET (16 characters at least) to share one')
}
// Before the server listens (and says so), so that a signal sent as soon as it is up is never the default exit.
process.on('SIGINT', () => { void shutdown('SIGINT') })
process.on('SIGTERM', () => { void shutdown('SIGTERM') })

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
  await replica?.destroy()
  process.exit(1)
}

const base = `http://${host.includes(':') ? `[${host}]` : host}:${(app.server.address() as { port: number }).port}`
console.log(`
fastify-expand demo on ${base} (${databaseOf(process.env.DATABASE_URL)}${replica === undefined ? '' : ', reads on REPLICA_URL'})
  documentation: ${base}${docsPath}

  curl '${base}/pets/1?expand=owner.employer,toys'
  curl '${base}/pets?limit=2&expand=owner&fields=id,name,owner.name'
  curl '${base}/people/3?expand=pets&omit=email,hobbies'
  curl '${base}/people?sort=-pet_count&limit=3&fields=id,name,pet_count'
  curl '${base}/pets/5?expand=toys.price&fields=id,label,toys.name,toys.price'
`)

/*
 * Graceful shutdown, for instances behind a load balancer:
 *   1. /health answers 503 { status: 'draining' } at once, so the balancer's
 *      health check takes the instance out of rotation; for DRAIN_MS the
 *      server still accepts connections and answers requests as usual (the
 *      balancer may send some until its check has failed often enough);
 *   2. then the listening socket closes (new connections are refused), idle
 *      keep-alive connections are closed, requests in flight finish (a request
 *      arriving on a kept-alive connection meanwhile is answered 503 with
 *      `Connection: close` by Fastify);
 *   3. the database pool is closed and the process exits 0 (1 when step 2 takes
 *      longer than SHUTDOWN_TIMEOUT_MS). A second signal exits at once.
 */
async function shutdown (signal: string): Promise<void> {
  if (draining) {
    app.log.warn({ signal }, 'second signal: exiting without waiting')
    process.exit(1)
  }
  draining = true
  app.log.info({ signal, drainMs }, 'draining: /health answers 503')
  await new Promise((resolve) => setTimeout(resolve, drainMs))
  const timeout = setTimeout(() => {
    app.log.error({ shutdownTimeoutMs }, 'requests in flight did not finish in time')
    process.exit(1)
  }, shutdownTimeoutMs)
  timeout.unref()
  try {
    app.log.info('closing: new connections are refused, requests in flight finish')
    await app.close()
    await db.destroy()
    await replica?.destroy()
    await tracing?.shutdown()
    app.log.info('closed')
    process.exit(0)
  } catch (error) {
    app.log.error(error)
    process.exit(1)
  }
}
