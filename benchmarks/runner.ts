import autocannon from 'autocannon'
import { do_not_optimize as doNotOptimize, measure } from 'mitata'

/**
 * One way of doing the work of a case. Exactly one of `op`, `http` or
 * `sample` says how it is measured.
 */
export interface Contender {
  name: string
  /** One operation (sync or async), timed by mitata: the figure is its median time in ns. */
  op?: () => unknown
  /** A request, fired by autocannon at a server on 127.0.0.1: the figure is the median requests per second. */
  http?: HttpTarget
  /** A measurement the suite takes itself, repeated by the runner: the figure is the median value. */
  sample?: () => Promise<Sample> | Sample
  /** Figures measured once besides the timing (statements per request, hit rate). */
  facts?: () => Promise<Record<string, number>> | Record<string, number>
}

export interface HttpTarget {
  url: string
  method?: 'GET' | 'POST'
  body?: string
  headers?: Record<string, string>
}

/** A self-measured figure: `value` in the case's unit, plus figures of that run. */
export interface Sample {
  value: number
  facts?: Record<string, number>
}

export type Unit = 'ns' | 'req/s'

export interface BenchCase {
  name: string
  /** The contender every figure of the case is compared with, measured in the same run. */
  baseline: string
  contenders: Contender[]
  /** Unit of a `sample` figure; `op` figures are ns, `http` figures req/s. */
  unit?: Unit
  /** `op` figures reported as operations per second (1e9 / median ns). */
  asRate?: boolean
  /** Run before anything is timed: throws when the contenders do not produce the same output. */
  check?: () => Promise<void> | void
  /** Run once the case is measured: puts back what its contenders changed in the process (subscriptions), before the next case. */
  finish?: () => Promise<void> | void
}

export interface Suite {
  id: string
  title: string
  /** What the suite measures and how to read it, for RESULTS.md. */
  description: string
  setup(mode: Mode): Promise<{ cases: BenchCase[]; teardown?: () => Promise<void> | void }>
  /**
   * Full mode: how many processes the suite runs in, one after the other (default 1). Each figure is then the
   * median over the processes of the figure in each, and each ratio the median of the ratios measured in each.
   */
  processes?: number
}

export interface Mode {
  quick: boolean
  /** mitata's minimum measured time per contender, in ns. */
  minCpuTime: number
  /** autocannon: seconds per round, rounds per contender (contenders alternate between rounds). */
  httpSeconds: number
  httpRounds: number
  /** Rounds per timed (mitata) contender: contenders alternate between rounds, each round a share of minCpuTime. */
  opRounds: number
  /** Cases measured as a rate (`asRate`): rounds, and requests per contender in each round. */
  rateRounds: number
  rateBatch: number
  /** Cases measured as a rate: each contender's warm-up before the rounds, requests or seconds, whichever ends first. */
  rateWarmupRequests: number
  rateWarmupSeconds: number
  /** `sample` contenders: repetitions. */
  samples: number
}

export const fullMode: Mode = {
  quick: false,
  minCpuTime: 700e6,
  httpSeconds: 2,
  httpRounds: 9,
  opRounds: 5,
  rateRounds: 30,
  rateBatch: 25,
  rateWarmupRequests: 1_000,
  rateWarmupSeconds: 2,
  samples: 5,
}
export const quickMode: Mode = {
  quick: true,
  minCpuTime: 25e6,
  httpSeconds: 1,
  httpRounds: 1,
  opRounds: 1,
  rateRounds: 2,
  rateBatch: 5,
  rateWarmupRequests: 100,
  rateWarmupSeconds: 0.5,
  samples: 1,
}

export interface ContenderResult {
  suite: string
  case: string
  contender: string
  baseline: string
  unit: Unit
  /** The median: ns per operation, or requests per second. */
  median: number
  /** Speed relative to the case's baseline (> 1: faster than the baseline). */
  speedup: number
  facts: Record<string, number>
}

