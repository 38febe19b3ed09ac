import { Type } from '@sinclair/typebox'
import { defineResource, type AnyResource } from '../../plugin/index.js'
import { randomSource } from '../../demo/seed.js'

// Two payload shapes for the serialization figures: text-dominated and number-dominated.

export const Organization = defineResource({
  name: 'Organization',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), domain: Type.String(), description: Type.String() }),
  fields: ['id', 'name', 'domain', 'description'],
})

export const Author = defineResource({
  name: 'Author',
  schema: Type.Object({
    id: Type.Integer(), name: Type.String(), email: Type.String(), bio: Type.String(), organization: Type.Integer(),
  }),
  fields: ['id', 'name', 'email', 'bio', 'organization'],
  expandable: { organization: Organization },
})

export const Article = defineResource({
  name: 'Article',
  schema: Type.Object({
    id: Type.Integer(),
    title: Type.String(),
    slug: Type.String(),
    status: Type.String(),
    summary: Type.String(),
    language: Type.String(),
    author: Type.Integer(),
  }),
  fields: ['id', 'title', 'slug', 'status', 'summary', 'language', 'author'],
  expandable: { author: Author },
})

export const Station = defineResource({
  name: 'Station',
  schema: Type.Object({
    id: Type.Integer(), latitude: Type.Number(), longitude: Type.Number(), elevation: Type.Number(), capacity: Type.Integer(),
  }),
  fields: ['id', 'latitude', 'longitude', 'elevation', 'capacity'],
})

export const Sensor = defineResource({
  name: 'Sensor',
  schema: Type.Object({
    id: Type.Integer(),
    model: Type.Integer(),
    calibration: Type.Number(),
    offset: Type.Number(),
    range: Type.Number(),
    station: Type.Integer(),
  }),
  fields: ['id', 'model', 'calibration', 'offset', 'range', 'station'],
  expandable: { station: Station },
})

export const Reading = defineResource({
  name: 'Reading',
  schema: Type.Object({
    id: Type.Integer(),
    timestamp: Type.Integer(),
    value: Type.Number(),
    minimum: Type.Number(),
    maximum: Type.Number(),
    mean: Type.Number(),
    deviation: Type.Number(),
    samples: Type.Integer(),
    quality: Type.Integer(),
    sensor: Type.Integer(),
  }),
  fields: ['id', 'timestamp', 'value', 'minimum', 'maximum', 'mean', 'deviation', 'samples', 'quality', 'sensor'],
  expandable: { sensor: Sensor },
})

export interface Shape {
  name: 'string-heavy' | 'number-heavy'
  resource: AnyResource
  /** The expand value of each depth: index 0 expands nothing. */
  expandByDepth: readonly [string, string, string]
  /** One row shaped exactly like the response at `depth`. */
  row(index: number, depth: number, random: () => number): Record<string, unknown>
}

const words = [
  'fastify', 'schema', 'compiled', 'relation', 'expansion', 'naïve', 'café', 'query', 'loader', 'latency', 'throughput', 'résumé',
]

function sentence (random: () => number, count: number): string {
  const parts: string[] = []
  for (let index = 0; index < count; index++) parts.push(words[Math.floor(random() * words.length)]!)
  return parts.join(' ')
}

function organization (id: number, random: () => number): Record<string, unknown> {
  return { id, name: `Organization ${id}`, domain: `org${id}.example.com`, description: sentence(random, 14) }
}

function author (id: number, depth: number, random: () => number): Record<string, unknown> {
  const organizationId = 1 + (id % 17)
  return {
    id,
    name: `Author ${id} O'Brien`,
    email: `author${id}@example.com`,
    bio: sentence(random, 18),
    organization: depth >= 1 ? organization(organizationId, random) : organizationId,
  }
}

function station (id: number, random: () => number): Record<string, unknown> {
  return {
    id,
    latitude: random() * 180 - 90,
    longitude: random() * 360 - 180,
    elevation: random() * 4000,
    capacity: Math.floor(random() * 500),
  }
}

function sensor (id: number, depth: number, random: () => number): Record<string, unknown> {
  const stationId = 1 + (id % 23)
  return {
    id,
    model: 1000 + (id % 7),
    calibration: random() * 2,
    offset: random() - 0.5,
    range: random() * 1000,
    station: depth >= 1 ? station(stationId, random) : stationId,
  }
}

export const shapes: readonly Shape[] = [
  {
    name: 'string-heavy',
    resource: Article,
    expandByDepth: ['', 'author', 'author.organization'],
    row: (index, depth, random) => {
      const authorId = 1 + (index % 97)
      return {
        id: index + 1,
        title: `${sentence(random, 6)} "${index}"`,
        slug: `article-${index + 1}-compiled-serializers`,
        status: index % 5 === 0 ? 'draft' : 'published',
        summary: sentence(random, 30),
        language: index % 3 === 0 ? 'fr' : 'en',
        author: depth >= 1 ? author(authorId, depth - 1, random) : authorId,
      }
    },
  },
  {
    name: 'number-heavy',
    resource: Reading,
    expandByDepth: ['', 'sensor', 'sensor.station'],
    row: (index, depth, random) => {
      const sensorId = 1 + (index % 89)
      const mean = random() * 100
      return {
        id: index + 1,
        timestamp: 1_700_000_000_000 + index * 60_000,
        value: mean + random(),
        minimum: mean - random() * 10,
        maximum: mean + random() * 10,
        mean,
        deviation: random() * 3,
        samples: Math.floor(random() * 1000),
        quality: Math.floor(random() * 4),
        sensor: depth >= 1 ? sensor(sensorId, depth - 1, random) : sensorId,
      }
    },
  },
]

/** A payload shaped exactly like the response: one object (`rows` 1, not a list) or a list of `rows`. */
export function payloadOf (shape: Shape, rows: number, list: boolean, depth: number): unknown {
  const random = randomSource(7 + rows + depth)
  if (!list) return shape.row(0, depth, random)
  return Array.from({ length: rows }, (_, index) => shape.row(index, depth, random))
}
