import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import expandPlugin, { defineResource, isExpanded, type AnyResource } from '../../plugin/index.js'

/**
 * A resource wide enough for tens of thousands of distinct valid
 * fields/omit/expand combinations, each its own compiled serializer: the
 * shape of a cache-exhaustion attack.
 */
export const wideFieldNames = Array.from({ length: 16 }, (_, index) => `f${index}`)

export const Wide: AnyResource = defineResource({
  name: 'Wide',
  schema: Type.Object({
    id: Type.Integer(),
    ...Object.fromEntries(wideFieldNames.map((name, index) => [name, index % 2 === 0 ? Type.String() : Type.Integer()])),
    next: Type.Integer(),
  }),
  fields: ['id', ...wideFieldNames, 'next'] as never[],
  expandable: { next: (): AnyResource => Wide },
})

export const wideRecord: Record<string, unknown> = {
  id: 1,
  ...Object.fromEntries(wideFieldNames.map((name, index) => [name, index % 2 === 0 ? `value ${index} "quoted" \u00e9` : index * 1000])),
  next: 1,
  internal: 'never written',
}

const maxCombinations = 2 ** wideFieldNames.length - 1

/** The fields selected by combination `index` (1 .. 65535): the bits of the index. */
function selectedFields (index: number): string[] {
  return wideFieldNames.filter((_, bit) => (index & (1 << bit)) !== 0)
}

export interface Combination {
  query: string
  expected: Record<string, unknown>
}

/**
 * Combination `index`: a distinct valid query and the exact body it must get.
 * Distinct indexes select distinct field sets, so distinct serializers; one
 * in three also expands `next` with a nested omit.
 */
export function combination (index: number): Combination {
  if (!Number.isInteger(index) || index < 1 || index > maxCombinations) throw new RangeError(`combination ${index} is out of 1..${maxCombinations}`)
  const fields = selectedFields(index)
  const pick = (names: string[]) => Object.fromEntries(names.map((name) => [name, wideRecord[name]]))
  switch (index % 3) {
    case 0:
      return { query: `fields=id,${fields.join(',')}`, expected: pick(['id', ...fields]) }
    case 1: {
      const omitted = wideFieldNames.filter((name) => !fields.includes(name))
      return { query: `omit=${omitted.length > 0 ? omitted.join(',') : 'id'}`, expected: pick(omitted.length > 0 ? ['id', ...fields, 'next'] : [...fields, 'next']) }
    }
    default:
      return {
        query: `fields=${fields.join(',')},next&expand=next&omit=next.${fields[0]},next.next`,
        expected: { ...pick(fields), next: pick(['id', ...wideFieldNames.filter((name) => name !== fields[0])]) },
      }
  }
}

/**
 * `maxCompilesPerSecond` is unbounded by default here: what is measured is
 * the cache when every new combination compiles.
 */
export async function buildWideApp (cacheSize: number, maxCompilesPerSecond = Number.MAX_SAFE_INTEGER): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(expandPlugin, { resources: [Wide], cacheSize, maxCompilesPerSecond })
  app.get('/wide', { expandable: { resource: Wide } }, async (request) => (
    isExpanded(request, 'next') ? { ...wideRecord, next: { ...wideRecord } } : { ...wideRecord }
  ))
  await app.ready()
  return app
}
