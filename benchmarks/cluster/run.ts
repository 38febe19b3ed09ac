/*
 * `npm run cluster`: three demo instances behind HAProxy, on PostgreSQL behind
 * PgBouncer (transaction pooling) and a hot standby of it (streaming
 * replication, .ci/postgres-replica.sh), under a checked load, while (a) one
 * instance is stopped gracefully (SIGTERM) and started again, (b) PostgreSQL
 * is restarted (pg_ctl restart -m fast) and (c) the standby is restarted.
 *
 * The instances read from the standby (REPLICA_URL, demo/read-replica.ts):
 * half of the clients send no WAL position, and read from it; the other half
 * send one the standby never reaches, as a client reading its own write before
 * the standby has replayed it, and read from the primary.
 *
 * Everything runs on 127.0.0.1 with its own ports (PostgreSQL 55432, its
 * standby 55433, PgBouncer 56432, HAProxy 58080, instances 58081-58083,
 * HAProxy's stats 58089) and its own temporary directory (/tmp/fx-cluster-*),
 * removed on exit with every process it started, also on failure. Needs root
 * (PostgreSQL and PgBouncer run as the `postgres` user); installs postgresql,
 * pgbouncer and haproxy with apt-get when they are missing. Finishes in about
 * a minute and a half; gives up after CLUSTER_TIMEOUT_S (default 200) seconds.
 *
 * Every response body is compared with the body expected for its URL (asked of
 * all three instances, reading from the primary and from the standby, which
 * must all agree, before the load). Exits 1 when a wanted property fails: no
 * wrong body; no failed request outside the restarts of PostgreSQL and of the
 * standby, nor of a client reading from the one that is not restarted; during
 * them, only 503 FST_EXPAND_UNAVAILABLE with Retry-After; every instance
 * answering 200 again within RECOVERY_LIMIT_S seconds of the restarted server
 * being back; the standby streaming again; each instance's RSS under
 * RSS_LIMIT_MB. Measures the replication lag all along (a row written on the
 * primary every 250 ms, the time until the standby has replayed it). Writes
 * benchmarks/cluster-results.md.
 */
import { randomBytes } from 'node:crypto'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect as connectTcp } from 'node:net'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { connect } from '../../demo/database.js'
import { insertPositionStatement, positionWritten, writtenPositionHeader, type InsertPosition } from '../../demo/read-replica.js'
import { seedIfEmpty } from '../../demo/seed.js'

const repository = fileURLToPath(new URL('../..', import.meta.url))
const ports = { postgres: 55432, replica: 55433, bouncer: 56432, haproxy: 58080, stats: 58089, instances: [58081, 58082, 58083] }
const concurrency = 8
const maxRequests = 400_000
const recoveryLimitSeconds = Number(process.env.RECOVERY_LIMIT_S ?? 5)
const rssLimitMb = Number(process.env.RSS_LIMIT_MB ?? 400)
const overallTimeoutSeconds = Number(process.env.CLUSTER_TIMEOUT_S ?? 200)
const drainMs = 1000

const started = Date.now()
const seconds = (ms: number): string => (ms / 1000).toFixed(2)
const log = (message: string): void => { console.log(`[${seconds(Date.now() - started).padStart(6)} s] ${message}`) }
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------- processes and cleanup

const children = new Set<ChildProcess>()
let directory = ''
let postgresBin = ''
let postgresUser = { uid: 0, gid: 0 }
let cleaning: Promise<void> | undefined

function cleanup (): Promise<void> {
  cleaning ??= (async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    for (const data of [join(directory, 'replica', 'data'), join(directory, 'data')]) {
      if (postgresBin !== '' && directory !== '' && existsSync(join(data, 'postmaster.pid'))) {
        spawnSync(join(postgresBin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], { ...asPostgres(), stdio: 'ignore' })
      }
    }
    await sleep(100)
    if (directory !== '') rmSync(directory, { recursive: true, force: true })
  })()
  return cleaning
}

function fail (message: string): never {
  throw new Error(message)
}

function asPostgres (): { uid: number, gid: number, cwd: string, env: NodeJS.ProcessEnv } {
  return { ...postgresUser, cwd: directory, env: { PATH: process.env.PATH, HOME: directory, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' } }
}

function run (command: string, args: string[], options: Parameters<typeof spawnSync>[2] = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options })
  if (result.status !== 0) fail(`${command} ${args.join(' ')} failed (${result.status ?? result.signal}): ${String(result.stderr ?? '')}${String(result.stdout ?? '')}`)
  return String(result.stdout ?? '')
}

/**
 * `run` without blocking: the load goes on while the command runs (a restart's
 * outage is then met by requests, not only what follows it).
 */
