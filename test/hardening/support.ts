import { Ajv } from 'ajv'
import type { Test } from 'tap'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { requestErrorCodes, type ExpandPluginOptions } from '../../plugin/index.js'
import { responseSchema } from '../../plugin/compile/response-schema.js'
import { planRequest } from '../../plugin/plan/request-plan.js'
import type { ExpansionPlan } from '../../plugin/plan/plan.js'
import { resources } from '../fixtures/pets.js'
import { buildApp, MemoryStore } from '../helpers/app.js'
import { petRecords, petRelations } from '../helpers/pet-world.js'

/** The 400 codes a request may be answered with; anything else from bad input is a bug. */
export const documentedCodes: ReadonlySet<string> = new Set(requestErrorCodes)

type StoredRecord = Record<string, unknown>

/**
 * The records of test/helpers/pet-world.ts with more to trip over: Acme's
 * name needs escaping (a quote, U+2028, an emoji), Liz has empty hobbies and
 * an employer (99) that does not exist, and a third pet belongs to her. Each
 * carries a property no resource declares (`password`, `ssn`, `internal`),
 * which must never be written.
 */
export const records: Record<string, Record<number, StoredRecord>> = {
  ...petRecords,
  Company: { ...petRecords.Company, 4: { ...petRecords.Company![4], name: 'Acme "Ltd" \u2028 \u{1F600}' } },
  Person: { ...petRecords.Person, 9: { id: 9, name: 'Liz', hobbies: '', employer: 99, ssn: '789' } },
  Pet: { ...petRecords.Pet, 3: { id: 3, name: 'Nermal', species: 'cat', owner: 9, sold_from: 5, toys: [2], password: 'hash3' } },
}

/** The records as a handler would load them: exactly what isExpanded says, undeclared properties included. */
export const store = new MemoryStore(records, petRelations)

export const listPermits = ['owner.employer', 'toys']

export interface PetApp {
  app: FastifyInstance
  /** The plan of the last request that reached a handler. */
  lastPlan(): ExpansionPlan | null
}

/**
 * `GET /pets/:id` (detail) and `GET /pets` (list, permitListExpands
 * owner.employer and toys) over the plain pets fixture.
 */
export async function buildPetApp (options: Omit<ExpandPluginOptions, 'resources'> = {}, server: FastifyServerOptions = {}): Promise<PetApp> {
  let plan: ExpansionPlan | null = null
  const app = await buildApp({ resources, ...options }, (app) => {
    app.get<{ Params: { id: string } }>('/pets/:id', { expandable: { resource: 'Pet' } }, async (request, reply) => {
      plan = planRequest(request)?.expansion ?? null
      const pet = store.get('Pet', Number(request.params.id))
      if (pet === undefined) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: 'no such pet' })
      return store.shape(request, 'Pet', pet)
    })
    app.get('/pets', { expandable: { resource: 'Pet', list: true, permitListExpands: listPermits } }, async (request) => {
      plan = planRequest(request)?.expansion ?? null
      return store.shapeAll(request, 'Pet')
    })
  }, server)
  return { app, lastPlan: () => plan }
}

const ajv = new Ajv({ strict: false, allErrors: true })

/** Whether `body` validates against the JSON schema of `plan`'s combination, made strict: every property required, no other. */
export function validatesAgainstPlan (plan: ExpansionPlan, body: unknown): { valid: boolean; errors: string } {
  const validate = ajv.compile(strictSchema(responseSchema(plan)))
  const valid = validate(body)
  return { valid, errors: valid ? '' : ajv.errorsText(validate.errors) }
}

function strictSchema (schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.type === 'object' && typeof schema.properties === 'object' && schema.properties !== null && schema.additionalProperties === undefined) {
    const properties: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
      properties[key] = strictSchema(value)
    }
    return { ...schema, properties, required: Object.keys(properties), additionalProperties: false }
  }
  if (schema.type === 'array' && typeof schema.items === 'object' && schema.items !== null) {
    return { ...schema, items: strictSchema(schema.items as Record<string, unknown>) }
  }
  return schema
}

/**
 * The body a plan stands for, read from the stored records by walking the
 * plan (an expanded relation's id is looked up in the records of its target):
 * the serializer's output must equal it exactly.
 */
export function shapeByPlan (plan: ExpansionPlan, data: StoredRecord | StoredRecord[]): unknown {
  const level = (levelPlan: ExpansionPlan['root'], record: StoredRecord | undefined): unknown => {
    if (record === undefined) return null
    const shaped: StoredRecord = {}
    for (const field of levelPlan.fields) {
      const value = record[field.name]
      if (field.kind !== 'expanded') {
        shaped[field.name] = value
        continue
      }
      const related = (id: unknown) => level(field.level, records[field.relation.target.name][id as number])
      shaped[field.name] = field.relation.many ? (value as unknown[]).map(related) : related(value)
    }
    return shaped
  }
  return Array.isArray(data) ? data.map((item) => level(plan.root, item)) : level(plan.root, data)
}

/** Object.prototype as it is now: a snapshot to compare after adversarial input. */
export function prototypeSnapshot (): string[] {
  return Object.getOwnPropertyNames(Object.prototype).sort()
}

export function assertNoPollution (t: Test, before: string[]): void {
  t.equal((({}) as Record<string, unknown>).polluted, undefined, '({}).polluted is undefined')
  t.same(prototypeSnapshot(), before, 'Object.prototype has the same own properties')
  t.equal(Object.getPrototypeOf({}), Object.prototype)
}

/**
 * fast-check parameters: modest runs in `npm test`; FC_RUNS=n for a longer
 * hunt, FC_SEED=n to replay the seed a failure printed.
 */
export function propertyParameters (numRuns: number): { numRuns: number; seed?: number } {
  const runs = process.env.FC_RUNS === undefined ? numRuns : Number(process.env.FC_RUNS)
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED)
  return seed === undefined ? { numRuns: runs } : { numRuns: runs, seed }
}

/** The garbage collector, when this process can obtain it (tests run without --expose-gc). */
export async function obtainGc (): Promise<(() => void) | undefined> {
  // From V8 14 (Node 25+), the compilation cache keeps every distinct compiled source
  // (each serializer's) until the heap nears its limit, then lets it go: heap readings
  // would show V8's cache, not what the plugin keeps. Without it they show the plugin's.
  const v8 = await import('node:v8')
  v8.setFlagsFromString('--no-compilation-cache')
  const exposed = (globalThis as { gc?: () => void }).gc
  if (typeof exposed === 'function') return exposed
  try {
    const vm = await import('node:vm')
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as unknown
    return typeof gc === 'function' ? gc as () => void : undefined
  } catch {
    return undefined
  }
}

/**
 * Heap used after a full collection, in bytes. The event loop turns first:
 * a loop of awaited injections never yields to it, and what each injection
 * releases on a later turn would otherwise count as growth.
 */
export async function settledHeap (gc: () => void): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, 10))
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