/** Runs every case of a suite: the check first, then each contender, then the ratios against the baseline. */
export async function runSuite (suite: Suite, mode: Mode, log: (line: string) => void): Promise<ContenderResult[]> {
  const { cases, teardown } = await suite.setup(mode)
  const results: ContenderResult[] = []
  try {
    for (const benchCase of cases) {
      if (!benchCase.contenders.some((contender) => contender.name === benchCase.baseline)) {
        throw new Error(`${suite.id} / ${benchCase.name}: the baseline '${benchCase.baseline}' is not a contender`)
      }
      let measured: Map<string, Measured>
      try {
        await benchCase.check?.()
        measured = await measureCase(benchCase, mode)
      } finally {
        await benchCase.finish?.()
      }
      const baseline = measured.get(benchCase.baseline)!
      for (const contender of benchCase.contenders) {
        const { median, unit, facts } = measured.get(contender.name)!
        const speedup = unit === 'req/s' ? median / baseline.median : baseline.median / median
        results.push({
          suite: suite.id, case: benchCase.name, contender: contender.name, baseline: benchCase.baseline, unit, median, speedup, facts,
        })
        log(`${suite.id} | ${benchCase.name} | ${contender.name}: ${formatFigure(median, unit)} (${speedup.toFixed(2)}x ${benchCase.baseline})`)
      }
    }
  } finally {
    await teardown?.()
  }
  return results
}

interface Measured {
  median: number
  unit: Unit
  facts: Record<string, number>
}

async function measureCase (benchCase: BenchCase, mode: Mode): Promise<Map<string, Measured>> {
  const measured = new Map<string, Measured>()
  const facts = new Map<string, Record<string, number>>()
  for (const contender of benchCase.contenders) facts.set(contender.name, { ...(await contender.facts?.()) })

  // HTTP contenders alternate round by round, so a slow spell of a shared machine hits all of them alike, and
  // each round starts with the next one: the server collects one route's garbage while it answers the route after it.
  const httpContenders = benchCase.contenders.filter((contender) => contender.http !== undefined)
  const rates = new Map<string, number[]>(httpContenders.map((contender) => [contender.name, []]))
  for (const contender of httpContenders) await fire(contender.http!, { amount: mode.quick ? 300 : 3_000 })
  for (let round = 0; round < mode.httpRounds; round++) {
    const start = round % Math.max(httpContenders.length, 1)
    for (const contender of [...httpContenders.slice(start), ...httpContenders.slice(0, start)]) {
      const result = await fire(contender.http!, { duration: mode.httpSeconds })
      rates.get(contender.name)!.push(result.requests.average)
    }
  }

  // Timed contenders alternate too: each round times every one of them for a share of the time, and a
  // contender's figure is the median of its rounds' medians.
  const timed = benchCase.contenders.filter((contender) => contender.op !== undefined)
  const medians = new Map<string, number[]>(timed.map((contender) => [contender.name, []]))
  // A request through a whole app takes about a millisecond and leaves garbage behind: timed alone for a
  // fraction of a second, one contender's figure moved with the collector's rhythm (two near-identical
  // routes measured 0.6x to 1.5x of each other). They alternate in batches of requests over many rounds.
  if (benchCase.asRate === true) {
    // Each contender warmed before the rounds, as a server is after its first thousand requests. Warmed by one
    // batch (25 requests), the end-to-end page measured 0.80-0.97x the hand-written route in six processes on
    // Node 26 (median 0.85x), warmed by 1,000 requests 0.90-0.96x (median 0.93x): the route has more code for V8
    // to optimize than the hand-written one, and the ratio against each contender moved with it.
    for (const contender of timed) {
      const until = performance.now() + mode.rateWarmupSeconds * 1000
      for (let index = 0; index < mode.rateWarmupRequests && performance.now() < until; index++) await contender.op!()
    }
    for (let round = 0; round < mode.rateRounds; round++) {
      for (const contender of timed) {
        const started = process.hrtime.bigint()
        for (let index = 0; index < mode.rateBatch; index++) await contender.op!()
        medians.get(contender.name)!.push(Number(process.hrtime.bigint() - started) / mode.rateBatch)
      }
    }
  }
  for (let round = 0; round < (benchCase.asRate === true ? 0 : mode.opRounds); round++) {
    for (const contender of timed) {
      const op = contender.op!
      // The result is kept alive, so the JIT cannot drop the work as dead code; a promise is returned to be awaited.
      const kept = () => {
        const result = op()
        doNotOptimize(result)
        // mitata awaits only real promises; app.inject returns a thenable.
        return isThenable(result) && !(result instanceof Promise) ? Promise.resolve(result) : result
      }
      const stats = await measure(kept, { min_cpu_time: mode.minCpuTime / mode.opRounds })
      medians.get(contender.name)!.push(stats.p50)
    }
  }

  for (const contender of benchCase.contenders) {
    const own = facts.get(contender.name)!
    if (contender.op !== undefined) {
      const p50 = median(medians.get(contender.name)!)
      if (benchCase.asRate === true) measured.set(contender.name, { median: 1e9 / p50, unit: 'req/s', facts: own })
      else measured.set(contender.name, { median: p50, unit: 'ns', facts: own })
    } else if (contender.http !== undefined) {
      measured.set(contender.name, { median: median(rates.get(contender.name)!), unit: 'req/s', facts: own })
    } else if (contender.sample !== undefined) {
      const values: number[] = []
      const sampleFacts: Array<Record<string, number>> = []
      for (let index = 0; index < mode.samples; index++) {
        const sample = await contender.sample()
        values.push(sample.value)
        sampleFacts.push(sample.facts ?? {})
      }
      for (const key of Object.keys(sampleFacts[0]!)) own[key] = median(sampleFacts.map((entry) => entry[key]!))
      measured.set(contender.name, { median: median(values), unit: benchCase.unit ?? 'ns', facts: own })
    } else {
      throw new Error(`${benchCase.name} / ${contender.name}: a contender needs op, http or sample`)
    }
  }
  return measured
}

