import os from 'node:os'
import type { GoalOutcome } from './goals.js'
import { formatFigure, type ContenderResult, type Suite } from './runner.js'

export interface Machine {
  cpu: string
  cores: number
  memoryGiB: number
  node: string
  platform: string
}

export interface BenchReport {
  generatedAt: string
  mode: 'full' | 'quick'
  durationSeconds: number
  machine: Machine
  /** os.loadavg() (1, 5 and 15 minutes) when the run began and when it ended: how busy the shared machine was. */
  load?: { start: number[]; end: number[] }
  /**
   * `process`: the id of the (first) process the suite ran in (each suite has one of its own); `processes`: how
   * many it ran in, one after the other, its figures the medians over them.
   */
  suites: Array<{ id: string; title: string; description: string; process?: number; processes?: number }>
  results: ContenderResult[]
  goals: GoalOutcome[]
}

export function machine (): Machine {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  }
}

export function describeSuites (suites: readonly Suite[]): BenchReport['suites'] {
  return suites.map(({ id, title, description }) => ({ id, title, description }))
}

const formatLoad = (averages: readonly number[]) => averages.map((value) => value.toFixed(2)).join(', ')

const status = (met: boolean | undefined) => (met === undefined ? 'not measured' : met ? '**met**' : '**missed**')
const cell = (text: string) => text.replace(/\|/g, '\\|')

function formatFacts (facts: Record<string, number>): string {
  return Object.entries(facts)
    .map(([key, value]) => `${key}: ${Number.isInteger(value) ? value : value.toFixed(1)}`)
    .join(', ')
}

/** RESULTS.md: the machine, the goals read against the figures, one table per suite, then other runtimes and the stress results if any. */
export function renderMarkdown (
  report: BenchReport,
  profileNotes: string,
  stress: string | undefined,
  otherRuntimes: readonly BenchReport[] = []
): string {
  const { machine: host } = report
  const lines: string[] = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench${report.mode === 'quick' ? ' -- --quick' : ''}\` on ${report.generatedAt} (${report.mode} mode, ${Math.round(report.durationSeconds)} s).` +
      (report.mode === 'quick' ? ' Quick mode measures briefly: its figures only show that the suite runs.' : ''),
    '',
    '| machine | |',
    '|---|---|',
    `| CPU | ${host.cpu} |`,
    `| cores | ${host.cores} |`,
    `| memory | ${host.memoryGiB} GiB |`,
    `| Node | ${host.node} |`,
    `| platform | ${host.platform} |`,
    ...(report.load === undefined ? [] : [`| load average (1, 5, 15 min) | ${formatLoad(report.load.start)} at the start, ${formatLoad(report.load.end)} at the end |`]),
    '',
    'Every figure is a median: of mitata samples (time per operation; the contenders of a case alternate over',
    'rounds, and a figure is the median of its rounds\' medians), of autocannon rounds (requests per second, also',
    'alternating), or of repeated runs (cache overflow). "x baseline" is the speed relative to the baseline of the same case,',
    'measured in the same run: above 1 is faster than the baseline. Each suite runs in a process of its own (some in several,',
    'one after the other: said under their headings). The machine',
    'is shared, so absolute figures move between runs more than the ratios do.',
    '',
    '## Goals',
    '',
    '| goal | result | status |',
    '|---|---|---|',
    ...report.goals.map((goal) => `| ${cell(goal.goal)} | ${cell(goal.figure)} | ${status(goal.met)} |`),
    '',
  ]
  for (const goal of report.goals) {
    if (goal.note !== '') lines.push(`- ${goal.goal} (${goal.met === true ? 'met' : 'missed'}): ${goal.note}`)
  }
  if (profileNotes.trim() !== '') lines.push('', profileNotes.trim())
  for (const suite of report.suites) {
    const rows = report.results.filter((result) => result.suite === suite.id)
    if (rows.length === 0) continue
    const count = suite.processes ?? 1
    const processes = count > 1
      ? ` Run in ${count} processes one after the other: each figure is the median of their figures, each ratio the median of their ratios.`
      : ''
    lines.push('', `## ${suite.title}`, '', `${suite.description}${processes}`, '', '| case | contender | median | x baseline | baseline | other figures |', '|---|---|---|---|---|---|')
    for (const row of rows) {
      const isBaseline = row.contender === row.baseline
      lines.push(`| ${cell(row.case)} | ${cell(row.contender)} | ${formatFigure(row.median, row.unit)} | ${isBaseline ? '1 (baseline)' : `${row.speedup.toFixed(2)}x`} | ${cell(row.baseline)} | ${cell(formatFacts(row.facts))} |`)
    }
  }
  if (otherRuntimes.length > 0) lines.push('', ...renderOtherRuntimes(report, otherRuntimes))
  if (stress !== undefined) lines.push('', '## Stress', '', stress.trimEnd())
  return `${lines.join('\n')}\n`
}

/**
 * The same suite run on other Node versions (benchmarks/runtimes/*.json, each
 * the results.json of a full run there): their goals, and every ratio beside
 * this run's.
 */
function renderOtherRuntimes (report: BenchReport, others: readonly BenchReport[]): string[] {
  const lines = [
    '## Other runtimes',
    '',
    'The full suite run on other Node versions on the same machine (`node --import tsx benchmarks/run.ts --out DIR` with that',
    'node, better-sqlite3 built for it; its results.json kept in benchmarks/runtimes/). Notes above are read against',
    `${report.machine.node}; ratios are always against a baseline measured in the same run.`,
  ]
  for (const other of others) {
    lines.push('', `### Node ${other.machine.node}`, '', `Run on ${other.generatedAt} (${Math.round(other.durationSeconds)} s).`, '',
      '| goal | result | status |', '|---|---|---|',
      ...other.goals.map((goal) => `| ${cell(goal.goal)} | ${cell(goal.figure)} | ${status(goal.met)} |`))
  }
  const runtimes = [report, ...others]
  lines.push('', '### Every ratio, side by side', '', `| suite | case | contender | baseline | ${runtimes.map((run) => `x baseline, ${run.machine.node}`).join(' | ')} |`,
    `|---|---|---|---|${runtimes.map(() => '---|').join('')}`)
  for (const row of report.results) {
    if (row.contender === row.baseline) continue
    const ratios = runtimes.map((run) => {
      const same = run.results.find((result) =>
        result.suite === row.suite && result.case === row.case && result.contender === row.contender)
      return same === undefined ? '' : `${same.speedup.toFixed(2)}x`
    })
    lines.push(`| ${row.suite} | ${cell(row.case)} | ${cell(row.contender)} | ${cell(row.baseline)} | ${ratios.join(' | ')} |`)
  }
  return lines
}
