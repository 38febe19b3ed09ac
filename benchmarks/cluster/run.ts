/*
 * `npm run cluster`: three demo instances behind HAProxy, on PostgreSQL behind
 * PgBouncer (transaction pooling), under a checked load, while (a) one instance
 * is stopped gracefully (SIGTERM) and started again and (b) PostgreSQL is
 * restarted (pg_ctl restart -m fast).
 *
 * Everything runs on 127.0.0.1 with its own ports (PostgreSQL 55432, PgBouncer
 * 56432, HAProxy 58080, instances 58081-58083, HAProxy's stats 58089) and its
 * own temporary directory (/tmp/fx-cluster-*), removed on exit with every
 * process it started, also on failure. Needs root (PostgreSQL and PgBouncer run
 * as the `postgres` user); installs postgresql, pgbouncer and haproxy with
 * apt-get when they are missing. Finishes in about a minute and a half; gives
 * up after CLUSTER_TIMEOUT_S (default 170) seconds.
 *
 * Every response body is compared with the body expected for its URL (asked of
 * all three instances, which must agree, before the load). Exits 1 when a
 * wanted property fails: no wrong body; no failed request outside the
 * PostgreSQL restart; during it, only 503 FST_EXPAND_UNAVAILABLE with
 * Retry-After; every instance answering 200 again within RECOVERY_LIMIT_S
 * seconds of PostgreSQL being back; each instance's RSS under RSS_LIMIT_MB.
 * Writes benchmarks/cluster-results.md.
 */
import { randomBytes } from 'node:crypto'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect as connectTcp } from 'node:net'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect } from '../../demo/database.js'
import { seedIfEmpty } from '../../demo/seed.js'

