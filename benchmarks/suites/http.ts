import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expandOfDepth, pageRows } from '../baselines/hand-written.js'
import { assertSameText, type BenchCase, type Suite } from '../runner.js'

export const expandRouteName = 'fastify-expand route'
const staticRouteName = 'static response schema (ceiling)'
const stringifyRouteName = 'no schema (JSON.stringify)'
const httpExpand = expandOfDepth[2]

/** Starts the server process and resolves with its port. */
async function startServer (): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(new URL('../http-server.ts', import.meta.url)), [String(pageRows)], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the benchmark server exited with code ${code}`)))
  })
  return { child, port }
}

export const httpSuite: Suite = {
  id: 'http',
  title: 'HTTP (autocannon)',
  description: [
    `Three Fastify routes of one server (its own process, 127.0.0.1) answer the same payload shaped for \`expand=${httpExpand}\`:`,
    `${expandRouteName} (the handler returns the data, the plugin plans the request and picks the compiled serializer),`,
    `${staticRouteName} (a hand-written response schema: Fastify compiles it once with fast-json-stringify; the baseline)`,
    `and ${stringifyRouteName}. All three receive the same query string. autocannon: 10 connections, 9 rounds of 2 s, contenders alternating round by round, each round starting with the next one; figure: median of the rounds' mean requests per second.`,
  ].join(' '),
  async setup () {
    const { child, port } = await startServer()
    const base = `http://127.0.0.1:${port}`
    const cases: BenchCase[] = [
      { name: 'one pet', path: '/pets/1' },
      { name: `${pageRows} pets`, path: '/pets' },
    ].map(({ name, path }) => {
      // The same query string everywhere (ignored by the other two), so the difference is the plugin's own work.
      const urls = {
        [expandRouteName]: `${base}/expand${path}?expand=${httpExpand}`,
        [staticRouteName]: `${base}/static${path}?expand=${httpExpand}`,
        [stringifyRouteName]: `${base}/stringify${path}?expand=${httpExpand}`,
      }
      return {
        name: `${name}, expand=${httpExpand}`,
        baseline: staticRouteName,
        contenders: Object.entries(urls).map(([contender, url]) => ({ name: contender, http: { url } })),
        async check () {
          const bodies = Object.fromEntries(await Promise.all(Object.entries(urls).map(async ([contender, url]) => {
            const response = await fetch(url)
            if (response.status !== 200) throw new Error(`${contender}: status ${response.status}`)
            return [contender, await response.text()] as const
          })))
          for (const contender of [expandRouteName, stringifyRouteName]) {
            assertSameText(`http ${name}`, bodies[staticRouteName]!, bodies[contender]!, staticRouteName, contender)
          }
        },
      }
    })
    return {
      cases,
      teardown: () => new Promise<void>((resolve) => {
        child.once('exit', () => resolve())
        child.disconnect()
      }),
    }
  },
}
