/*
 * The SQLite page of the end-to-end suite (`GET /pets?limit=100&offset=0&expand=owner.employer,toys` through
 * `inject`) against the hand-written JOIN route, and against the same page loaded by hand as the plugin loads it
 * (a statement per relation, `handWrittenBatchedLoader`), in instructions per request rather than seconds: each contender
 * runs under valgrind's callgrind twice, with the same warm-up (V8 optimizes over the first thousand requests)
 * and 0 or `requests` more, and the difference of the two totals is divided by `requests`. Instruction counts
 * move far less with the machine's load than timed rounds, but they are not exact: V8 compiles and collects
 * garbage on other threads and by the clock, so two runs of the same process differed by 1.7-2% of their total on
 * a quiet machine (with `--predictable` too) and by 4% under load (2026-11-27, Node 26). With 2,000 requests after
 * 1,000 the difference is about two thirds of a run, so a figure moves by about 3%: run on a quiet machine, and
 * more than once for a change under 5%. They do not weigh cache misses and other stalls, so a change is judged by
 * both. Needs valgrind (Debian's package); a run takes about ten minutes.
 *
 *   node --import tsx benchmarks/investigations/instruction-counts.ts [requests] [warm-up]
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../../test/helpers/app.js'
import { expandOfDepth, handWrittenBatchedLoader, handWrittenPageLoader, pageRows } from '../baselines/hand-written.js'
import { createPetsDatabase, kyselyOver, petResources } from '../domain/pets-db.js'

const contenders = ['app.expand.routes', 'hand-written JOIN + JSON.stringify', 'hand-written, a statement per relation'] as const
type Contender = typeof contenders[number]

/** The contender's app and the URL it answers the page on. */
async function contenderApp (contender: Contender): Promise<{ app: FastifyInstance; url: string }> {
  const database = createPetsDatabase()
  if (contender === 'app.expand.routes') {
    const app = await buildApp({ db: kyselyOver(database), resources: petResources },
      (app) => app.expand.routes('/pets', 'Pet', { maxPageSize: pageRows }))
    return { app, url: `/pets?limit=${pageRows}&offset=0&expand=${expandOfDepth[2]}` }
  }
  const page = contender === 'hand-written JOIN + JSON.stringify' ? handWrittenPageLoader(database, 2) : handWrittenBatchedLoader(database)
  const count = database.prepare('SELECT count(*) FROM pets').pluck()
  const app = Fastify()
  const properties = { limit: { type: 'integer', default: 20 }, offset: { type: 'integer', default: 0 } }
  app.get('/pets', { schema: { querystring: { type: 'object', properties } } }, async (request) => {
    const { limit, offset } = request.query as { limit: number; offset: number }
    return { data: page(limit, offset), limit, offset, total: count.get() as number }
  })
  await app.ready()
  return { app, url: `/pets?limit=${pageRows}&offset=0` }
}

/** In the child: `count` requests one after another. */
async function run (contender: Contender, count: number): Promise<void> {
  const { app, url } = await contenderApp(contender)
  for (let index = 0; index < count; index++) await app.inject({ url })
  await app.close()
}

/** callgrind's total of instructions for the child running `count` requests of `contender`. */
async function instructions (contender: Contender, count: number, folder: string): Promise<number> {
  const out = path.join(folder, `${contenders.indexOf(contender)}-${count}.out`)
  const script = fileURLToPath(import.meta.url)
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, ...process.execArgv,
    script, '--child', contender, String(count)], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
  const code = await new Promise<number | null>((resolve, reject) => { child.on('error', reject); child.on('close', resolve) })
  if (code !== 0) throw new Error(`valgrind exited with ${code}:\n${log.slice(-2000)}`)
  const summary = /^summary: (\d+)$/m.exec(readFileSync(out, 'utf8'))
  if (summary === null) throw new Error(`no summary in ${out}`)
  return Number(summary[1])
}

if (process.argv[2] === '--child') {
  await run(process.argv[3] as Contender, Number(process.argv[4]))
} else {
  const requests = Number(process.argv[2] ?? 2_000)
  const warmUp = Number(process.argv[3] ?? 1_000)
  // Every contender writes the same bytes.
  const bodies = await Promise.all(contenders.map(async (contender) => {
    const { app, url } = await contenderApp(contender)
    const { body } = await app.inject({ url })
    await app.close()
    return body
  }))
  if (bodies.some((body) => body !== bodies[0])) throw new Error('the contenders write different bodies')
  const folder = mkdtempSync(path.join(tmpdir(), 'instruction-counts-'))
  try {
    const perRequest = new Map<Contender, number>()
    for (const contender of contenders) {
      // The two runs of a contender side by side: each is one process on one core.
      const [before, after] = await Promise.all([
        instructions(contender, warmUp, folder), instructions(contender, warmUp + requests, folder),
      ])
      perRequest.set(contender, (after - before) / requests)
      console.log(`${contender}: ${Math.round((after - before) / requests).toLocaleString('en-US')} instructions per request`)
    }
    const routes = perRequest.get('app.expand.routes')!
    for (const contender of contenders.slice(1)) {
      console.log(`app.expand.routes runs ${(perRequest.get(contender)! / routes).toFixed(3)}x ${contender}'s instructions per ` +
        `request, inverted (above 1: fewer instructions); Node ${process.versions.node}, ${requests} requests after ${warmUp}`)
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}
