import t from 'tap'
import { combineRuns, type ContenderResult } from '../../benchmarks/runner.js'

// A suite run in several processes reports, per contender, the median of its figures and of its ratios.
const result = (contender: string, median: number, speedup: number): ContenderResult => ({
  suite: 'end-to-end', case: 'page', contender, baseline: 'hand-written', unit: 'req/s', median, speedup, facts: { statements: 5 },
})

t.test('the median over the processes of each figure and of each ratio', async (t) => {
  const runs = [
    [result('hand-written', 2716, 1), result('plugin', 2267, 0.83)],
    [result('hand-written', 2758, 1), result('plugin', 2765, 1.02)],
    [result('hand-written', 2809, 1), result('plugin', 2615, 0.95)],
  ]
  t.same(combineRuns(runs), [result('hand-written', 2758, 1), result('plugin', 2615, 0.95)])
  t.same(combineRuns([runs[0]!]), runs[0], 'one process: its own figures')
  t.same(combineRuns([]), [])
})

t.test('runs that did not measure the same contenders are refused', async (t) => {
  t.throws(() => combineRuns([[result('plugin', 1, 1)], [result('other', 1, 1)]]), /end-to-end \/ page \/ plugin: the runs did not measure the same contenders/)
  t.throws(() => combineRuns([[result('plugin', 1, 1), result('other', 1, 1)], [result('plugin', 1, 1)]]), /the runs did not measure the same contenders/)
})
