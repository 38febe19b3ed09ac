import type { FastifyInstance } from 'fastify'
import type { ExpandPluginOptions } from '../../plugin/index.js'
import { resources } from '../fixtures/pets.js'
import { buildApp, MemoryStore, type StoredRelation } from './app.js'

/** How the pet records refer to each other: relation field -> stored type, per type. */
export const petRelations: Record<string, Record<string, StoredRelation>> = {
  Pet: { owner: { type: 'Person' }, sold_from: { type: 'PetStore' }, toys: { type: 'Toy', many: true } },
  Person: { employer: { type: 'Company' } },
}

/**
 * The records behind test/fixtures/pets.ts. Every record also carries a
 * property no resource declares (`password`, `ssn`, `internal`) so tests can
 * see that undeclared properties never reach the client.
 */
export const petRecords: Record<string, Record<number, Record<string, unknown>>> = {
  Company: {
    3: { id: 3, name: 'McDonalds', public: false, internal: 'x' },
    4: { id: 4, name: 'Acme', public: true, internal: 'y' },
  },
  Person: {
    7: { id: 7, name: 'Fred', hobbies: 'sailing', employer: 3, ssn: '123' },
    8: { id: 8, name: 'Jon', hobbies: 'lasagna', employer: 4, ssn: '456' },
  },
  PetStore: {
    5: { id: 5, name: 'PetCo', address: '1 Main St' },
  },
  Toy: {
    1: { id: 1, name: 'paper ball', secret: 's1' },
    2: { id: 2, name: 'string', secret: 's2' },
  },
  Pet: {
    1: { id: 1, name: 'Garfield', species: 'cat', owner: 8, sold_from: null, toys: [1, 2], password: 'hash1' },
    2: { id: 2, name: 'Odie', species: 'dog', owner: 7, sold_from: 5, toys: [], password: 'hash2' },
  },
}

export const petStore = new MemoryStore(petRecords, petRelations)

/** Each record as the default response writes it. */
export const defaults = {
  garfield: { id: 1, name: 'Garfield', species: 'cat', owner: 8, sold_from: null, toys: [1, 2] },
  odie: { id: 2, name: 'Odie', species: 'dog', owner: 7, sold_from: 5, toys: [] },
  jon: { id: 8, name: 'Jon', hobbies: 'lasagna' },
  fred: { id: 7, name: 'Fred', hobbies: 'sailing' },
  acme: { name: 'Acme', public: true },
  mcdonalds: { name: 'McDonalds', public: false },
  petco: { id: 5, name: 'PetCo' },
  toys: [{ id: 1, name: 'paper ball' }, { id: 2, name: 'string' }],
} as const

export interface PetRouteSettings {
  permitListExpands?: string[]
  envelope?: string
}

/**
 * The pet domain served as `GET /pets/:id` (detail) and `GET /pets` (list,
 * restricted by `permitListExpands` when given), handlers shaping their data
 * by `isExpanded`.
 */
export async function buildPetApp (
  pluginOptions: Omit<ExpandPluginOptions, 'resources'> = {},
  list: PetRouteSettings = {}
): Promise<FastifyInstance> {
  return buildApp({ resources, ...pluginOptions }, (app) => {
    app.get<{ Params: { id: string } }>('/pets/:id', { expandable: { resource: 'Pet' } }, async (request, reply) => {
      const pet = petStore.get('Pet', request.params.id)
      if (pet === undefined) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: 'no such pet' })
      return petStore.shape(request, 'Pet', pet)
    })
    app.get('/pets', {
      expandable: { resource: 'Pet', list: true, permitListExpands: list.permitListExpands, envelope: list.envelope },
    }, async (request) => {
      const data = petStore.shapeAll(request, 'Pet')
      return list.envelope === undefined ? data : { [list.envelope]: data, total: data.length, next: null }
    })
  })
}