function runInBackground (command: string, args: string[], options: Parameters<typeof spawn>[2] = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      if (code === 0) resolve()
      else reject(new Error(`${command} ${args.join(' ')} failed (${code ?? signal}): ${output}`))
    })
  })
}

function start (name: string, command: string, args: string[], options: Parameters<typeof spawn>[2] = {}): ChildProcess {
  const output = createWriteStream(join(directory, `${name}.log`), { flags: 'a' })
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout?.pipe(output, { end: false })
  child.stderr?.pipe(output, { end: false })
  children.add(child)
  child.once('exit', () => { children.delete(child) })
  return child
}

function portOpen (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

async function waitFor (what: string, check: () => Promise<boolean>, limitMs = 30_000, everyMs = 50): Promise<number> {
  const from = Date.now()
  while (Date.now() - from < limitMs) {
    if (await check().catch(() => false)) return Date.now()
    await sleep(everyMs)
  }
  return fail(`${what}: not within ${limitMs / 1000} s`)
}

// ---------------------------------------------------------------- setup

function postgresBinDirectory (): string {
  const base = '/usr/lib/postgresql'
  if (!existsSync(base)) return ''
  const versions = readdirSync(base).filter((name) => existsSync(join(base, name, 'bin', 'pg_ctl'))).sort((a, b) => Number(a) - Number(b))
  return versions.length === 0 ? '' : join(base, versions[versions.length - 1], 'bin')
}

function which (command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`], { stdio: 'ignore' }).status === 0
}

function installMissing (): void {
  const missing = [
    ...(postgresBinDirectory() === '' ? ['postgresql'] : []),
    ...(which('pgbouncer') ? [] : ['pgbouncer']),
    ...(which('haproxy') ? [] : ['haproxy']),
  ]
  if (missing.length === 0) return
  if (process.getuid?.() !== 0) fail(`missing ${missing.join(', ')}: install them (apt-get install ${missing.join(' ')}) or run as root`)
  log(`installing ${missing.join(', ')} with apt-get`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  run('apt-get', ['update', '-qq'], { env, stdio: 'ignore' })
  run('apt-get', ['install', '-y', '-qq', ...missing], { env, stdio: 'ignore' })
}

function command (name: string): string {
  return existsSync(`/usr/sbin/${name}`) ? `/usr/sbin/${name}` : name
}

async function setup (): Promise<void> {
  if (process.getuid?.() !== 0) fail('run as root: PostgreSQL and PgBouncer are started as the postgres user')
  installMissing()
  postgresBin = postgresBinDirectory()
  if (spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0) run('useradd', ['--system', '--home', '/tmp', 'postgres'])
  postgresUser = { uid: Number(run('id', ['-u', 'postgres']).trim()), gid: Number(run('id', ['-g', 'postgres']).trim()) }
  for (const port of [ports.postgres, ports.replica, ports.bouncer, ports.haproxy, ports.stats, ...ports.instances]) {
    if (await portOpen(port)) fail(`port ${port} on 127.0.0.1 is in use (a previous run left something behind?)`)
  }
  directory = mkdtempSync('/tmp/fx-cluster-')
  chownSync(directory, postgresUser.uid, postgresUser.gid)

  run(join(postgresBin, 'initdb'), ['-D', join(directory, 'data'), '-A', 'trust', '-U', 'postgres'], asPostgres())
  startPostgres()
  log(`PostgreSQL ${/\d+\.\d+/.exec(run(join(postgresBin, 'postgres'), ['--version']))?.[0] ?? ''} on 127.0.0.1:${ports.postgres}`)

  writeFileSync(join(directory, 'userlist.txt'), '"postgres" ""\n')
  writeFileSync(join(directory, 'pgbouncer.ini'), [
    '[databases]',
    `postgres = host=127.0.0.1 port=${ports.postgres} dbname=postgres`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${ports.bouncer}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(directory, 'userlist.txt')}`,
    'pool_mode = transaction',
    'max_client_conn = 200',
    'default_pool_size = 20',
    // Retry a failed login after 1 s (default 15): the pool comes back soon after PostgreSQL.
    'server_login_retry = 1',
    'server_connect_timeout = 2',
    // A client waiting for a server connection gets an error after 5 s rather than 120.
    'query_wait_timeout = 5',
    'ignore_startup_parameters = extra_float_digits',
    '',
  ].join('\n'))
  start('pgbouncer', command('pgbouncer'), [join(directory, 'pgbouncer.ini')], asPostgres())
  await waitFor('PgBouncer listening', () => portOpen(ports.bouncer))
  log(`PgBouncer (transaction pooling) on 127.0.0.1:${ports.bouncer}`)

  // Seeded once, directly on PostgreSQL; the instances find the rows there.
  const db = connect({ databaseUrl: `postgres://postgres@127.0.0.1:${ports.postgres}/postgres` })
  const seedingStarted = Date.now()
  await seedIfEmpty(db)
  await db.destroy()
  log(`seeded in ${seconds(Date.now() - seedingStarted)} s`)

  const replicaStarted = Date.now()
  log(run(...replicaScript('start')).trim())
  log(`standby copied and streaming in ${seconds(Date.now() - replicaStarted)} s`)

  const instancesStarted = Date.now()
  await Promise.all(ports.instances.map((_, index) => startInstance(index)))
  log(`instances started in ${seconds(Date.now() - instancesStarted)} s`)
  log(`instances on 127.0.0.1:${ports.instances.join(', ')} (DATABASE_URL through PgBouncer)`)

  writeFileSync(join(directory, 'haproxy.cfg'), [
    'global',
    '  maxconn 1000',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 10s',
    '  timeout check 3s',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response response-timeout',
    'frontend api',
    `  bind 127.0.0.1:${ports.haproxy}`,
    '  default_backend demo',
    'backend demo',
    '  balance roundrobin',
    '  option httpchk',
    '  http-check send meth GET uri /health',
    // Up: /health says ok, or the shared database is out of reach (every instance
    // would fail together; their answers are then the documented 503). Down: draining,
    // any other answer, no answer.
    '  http-check expect rstring \'"status":"ok"|FST_EXPAND_UNAVAILABLE\'',
    '  default-server inter 200ms fall 2 rise 2',
    ...ports.instances.map((port, index) => `  server instance${index + 1} 127.0.0.1:${port} check`),
    '  http-response set-header X-Served-By %s',
    'listen stats',
    `  bind 127.0.0.1:${ports.stats}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n'))
  run(command('haproxy'), ['-c', '-q', '-f', join(directory, 'haproxy.cfg')])
  start('haproxy', command('haproxy'), ['-db', '-f', join(directory, 'haproxy.cfg')])
  await waitFor('HAProxy seeing the three instances up',
    async () => Object.values(await serverStates()).filter((state) => state === 'UP').length === 3)
  log(`HAProxy on 127.0.0.1:${ports.haproxy}, health checks on /health every 200 ms (fall 2, rise 2)`)
}

/** .ci/postgres-replica.sh, for a standby of this run's PostgreSQL in this run's directory. */
function replicaScript (action: 'start' | 'restart'): [string, string[], { env: NodeJS.ProcessEnv }] {
  const env = {
    ...process.env, PRIMARY_PORT: String(ports.postgres), REPLICA_PORT: String(ports.replica), REPLICA_DIR: join(directory, 'replica'),
  }
  return ['bash', [join(repository, '.ci', 'postgres-replica.sh'), action], { env }]
}

/** pg_ctl's arguments for this run's PostgreSQL, before the action. */
function pgCtlArguments (): string[] {
  return ['-D', join(directory, 'data'), '-l', join(directory, 'postgres.log'), '-w', '-o',
    `-p ${ports.postgres} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c statement_timeout=2000`]
}

function startPostgres (): void {
  run(join(postgresBin, 'pg_ctl'), [...pgCtlArguments(), 'start'], asPostgres())
}

const instances: Array<{ child: ChildProcess, pids: number[] }> = []
const clusterCursorSecret = process.env.CURSOR_SECRET ?? randomBytes(32).toString('base64url')

async function startInstance (index: number): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(ports.instances[index]),
    HOST: '127.0.0.1',
    DATABASE_URL: `postgres://postgres@127.0.0.1:${ports.bouncer}/postgres`,
    // The standby, directly (not through PgBouncer): GET requests read from it.
    REPLICA_URL: `postgres://postgres@127.0.0.1:${ports.replica}/postgres`,
    // PgBouncer refuses statement_timeout as a startup parameter: the server sets it (see the pg_ctl options).
    STATEMENT_TIMEOUT_MS: '0',
    DRAIN_MS: String(drainMs),
    LOG_LEVEL: 'warn',
    // One key for every instance, as behind any balancer: a cursor of one instance pages on another.
    CURSOR_SECRET: clusterCursorSecret,
  }
  const child = start(`instance${index + 1}`, process.execPath, ['--import', 'tsx', join(repository, 'demo/server.ts')], { cwd: repository, env })
  const entry = instances[index] ?? { child, pids: [] }
  entry.child = child
  entry.pids.push(child.pid ?? 0)
  instances[index] = entry
  const exited = new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`instance${index + 1} exited (${code}) while starting: ${readFileSync(join(directory, `instance${index + 1}.log`), 'utf8').slice(-2000)}`))))
  exited.catch(() => {})
  return Promise.race([exited, waitFor(`instance${index + 1} answering`, async () => (await fetch(`http://127.0.0.1:${ports.instances[index]}/health`, { signal: AbortSignal.timeout(2000) })).status === 200, 60_000)])
}

