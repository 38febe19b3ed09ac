import fastJson from 'fast-json-stringify'
import { LruMap } from 'toad-cache'
import type { ExpansionPlan } from '../plan/plan.js'
import { compileCheckedProjection } from './checked-projection.js'
import { compileDataCheck } from './data-check.js'
import { genericWriter } from './generic-writer.js'
import {
  chooseMechanism, compileOptions, compileWriter, projectedWriter, type CompiledWriter, type SerializerMechanism, type Stringify,
} from './mechanisms.js'
import { responseSchema } from './response-schema.js'
import type { WriterKind } from '../trace/channels.js'

export type { SerializerMechanism, Stringify } from './mechanisms.js'

export type CompiledSerializer = CompiledWriter

/** A serializer as the cache answered it: what writes its bodies, and whether the cache held it. */
export interface SerializerLookup {
  readonly stringify: Stringify
  readonly mechanism: WriterKind
  readonly cached: boolean
}

/**
 * One combination's serializer: the data check, then the writer of the
 * mechanism asked for (by default the one `chooseMechanism` picks). Where the
 * projection writes, the check and the copy run as one pass
 * (checked-projection.ts); a body that pass does not take goes through the
 * two as they are, which name what does not fit or write its rarer forms.
 */
export function compileSerializer (plan: ExpansionPlan, mechanism?: SerializerMechanism): CompiledSerializer {
  const schema = responseSchema(plan)
  const check = compileDataCheck(plan)
  const writer = compileWriter(schema, mechanism ?? chooseMechanism(schema, plan.target.list))
  const write = writer.stringify
  const checked = writer.mechanism === 'projection' ? compileCheckedProjection(plan) : undefined
  if (checked === undefined) {
    return {
      stringify: (data) => {
        check(data)
        return write(data)
      },
      mechanism: writer.mechanism,
      projection: writer.projection,
    }
  }
  return {
    stringify: projectedWriter(checked.project, (data) => {
      check(data)
      return write(data)
    }),
    mechanism: 'projection',
    projection: checked.source,
  }
}

export interface CacheStats {
  /** Compiled serializers held now (at most `cacheSize`). */
  size: number
  hits: number
  /** Requests of a combination not held: compiled, or past `maxCompilesPerSecond` written by the generic writer. */
  misses: number
  compiles: number
}

/**
 * One compiled serializer per canonical plan key, in a bounded LRU. Requests
 * that mean the same thing share an entry. Compiles are bounded in time by a
 * token bucket (`maxCompilesPerSecond`, as many held at most): past it, a
 * combination not held is written by the generic writer (generic-writer.ts,
 * the same bytes, nothing compiled) and counted as a miss, so a client
 * sending ever new combinations cannot make the process compile without end.
 * A combination whose schema the generic writer does not cover, or a body it
 * cannot reproduce, is compiled even then.
 */
export class SerializerCache {
  private readonly entries: LruMap<CompiledSerializer>
  private hits = 0
  private misses = 0
  private compiles = 0
  private tokens: number
  private filledAt: number

  constructor (
    size: number,
    private readonly compileRate: number = Infinity,
    private readonly now: () => number = performance.now.bind(performance)
  ) {
    this.entries = new LruMap<CompiledSerializer>(size)
    this.tokens = compileRate
    this.filledAt = now()
  }

  get (plan: ExpansionPlan): Stringify {
    const cached = this.entries.get(plan.key)
    if (cached !== undefined) {
      this.hits++
      return cached.stringify
    }
    return this.missed(plan).stringify
  }

  /** `get`, telling what writes the bodies and whether the cache held it: for the serialize channel (trace/channels.ts). */
  lookup (plan: ExpansionPlan): SerializerLookup {
    const cached = this.entries.get(plan.key)
    if (cached !== undefined) {
      this.hits++
      return { stringify: cached.stringify, mechanism: cached.mechanism, cached: true }
    }
    const { stringify, mechanism } = this.missed(plan)
    return { stringify, mechanism, cached: false }
  }

  /** A combination the cache does not hold: compiled, or past the compile rate written by the generic writer. */
  private missed (plan: ExpansionPlan): { stringify: Stringify; mechanism: WriterKind } {
    this.misses++
    if (!this.mayCompile()) {
      const generic = genericWriter(plan, () => this.compile(plan).stringify)
      if (generic !== undefined) return { stringify: generic, mechanism: 'generic' }
    }
    return this.compile(plan)
  }

  /** The combination's serializer with the mechanism that writes its bodies (for `explain`). */
  compiled (plan: ExpansionPlan): CompiledSerializer {
    const cached = this.entries.get(plan.key)
    if (cached !== undefined) {
      this.hits++
      return cached
    }
    this.misses++
    return this.compile(plan)
  }

  private compile (plan: ExpansionPlan): CompiledSerializer {
    const held = this.entries.get(plan.key)
    if (held !== undefined) return held
    this.compiles++
    const compiled = compileSerializer(plan)
    this.entries.set(plan.key, compiled)
    return compiled
  }

  /** Takes a token of the bucket, refilled at `compileRate` a second up to `compileRate`; false when there is none. */
  private mayCompile (): boolean {
    if (this.compileRate === Infinity) return true
    const now = this.now()
    this.tokens = Math.min(this.compileRate, this.tokens + (now - this.filledAt) * this.compileRate / 1000)
    this.filledAt = now
    if (this.tokens < 1) return false
    this.tokens--
    return true
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
}
