import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import SQLite from 'better-sqlite3'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, SqliteDialect, sql, type KyselyPlugin } from 'kysely'
import pg from 'pg'
import t from 'tap'
import expandPlugin, { databaseFailure } from '../../plugin/index.js'
import { Pet, createTables, resources, seed } from '../fixtures/tables.js'

// What a client sees while the database is away, and when it comes back; and
// that a client who leaves stops the statements of its request.

const unavailable = { statusCode: 503, code: 'FST_EXPAND_UNAVAILABLE', error: 'Service Unavailable', message: 'Service Unavailable' }

/** A TCP proxy in front of PostgreSQL that can drop every connection and refuse new ones, then accept again. */
class Outage {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  port = 0
  constructor (private readonly target: { host: string; port: number }) {}

  async up (): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => {})
      }
      client.pipe(upstream).pipe(client)
    })
    this.server.listen(this.port, '127.0.0.1')
    await once(this.server, 'listening')
    this.port = (this.server.address() as net.AddressInfo).port
  }

  async down (): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((resolve) => this.server?.close(resolve))
  }
}

t.test('PostgreSQL away: 503 FST_EXPAND_UNAVAILABLE with Retry-After, no driver text; back: answers again without a restart', { skip: process.env.DATABASE_URL === undefined && 'set DATABASE_URL' }, async (t) => {
  const url = new URL(process.env.DATABASE_URL!)
  const outage = new Outage({ host: url.hostname, port: Number(url.port) })
  await outage.up()
  const schema = `fx_faults_${process.pid}`
  const admin = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 })
  await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`)
  const pool = new pg.Pool({ host: '127.0.0.1', port: outage.port, user: url.username, database: url.pathname.slice(1), max: 2, options: `-c search_path=${schema}` })
  // pg emits 'error' for a connection that breaks, idle (on the pool) or in use (on its client): without a
  // listener the process ends. The query in flight is rejected either way, which is what the plugin answers.
  const connectionErrors: Error[] = []
  pool.on('error', (error) => connectionErrors.push(error))
  pool.on('connect', (client) => client.on('error', (error) => connectionErrors.push(error)))
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  await createTables(db)
  await seed(db)
  const logged: string[] = []
  const app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => { logged.push(line) } } } })
  await app.register(expandPlugin, { db, resources })
  app.expand.routes('/pets', Pet)
  app.get('/handwritten', { expandable: { resource: Pet, list: true } }, async (request) => {
    // The handler's own statement: its driver error answered as the plugin answers its own.
    let rows
    try {
      rows = await app.expand.select(request).orderBy('pets.id').execute()
    } catch (error) {
      throw databaseFailure(error)
    }
    return await app.expand.load(request, rows)
  })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await db.destroy()
    await outage.down()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  t.equal((await app.inject('/pets/1?expand=owner')).statusCode, 200)
  await outage.down()
  for (const path of ['/pets/1?expand=owner', '/pets?expand=toys', '/handwritten?expand=owner']) {
    const response = await app.inject(path)
    t.equal(response.statusCode, 503, `${path}: status`)
    t.same(response.json(), unavailable, `${path}: body`)
    t.equal(response.headers['retry-after'], '1', `${path}: Retry-After`)
  }
  t.ok(logged.some((line) => line.includes('FST_EXPAND_UNAVAILABLE') && /ECONNREFUSED|Connection terminated/.test(line)), 'the driver error is in the log')
  t.ok(connectionErrors.length > 0, 'the broken connections were reported to the listeners')

  await outage.up()
  const back = await app.inject('/pets/1?expand=owner')
  t.equal(back.statusCode, 200, 'the same pool answers again once the database is back')
  t.same(back.json().owner, { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 })
  const handwritten = await app.inject('/handwritten?expand=owner')
  t.equal(handwritten.statusCode, 200)
})

t.test('a client that leaves stops the remaining statements of its request', async (t) => {
  const statements: string[] = []
  let leave: (() => void) | undefined
  // Each statement's result arrives a little later, as over a network: time for the client to leave in between.
  const slow: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      await sleep(30)
      return args.result
    },
  }
  const db = new Kysely<any>({
    dialect: new SqliteDialect({ database: new SQLite(':memory:') }),
    plugins: [slow],
    log: (event) => {
      if (event.level !== 'query') return
      statements.push(event.query.sql)
      if (statements.length === 1) leave?.()
    },
  })
  await createTables(db)
  await seed(db)
  const app: FastifyInstance = Fastify()
  await app.register(expandPlugin, { db, resources })
  app.expand.routes('/pets', Pet)
  let failure: unknown
  app.addHook('onError', async (_request, _reply, error) => { failure = error })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    await db.destroy()
  })
  const { port } = app.server.address() as net.AddressInfo

  statements.length = 0
  const request = http.get({ host: '127.0.0.1', port, path: '/pets/1?expand=owner.employer,toys' })
  request.on('error', () => {})
  leave = () => request.destroy()
  await sleep(300)
  t.equal(statements.length, 1, `the root statement only: ${statements.join(' | ')}`)
  t.match(failure, { code: 'FST_EXPAND_REQUEST_ABORTED' })

  leave = undefined
  statements.length = 0
  const response = await fetch(`http://127.0.0.1:${port}/pets/1?expand=owner.employer,toys`)
  t.equal(response.status, 200)
  t.equal(statements.length, 4, 'a client that waits gets every statement')
  await sql`select 1`.execute(db)
})