async function serverStates (): Promise<Record<string, string>> {
  const csv = await (await fetch(`http://127.0.0.1:${ports.stats}/stats;csv`, { signal: AbortSignal.timeout(2000) })).text()
  const states: Record<string, string> = {}
  for (const line of csv.split('\n')) {
    const columns = line.split(',')
    if (columns[0] === 'demo' && columns[1].startsWith('instance')) states[columns[1]] = columns[17]
  }
  return states
}

// ---------------------------------------------------------------- the load

const urls: string[] = []
for (let id = 1; id <= 40; id++) urls.push(`/pets/${id * 37}?expand=owner.employer,toys`)
for (let id = 1; id <= 20; id++) urls.push(`/people/${id * 11}?expand=pets,employer`)
for (let id = 1; id <= 20; id++) urls.push(`/visits/${id * 101}?expand=pet.owner,vet`)
for (let id = 1; id <= 10; id++) urls.push(`/toys/${id * 7}?expand=maker&fields=id,name,maker.name`)
for (let page = 0; page < 20; page++) urls.push(`/pets?limit=20&offset=${page * 20}&expand=owner,toys`)
for (let page = 0; page < 10; page++) urls.push(`/visits?limit=10&offset=${page * 10}&expand=pet,vet`)
for (let page = 0; page < 5; page++) urls.push(`/companies?limit=25&offset=${page * 25}`)
urls.push('/pets/999999', '/people/3?expand=nope')

