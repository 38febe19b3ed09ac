import net from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { endOfLastRecord, routeReads, writtenPosition, writtenPositionHeader } from '../../demo/read-replica.js'
import expandPlugin from '../../plugin/index.js'
import { Person, Pet, createTables, resources, seed } from '../fixtures/tables.js'

// Read replicas through the per-request `db`, as demo/read-replica.ts routes
// them: a GET reads from a hot standby; a write runs on the primary and
// answers the WAL position it ended at; a GET carrying that position (a
// client reading its own write) is served by the primary until the standby
// has replayed it, by the standby after. Replay is paused on the standby for
// the middle part, so what a client sees there before it catches up is seen
// every time, not only when it happens to lag.
//
// REPLICA_URL is a hot standby of DATABASE_URL (`bash .ci/postgres-replica.sh
// start` makes one of the 5433 cluster on 127.0.0.1:5434).

const replicaUrl = process.env.REPLICA_URL ?? ''
const skip = replicaUrl === ''
  ? 'needs a hot standby of DATABASE_URL: set REPLICA_URL (after `bash .ci/postgres-replica.sh start`: postgres://postgres@127.0.0.1:5434/postgres)'
  : (process.env.DATABASE_URL ?? '') === '' ? 'needs DATABASE_URL, the primary REPLICA_URL streams from' : false

const lsnForm = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i
/** routeReads' own question to the standby, which is not one of the request's statements. */
const replayCheck = /pg_last_wal_replay_lsn/

t.test('a written position is the end of the last record: past a page header, the page\'s end', async (t) => {
  const megabytes16 = 16n * 1024n * 1024n
  t.equal(endOfLastRecord('0/32024298', 8192, megabytes16), '0/32024298', 'inside a page: the insert position')
  t.equal(endOfLastRecord('0/32026018', 8192, megabytes16), '0/32026000', 'past a page\'s header (24 bytes): the page\'s end')
  t.equal(endOfLastRecord('0/33000028', 8192, megabytes16), '0/33000000', 'past a segment\'s first header (40 bytes): the segment\'s end')
  t.equal(endOfLastRecord('1A/0000A028', 8192, megabytes16), '1A/A028', 'a page\'s 40th byte, not a segment\'s first page: the insert position')
  t.equal(endOfLastRecord('2/28', 8192, megabytes16), '2/0', 'past the first header of a high word\'s first segment')
  t.equal(endOfLastRecord('0/4018', 16384, megabytes16), '0/4000', 'another page size')
})

