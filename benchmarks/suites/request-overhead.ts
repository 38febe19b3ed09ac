import fastJson from 'fast-json-stringify'
import { responseSchema } from '../../plugin/compile/response-schema.js'
import { ExpandEngine, type RegisteredTarget } from '../../plugin/engine.js'
import { resolveOptions } from '../../plugin/options.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { Pet, petResources } from '../domain/pets-db.js'
import { randomSource } from '../../demo/seed.js'
import type { BenchCase, Suite } from '../runner.js'

type Query = Record<string, string>

export const hitName = 'planFor + serializerFor (hit)'
const missName = 'planFor + serializerFor (miss)'
export const floorName = 'Map.get by raw parameters (floor)'
export const stringsName = 'new strings of the query alone (part of both)'
const compileName = 'fast-json-stringify compile alone'
const overflowCacheSize = 100
const overflowBaselineName = `${overflowCacheSize / 2} combinations (all fit)`

function engineOf (cacheSize: number): ExpandEngine {
  return new ExpandEngine(new ResourceGraph(petResources), resolveOptions({ cacheSize }))
}

function listTarget (engine: ExpandEngine): RegisteredTarget {
  return engine.target(Pet, { list: true, permittedExpands: ['owner.employer', 'sold_from', 'toys'] }, 'request overhead')
}

/**
 * The query as a request gives it: new string objects on every request (a
 * querystring parser cuts them from the URL), which a lookup must compare or
 * hash again; the same strings each time would let both contenders skip that.
 */
function freshQuery (query: Query): () => Query {
  const entries = Object.entries(query)
  return () => {
    const fresh: Query = {}
    for (const [name, value] of entries) fresh[name] = `?${value}`.slice(1)
    return fresh
  }
}

/** What a request with this query pays on a cache hit: its plan, then its serializer. */
function hitLookup (engine: ExpandEngine, target: RegisteredTarget, query: Query): () => unknown {
  const next = freshQuery(query)
  return () => engine.serializerFor(engine.planFor(target, next()))
}

/** The lookup the plugin could not do with less: one Map hit keyed by the three raw strings. */
function floorLookup (query: Query): () => unknown {
  const table = new Map<string, object>([[`${query.expand ?? ''}\u0000${query.fields ?? ''}\u0000${query.omit ?? ''}`, {}]])
  const next = freshQuery(query)
  return () => {
    const request = next()
    return table.get(`${request.expand ?? ''}\u0000${request.fields ?? ''}\u0000${request.omit ?? ''}`)
  }
}

/**
 * Distinct combinations (distinct canonical plan keys, so distinct compiled
 * serializers) of a Pet list: field subsets x expansions x owner field subsets.
 * The search is deterministic: fewer are a prefix of more.
 */
function distinctCombinations (count: number): Query[] {
  const engine = engineOf(100_000)
  const target = listTarget(engine)
  const petFields = ['id', 'name', 'species', 'owner', 'sold_from', 'toys']
  const ownerFields = ['id', 'name', 'hobbies']
  const found = new Map<string, Query>()
  for (let nestedMask = 0; nestedMask < 8; nestedMask++) {
    for (let ownerMask = 0; ownerMask < 8; ownerMask++) {
      for (let expandMode = 0; expandMode < 12; expandMode++) {
        for (let fieldMask = 1; fieldMask < 64; fieldMask++) {
          const expand = [['', 'owner', 'owner.employer'][expandMode % 3], expandMode & 4 ? 'sold_from' : '', expandMode & 8 ? 'toys' : '']
          const fields = petFields.filter((_, bit) => fieldMask & (1 << bit))
          if (ownerMask > 0) fields.push(...ownerFields.filter((_, bit) => ownerMask & (1 << bit)).map((field) => `owner.${field}`))
          if (nestedMask & 1) fields.push('toys.id')
          if (nestedMask & 4) fields.push('sold_from.name')
          const query: Query = { expand: expand.filter(Boolean).join(','), fields: fields.join(',') }
          if (nestedMask & 2) query.omit = 'owner.employer.public'
          const key = engine.planFor(target, query).key
          if (!found.has(key)) found.set(key, query)
          if (found.size === count) return [...found.values()]
        }
      }
    }
  }
  throw new Error(`only ${found.size} distinct combinations, ${count} asked`)
}

