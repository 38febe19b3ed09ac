import fastJson from 'fast-json-stringify'
import type { JsonSchema } from '../graph/resource-graph.js'
import { compileDateTimeNormaliser } from './date-times.js'
import { compileProjection } from './projection.js'
import { leftToGeneratedCode } from './value-rules.js'

export type Stringify = (data: unknown) => string

/**
 * How a combination's bodies are written, after the data check:
 * - 'fast-json-stringify': the code fast-json-stringify generated from the
 *   response schema (with `compileOptions`);
 * - 'projection': the data copied into the response's shape by a function
 *   compiled from that same schema (projection.ts), then `JSON.stringify`.
 * Both write the same bytes (test/compile/mechanisms.test.ts).
 */
export type SerializerMechanism = 'fast-json-stringify' | 'projection'

/**
 * fast-json-stringify's options: its generated code. Its `objectMechanism:
 * 'native'` (a projection of its own, on V8 13.8+) is not used: it covers
 * less than projection.ts (no nullable objects, no `integer | null`, no open
 * envelope) and writes a string of a `date` or `time` field escaped twice
 * (test/compile/mechanisms.test.ts).
 */
export const compileOptions = {} as const

export interface CompiledWriter {
  readonly stringify: Stringify
  /** What writes the bodies: the mechanism asked for, or the generated code where that one does not cover the schema. */
  readonly mechanism: SerializerMechanism
  /** The generated source of the projection that writes the bodies, when one does. */
  readonly projection: string | undefined
}

interface Mechanism {
  /** The writer of a response schema by this mechanism; undefined where it does not cover the schema. */
  readonly compile: (schema: JsonSchema) => CompiledWriter | undefined
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

/** Each mechanism, with how it is compiled and what it covers. */
export const mechanisms = {
  'fast-json-stringify': {
    // Covers every schema response-schema.ts builds.
    compile: (schema) => ({ stringify: generatedWriter(schema), mechanism: 'fast-json-stringify', projection: undefined }),
  },
  projection: {
    /*
     * Covers what compileProjection covers. A body it cannot reproduce exactly
     * is left to fast-json-stringify (compiled the first time it is needed),
     * so the bytes are fast-json-stringify's for any data, fitting or not.
     */
    compile: (schema) => {
      const projection = compileProjection(schema)
      if (projection === undefined) return undefined
      let generated: Stringify | undefined
      return {
        stringify: projectedWriter(projection.project, (data) => {
          generated ??= generatedWriter(schema)
          return generated(data)
        }),
        mechanism: 'projection',
        projection: projection.source,
      }
    },
  },
} as const satisfies Record<SerializerMechanism, Mechanism>

/**
 * A writer that copies the body with `project` and hands the copy to
 * `JSON.stringify`; a body the copy leaves to the generated code
 * (`leftToGeneratedCode`) is written by `otherwise`.
 */
export function projectedWriter (project: (data: unknown) => unknown, otherwise: Stringify): Stringify {
  return (data) => {
    let projected: unknown
    try {
      projected = project(data)
    } catch (error) {
      if (error !== leftToGeneratedCode) throw error
      return otherwise(data)
    }
    return JSON.stringify(projected)
  }
}

/** The writer of a response schema by a mechanism, or by the generated code where that one does not cover it. */
export function compileWriter (schema: JsonSchema, mechanism: SerializerMechanism): CompiledWriter {
  return mechanisms[mechanism].compile(schema) ?? mechanisms['fast-json-stringify'].compile(schema)
}

/**
 * The runtimes that choose differently, by the measurements in
 * benchmarks/profile-notes.md:
 * - 'json-fast-path' (V8 13.8+, Node 25+): JSON.stringify's side-effect-free
 *   fast path writes a copy faster than any generated code: the projection.
 * - 'native-escaping' (V8 12 to 13.7, Node 22 and 24): JSON.stringify escapes
 *   strings natively where the generated code escapes them in JavaScript
 *   (about 2x slower on string-heavy lists), while the generated code writes
 *   numbers faster than JSON.stringify's general path: the projection for a
 *   response with a string anywhere, the generated code for the rest.
 * - 'native-escaping-lists' (V8 11, Node 20): as above for lists; one object
 *   keeps the generated code, which writes it faster there (a copy and
 *   JSON.stringify 0.7-1.0x of it).
 */
export type RuntimeTier = 'json-fast-path' | 'native-escaping' | 'native-escaping-lists'

interface RuntimeChoice {
  /** `choose` in a sentence, for reports. */
  readonly description: string
  readonly choose: (schema: JsonSchema, list: boolean) => SerializerMechanism
}

export const runtimeChoices = {
  'json-fast-path': {
    description: 'projection (V8 13.8+: JSON.stringify fast path)',
    choose: () => 'projection',
  },
  'native-escaping': {
    description: 'projection for responses with strings, else fast-json-stringify generated code (V8 12 to 13.7)',
    choose: (schema) => writesStrings(schema) ? 'projection' : 'fast-json-stringify',
  },
  'native-escaping-lists': {
    description: 'projection for lists with strings, else fast-json-stringify generated code (V8 before 12)',
    choose: (schema, list) => list && writesStrings(schema) ? 'projection' : 'fast-json-stringify',
  },
} as const satisfies Record<RuntimeTier, RuntimeChoice>

/** The tier of a V8 version (`process.versions.v8`). */
export function runtimeTierOf (v8Version: string): RuntimeTier {
  const [major = 0, minor = 0] = v8Version.split('.').map(Number)
  if (major * 100 + minor >= 1308) return 'json-fast-path'
  return major >= 12 ? 'native-escaping' : 'native-escaping-lists'
}

export const runtimeTier = runtimeTierOf(String(process.versions.v8))

/** V8 13.8 introduced the side-effect-free JSON.stringify fast path. */
export const hasJsonStringifyFastPath = runtimeTier === 'json-fast-path'

/** The mechanism of a combination on this runtime. */
export function chooseMechanism (schema: JsonSchema, list: boolean): SerializerMechanism {
  return runtimeChoices[runtimeTier].choose(schema, list)
}

/** How this runtime chooses, for reports. */
export const runtimeMechanism = runtimeChoices[runtimeTier].description

function writesStrings (schema: JsonSchema): boolean {
  if (schema.type === 'string') return true
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties !== undefined && Object.values(properties).some(writesStrings)) return true
  const items = schema.items as JsonSchema | undefined
  return items !== undefined && typeof items === 'object' && !Array.isArray(items) && writesStrings(items)
}
