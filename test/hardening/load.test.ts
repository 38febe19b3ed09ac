import t from 'tap'
import { runLoad } from './load-mix.js'
import { obtainGc } from './support.js'

t.test('a short load of valid and invalid queries on 127.0.0.1: no 5xx, no wrong body, flat heap', async (t) => {
  const gc = await obtainGc()
  const report = await runLoad(2, 4, gc)
  t.ok(report.checked > 200, `${report.checked} responses checked (${Math.round(report.requestsPerSecond)} requests per second)`)
  t.equal(report.checked, report.responses, 'every response was checked')
  t.equal(report.wrong, 0, `no wrong body${report.wrongSamples.length > 0 ? `: ${report.wrongSamples.join(' | ')}` : ''}`)
  t.equal(report.status5xx, 0, 'no 5xx')
  t.ok(report.status2xx > 0 && report.status4xx > 0, `both valid (${report.status2xx}) and invalid (${report.status4xx}) queries were served`)
  t.equal(report.errors, 0, 'no connection errors')
  t.equal(report.timeouts, 0, 'no timeouts')
  if (report.heapBefore === undefined || report.heapAfter === undefined) {
    t.comment('heap not measured: this process cannot obtain a garbage collector')
    return
  }
  const growth = report.heapAfter - report.heapBefore
  t.ok(growth < 4 * 1024 * 1024, `heap grew by ${(growth / 1024).toFixed(0)} KiB over the run`)
})