/** A stream of requests picking combinations uniformly at random: the worst realistic case for an LRU after a cycle. */
function overflowSample (combinations: readonly Query[], streamLength: number, seed: { value: number }) {
  return () => {
    const engine = engineOf(overflowCacheSize)
    const target = listTarget(engine)
    const random = randomSource(seed.value++)
    // Warm the cache with one pass, as a server that has been up a while.
    for (const query of combinations.slice(0, overflowCacheSize)) engine.serializerFor(engine.planFor(target, query))
    const before = engine.serializers.stats()
    const stream = Array.from({ length: streamLength }, () => combinations[Math.floor(random() * combinations.length)]!)
    const started = process.hrtime.bigint()
    for (const query of stream) engine.serializerFor(engine.planFor(target, query))
    const elapsed = Number(process.hrtime.bigint() - started)
    const after = engine.serializers.stats()
    const hits = after.hits - before.hits
    const facts = { 'hit rate %': (100 * hits) / streamLength, compiles: after.compiles - before.compiles }
    return { value: elapsed / streamLength, facts }
  }
}

export const requestOverheadSuite: Suite = {
  id: 'request-overhead',
  title: 'Request overhead',
  description: [
    'What each request pays before serializing: read expand/fields/omit from the parsed query, find the plan and the compiled serializer.',
    `Each call gets the query's strings as new string objects, as a request does: both contenders pay for making them (${stringsName}).`,
    `A hit is compared with ${floorName}, the least any cache keyed by the raw parameters can cost;`,
    `a miss (parse, validate, plan, build the schema, compile) with ${compileName} of the same schema.`,
    `Cache overflow: cacheSize ${overflowCacheSize}, a stream of requests over more distinct combinations than fit, picked uniformly at random; figure: mean time per request.`,
  ].join(' '),
  async setup (mode) {
    const cases: BenchCase[] = []
    const engine = engineOf(1000)
    const target = listTarget(engine)
    const hitQueries: Array<[string, Query]> = [
      ['cache hit, no parameters', {}],
      ['cache hit, expand=owner.employer,toys', { expand: 'owner.employer,toys' }],
      ['cache hit, expand + fields + omit', {
        expand: 'owner.employer,toys,sold_from', fields: 'id,name,owner,toys,sold_from', omit: 'owner.hobbies',
      }],
    ]
    for (const [name, query] of hitQueries) {
      engine.serializerFor(engine.planFor(target, query))
      cases.push({
        name,
        baseline: floorName,
        contenders: [
          { name: hitName, op: hitLookup(engine, target, query) },
          { name: floorName, op: floorLookup(query) },
          { name: stringsName, op: freshQuery(query) },
        ],
      })
    }

    // cacheSize 1 and two alternating queries: every call misses both the plan and the serializer cache.
    const missEngine = engineOf(1)
    const missTarget = listTarget(missEngine)
    const missQueries: Query[] = [{ expand: 'owner.employer,toys' }, { expand: 'owner.employer,toys', omit: 'name' }]
    const schemas = missQueries.map((query) => responseSchema(engine.planFor(target, query)))
    let missTurn = 0
    let compileTurn = 0
    cases.push({
      name: 'cache miss (compile), expand=owner.employer,toys',
      baseline: compileName,
      contenders: [
        { name: missName, op: () => missEngine.serializerFor(missEngine.planFor(missTarget, missQueries[missTurn++ & 1]!)) },
        { name: compileName, op: () => fastJson(schemas[compileTurn++ & 1]!) },
      ],
      check () {
        const before = missEngine.serializers.stats().compiles
        missEngine.serializerFor(missEngine.planFor(missTarget, missQueries[missTurn++ & 1]!))
        missEngine.serializerFor(missEngine.planFor(missTarget, missQueries[missTurn++ & 1]!))
        if (missEngine.serializers.stats().compiles !== before + 2) throw new Error('the cache-miss case does not miss')
      },
    })

    const streamLength = mode.quick ? 300 : 3_000
    const seed = { value: 1 }
    const distinctCounts = mode.quick
      ? [overflowCacheSize / 2, overflowCacheSize * 2]
      : [overflowCacheSize / 2, overflowCacheSize, overflowCacheSize * 2, overflowCacheSize * 10]
    const combinations = distinctCombinations(Math.max(...distinctCounts))
    cases.push({
      name: `cache overflow, cacheSize ${overflowCacheSize}`,
      baseline: overflowBaselineName,
      unit: 'ns',
      contenders: distinctCounts.map((distinct) => ({
        name: distinct === overflowCacheSize / 2 ? overflowBaselineName : `${distinct} combinations`,
        sample: overflowSample(combinations.slice(0, distinct), streamLength, seed),
      })),
    })
    return { cases }
  },
}
