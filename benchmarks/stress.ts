/**
 * The full-size hardening runs (`npm run stress`, with --expose-gc):
 * 50,000 requests with distinct valid combinations against the default
 * cache, and a load of valid and invalid queries on 127.0.0.1. Results go to
 * benchmarks/stress-results.md; the exit code says whether every check held.
 */
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { buildWideApp, combination } from '../test/hardening/combinations.js'
import { runLoad } from '../test/hardening/load-mix.js'
import { obtainGc, settledHeap } from '../test/hardening/support.js'

const distinctRequests = 50_000
const cacheSize = 1000
const loadSeconds = 20
const loadConnections = 10

// As the heap tests: without V8's compilation cache, which keeps every compiled source on Node 25+.
const gc = await obtainGc() ?? ((): never => {
  console.error('stress: run with --expose-gc (npm run stress)')
  process.exit(1)
})()

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const failures: string[] = []
const check = (ok: boolean, message: string) => { if (!ok) failures.push(message) }

async function cacheExhaustion () {
  const app = await buildWideApp(cacheSize)
  const heapStart = await settledHeap(gc)
  const checkpoints: Array<{ requests: number; heap: number; size: number }> = []
  let wrong = 0
  let largestCache = 0
  const started = performance.now()
  for (let index = 1; index <= distinctRequests; index++) {
    if (index % 100 === 0) await new Promise((resolve) => setImmediate(resolve))
    const { query, expected } = combination(index)
    const answer = await app.inject(`/wide?${query}`)
    if (answer.statusCode !== 200 || answer.body !== JSON.stringify(expected)) wrong++
    largestCache = Math.max(largestCache, app.expand.cacheStats().size)
    if (index === cacheSize || index % 10_000 === 0) {
      checkpoints.push({ requests: index, heap: await settledHeap(gc), size: app.expand.cacheStats().size })
      console.error(`cache: ${index} requests, heap ${mib(checkpoints.at(-1)!.heap)}`)
    }
  }
  const seconds = (performance.now() - started) / 1000
  const stats = app.expand.cacheStats()
  await app.close()
  const full = checkpoints[0].heap
  const end = checkpoints.at(-1)!.heap
  check(wrong === 0, `cache exhaustion: ${wrong} wrong bodies`)
  check(largestCache <= cacheSize, `cache exhaustion: the cache held ${largestCache} serializers`)
  check(stats.compiles === distinctRequests, `cache exhaustion: ${stats.compiles} compiles for ${distinctRequests} distinct combinations`)
  // Once the cache is full, the heap must stop growing: allow 10% of what the full cache holds.
  check(end - full < Math.max(0.1 * (full - heapStart), 5 * 1024 * 1024), `cache exhaustion: heap grew ${mib(end - full)} after the cache was full`)
  return { heapStart, checkpoints, wrong, largestCache, stats, seconds }
}

const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${mib(os.totalmem())} RAM, ${os.type()} ${os.release()}, Node ${process.version}`
const date = new Date().toISOString()
console.error(`stress: ${machine}`)

const cache = await cacheExhaustion()
console.error('load: running')
const load = await runLoad(loadSeconds, loadConnections, gc)
const loadGrowth = load.heapAfter! - load.heapBefore!
check(load.status5xx === 0, `load: ${load.status5xx} responses were 5xx`)
check(load.wrong === 0, `load: ${load.wrong} wrong bodies: ${load.wrongSamples.join(' | ')}`)
check(load.checked === load.responses, `load: ${load.checked} of ${load.responses} responses checked`)
check(load.errors === 0 && load.timeouts === 0, `load: ${load.errors} errors, ${load.timeouts} timeouts`)
check(loadGrowth < 8 * 1024 * 1024, `load: heap grew ${mib(loadGrowth)}`)

const lines = [
  `Run ${date} on ${machine}, by \`npm run stress\` (benchmarks/stress.ts).`,
  '',
  `### Cache exhaustion: ${distinctRequests.toLocaleString('en')} requests, each a distinct valid fields/omit/expand combination`,
  '',
  `Default \`cacheSize\` ${cacheSize}; every combination compiles its own serializer; every body compared with its expected JSON text. ${cache.seconds.toFixed(1)} s in all (${Math.round(distinctRequests / cache.seconds)} requests per second, compiling each).`,
  '',
  '| after requests | heap used (after gc) | serializers cached |',
  '|---:|---:|---:|',
  `| 0 | ${mib(cache.heapStart)} | 0 |`,
  ...cache.checkpoints.map((point) => `| ${point.requests.toLocaleString('en')} | ${mib(point.heap)} | ${point.size} |`),
  '',
  `cacheStats() at the end: \`${JSON.stringify(cache.stats)}\`; largest size seen ${cache.largestCache}; wrong bodies ${cache.wrong}.`,
  `Heap growth once the cache was full (${cacheSize.toLocaleString('en')} → ${distinctRequests.toLocaleString('en')} requests): ${mib(cache.checkpoints.at(-1)!.heap - cache.checkpoints[0].heap)}.`,
  '',
  `### Load: ${loadSeconds} s of valid and invalid queries, autocannon, ${loadConnections} connections, 127.0.0.1`,
  '',
  `${load.cases} distinct requests (detail and list routes, valid and invalid) in rotation, after a 1 s warm-up; every response body checked exactly (a 200 against its expected body, a 400 against its code and Fastify's error shape).`,
  '',
  '| responses | checked | wrong | 2xx | 4xx | 5xx | errors | timeouts | requests/s | p99 latency | heap before → after (gc) |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  `| ${load.responses} | ${load.checked} | ${load.wrong} | ${load.status2xx} | ${load.status4xx} | ${load.status5xx} | ${load.errors} | ${load.timeouts} | ${Math.round(load.requestsPerSecond)} | ${load.latencyP99} ms | ${mib(load.heapBefore!)} → ${mib(load.heapAfter!)} |`,
  '',
  failures.length === 0 ? 'Every check held.' : `Failed checks:\n\n${failures.map((failure) => `- ${failure}`).join('\n')}`,
  '',
]
writeFileSync(fileURLToPath(new URL('./stress-results.md', import.meta.url)), lines.join('\n'))
console.log(lines.join('\n'))
process.exit(failures.length === 0 ? 0 : 1)