/**
 * Where a client's requests are read: 'replica' sends no WAL position (the
 * standby answers); 'primary' sends one the standby never reaches, as a client
 * reading its own write before the standby has replayed it (the primary answers).
 */
type Source = 'primary' | 'replica'
const sources: readonly Source[] = ['replica', 'primary']
const headersFor = (source: Source): Record<string, string> => source === 'primary' ? { [writtenPositionHeader]: 'FFFFFFFF/FFFFFFFF' } : {}

interface Sample {
  at: number
  end: number
  url: number
  source: Source
  status: number
  code: string
  retryAfter: string | null
  server: string
  wrong: boolean
}
const samples: Sample[] = []
const expected: Array<{ status: number, body: string }> = []

async function expectedBodies (): Promise<void> {
  for (const [index, url] of urls.entries()) {
    const answers = await Promise.all(sources.flatMap((source) => ports.instances.map(async (port) => {
      const response = await fetch(`http://127.0.0.1:${port}${url}`, { headers: headersFor(source), signal: AbortSignal.timeout(10_000) })
      return { status: response.status, body: await response.text() }
    })))
    if (answers.some((answer) => answer.status !== answers[0].status || answer.body !== answers[0].body)) fail(`the instances or the databases disagree on ${url}`)
    expected[index] = answers[0]
  }
}

let stopLoad = false
async function worker (offset: number): Promise<void> {
  let next = offset * 17
  const source = sources[offset % sources.length]
  const headers = headersFor(source)
  // eslint-disable-next-line no-unmodified-loop-condition -- the timer set up by the caller sets stopLoad
  while (!stopLoad && samples.length < maxRequests) {
    const index = next++ % urls.length
    const at = Date.now()
    try {
      const response = await fetch(`http://127.0.0.1:${ports.haproxy}${urls[index]}`, { headers, signal: AbortSignal.timeout(15_000) })
      const body = await response.text()
      const want = expected[index]
      let code = ''
      if (response.status !== want.status) {
        try { code = String((JSON.parse(body) as { code?: unknown }).code ?? '') } catch { code = 'not JSON' }
      }
      samples.push({
        at,
        end: Date.now(),
        url: index,
        source,
        status: response.status,
        code,
        retryAfter: response.headers.get('retry-after'),
        server: response.headers.get('x-served-by') ?? '',
        wrong: response.status === want.status && body !== want.body,
      })
    } catch (error) {
      const code = String((error as Error).cause ?? (error as Error).message)
      samples.push({ at, end: Date.now(), url: index, source, status: 0, code, retryAfter: null, server: '', wrong: false })
    }
  }
}

// ---------------------------------------------------------------- replication lag

/** A pool of one connection to this run's PostgreSQL or its standby, for the drill's own questions. */
function controlPool (port: number): pg.Pool {
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1, connectionTimeoutMillis: 2000 })
  // Connections break when a server restarts: the query in flight fails (and is counted), the process goes on.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

