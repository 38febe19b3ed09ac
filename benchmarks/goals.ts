import { countedRows, loadName } from './suites/database.js'
import { handName, mercuriusJitName, routesName } from './suites/end-to-end.js'
import { expandRouteName } from './suites/http.js'
import { hitName } from './suites/request-overhead.js'
import { compiledName, genericName, stringifyName } from './suites/serialization.js'
import type { ContenderResult } from './runner.js'

export interface GoalOutcome {
  goal: string
  /** undefined: the suite it reads was not run. */
  met: boolean | undefined
  figure: string
  /** Why a miss happens and what would close it; or what a met goal rests on. */
  note: string
}

interface Goal {
  goal: string
  evaluate(results: readonly ContenderResult[]): { met: boolean; figure: string } | undefined
  /** Read with the figures: the cause of a miss and what would close it (from profiles of this code). */
  whenMissed: string
  whenMet?: string
}

const ratio = (value: number) => `${value.toFixed(2)}x`

function find (results: readonly ContenderResult[], suite: string, contender: string, caseName?: string): ContenderResult[] {
  return results.filter((result) => result.suite === suite && result.contender === contender && (caseName === undefined || result.case === caseName))
}

function medianOf (caseName: string, results: readonly ContenderResult[], suite: string, contender: string): number {
  return find(results, suite, contender, caseName)[0]!.median
}

/** Compiled speed over another contender's, per serialization case. */
function serializationRatios (results: readonly ContenderResult[], other: string, listsOnly: boolean): Array<[string, number]> {
  return find(results, 'serialization', compiledName)
    .filter((result) => !listsOnly || result.case.includes('rows'))
    .map((result) => [result.case, medianOf(result.case, results, 'serialization', other) / result.median])
}

function summarize (ratios: Array<[string, number]>, threshold: number): { met: boolean; figure: string } | undefined {
  if (ratios.length === 0) return undefined
  const passing = ratios.filter(([, value]) => value >= threshold)
  const sorted = [...ratios].sort((a, b) => a[1] - b[1])
  const [worstCase, worst] = sorted[0]!
  const [bestCase, best] = sorted[sorted.length - 1]!
  return {
    met: passing.length === ratios.length,
    figure: `${passing.length}/${ratios.length} cases; worst ${ratio(worst)} (${worstCase}), best ${ratio(best)} (${bestCase})`,
  }
}

export const goals: readonly Goal[] = [
  {
    goal: 'Compiled serialization >= 2x the generic walk',
    evaluate: (results) => summarize(serializationRatios(results, genericName, false), 2),
    whenMissed: 'Where the payload is mostly long strings, both sides spend their time escaping and copying the same text (fast-json-stringify hands strings over 42 characters to JSON.stringify), so there is little left to win over a walk whose own cost is small next to it; number-heavy payloads are where compiled code pays. Closing it means a cheaper string path in the generated code (fast-json-stringify: one JSON.stringify call per row of string fields rather than one per field).',
  },
  {
    goal: 'Compiled serialization faster than JSON.stringify of pre-shaped objects, on lists',
    evaluate: (results) => summarize(serializationRatios(results, stringifyName, true), 1),
    whenMissed: 'On string-heavy lists the generated code escapes each string separately (a regular-expression test per short string, JSON.stringify per long one) and concatenates; V8\'s native JSON.stringify does the same walk in C++ with a fast path for one-byte strings. Number-heavy lists are won by a wide margin. The baseline also gets its objects for free: a handler would first have to build them (the generic walk is that cost).',
  },
  {
    goal: 'Cache-hit overhead < 2 µs per request',
    evaluate: (results) => {
      const hits = find(results, 'request-overhead', hitName)
      if (hits.length === 0) return undefined
      const worst = Math.max(...hits.map((result) => result.median))
      return { met: worst < 2000, figure: `worst ${Math.round(worst)} ns (${hits.map((result) => `${Math.round(result.median)} ns`).join(', ')})` }
    },
    whenMissed: 'The hit path reads three query parameters, builds one key string and does two LRU lookups (plans, then serializers by the canonical key).',
  },
  {
    goal: 'HTTP throughput of an expand route >= 90% of the static-schema route',
    evaluate: (results) => {
      const rows = find(results, 'http', expandRouteName)
      if (rows.length === 0) return undefined
      return summarize(rows.map((result) => [result.case, result.speedup]), 0.9)
    },
    whenMissed: 'The expand route adds a preHandler hook (plan lookup) and a preSerialization hook (pick the serializer, set the content type) to every request; on a small payload that fixed cost is a visible share of a ~15-20 µs request. Moving both into one hook, or choosing the serializer in the preHandler and letting the reply use it directly, would close most of it.',
  },
  {
    goal: 'Statements per request constant in rows',
    evaluate: (results) => {
      const rows = find(results, 'database', loadName)
      if (rows.length === 0) return undefined
      const counts = rows.map((result) => countedRows.map((count) => result.facts[`statements @${count} rows`]!))
      const constant = counts.every((perCase) => perCase.every((value) => value === perCase[0]))
      return { met: constant, figure: rows.map((result, index) => `${result.case.split(' (')[0]}: ${counts[index]!.join(' / ')} at ${countedRows.join(' / ')} rows`).join('; ') }
    },
    whenMissed: 'A relation path is being loaded per row or per chunk.',
  },
  {
    goal: 'End-to-end expanded page >= 0.7x the hand-written JOIN route',
    evaluate: (results) => {
      const row = find(results, 'end-to-end', routesName)[0]
      if (row === undefined) return undefined
      return { met: row.speedup >= 0.7, figure: `${ratio(row.speedup)} (${Math.round(row.median)} vs ${Math.round(find(results, 'end-to-end', handName)[0]!.median)} req/s)` }
    },
    whenMissed: 'See the profile notes below the table: the plugin runs 5 statements through Kysely (query building and compiling per statement, async driver wrapper) where the hand-written route runs 2 prepared statements directly, and it selects each level through Kysely again at every depth.',
  },
  {
    goal: 'End-to-end expanded page >= 1.5x mercurius with graphql-jit',
    evaluate: (results) => {
      const ours = find(results, 'end-to-end', routesName)[0]
      const jit = find(results, 'end-to-end', mercuriusJitName)[0]
      if (ours === undefined || jit === undefined) return undefined
      const value = ours.median / jit.median
      return { met: value >= 1.5, figure: `${ratio(value)} (${Math.round(ours.median)} vs ${Math.round(jit.median)} req/s)` }
    },
    whenMissed: 'mercurius resolves each field of each record through a resolver call (graphql-jit removes the interpretation, not the calls), and its loaders run the same four statements; the gap left is Kysely\'s per-statement cost on our side.',
  },
]

export function evaluateGoals (results: readonly ContenderResult[]): GoalOutcome[] {
  return goals.map((goal) => {
    const outcome = goal.evaluate(results)
    if (outcome === undefined) return { goal: goal.goal, met: undefined, figure: 'not measured in this run', note: '' }
    return { goal: goal.goal, met: outcome.met, figure: outcome.figure, note: outcome.met ? goal.whenMet ?? '' : goal.whenMissed }
  })
}
