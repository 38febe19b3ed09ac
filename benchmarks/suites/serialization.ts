import { compileDataCheck } from '../../plugin/compile/data-check.js'
import { runtimeMechanism } from '../../plugin/compile/mechanisms.js'
import { compileSerializer } from '../../plugin/compile/serializer-cache.js'
import { ExpandEngine } from '../../plugin/engine.js'
import { resolveOptions } from '../../plugin/options.js'
import { ResourceGraph } from '../../plugin/graph/resource-graph.js'
import { genericStringify } from '../baselines/generic-walk.js'
import { payloadOf, shapes } from '../domain/shapes.js'
import { assertSameText, type BenchCase, type Suite } from '../runner.js'

const sizes = [
  { label: '1 object', rows: 1, list: false },
  { label: '100 rows', rows: 100, list: true },
  { label: '1,000 rows', rows: 1_000, list: true },
] as const

export const compiledName = 'compiled (fastify-expand)'
export const stringifyName = 'JSON.stringify (pre-shaped)'
export const genericName = 'generic walk + JSON.stringify'
export const dataCheckName = 'data check alone'
export const generatedName = 'mechanism: fast-json-stringify generated code'
export const projectionName = 'mechanism: projection + JSON.stringify'

export const serializationSuite: Suite = {
  id: 'serialization',
  title: 'Serialization',
  description: [
    `Per request: ${compiledName} looks up the plan and serializer of the query (a cache hit) and runs the compiled function;`,
    `${genericName} is a drf-flex-fields port that walks the declarations per request, builds the output objects and stringifies them;`,
    `${stringifyName} stringifies objects that already have exactly the output shape (work a handler would have to do first).`,
    'All three receive the same objects and must write the same bytes (checked before timing).',
    'Each output is then measured with Buffer.byteLength,',
    "as Fastify does for Content-Length: that flattens the compiled serializer's concatenated string,",
    'work it would otherwise leave to the socket write. Baseline: the generic walk.',
    `The compiled serializer writes with the mechanism chosen for the runtime (${runtimeMechanism} on this one,`,
    'see the profile notes);',
    `${generatedName} and ${projectionName} are the same combination compiled with each mechanism,`,
    'data check included, so that every run shows both.',
    `${dataCheckName} times only the check (data that does not fit the plan is a 500, never a coerced body):`,
    'it runs before fast-json-stringify\'s generated code writes,',
    'and in the same pass as the projection\'s copy where the projection writes.',
  ].join(' '),
  async setup () {
    const cases: BenchCase[] = []
    for (const shape of shapes) {
      const engine = new ExpandEngine(new ResourceGraph([shape.resource]), resolveOptions({}))
      for (const size of sizes) {
        const target = engine.target(shape.resource, { list: size.list }, `serialization ${shape.name}`)
        shape.expandByDepth.forEach((expand, depth) => {
          const data = payloadOf(shape, size.rows, size.list, depth)
          const query = expand === '' ? {} : { expand }
          const compiled = () => engine.serializerFor(engine.planFor(target, query))(data)
          const plan = engine.planFor(target, query)
          const check = compileDataCheck(plan)
          const generated = compileSerializer(plan, 'fast-json-stringify').stringify
          const projection = compileSerializer(plan, 'projection')
          if (projection.mechanism !== 'projection') throw new Error(`${shape.name} depth ${depth}: the projection does not cover the schema`)
          const stringify = () => JSON.stringify(data)
          const generic = () => genericStringify(shape.resource, query, data, size.list)
          // Fastify's next step with a string payload: its Content-Length, which flattens a concatenated string.
          const sent = (write: () => string) => () => Buffer.byteLength(write())
          cases.push({
            name: `${shape.name}, ${size.label}, depth ${depth}`,
            baseline: genericName,
            contenders: [
              { name: compiledName, op: sent(compiled) },
              { name: stringifyName, op: sent(stringify) },
              { name: genericName, op: sent(generic) },
              { name: dataCheckName, op: () => check(data) },
              { name: generatedName, op: sent(() => generated(data)) },
              { name: projectionName, op: sent(() => projection.stringify(data)) },
            ],
            check () {
              const expected = stringify()
              assertSameText(`${shape.name} ${size.label} depth ${depth}`, expected, compiled(), stringifyName, compiledName)
              assertSameText(`${shape.name} ${size.label} depth ${depth}`, expected, generic(), stringifyName, genericName)
              assertSameText(`${shape.name} ${size.label} depth ${depth}`, expected, generated(data), stringifyName, generatedName)
              assertSameText(`${shape.name} ${size.label} depth ${depth}`, expected, projection.stringify(data), stringifyName, projectionName)
            },
          })
        })
      }
    }
    return { cases }
  },
}