type Commit = 'synchronous' | 'asynchronous'
interface Lag { at: number, ms: number, commit: Commit }
const lags: Lag[] = []
/**
 * Every 250 ms, a row written on the primary (directly, not through PgBouncer)
 * and the time until the standby has replayed the WAL position after its
 * commit, asked every 5 ms: what a client reading from the standby waits for a
 * write to show. None while the primary is away (no row is written). The rows
 * are committed with synchronous_commit on and off in turn: off (the server's
 * setting here), the commit is written out by the WAL writer within
 * wal_writer_delay (200 ms), and only written WAL is sent to the standby.
 */
async function measureLag (): Promise<void> {
  const primary = controlPool(ports.postgres)
  const standby = controlPool(ports.replica)
  const replayed = (position: string): Promise<boolean> => standby
    .query<{ replayed: boolean | null }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as replayed', [position])
    .then((result) => result.rows[0].replayed === true, () => false)
  try {
    await primary.query('create table if not exists drill_heartbeat (id serial primary key, written timestamptz not null)')
    // eslint-disable-next-line no-unmodified-loop-condition -- the caller sets stopLoad
    for (let round = 0; !stopLoad; round++) {
      const roundStarted = Date.now()
      const commit: Commit = round % 2 === 0 ? 'synchronous' : 'asynchronous'
      try {
        await primary.query(`begin; set local synchronous_commit = ${commit === 'synchronous' ? 'on' : 'off'}; ` +
          'insert into drill_heartbeat (written) values (now()); commit')
        const written = Date.now()
        const position = positionWritten((await primary.query<InsertPosition>(insertPositionStatement)).rows[0]!)
        // eslint-disable-next-line no-unmodified-loop-condition -- the caller sets stopLoad
        while (!stopLoad && !(await replayed(position))) await sleep(5)
        if (!stopLoad) lags.push({ at: written, ms: Date.now() - written, commit })
      } catch {
        await primary.query('rollback').catch(() => {})
      }
      await sleep(Math.max(0, 250 - (Date.now() - roundStarted)))
    }
  } finally {
    await Promise.all([primary.end(), standby.end()])
  }
}

// ---------------------------------------------------------------- memory

const rss: number[][] = [[], [], []]
function sampleRss (): void {
  for (const [index, instance] of instances.entries()) {
    const pid = instance.child.pid
    if (pid === undefined || instance.child.exitCode !== null) continue
    try {
      const kilobytes = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
      if (kilobytes !== undefined) rss[index].push(Number(kilobytes) / 1024)
    } catch {}
  }
}

// ---------------------------------------------------------------- the run

/**
 * Each instance asked directly, every 25 ms, with the headers of a client reading from `source`,
 * until it answers a database route with 200: the seconds from `back` to that answer, per instance.
 */
async function recoveryAfter (back: number, source: Source): Promise<number[]> {
  const recovered = await Promise.all(ports.instances.map((port) => waitFor(`instance on ${port} answering 200 from the ${source} after the restart`,
    async () => (await fetch(`http://127.0.0.1:${port}/pets/1?expand=owner`, { headers: headersFor(source), signal: AbortSignal.timeout(5000) })).status === 200,
    30_000, 25)))
  return recovered.map((at) => (at - back) / 1000)
}

interface Window { from: number, to: number }

