import { request as httpRequest } from 'node:http'
import { test } from 'tap'
import { startDemoServer } from '../helpers/demo-server.js'

const drainMs = 1500

interface Answer { status: number, body: string, at: number }

/** One request on its own connection (no keep-alive), so each one is a new connection. */
function get (url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent: false }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, at: performance.now() }))
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end()
  })
}

test('SIGTERM: /health says draining, requests in flight and during the drain finish with 200, then connections are refused and the process exits 0', { timeout: 30_000 }, async (t) => {
  const { process: server, base, output, exited } = await startDemoServer({ PORT: '0', HOST: '127.0.0.1', SQLITE_FILE: ':memory:', LOG_LEVEL: 'info', DRAIN_MS: String(drainMs) }, 'node')
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  /** Resolves once the server has written a line matching the pattern. */
  const logged = (pattern: RegExp): Promise<void> => new Promise((resolve) => {
    const check = (): void => { if (pattern.test(output())) { clearInterval(timer); resolve() } }
    const timer = setInterval(check, 10)
    check()
  })
  t.same(JSON.parse((await get(`${base}/health`)).body), { status: 'ok' })

  // A page of 100 pets with owners, employers and toys: a few milliseconds each,
  // and better-sqlite3 runs them one after another, so most are still queued or
  // running when the signal arrives.
  const url = `${base}/pets?limit=100&expand=owner.employer,toys`
  const expected = (await get(url)).body
  const inFlight = Array.from({ length: 60 }, () => get(url))
  await Promise.race(inFlight)
  const signalled = performance.now()
  server.kill('SIGTERM')

  // During the drain: /health is 503 draining, other routes still answer.
  await logged(/draining: \/health answers 503/)
  const health = await get(`${base}/health`)
  t.equal(health.status, 503, '/health answers 503 while draining')
  t.same(JSON.parse(health.body), { status: 'draining' })
  const during = await get(`${base}/pets/10?fields=id,name`)
  t.equal(during.status, 200, 'a new request during the drain delay is still served')
  t.same(JSON.parse(during.body), { id: 10, name: 'Juno' })

  const answers = await Promise.all(inFlight)
  t.same(answers.map((answer) => answer.status), answers.map(() => 200), 'every request in flight at the signal is answered 200')
  t.ok(answers.every((answer) => answer.body === expected), 'with the same body as before the signal')
  t.ok(answers.some((answer) => answer.at > signalled), 'some of them were answered after the signal')

  // After the drain delay the listening socket is closed: a new connection is refused
  // (while requests may still finish, or once the process is gone).
  await logged(/"msg":"closing/)
  let refused = ''
  for (let attempt = 0; attempt < 20 && refused !== 'ECONNREFUSED'; attempt++) {
    refused = await get(`${base}/health`).then((answer) => `answered ${answer.status}`, (error: NodeJS.ErrnoException) => String(error.code))
    if (refused !== 'ECONNREFUSED') await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(refused, 'ECONNREFUSED', 'new connections are refused once the drain delay is over')

  t.equal(await exited, 0, 'exits with 0')
  const time = (pattern: RegExp): number => Number(/"time":(\d+)/.exec(output().split('\n').find((line) => pattern.test(line)) ?? '')?.[1])
  t.ok(time(/"msg":"closing/) - time(/draining: \/health answers 503/) >= drainMs, 'the listening socket stays open for the drain delay')
  t.match(output(), /"msg":"closed"/)
})
