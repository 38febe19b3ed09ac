import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The quick benchmark run, so the suite cannot rot: every suite runs, checks
// its contenders' outputs, and writes results that parse. It takes one to two
// minutes, most of it timed rounds: a step of its own in .ci/run on every
// runtime (BENCH_SMOKE=1 npx tap --timeout 300 test/bench/quick.test.ts),
// skipped by `npm test`, where it shared the cores with the other files and
// came within seconds of their time limit.
const skip = process.env.BENCH_SMOKE === '1'
  ? false
  : 'the quick benchmark run is a step of .ci/run: BENCH_SMOKE=1 npx tap --timeout 300 test/bench/quick.test.ts'
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const committedResults = path.join(root, 'benchmarks', 'RESULTS.md')

interface Result {
  suite: string
  case: string
  contender: string
  baseline: string
  unit: string
  median: number
  speedup: number
  facts: Record<string, number>
}

t.test('npm run bench -- --quick completes and writes valid results', { skip }, async (t) => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'fastify-expand-bench-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  const committedBefore = existsSync(committedResults) ? readFileSync(committedResults, 'utf8') : undefined

  const run = spawnSync(process.execPath, ['--import', 'tsx', 'benchmarks/run.ts', '--quick', '--out', out], {
    cwd: root,
    encoding: 'utf8',
    timeout: 280_000,
  })
  t.equal(run.status, 0, `exit code (stderr: ${run.stderr.slice(-2000)})`)

  const report = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'))
  t.equal(report.mode, 'quick')
  t.equal(report.machine.node, process.version)
  t.equal(report.machine.cores, os.cpus().length)
  t.type(report.machine.cpu, 'string')
  t.ok(report.machine.memoryGiB > 0, 'memory is reported')
  t.same(report.suites.map((suite: { id: string }) => suite.id), ['serialization', 'request-overhead', 'http', 'database', 'end-to-end', 'lists', 'derived'])
  // Each suite in a process of its own: what one leaves behind (specialised code, a grown heap) does not move the next.
  const processes = report.suites.map((suite: { process: number }) => suite.process)
  t.ok(processes.every((id: unknown) => Number.isInteger(id) && id !== run.pid), `suites ran in child processes: ${processes.join(', ')}`)
  t.equal(new Set(processes).size, processes.length, 'one process per suite')
  t.ok(report.suites.every((suite: { processes: number }) => suite.processes === 1), 'quick mode: one process even for a suite that asks for more')

  const results = report.results as Result[]
  for (const suite of report.suites) t.ok(results.some((result) => result.suite === suite.id), `${suite.id} has results`)
  for (const result of results) {
    const label = `${result.suite} / ${result.case} / ${result.contender}`
    t.ok(Number.isFinite(result.median) && result.median > 0, `${label}: median ${result.median}`)
    t.ok(Number.isFinite(result.speedup) && result.speedup > 0, `${label}: ratio ${result.speedup}`)
    t.ok(['ns', 'req/s'].includes(result.unit), `${label}: unit ${result.unit}`)
    const baseline = results.find((other) =>
      other.suite === result.suite && other.case === result.case && other.contender === result.baseline)
    t.ok(baseline, `${label}: its baseline was measured in the same run`)
    if (result.contender === result.baseline) t.equal(result.speedup, 1, `${label}: the baseline is 1x itself`)
  }
  t.equal(results.filter((result) => result.suite === 'serialization').length, 2 * 3 * 3 * 6, 'every shape, size, depth and contender (the data check and each mechanism timed alone among them)')

  // Statement counts are exact, whatever the machine's speed.
  const statements = (contender: string, depth: number) => {
    const result = results.find((r) => r.suite === 'database' && r.contender === contender && r.case.includes(`depth ${depth}`))!
    return [10, 100, 1000].map((rows) => result.facts[`statements @${rows} rows`])
  }
  t.same(statements('app.expand.load (batched)', 1), [3, 3, 3], 'depth 1: pets, owners, toys')
  t.same(statements('app.expand.load (batched)', 2), [4, 4, 4], 'depth 2: pets, owners, employers, toys')
  t.same(statements('per-row loader (N+1)', 2), [31, 301, 3001])
  t.same(statements('hand-written JOIN', 2), [1, 1, 1])

  t.equal(results.filter((result) => result.suite === 'lists').length, 3 + 2 + 3, 'lists: first, deep cursor and deep offset pages; filtered and unfiltered pages; pages through relations')

  const derived = results.filter((result) => result.suite === 'derived')
  t.same(derived.map((result) => [result.contender, result.facts.statements]), [
    ['expand=pet_count,last_pet', 2], ['the same page without them', 1], ['hand-written LEFT JOIN + GROUP BY + JSON.stringify', 1],
  ], 'derived: the page with its aggregates (page, then one grouped statement), without them, and the hand-written statement')

  t.equal(report.goals.length, 16, 'the goals of benchmarks/goals.ts, the default of one wave on PostgreSQL among them')
  // Drizzle is measured once `npm run bench` has installed it in benchmarks/contenders; PostgreSQL with DATABASE_URL,
  // MariaDB with MARIADB_URL; PostGraphile on PostgreSQL, once installed there, on Node 22 or later.
  const installed = (name: string) => existsSync(path.join(root, 'benchmarks', 'contenders', 'node_modules', name, 'package.json'))
  const postgraphileRuns = Boolean(process.env.DATABASE_URL) && installed('postgraphile') && Number(process.versions.node.split('.')[0]) >= 22
  const measured = (goal: string) => goal.includes('Drizzle')
    ? installed('drizzle-orm')
    : goal.includes('PostGraphile')
      ? postgraphileRuns
      : goal.includes('PostgreSQL') ? Boolean(process.env.DATABASE_URL) : goal.includes('MariaDB') ? Boolean(process.env.MARIADB_URL) : true
  for (const goal of report.goals) {
    if (measured(goal.goal)) t.type(goal.met, 'boolean', `${goal.goal} is evaluated`)
    else t.equal(goal.met, undefined, `${goal.goal} is not measured in this run`)
  }
  t.equal(report.goals.find((goal: { goal: string }) => goal.goal.startsWith('Statements per request')).met, true)

  const markdown = readFileSync(path.join(out, 'RESULTS.md'), 'utf8')
  t.match(markdown, /^# Benchmark results\n/)
  t.match(markdown, `| cores | ${os.cpus().length} |`)
  t.equal(report.load.start.length, 3, 'the load average when the run began')
  t.equal(report.load.end.length, 3, 'and when it ended')
  t.match(markdown, /\| load average \(1, 5, 15 min\) \| [\d.]+, [\d.]+, [\d.]+ at the start, [\d.]+, [\d.]+, [\d.]+ at the end \|/)
  t.match(markdown, `| Node | ${process.version} |`)
  for (const heading of ['## Goals', '## Serialization', '## Request overhead', '## HTTP (autocannon)', '## Database loading', '## End to end (in process)', '## Lists: filters, sort, cursor pages', '## Derived data: aggregates']) {
    t.match(markdown, `\n${heading}\n`)
  }
  // The stress results, then the security results (the worst requests), close the report verbatim.
  const securityFile = path.join(root, 'benchmarks', 'security-results.md')
  const security = existsSync(securityFile) ? `\n${readFileSync(securityFile, 'utf8')}` : ''
  const stressFile = path.join(root, 'benchmarks', 'stress-results.md')
  if (existsSync(stressFile)) {
    t.ok(markdown.endsWith(`## Stress\n\n${readFileSync(stressFile, 'utf8').trimEnd()}\n${security}`), 'the stress results close the report, verbatim')
  } else {
    t.notMatch(markdown, '## Stress')
  }
  t.ok(markdown.endsWith(security), 'the security results last, verbatim')
  t.equal(existsSync(committedResults) ? readFileSync(committedResults, 'utf8') : undefined, committedBefore, 'the committed RESULTS.md is not touched')
})
