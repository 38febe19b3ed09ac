import fastJson from 'fast-json-stringify'
import { LruMap } from 'toad-cache'
import type { ExpansionPlan } from '../plan/plan.js'
import type { JsonSchema } from '../graph/resource-graph.js'
import { compileCheckedProjection } from './checked-projection.js'
import { compileDataCheck } from './data-check.js'
import { genericWriter } from './generic-writer.js'
import { compileDateTimeNormaliser } from './date-times.js'
import { cannotProject, compileProjection } from './projection.js'
import { responseSchema } from './response-schema.js'

export type Stringify = (data: unknown) => string

/**
 * fast-json-stringify's options: its generated code. Its `objectMechanism:
 * 'native'` (a projection of its own, on V8 13.8+) is not used: it covers
 * less than projection.ts (no nullable objects, no `integer | null`, no open
 * envelope) and writes a string of a `date` or `time` field escaped twice
 * (test/compile/mechanisms.test.ts).
 */
export const compileOptions = {} as const

/**
 * How a combination's bodies are written, after the data check:
 * - 'fast-json-stringify': the code fast-json-stringify generated from the
 *   response schema (with `compileOptions`);
 * - 'projection': the data copied into the response's shape by a function
 *   compiled from that same schema (projection.ts), then `JSON.stringify`.
 * Both write the same bytes (test/compile/mechanisms.test.ts).
 */
export type SerializerMechanism = 'fast-json-stringify' | 'projection'

const [v8Major = 0, v8Minor = 0] = String(process.versions.v8).split('.').map(Number)

/** V8 13.8 introduced the side-effect-free JSON.stringify fast path. */
export const hasJsonStringifyFastPath = v8Major * 100 + v8Minor >= 1308

/**
 * From V8 12 (Node 22), a copy and JSON.stringify write one object with
 * strings faster than fast-json-stringify's generated code (1.3-1.9x on the
 * benchmarks' objects on Node 22 and 24); on V8 11 (Node 20) slower (0.7-1.0x).
 */
const projectsOneObject = v8Major >= 12

/**
 * The mechanism of a combination on this runtime, by the measurements in
 * benchmarks/profile-notes.md. Where JSON.stringify has its fast path, the
 * projection. Before V8 13.8, JSON.stringify escapes strings natively where
 * fast-json-stringify's generated code escapes them in JavaScript (about 2x
 * slower on string-heavy lists), while the generated code writes numbers
 * faster than JSON.stringify's general path: the projection for a response
 * with a string anywhere (before V8 12, for lists only: the generated code
 * writes one object faster there), the generated code for the rest.
 */
export function chooseMechanism (schema: JsonSchema, list: boolean): SerializerMechanism {
  if (hasJsonStringifyFastPath) return 'projection'
  return (list || projectsOneObject) && writesStrings(schema) ? 'projection' : 'fast-json-stringify'
}

/** How this runtime chooses, for reports: `chooseMechanism` in a sentence. */
export const runtimeMechanism = hasJsonStringifyFastPath
  ? 'projection (V8 13.8+: JSON.stringify fast path)'
  : projectsOneObject
    ? 'projection for responses with strings, else fast-json-stringify generated code (V8 12 to 13.7)'
    : 'projection for lists with strings, else fast-json-stringify generated code (V8 before 12)'

function writesStrings (schema: JsonSchema): boolean {
  if (schema.type === 'string') return true
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties !== undefined && Object.values(properties).some(writesStrings)) return true
  const items = schema.items as JsonSchema | undefined
  return items !== undefined && typeof items === 'object' && !Array.isArray(items) && writesStrings(items)
}

export interface CompiledSerializer {
  readonly stringify: Stringify
  /** What writes the bodies: `mechanism` unless the combination is not covered by the projection. */
  readonly mechanism: SerializerMechanism
  /** The generated source of the projection that writes the bodies (checked in the same pass where the plan allows), when one does. */
  readonly projection: string | undefined
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
  const project = checked.project
  return {
    stringify: (data) => {
      let projected: unknown
      try {
        projected = project(data)
      } catch (error) {
        if (error !== cannotProject) throw error
        check(data)
        return write(data)
      }
      return JSON.stringify(projected)
    },
    mechanism: 'projection',
    projection: checked.source,
  }
}

/**
 * The writer of a response schema with a mechanism: the projection when it
 * covers the schema, else fast-json-stringify's generated code. A projection
 * leaves a body it cannot reproduce exactly to fast-json-stringify (compiled
 * the first time it is needed), so the bytes are fast-json-stringify's for any
 * data, fitting the schema or not.
 */
export function compileWriter (schema: JsonSchema, mechanism: SerializerMechanism): CompiledSerializer {
  const projection = mechanism === 'projection' ? compileProjection(schema) : undefined
  if (projection === undefined) {
    return { stringify: generatedWriter(schema), mechanism: 'fast-json-stringify', projection: undefined }
  }
  const project = projection.project
  let generated: Stringify | undefined
  return {
    stringify: (data) => {
      let projected: unknown
      try {
        projected = project(data)
      } catch (error) {
        if (error !== cannotProject) throw error
        generated ??= generatedWriter(schema)
        return generated(data)
      }
      return JSON.stringify(projected)
    },
    mechanism: 'projection',
    projection: projection.source,
  }
}

/**
 * fast-json-stringify's generated code for a schema, given the data with its
 * date-time texts in the one form the projections write too (date-times.ts).
 */
function generatedWriter (schema: JsonSchema): Stringify {
  const write = fastJson(schema, compileOptions) as Stringify
  const normalise = compileDateTimeNormaliser(schema)
  return normalise === undefined ? write : (data) => write(normalise(data))
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
    this.misses++
    if (!this.mayCompile()) {
      const generic = genericWriter(plan, () => this.compile(plan).stringify)
      if (generic !== undefined) return generic
    }
    return this.compile(plan).stringify
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