t.test('reads on a replica, writes and reads of one\'s own writes on the primary', { skip }, async (t) => {
  const schema = `fx_replica_${process.pid}_${Date.now()}`
  const primaryControl = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 })
  const replicaControl = new pg.Pool({ connectionString: replicaUrl, max: 2 })
  const ran: Array<'primary' | 'replica'> = []
  const open = (url: string, name: 'primary' | 'replica') => new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` }) }),
    log: (event) => { if (event.level === 'query' && !replayCheck.test(event.query.sql)) ran.push(name) },
  })
  const primary = open(process.env.DATABASE_URL!, 'primary')
  const replica = open(replicaUrl, 'replica')
  t.teardown(async () => {
    await replicaControl.query('select pg_wal_replay_resume()').catch(() => {})
    await primary.destroy()
    await replica.destroy()
    await primaryControl.query(`drop schema if exists ${schema} cascade`)
    await primaryControl.end()
    await replicaControl.end()
  })

  const inRecovery = (await replicaControl.query<{ standby: boolean }>('select pg_is_in_recovery() as standby')).rows[0].standby
  t.equal(inRecovery, true, 'REPLICA_URL is a standby')
  if (!inRecovery) return

  const replayed = async (lsn: string): Promise<boolean> =>
    (await replicaControl.query<{ replayed: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as replayed', [lsn])).rows[0].replayed
  const waitForReplay = async (lsn: string): Promise<number> => {
    const from = performance.now()
    while (!(await replayed(lsn))) {
      if (performance.now() - from > 10_000) throw new Error(`the standby did not replay ${lsn} within 10 s`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    return performance.now() - from
  }

  await primaryControl.query(`create schema ${schema}`)
  await createTables(primary)
  await seed(primary)
  const seeded = await waitForReplay(await writtenPosition(primary))
  t.comment(`the standby replayed the seed ${seeded.toFixed(1)} ms after it was committed`)

  const app: FastifyInstance = Fastify()
  await app.register(expandPlugin, { resources, db: routeReads(app, { primary, replica }) })
  app.expand.routes('/pets', Pet)
  app.expand.routes('/people', Person)
  app.post<{ Body: { id: number, name: string, species: string, owner: number } }>('/pets', async (request, reply) => {
    const { id, name, species, owner } = request.body
    await request.readsFrom!.insertInto('pets').values({ id, name, species, owner_id: owner, sold_from_id: null }).execute()
    return reply.code(201).header(writtenPositionHeader, await writtenPosition(primary)).send({ id })
  })
  await app.ready()
  t.teardown(() => app.close())

  const get = async (url: string, written?: string) => {
    ran.length = 0
    const response = await app.inject({ url, headers: written === undefined ? {} : { [writtenPositionHeader]: written } })
    return { status: response.statusCode, body: response.json() as unknown, ranOn: [...new Set(ran)] }
  }
  const garfield = {
    id: 1,
    name: 'Garfield',
    species: 'cat',
    owner: { id: 1, name: 'Fred', hobbies: 'sailing', employer: 1 },
    sold_from: 1,
    toys: [{ id: 1, name: 'ball' }, { id: 2, name: 'string' }],
  }
  const notFound = { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: 'Pet 5 not found' }

  t.test('reads go to the standby: every statement of the request runs there', async (t) => {
    t.strictSame(await get('/pets/1?expand=owner,toys'), { status: 200, body: garfield, ranOn: ['replica'] })
    const list = await get('/people?expand=pets&fields=id,pets.name&limit=2')
    t.strictSame(list, {
      status: 200,
      body: { data: [{ id: 1, pets: [{ name: 'Garfield' }, { name: 'Odie' }] }, { id: 2, pets: [{ name: 'Nemo' }] }], limit: 2, offset: 0, total: 4 },
      ranOn: ['replica'],
    })
  })

  t.test('before the standby catches up: it answers the older state; a read of one\'s own write goes to the primary', async (t) => {
    await replicaControl.query('select pg_wal_replay_pause()')
    const paused = async () => (await replicaControl.query<{ state: string }>('select pg_get_wal_replay_pause_state() as state')).rows[0].state === 'paused'
    while (!(await paused())) await new Promise((resolve) => setTimeout(resolve, 5))

    ran.length = 0
    const write = await app.inject({ method: 'POST', url: '/pets', payload: { id: 5, name: 'Tom', species: 'cat', owner: 3 } })
    t.equal(write.statusCode, 201)
    t.strictSame([...new Set(ran)], ['primary'], 'the write ran on the primary')
    const written = write.headers[writtenPositionHeader]
    t.match(written, lsnForm, 'the write answers the position it ended at')
    const tom = { id: 5, name: 'Tom', species: 'cat', owner: { id: 3, name: 'Ann', hobbies: 'chess', employer: null }, sold_from: null, toys: [] }

    // Without the position: the standby, which has not replayed the insert. The row does not exist there yet.
    t.strictSame(await get('/pets/5?expand=owner'), { status: 404, body: notFound, ranOn: ['replica'] }, 'the new row: not found on the standby')
    t.strictSame(await get('/people/3?expand=pets&fields=id,pets'), { status: 200, body: { id: 3, pets: [] }, ranOn: ['replica'] },
      'its owner: without it on the standby')
    t.strictSame(await get('/pets?fields=id&limit=1'), { status: 200, body: { data: [{ id: 1 }], limit: 1, offset: 0, total: 4 }, ranOn: ['replica'] },
      'a list\'s total: without it on the standby')
    // With the position: the primary, which has it.
    t.strictSame(await get('/pets?fields=id&limit=1', String(written)), { status: 200, body: { data: [{ id: 1 }], limit: 1, offset: 0, total: 5 }, ranOn: ['primary'] })
    t.strictSame(await get('/pets/5?expand=owner', String(written)), { status: 200, body: tom, ranOn: ['primary'] }, 'one\'s own write, from the primary')
    t.strictSame(await get('/people/3?expand=pets&fields=id,pets', String(written)), { status: 200, body: { id: 3, pets: [{ id: 5, name: 'Tom' }] }, ranOn: ['primary'] })
    t.strictSame(await get('/pets/5', 'not a position'), { status: 200, body: { ...tom, owner: 3 }, ranOn: ['primary'] }, 'a position that does not read: the primary')

    // Replay resumed: once the standby holds the position, it serves every read again.
    await replicaControl.query('select pg_wal_replay_resume()')
    const caughtUp = await waitForReplay(String(written))
    t.comment(`the standby replayed the write ${caughtUp.toFixed(1)} ms after replay resumed`)
    t.strictSame(await get('/pets/5?expand=owner', String(written)), { status: 200, body: tom, ranOn: ['replica'] }, 'one\'s own write, now from the standby')
    t.strictSame(await get('/pets/5?expand=owner'), { status: 200, body: tom, ranOn: ['replica'] })
  })

  t.test('a write that ends at a WAL page\'s end: its position is the page\'s end, which the standby reaches with no more WAL', async (t) => {
    // Records are written with pg_logical_emit_message until one ends exactly
    // at a page's end (other sessions may write WAL too: then it is tried again).
    const page = BigInt((await primaryControl.query<{ page: string }>("select current_setting('wal_block_size') as page")).rows[0].page)
    const insertAt = async (): Promise<bigint> =>
      BigInt((await primaryControl.query<{ at: string }>("select (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text as at")).rows[0].at)
    const emit = (length: bigint) => primaryControl.query("select pg_logical_emit_message(false, 'fx', repeat('x', $1))", [Number(length)])
    const lsnText = (at: bigint) => `${(at >> 32n).toString(16).toUpperCase()}/${(at & 0xFFFFFFFFn).toString(16).toUpperCase()}`
    let landed: { end: bigint, position: string } | undefined
    for (let attempt = 0; attempt < 50 && landed === undefined; attempt++) {
      const before = await insertAt()
      if (page - before % page < 1600n) { await emit(1000n); continue }
      await emit(1000n)
      const after = await insertAt()
      const overhead = after - before - 1000n
      const left = page - after % page
      if (left < 400n) continue
      await emit(left - overhead)
      const end = after + left
      const position = await writtenPosition(primary)
      if (await insertAt() === end + 24n) landed = { end, position }
    }
    if (landed === undefined) return t.fail('no record ended at a page\'s end in 50 attempts')
    t.equal(landed.position, lsnText(landed.end), 'the position is the page\'s end, not past the next page\'s header')
    const caughtUp = await waitForReplay(landed.position)
    t.comment(`the standby replayed it ${caughtUp.toFixed(1)} ms after it was written`)
    t.strictSame(await get('/pets/1?expand=owner,toys', landed.position), { status: 200, body: garfield, ranOn: ['replica'] })
  })

  t.test('a position the standby has not reached goes to the primary, however far it is', async (t) => {
    t.strictSame(await get('/pets/1?expand=owner,toys', 'FFFFFFFF/FFFFFFFF'), { status: 200, body: garfield, ranOn: ['primary'] })
  })

  t.test('a standby out of reach: its reads are 503 FST_EXPAND_UNAVAILABLE; a read of one\'s own write still goes to the primary', async (t) => {
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as net.AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const away = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', max: 1 }) }) })
    const withoutStandby: FastifyInstance = Fastify()
    await withoutStandby.register(expandPlugin, { resources, db: routeReads(withoutStandby, { primary, replica: away }) })
    withoutStandby.expand.routes('/pets', Pet)
    t.teardown(async () => { await withoutStandby.close(); await away.destroy() })
    const read = await withoutStandby.inject('/pets/1?expand=owner,toys')
    t.equal(read.statusCode, 503)
    t.equal(read.headers['retry-after'], '1')
    t.strictSame(read.json(), { statusCode: 503, code: 'FST_EXPAND_UNAVAILABLE', error: 'Service Unavailable', message: 'Service Unavailable' })
    ran.length = 0
    const own = await withoutStandby.inject({ url: '/pets/1?expand=owner,toys', headers: { [writtenPositionHeader]: '0/0' } })
    t.strictSame({ status: own.statusCode, body: own.json() as unknown, ranOn: [...new Set(ran)] }, { status: 200, body: garfield, ranOn: ['primary'] },
      'the standby cannot say it has replayed the position: the primary answers')
  })

  t.test('statements a standby refuses are the application\'s to route: a write sent there fails', async (t) => {
    const refused = await sql`insert into pets (id, name, species, owner_id) values (6, 'Stray', 'dog', 1)`.execute(replica).then(() => undefined, (error: { code?: string }) => error.code)
    t.equal(refused, '25006', 'read_only_sql_transaction: the standby takes no writes')
  })
})
