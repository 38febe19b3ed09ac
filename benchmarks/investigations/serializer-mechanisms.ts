/*
 * The serialization suite's list cases, each mechanism of the compiled
 * serializer against JSON.stringify of pre-shaped objects and the generic
 * walk, in rounds that alternate the contenders (the machine is shared: a
 * ratio is only read against figures of the same rounds). Prints the median
 * time of each contender over the rounds and its ratios. `two passes` is the
 * projection's data check and copy run one after the other, as they ran before
 * the checked projection (plugin/compile/checked-projection.ts) joined them.
 *
 *   node --import tsx benchmarks/investigations/serializer-mechanisms.ts [rounds] [ms per contender and round]
 */
import { compileDataCheck } from '../../plugin/compile/data-check.js'
import { responseSchema } from '../../plugin/compile/response-schema.js'
import { compileWriter, runtimeMechanism } from '../../plugin/compile/mechanisms.js'
import { compileSerializer } from '../../plugin/compile/serializer-cache.js'
import { ExpandEngine } from '../../plugin/engine.js'
import { resolveOptions } from '../../plugin/options.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { genericStringify } from '../baselines/generic-walk.js'
import { payloadOf, shapes } from '../domain/shapes.js'

const rounds = Number(process.argv[2] ?? 11)
const budget = Number(process.argv[3] ?? 60) * 1e6

/** CPU time of this process per operation (the machine is shared: time spent waiting for a core is not counted). */
function timeOne (op: () => unknown): number {
  let runs = 0
  let sink = 0
  const started = process.cpuUsage()
  let elapsed = 0
  while (elapsed < budget) {
    for (let batch = 0; batch < 16; batch++) sink += (op() as number)
    runs += 16
    const used = process.cpuUsage(started)
    elapsed = (used.user + used.system) * 1000
  }
  if (sink === -1) console.log(sink)
  return elapsed / runs
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

console.log(`${process.version} (V8 ${process.versions.v8}); runtime mechanism: ${runtimeMechanism}; ${rounds} rounds of ${budget / 1e6} ms`)
for (const shape of shapes) {
  const engine = new ExpandEngine(new ResourceGraph([shape.resource]), resolveOptions({}))
  const target = engine.target(shape.resource, { list: true }, `mechanisms ${shape.name}`)
  for (const rows of [100, 1_000]) {
    shape.expandByDepth.forEach((expand, depth) => {
      const data = payloadOf(shape, rows, true, depth)
      const query = expand === '' ? {} : { expand }
      const plan = engine.planFor(target, query)
      const generated = compileSerializer(plan, 'fast-json-stringify').stringify
      const projection = compileSerializer(plan, 'projection').stringify
      const check = compileDataCheck(plan)
      const projectionWriter = compileWriter(responseSchema(plan), 'projection').stringify
      const contenders: Record<string, () => number> = {
        compiled: () => Buffer.byteLength(engine.serializerFor(engine.planFor(target, query))(data)),
        generated: () => Buffer.byteLength(generated(data)),
        projection: () => Buffer.byteLength(projection(data)),
        'two passes': () => {
          check(data)
          return Buffer.byteLength(projectionWriter(data))
        },
        stringify: () => Buffer.byteLength(JSON.stringify(data)),
        generic: () => Buffer.byteLength(genericStringify(shape.resource, query, data, true)),
      }
      const expected = JSON.stringify(data)
      for (const [name, op] of Object.entries(contenders)) {
        if (name !== 'stringify' && Buffer.byteLength(expected) !== op()) throw new Error(`${name}: other bytes`)
      }
      const times: Record<string, number[]> = {}
      for (let round = 0; round < rounds; round++) {
        for (const [name, op] of Object.entries(contenders)) (times[name] ??= []).push(timeOne(op))
      }
      const medians = Object.fromEntries(Object.entries(times).map(([name, values]) => [name, median(values)]))
      const ratio = (name: string, baseline: string) => (medians[baseline]! / medians[name]!).toFixed(2)
      console.log([
        `${shape.name}, ${rows} rows, depth ${depth}:`,
        ...Object.entries(medians).map(([name, value]) => `${name} ${(value / 1000).toFixed(1)} µs`),
        `| vs stringify: compiled ${ratio('compiled', 'stringify')}x generated ${ratio('generated', 'stringify')}x projection ${ratio('projection', 'stringify')}x`,
        `| projection in one pass vs two passes: ${ratio('projection', 'two passes')}x`,
        `| vs generic: compiled ${ratio('compiled', 'generic')}x generated ${ratio('generated', 'generic')}x projection ${ratio('projection', 'generic')}x`,
      ].join(' '))
    })
  }
}
