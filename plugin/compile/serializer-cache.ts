import fastJson from 'fast-json-stringify'
import { LruMap } from 'toad-cache'
import type { ExpansionPlan } from '../plan/plan.js'
import { compileDataCheck } from './data-check.js'
import { responseSchema } from './response-schema.js'

export type Stringify = (data: unknown) => string

/**
 * Where V8 has the side-effect-free JSON.stringify fast path (13.8+, Node 25+),
 * 'native' copies each object into a schema-shaped scratch object and lets
 * JSON.stringify write it; the output is the same bytes. A schema with a part
 * it does not cover (a to-one relation that may be null, an envelope open to
 * other properties) keeps the generated code, and on older runtimes the
 * option does nothing.
 */
export const compileOptions = { objectMechanism: 'native' } as const

export interface CacheStats {
  /** Compiled serializers held now (at most `cacheSize`). */
  size: number
  hits: number
  misses: number
  compiles: number
}

/**
 * One compiled fast-json-stringify function per canonical plan key, in a
 * bounded LRU. Requests that mean the same thing share an entry.
 */
export class SerializerCache {
  private readonly entries: LruMap<Stringify>
  private hits = 0
  private misses = 0
  private compiles = 0

  constructor (size: number) {
    this.entries = new LruMap<Stringify>(size)
  }

  get (plan: ExpansionPlan): Stringify {
    const cached = this.entries.get(plan.key)
    if (cached !== undefined) {
      this.hits++
      return cached
    }
    this.misses++
    const compiled = this.compile(plan)
    this.entries.set(plan.key, compiled)
    return compiled
  }

  /** The generated source of the writer (the data check runs before it), for `explain`. */
  source (plan: ExpansionPlan): string {
    // Debug mode returns the generated code instead of the function.
    const debug = fastJson(responseSchema(plan), { ...compileOptions, mode: 'debug' }) as unknown as { code: string }
    return debug.code
  }

  stats (): CacheStats {
    return { size: this.entries.size, hits: this.hits, misses: this.misses, compiles: this.compiles }
  }

  private compile (plan: ExpansionPlan): Stringify {
    this.compiles++
    const write = fastJson(responseSchema(plan), compileOptions) as Stringify
    const check = compileDataCheck(plan)
    return (data) => {
      check(data)
      return write(data)
    }
  }
}
