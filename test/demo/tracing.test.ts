import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'
import { startDemoServer } from '../helpers/demo-server.js'

// `OTEL_CONSOLE=1 npm start` (docs/observability.md): each request's spans printed as they end, fastify-expand's under the request's.
test('OTEL_CONSOLE=1 npm start: prints the spans of each request', { timeout: 60_000 }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'fastify-expand-demo-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const server = await startDemoServer({ PORT: '0', HOST: '127.0.0.1', SQLITE_FILE: join(directory, 'demo.db'), LOG_LEVEL: 'warn', OTEL_CONSOLE: '1' })
  t.teardown(() => { server.process.kill('SIGKILL') })
  const response = await fetch(`${server.base}/pets/1?expand=owner.employer,toys`)
  t.equal(response.status, 200)
  const body = await response.text()
  // The request span ends on response: its console line comes last.
  for (let waited = 0; !server.output().includes("name: 'GET /pets/:id'") && waited < 5000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const output = server.output()
  const names = [...output.matchAll(/^ {2}name: '([^']+)',$/gm)].map((match) => match[1])
  t.strictSame(names, [
    'fastify-expand plan', 'fastify-expand one', 'fastify-expand rows owner', 'fastify-expand rows owner.employer',
    'fastify-expand rows toys', 'fastify-expand serialize', 'GET /pets/:id',
  ])
  const requestSpan = /name: 'GET \/pets\/:id',\n {2}id: '([0-9a-f]{16})'/.exec(output)![1]
  t.equal([...output.matchAll(new RegExp(`spanId: '${requestSpan}'`, 'g'))].length, 6, 'every fastify-expand span is a child of the request span')
  t.match(output, /'db\.query\.text': 'select "companies"\."id" as "id", .* from "companies" where "companies"\."id" in \(\+\?\)'/)
  t.match(output, new RegExp(`'http.response.body.size': ${Buffer.byteLength(body)}`))
  server.process.kill('SIGTERM')
  t.equal(await server.exited, 0, 'exits with 0')
})