async function main (): Promise<number> {
  await setup()
  await expectedBodies()
  log(`${urls.length} URLs, expected bodies asked of all three instances, reading from the primary and from the standby (identical)`)

  const stateChanges: string[] = []
  let lastStates: Record<string, string> = {}
  const watcher = setInterval(() => {
    sampleRss()
    serverStates().then((states) => {
      for (const [name, state] of Object.entries(states)) {
        if (lastStates[name] !== undefined && lastStates[name] !== state) stateChanges.push(`${seconds(Date.now() - started)} s ${name} ${lastStates[name]} -> ${state}`)
      }
      lastStates = states
    }, () => {})
  }, 100)

  const loadStarted = Date.now()
  const workers = Array.from({ length: concurrency }, (_, offset) => worker(offset))
  const lagMeasured = measureLag()
  log(`load through HAProxy: ${concurrency} concurrent clients, half reading from the standby, half from the primary; replication lag measured every 250 ms`)
  await sleep(8000)

  // (a) one instance stopped gracefully, then started again.
  const a: Window = { from: Date.now(), to: 0 }
  log('(a) SIGTERM to instance2')
  const stopped = instances[1].child
  const exitCode = await new Promise<number | null>((resolve) => {
    stopped.once('exit', (code) => resolve(code))
    stopped.kill('SIGTERM')
  })
  log(`(a) instance2 exited with ${exitCode} after ${seconds(Date.now() - a.from)} s`)
  await sleep(1000)
  await startInstance(1)
  log('(a) instance2 started again')
  await waitFor('HAProxy seeing instance2 up again', async () => (await serverStates()).instance2 === 'UP', 10_000)
  log('(a) HAProxy sends to instance2 again')
  await sleep(1000)
  a.to = Date.now()
  await sleep(5000)

  // (b) PostgreSQL restarted.
  const b: Window = { from: Date.now(), to: 0 }
  log('(b) pg_ctl restart -m fast')
  await runInBackground(join(postgresBin, 'pg_ctl'), [...pgCtlArguments(), '-m', 'fast', 'restart'], asPostgres())
  const postgresBack = Date.now()
  log(`(b) PostgreSQL back after ${seconds(postgresBack - b.from)} s`)
  const recovery = await recoveryAfter(postgresBack, 'primary')
  log(`(b) every instance answers 200 again: ${recovery.map((value, index) => `instance${index + 1} ${value.toFixed(2)} s`).join(', ')} after PostgreSQL was back`)
  await sleep(2000)
  b.to = Date.now()
  await sleep(8000)

  // (c) the standby restarted.
  const c: Window = { from: Date.now(), to: 0 }
  log('(c) pg_ctl restart -m fast of the standby')
  await runInBackground(...replicaScript('restart'))
  const standbyBack = Date.now()
  log(`(c) standby back after ${seconds(standbyBack - c.from)} s`)
  const standbyRecovery = await recoveryAfter(standbyBack, 'replica')
  log(`(c) every instance answers 200 from the standby again: ${standbyRecovery.map((value, index) => `instance${index + 1} ${value.toFixed(2)} s`).join(', ')} after it was back`)
  const standbyControl = controlPool(ports.replica)
  const streamingAgain = await waitFor('the standby streaming again', async () =>
    (await standbyControl.query<{ status: string }>('select status from pg_stat_wal_receiver')).rows[0]?.status === 'streaming', 30_000, 25)
  await standbyControl.end()
  log(`(c) the standby streams from the primary again ${seconds(streamingAgain - standbyBack)} s after it was back`)
  await sleep(2000)
  c.to = Date.now()
  await sleep(6000)

  stopLoad = true
  await Promise.all([...workers, lagMeasured])
  const loadEnded = Date.now()
  clearInterval(watcher)
  log(`load stopped: ${samples.length} requests in ${seconds(loadEnded - loadStarted)} s`)

  // ------------------------------------------------------------ the counts
  // A request belongs to a window when it was in flight at some moment of it.
  const inside = (sample: Sample, window: Window): boolean => sample.end >= window.from && sample.at <= window.to
  const failed = (sample: Sample): boolean => sample.status !== expected[sample.url].status
  const documented503 = (sample: Sample): boolean =>
    sample.status === 503 && sample.code === 'FST_EXPAND_UNAVAILABLE' && sample.retryAfter === '1'
  const statuses: Record<string, number> = {}
  for (const sample of samples) statuses[String(sample.status)] = (statuses[String(sample.status)] ?? 0) + 1
  const wrongBodies = samples.filter((sample) => sample.wrong).length
  const failedA = samples.filter((sample) => inside(sample, a) && failed(sample))
  // During a restart, the clients reading from the server restarted may get the documented 503; the others, nothing.
  const restart = (window: Window, restarted: Source) => {
    const during = samples.filter((sample) => inside(sample, window))
    const failedRestarted = during.filter((sample) => sample.source === restarted && failed(sample))
    return {
      during,
      failedRestarted,
      undocumented: failedRestarted.filter((sample) => !documented503(sample)),
      failedOther: during.filter((sample) => sample.source !== restarted && failed(sample)),
    }
  }
  const inB = restart(b, 'primary')
  const inC = restart(c, 'replica')
  const failedOutside = samples.filter((sample) => !inside(sample, a) && !inside(sample, b) && !inside(sample, c) && failed(sample))
  const bySource = (source: Source): string => {
    const list = samples.filter((sample) => sample.source === source)
    return `${list.length} read from the ${source === 'replica' ? 'standby' : 'primary'} (${list.filter((sample) => sample.status === 200).length} × 200)`
  }
  const sorted = (values: number[]): number[] => [...values].sort((x, y) => x - y)
  const quantile = (values: number[], q: number): number =>
    sorted(values)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN
  const lagDuring = (window: Window): (lag: Lag) => boolean => (lag) => lag.at <= window.to && lag.at + lag.ms >= window.from
  const lagOutside = (commit: Commit): number[] =>
    lags.filter((lag) => lag.commit === commit && !lagDuring(b)(lag) && !lagDuring(c)(lag)).map((lag) => lag.ms)
  const lagText = (values: number[]): string => values.length === 0
    ? 'no sample'
    : `median ${quantile(values, 0.5)} ms, 99th percentile ${quantile(values, 0.99)} ms, max ${Math.max(...values)} ms (${values.length} samples)`
  const lagWindowText = (window: Window): string => {
    const values = lags.filter(lagDuring(window)).map((lag) => lag.ms)
    return values.length === 0 ? 'no sample' : `max ${Math.max(...values)} ms (${values.length} samples)`
  }
  const kinds = (list: Sample[]): string => {
    const counts: Record<string, number> = {}
    for (const sample of list) { const key = `${sample.status} ${sample.code}`.trim(); counts[key] = (counts[key] ?? 0) + 1 }
    const text = Object.entries(counts).map(([key, count]) => `${count} × ${key}`).join(', ') || 'none'
    return list.length === 0 || list.length > 10 ? text : `${text} (at ${list.map((sample) => `${seconds(sample.at - started)}-${seconds(sample.end - started)} s`).join(', ')})`
  }
  const firstOkThroughHaproxy = ['instance1', 'instance2', 'instance3'].map((name) => {
    const first = samples.find((sample) => sample.at >= postgresBack && sample.server === name && sample.status === 200)
    return first === undefined ? 'none' : `${((first.at - postgresBack) / 1000).toFixed(2)} s`
  })
  const served: Record<string, number> = {}
  for (const sample of samples) if (sample.server !== '') served[sample.server] = (served[sample.server] ?? 0) + 1
  const rssMax = rss.map((values) => Math.max(0, ...values))
  const rssFirst = rss.map((values) => values[0] ?? 0)
  const rssLast = rss.map((values) => values.at(-1) ?? 0)
  const checks: Array<[string, boolean]> = [
    ['no wrong body', wrongBodies === 0],
    ['(a) no failed request while instance2 stops and starts again', failedA.length === 0 && exitCode === 0],
    ['(b) only 503 FST_EXPAND_UNAVAILABLE with Retry-After: 1 for reads from the primary during the PostgreSQL restart',
      inB.undocumented.length === 0],
    ['(b) no failed read from the standby during the PostgreSQL restart', inB.failedOther.length === 0],
    [`(b) every instance answers 200 within ${recoveryLimitSeconds} s of PostgreSQL being back`, recovery.every((value) => value <= recoveryLimitSeconds)],
    ['(c) only 503 FST_EXPAND_UNAVAILABLE with Retry-After: 1 for reads from the standby during its restart',
      inC.undocumented.length === 0],
    ['(c) no failed read from the primary during the standby\'s restart', inC.failedOther.length === 0],
    [`(c) every instance answers 200 from the standby within ${recoveryLimitSeconds} s of it being back`,
      standbyRecovery.every((value) => value <= recoveryLimitSeconds)],
    ['no failed request outside (a), (b) and (c)', failedOutside.length === 0],
    ['a replication lag measured outside (b) and (c)', lagOutside('synchronous').length > 0 && lagOutside('asynchronous').length > 0],
    [`RSS of each instance under ${rssLimitMb} MB`, rssMax.every((value) => value > 0 && value < rssLimitMb)],
  ]

  const lines = [
    `requests: ${samples.length} in ${seconds(loadEnded - loadStarted)} s (${Math.round(samples.length / ((loadEnded - loadStarted) / 1000))}/s), ${concurrency} concurrent clients, ${urls.length} URLs`,
    `statuses: ${Object.entries(statuses).map(([status, count]) => `${status === '0' ? 'no answer' : status}: ${count}`).join(', ')} (the URL set holds one 404 and one 400 on purpose: expected)`,
    `wrong bodies: ${wrongBodies}`,
    `answered by: ${Object.entries(served).sort().map(([name, count]) => `${name} ${count}`).join(', ')}`,
    `read from: ${sources.map(bySource).join(', ')}`,
    `(a) instance2 stopped with SIGTERM (exit code ${exitCode}) and started again: ${samples.filter((sample) => inside(sample, a)).length} requests in ${seconds(a.to - a.from)} s, failed: ${kinds(failedA)}`,
    `(b) PostgreSQL restart (pg_ctl restart -m fast): ${inB.during.length} requests in ${seconds(b.to - b.from)} s; reads from the primary failed: ${kinds(inB.failedRestarted)}, undocumented: ${inB.undocumented.length}; reads from the standby failed: ${kinds(inB.failedOther)}`,
    `(b) PostgreSQL back ${seconds(postgresBack - b.from)} s after the restart began; first 200 from each instance after that (asked directly): ${recovery.map((value, index) => `instance${index + 1} ${value.toFixed(2)} s`).join(', ')}; through HAProxy: ${firstOkThroughHaproxy.map((value, index) => `instance${index + 1} ${value}`).join(', ')}`,
    `(c) standby restart (pg_ctl restart -m fast): ${inC.during.length} requests in ${seconds(c.to - c.from)} s; reads from the standby failed: ${kinds(inC.failedRestarted)}, undocumented: ${inC.undocumented.length}; reads from the primary failed: ${kinds(inC.failedOther)}`,
    `(c) standby back ${seconds(standbyBack - c.from)} s after the restart began, streaming again ${seconds(streamingAgain - standbyBack)} s after that; first 200 from the standby through each instance (asked directly): ${standbyRecovery.map((value, index) => `instance${index + 1} ${value.toFixed(2)} s`).join(', ')}`,
    'replication lag (a row committed on the primary until the standby has replayed it, every 250 ms, to within about 5 ms), ' +
      `outside (b) and (c): synchronous_commit on: ${lagText(lagOutside('synchronous'))}; off: ${lagText(lagOutside('asynchronous'))}; ` +
      `rows replayed during (b): ${lagWindowText(b)}; during (c): ${lagWindowText(c)}`,
    `failed outside (a), (b) and (c): ${kinds(failedOutside)}`,
    `RSS per instance, first / max / last sample: ${rssMax.map((value, index) => `instance${index + 1} ${rssFirst[index].toFixed(0)} / ${value.toFixed(0)} / ${rssLast[index].toFixed(0)} MB`).join(', ')} (${rss.reduce((sum, values) => sum + values.length, 0)} samples, every 100 ms during the load; instance2's from both of its processes)`,
    `HAProxy server state changes: ${stateChanges.join('; ') || 'none'}`,
  ]
  console.log('\n' + lines.join('\n') + '\n')
  for (const [name, ok] of checks) console.log(`${ok ? 'ok    ' : 'FAILED'} ${name}`)
  writeResults(lines, checks)
  return checks.every(([, ok]) => ok) ? 0 : 1
}

