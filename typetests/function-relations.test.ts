// Type tests (tstyche): a relation resolved by a function, as a TypeScript user writes and reads it.
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import { defineResource, RelationLoadFailedError, type Expanded, type RelationLoad } from '../plugin/index.js'

const Weather = defineResource({
  name: 'Weather',
  schema: Type.Object({ id: Type.Integer(), sky: Type.String() }),
  fields: ['id', 'sky'],
})

export const City = defineResource({
  name: 'City',
  table: 'cities',
  schema: Type.Object({ id: Type.Integer(), weather: Type.Union([Type.Integer(), Type.Null()]), forecasts: Type.Array(Type.Integer()) }),
  fields: ['id', 'weather', 'forecasts'],
  expandable: {
    weather: [Weather, {
      column: 'weather_id',
      load: async (keys, { request, signal }) => {
        expect(keys).type.toBe<readonly unknown[]>()
        expect(request).type.toBe<FastifyRequest>()
        expect(signal).type.toBe<AbortSignal>()
        return new Map(keys.map((key) => [key, { id: Number(key), sky: 'clear' }]))
      },
    }],
    forecasts: [Weather, { many: true, load: async (keys) => new Map(keys.map((key) => [key, [{ id: 1, sky: 'rain' }]])) }],
  },
})

describe('a relation resolved by a function', () => {
  test('load answers a Map of rows, or of arrays of rows', () => {
    expect<RelationLoad>().type.toBeAssignableFrom(async () => new Map([[1, { id: 1 }]]))
    expect<RelationLoad>().type.toBeAssignableFrom(async () => new Map([[1, [{ id: 1 }]]]))
    expect<RelationLoad>().type.not.toBeAssignableFrom(async () => new Map([[1, 'clear']]))
    expect<RelationLoad>().type.not.toBeAssignableFrom(async () => ({ 1: { id: 1 } }))
  })

  test('is expanded as any relation of its shape', () => {
    expect<Expanded<typeof City, 'weather,forecasts'>>().type.toBe<{
      id: number
      weather: { id: number; sky: string } | null
      forecasts: Array<{ id: number; sky: string }>
    }>()
  })

  test('its failure has its own code', () => {
    expect(new RelationLoadFailedError({ cause: new Error('x') }).code).type.toBe<'FST_EXPAND_RELATION_LOAD_FAILED'>()
    expect(RelationLoadFailedError).type.not.toBeConstructableWith('text')
  })
})