async function fire (target: HttpTarget, limits: { duration?: number; amount?: number }): Promise<autocannon.Result> {
  const result = await autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    body: target.body,
    headers: target.headers,
    connections: 10,
    pipelining: 1,
    ...limits,
  })
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
    throw new Error(`${target.method ?? 'GET'} ${target.url}: ${result.errors} errors, ${result.non2xx} non-2xx replies, ${result.timeouts} timeouts`)
  }
  return result
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

function median (values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing')
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export function formatFigure (value: number, unit: Unit): string {
  if (unit === 'req/s') return `${Math.round(value).toLocaleString('en-US')} req/s`
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)} ms`
  if (value >= 1e3) return `${(value / 1e3).toFixed(2)} µs`
  return `${value.toFixed(0)} ns`
}

/** Throws with both texts' first difference when two outputs are not byte-identical. */
export function assertSameText (label: string, expected: string, actual: string, expectedName: string, actualName: string): void {
  if (expected === actual) return
  let index = 0
  while (index < expected.length && expected[index] === actual[index]) index++
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, index - 60), index + 60))
  throw new Error(`${label}: ${actualName} differs from ${expectedName} at character ${index}:\n  ${expectedName}: ${around(expected)}\n  ${actualName}: ${around(actual)}`)
}

/**
 * The results of one suite run in several processes, as one: per contender, the median over the processes of
 * its median and of its ratio to the baseline (each measured in its own process); the facts of the first run.
 */
export function combineRuns (runs: readonly ContenderResult[][]): ContenderResult[] {
  const [first, ...others] = runs
  if (first === undefined) return []
  return first.map((result, index) => {
    const same = [result, ...others.map((run) => run[index])]
    if (same.some((other) => other === undefined || other.case !== result.case || other.contender !== result.contender)) {
      throw new Error(`${result.suite} / ${result.case} / ${result.contender}: the runs did not measure the same contenders`)
    }
    const all = same as ContenderResult[]
    return { ...result, median: median(all.map((run) => run.median)), speedup: median(all.map((run) => run.speedup)) }
  })
}