const repository = fileURLToPath(new URL('../..', import.meta.url))
const ports = { postgres: 55432, bouncer: 56432, haproxy: 58080, stats: 58089, instances: [58081, 58082, 58083] }
const concurrency = 8
const maxRequests = 400_000
const recoveryLimitSeconds = Number(process.env.RECOVERY_LIMIT_S ?? 5)
const rssLimitMb = Number(process.env.RSS_LIMIT_MB ?? 400)
const overallTimeoutSeconds = Number(process.env.CLUSTER_TIMEOUT_S ?? 170)
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
    if (postgresBin !== '' && directory !== '' && existsSync(join(directory, 'data', 'postmaster.pid'))) {
      const stop = ['-D', join(directory, 'data'), '-m', 'immediate', '-w', 'stop']
      spawnSync(join(postgresBin, 'pg_ctl'), stop, { ...asPostgres(), stdio: 'ignore' })
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
  for (const port of [ports.postgres, ports.bouncer, ports.haproxy, ports.stats, ...ports.instances]) {
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

function startPostgres (): void {
  run(join(postgresBin, 'pg_ctl'), ['-D', join(directory, 'data'), '-l', join(directory, 'postgres.log'), '-w', '-o',
    `-p ${ports.postgres} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c statement_timeout=2000`, 'start'], asPostgres())
}

const instances: Array<{ child: ChildProcess, pids: number[] }> = []
const clusterCursorSecret = process.env.CURSOR_SECRET ?? randomBytes(32).toString('base64url')

async function startInstance (index: number): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(ports.instances[index]),
    HOST: '127.0.0.1',
    DATABASE_URL: `postgres://postgres@127.0.0.1:${ports.bouncer}/postgres`,
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

interface Sample {
  at: number, end: number, url: number, status: number, code: string, retryAfter: string | null, server: string, wrong: boolean
}
const samples: Sample[] = []
const expected: Array<{ status: number, body: string }> = []

async function expectedBodies (): Promise<void> {
  for (const [index, url] of urls.entries()) {
    const answers = await Promise.all(ports.instances.map(async (port) => {
      const response = await fetch(`http://127.0.0.1:${port}${url}`, { signal: AbortSignal.timeout(10_000) })
      return { status: response.status, body: await response.text() }
    }))
    if (answers.some((answer) => answer.status !== answers[0].status || answer.body !== answers[0].body)) fail(`the instances disagree on ${url}`)
    expected[index] = answers[0]
  }
}

let stopLoad = false
async function worker (offset: number): Promise<void> {
  let next = offset * 17
  // eslint-disable-next-line no-unmodified-loop-condition -- the timer set up by the caller sets stopLoad
  while (!stopLoad && samples.length < maxRequests) {
    const index = next++ % urls.length
    const at = Date.now()
    try {
      const response = await fetch(`http://127.0.0.1:${ports.haproxy}${urls[index]}`, { signal: AbortSignal.timeout(15_000) })
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
        status: response.status,
        code,
        retryAfter: response.headers.get('retry-after'),
        server: response.headers.get('x-served-by') ?? '',
        wrong: response.status === want.status && body !== want.body,
      })
    } catch (error) {
      const code = String((error as Error).cause ?? (error as Error).message)
      samples.push({ at, end: Date.now(), url: index, status: 0, code, retryAfter: null, server: '', wrong: false })
    }
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

interface Window { from: number, to: number }

async function main (): Promise<number> {
  await setup()
  await expectedBodies()
  log(`${urls.length} URLs, expected bodies asked of all three instances (identical)`)

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
  log(`load through HAProxy: ${concurrency} concurrent clients`)
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
  run(join(postgresBin, 'pg_ctl'), ['-D', join(directory, 'data'), '-l', join(directory, 'postgres.log'), '-m', 'fast', '-w', '-o',
    `-p ${ports.postgres} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c statement_timeout=2000`, 'restart'], asPostgres())
  const postgresBack = Date.now()
  log(`(b) PostgreSQL back after ${seconds(postgresBack - b.from)} s`)
  // Each instance asked directly, every 25 ms, until it answers a database route with 200.
  const recovered = await Promise.all(ports.instances.map((port) => waitFor(`instance on ${port} answering 200 after the restart`,
    async () => (await fetch(`http://127.0.0.1:${port}/pets/1?expand=owner`, { signal: AbortSignal.timeout(5000) })).status === 200, 30_000, 25)))
  const recovery = recovered.map((at) => (at - postgresBack) / 1000)
  log(`(b) every instance answers 200 again: ${recovery.map((value, index) => `instance${index + 1} ${value.toFixed(2)} s`).join(', ')} after PostgreSQL was back`)
  await sleep(2000)
  b.to = Date.now()
  await sleep(8000)

  stopLoad = true
  await Promise.all(workers)
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
  const inB = samples.filter((sample) => inside(sample, b))
  const failedB = inB.filter(failed)
  const undocumentedB = failedB.filter((sample) => !documented503(sample))
  const failedOutside = samples.filter((sample) => !inside(sample, b) && !inside(sample, a) && failed(sample))
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
    ['(b) only 503 FST_EXPAND_UNAVAILABLE with Retry-After: 1 during the PostgreSQL restart', undocumentedB.length === 0],
    [`(b) every instance answers 200 within ${recoveryLimitSeconds} s of PostgreSQL being back`, recovery.every((value) => value <= recoveryLimitSeconds)],
    ['no failed request outside (a) and (b)', failedOutside.length === 0],
    [`RSS of each instance under ${rssLimitMb} MB`, rssMax.every((value) => value > 0 && value < rssLimitMb)],
  ]

  const lines = [
    `requests: ${samples.length} in ${seconds(loadEnded - loadStarted)} s (${Math.round(samples.length / ((loadEnded - loadStarted) / 1000))}/s), ${concurrency} concurrent clients, ${urls.length} URLs`,
    `statuses: ${Object.entries(statuses).map(([status, count]) => `${status === '0' ? 'no answer' : status}: ${count}`).join(', ')} (the URL set holds one 404 and one 400 on purpose: expected)`,
    `wrong bodies: ${wrongBodies}`,
    `answered by: ${Object.entries(served).sort().map(([name, count]) => `${name} ${count}`).join(', ')}`,
    `(a) instance2 stopped with SIGTERM (exit code ${exitCode}) and started again: ${samples.filter((sample) => inside(sample, a)).length} requests in ${seconds(a.to - a.from)} s, failed: ${kinds(failedA)}`,
    `(b) PostgreSQL restart (pg_ctl restart -m fast): ${inB.length} requests in ${seconds(b.to - b.from)} s, not 200: ${kinds(failedB)}; undocumented: ${undocumentedB.length}`,
    `(b) PostgreSQL back ${seconds(postgresBack - b.from)} s after the restart began; first 200 from each instance after that (asked directly): ${recovery.map((value, index) => `instance${index + 1} ${value.toFixed(2)} s`).join(', ')}; through HAProxy: ${firstOkThroughHaproxy.map((value, index) => `instance${index + 1} ${value}`).join(', ')}`,
    `failed outside (a) and (b): ${kinds(failedOutside)}`,
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
    'Three demo instances (`demo/server.ts`, DATABASE_URL through PgBouncer) behind HAProxy,',
    'under a load whose every body is checked, while (a) one instance is stopped with SIGTERM',
    'and started again and (b) PostgreSQL is restarted. Written by benchmarks/cluster/run.ts.',
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpu.length} cores (${cpu[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}`,
    `- PostgreSQL ${postgresVersion}, ${pgbouncerVersion} (pool_mode = transaction, default_pool_size = 20), ${haproxyVersion} (roundrobin, /health every 200 ms, fall 2, rise 2, retries 3, option redispatch, retry-on conn-failure empty-response response-timeout)`,
    `- instances: DRAIN_MS=${drainMs}, pg pool max 10 each, LOG_LEVEL=warn`,
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
    for (const name of ['postgres', 'pgbouncer', 'haproxy', 'instance1', 'instance2', 'instance3']) {
      const file = join(directory, `${name}.log`)
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