function writeResults (lines: string[], checks: Array<[string, boolean]>): void {
  const cpu = cpus()
  const postgresVersion = /\d+\.\d+/.exec(run(join(postgresBin, 'postgres'), ['--version']))?.[0] ?? ''
  const pgbouncerVersion = run(command('pgbouncer'), ['--version']).split('\n')[0].trim()
  const haproxyVersion = run(command('haproxy'), ['-v']).split('\n')[0].replace(/ - https.*/, '').trim()
  const text = [
    '# Cluster run (`npm run cluster`)',
    '',
    'Three demo instances (`demo/server.ts`, DATABASE_URL through PgBouncer, REPLICA_URL a hot',
    'standby streaming from it) behind HAProxy, under a load whose every body is checked (half',
    'of the clients read from the standby, half from the primary), while (a) one instance is',
    'stopped with SIGTERM and started again, (b) PostgreSQL is restarted and (c) the standby is',
    'restarted. Written by benchmarks/cluster/run.ts.',
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpu.length} cores (${cpu[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}`,
    `- PostgreSQL ${postgresVersion}, ${pgbouncerVersion} (pool_mode = transaction, default_pool_size = 20), ${haproxyVersion} (roundrobin, /health every 200 ms, fall 2, rise 2, retries 3, option redispatch, retry-on conn-failure empty-response response-timeout)`,
    `- instances: DRAIN_MS=${drainMs}, pg pool max 10 each (one to PgBouncer, one to the standby directly), LOG_LEVEL=warn`,
    '- standby: .ci/postgres-replica.sh (pg_basebackup -X stream -R, hot_standby = on, no replication slot); ' +
      'both servers run with fsync, synchronous_commit and full_page_writes off',
    '',
    '## Counts',
    '',
    ...lines.map((line) => `- ${line}`),
    '',
    '## Wanted',
    '',
    ...checks.map(([name, ok]) => `- ${ok ? 'ok' : 'FAILED'}: ${name}`),
    '',
  ].join('\n')
  writeFileSync(join(repository, 'benchmarks', 'cluster-results.md'), text)
}

let exitCode = 1
const overall = setTimeout(() => {
  console.error(`gave up after ${overallTimeoutSeconds} s`)
  stopLoad = true
  void cleanup().finally(() => process.exit(1))
}, overallTimeoutSeconds * 1000)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`${signal}: cleaning up`)
    stopLoad = true
    void cleanup().finally(() => process.exit(1))
  })
}
try {
  exitCode = await main()
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  if (directory !== '') {
    for (const name of ['postgres', 'replica/log', 'pgbouncer', 'haproxy', 'instance1', 'instance2', 'instance3']) {
      const file = join(directory, name.includes('/') ? name : `${name}.log`)
      if (existsSync(file)) console.error(`--- ${name}.log (end)\n${readFileSync(file, 'utf8').slice(-1500)}`)
    }
  }
} finally {
  stopLoad = true
  await cleanup()
  clearTimeout(overall)
}
log(exitCode === 0 ? 'every wanted property holds' : 'a wanted property failed')
process.exit(exitCode)
