import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { evaluateGoals } from './goals.js'
import { describeSuites, machine, renderMarkdown, type BenchReport } from './report.js'
import { combineRuns, fullMode, quickMode, runSuite, type ContenderResult, type Suite } from './runner.js'
import { databaseSuite } from './suites/database.js'
import { derivedSuite } from './suites/derived.js'
import { endToEndSuite } from './suites/end-to-end.js'
import { httpSuite } from './suites/http.js'
import { listsSuite } from './suites/lists.js'
import { requestOverheadSuite } from './suites/request-overhead.js'
import { serializationSuite } from './suites/serialization.js'

export const suites: readonly Suite[] = [
  serializationSuite, requestOverheadSuite, httpSuite, databaseSuite, endToEndSuite, listsSuite, derivedSuite,
]

const benchmarksDir = path.dirname(fileURLToPath(import.meta.url))
const usage = `Usage: npm run bench -- [--quick] [--out <dir>] [--only <suite,...>]
  --quick   a short version of every suite (under a minute), to check that the suite runs
  --out     where RESULTS.md and results.json are written (default: benchmarks/)
  --only    run only these suites: ${suites.map((suite) => suite.id).join(', ')}
  --render  measure nothing: rewrite RESULTS.md from the results.json in --out (after editing notes)

Each suite runs in a process of its own, so that what one suite leaves behind (compiled code specialised
for its shapes, a heap grown by its payloads) does not move the figures of the next. A suite that declares
\`processes\` runs that many times, each in a new process, and reports the medians over them (full mode).`

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      out: { type: 'string', default: benchmarksDir },
      only: { type: 'string' },
      render: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      // Internal: run one suite in this process and print its results as the last line.
      'in-process': { type: 'string' },
    },
  })
  if (values.help) {
    console.log(usage)
    return
  }
  if (values.render) {
    const report = JSON.parse(await readFile(path.join(values.out, 'results.json'), 'utf8')) as BenchReport
    report.goals = evaluateGoals(report.results)
    await writeReport(report, values.out)
    return
  }
  const only = values.only?.split(',').map((id) => id.trim())
  const unknown = only?.filter((id) => !suites.some((suite) => suite.id === id)) ?? []
  if (unknown.length > 0) throw new Error(`unknown suite ${unknown.join(', ')}\n${usage}`)
  const selected = suites.filter((suite) => only === undefined || only.includes(suite.id))
  const mode = values.quick ? quickMode : fullMode
  if (values['in-process'] !== undefined) {
    const suite = suites.find((candidate) => candidate.id === values['in-process'])
    if (suite === undefined) throw new Error(`unknown suite ${values['in-process']}`)
    const results = await runSuite(suite, mode, (line) => console.log(line))
    console.log(`${resultsMarker}${JSON.stringify(results)}`)
    return
  }

  const started = performance.now()
  const loadAtStart = os.loadavg()
  const results: ContenderResult[] = []
  const processes: number[] = []
  const runCounts: number[] = []
  for (const suite of selected) {
    const count = values.quick ? 1 : suite.processes ?? 1
    const runs: ContenderResult[][] = []
    for (let index = 0; index < count; index++) {
      console.log(`# ${suite.title}${count > 1 ? ` (process ${index + 1} of ${count})` : ''}`)
      const ran = await runInChild(suite, values.quick)
      runs.push(ran.results)
      if (index === 0) processes.push(ran.process)
    }
    results.push(...combineRuns(runs))
    runCounts.push(count)
  }

  const report: BenchReport = {
    generatedAt: new Date().toISOString(),
    mode: values.quick ? 'quick' : 'full',
    durationSeconds: (performance.now() - started) / 1000,
    machine: machine(),
    load: { start: loadAtStart, end: os.loadavg() },
    suites: describeSuites(selected).map((suite, index) => ({ ...suite, process: processes[index], processes: runCounts[index] })),
    results,
    goals: evaluateGoals(results),
  }
  await writeReport(report, values.out)
  console.log(`\n${report.goals.map((goal) => `${goal.met === undefined ? '-' : goal.met ? 'met   ' : 'missed'} ${goal.goal}: ${goal.figure}`).join('\n')}`)
  console.log(`\nWrote ${path.join(values.out, 'RESULTS.md')} and results.json in ${report.durationSeconds.toFixed(0)} s`)
}

const resultsMarker = 'suite results: '

/** Runs one suite in a new Node process with this one's flags (tsx's loader), passing its lines through. */
async function runInChild (suite: Suite, quick: boolean): Promise<{ results: ContenderResult[]; process: number }> {
  const script = fileURLToPath(import.meta.url)
  const args = [...process.execArgv, script, '--in-process', suite.id, ...(quick ? ['--quick'] : [])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let results: ContenderResult[] | undefined
  let pending = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    pending += chunk
    const lines = pending.split('\n')
    pending = lines.pop()!
    for (const line of lines) {
      if (line.startsWith(resultsMarker)) results = JSON.parse(line.slice(resultsMarker.length)) as ContenderResult[]
      else console.log(line)
    }
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  if (code !== 0 || results === undefined) throw new Error(`suite ${suite.id}: its process ended with code ${code}${results === undefined ? ' and no results' : ''}`)
  return { results, process: child.pid! }
}

async function writeReport (report: BenchReport, out: string): Promise<void> {
  const stressFile = path.join(benchmarksDir, 'stress-results.md')
  const stress = existsSync(stressFile) ? await readFile(stressFile, 'utf8') : undefined
  // Profile notes explain the full run's figures; a quick run's figures are too brief to be explained.
  const profileFile = path.join(benchmarksDir, 'profile-notes.md')
  const profileNotes = existsSync(profileFile) && report.mode === 'full' ? await readFile(profileFile, 'utf8') : ''
  await mkdir(out, { recursive: true })
  await writeFile(path.join(out, 'results.json'), `${JSON.stringify(report, null, 2)}\n`)
  const runtimes = report.mode === 'full' ? await otherRuntimes(report) : []
  // The worst requests of the security model, measured apart (benchmarks/investigations/worst-requests.ts).
  const securityFile = path.join(benchmarksDir, 'security-results.md')
  const security = existsSync(securityFile) ? `\n${await readFile(securityFile, 'utf8')}` : ''
  await writeFile(path.join(out, 'RESULTS.md'), renderMarkdown(report, profileNotes, stress, runtimes) + security)
}

/** Full runs on other Node versions kept in benchmarks/runtimes/, for RESULTS.md to set beside this one. */
async function otherRuntimes (report: BenchReport): Promise<BenchReport[]> {
  const folder = path.join(benchmarksDir, 'runtimes')
  if (!existsSync(folder)) return []
  const files = (await readdir(folder)).filter((file) => file.endsWith('.json')).sort()
  const reports = await Promise.all(files.map(async (file) => JSON.parse(await readFile(path.join(folder, file), 'utf8')) as BenchReport))
  return reports.filter((other) => other.mode === 'full' && other.machine.node !== report.machine.node)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
