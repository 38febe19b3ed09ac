import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { buildWideApp, combination } from './combinations.js'
import { obtainGc, settledHeap } from './support.js'

const cacheSize = 20

// Under V8 coverage (NODE_V8_COVERAGE, which c8 sets in `npm test`) V8 keeps every
// compiled script for its report, each evicted serializer's too: the heap would show
// that, not what the plugin keeps. So this file runs again in a child without it
// (an empty value: Node gives a child the parent's value when the variable is absent).
if (process.env.NODE_V8_COVERAGE) {
  const environment = { ...process.env, NODE_V8_COVERAGE: '' }
  t.spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { env: environment }, 'without V8 coverage')
} else {
  t.test('distinct valid combinations keep the serializer cache at cacheSize and the heap flat', measure)
}

async function measure (t: Test): Promise<void> {
  const app = await buildWideApp(cacheSize)
  t.teardown(() => app.close())
  const gc = await obtainGc()

  let wrongBodies = 0
  let largestCache = 0
  const serve = async (from: number, to: number) => {
    for (let index = from; index < to; index++) {
      // Let the event loop turn now and then, as a server's would.
      if (index % 50 === 0) await new Promise((resolve) => setImmediate(resolve))
      const { query, expected } = combination(index)
      const answer = await app.inject(`/wide?${query}`)
      if (answer.statusCode !== 200 || answer.body !== JSON.stringify(expected)) wrongBodies++
      largestCache = Math.max(largestCache, app.expand.cacheStats().size)
    }
  }

  // Warm up past the cache size, so what follows only replaces entries.
  await serve(1, 201)
  const heapBefore = gc === undefined ? undefined : await settledHeap(gc)
  await serve(201, 801)
  const heapAfter = gc === undefined ? undefined : await settledHeap(gc)

  t.equal(wrongBodies, 0, 'every response is its combination\'s exact body')
  t.equal(largestCache, cacheSize, `the cache never held more than ${cacheSize} serializers`)
  const stats = app.expand.cacheStats()
  t.equal(stats.size, cacheSize)
  t.equal(stats.compiles, 800, 'each distinct combination compiled once')
  t.equal(stats.misses, 800)

  // Evicted combinations compile again; a repeated one is a hit.
  await serve(1, 2)
  await serve(1, 2)
  t.same(app.expand.cacheStats(), { size: cacheSize, hits: 1, misses: 801, compiles: 801 })

  if (gc === undefined || heapBefore === undefined || heapAfter === undefined) {
    t.comment('heap growth not measured: this process cannot obtain a garbage collector')
    return
  }
  // 600 compiled serializers kept would be several MB; evicted ones must be collectable.
  const growth = heapAfter - heapBefore
  t.ok(growth < 2 * 1024 * 1024, `heap grew by ${(growth / 1024).toFixed(0)} KiB over 600 distinct combinations`)
}
