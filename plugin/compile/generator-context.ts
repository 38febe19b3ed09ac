import { compileWithHelpers } from './value-rules.js'

/**
 * What every generator of this folder threads through its pure functions
 * while it writes the source of one combination (fast-json-stringify's model):
 * the functions made so far, each named once, then compiled together with
 * the runtime helpers of value-rules.ts in scope. The source only ever holds
 * names and paths of the definitions, each as a JSON string literal, never
 * request input.
 */
export class GeneratorContext {
  private readonly functions: string[] = []
  private counter = 0
  private readonly shared = new Map<string, string>()

  /** Adds a function named `prefix` and a number, its source written by `source` from that name; returns the name. */
  define (prefix: string, source: (name: string) => string): string {
    const name = `${prefix}${this.counter++}`
    this.functions.push(source(name))
    return name
  }

  /** As `define`, once per `key`: functions of the same source are shared (a list of the same items). */
  defineOnce (prefix: string, key: string, source: (name: string) => string): string {
    let name = this.shared.get(`${prefix}:${key}`)
    if (name === undefined) {
      name = this.define(prefix, source)
      this.shared.set(`${prefix}:${key}`, name)
    }
    return name
  }

  /** The functions, then `tail` (the statement returning what was compiled). */
  source (tail: string): string {
    return `${this.functions.join('\n')}\n${tail}`
  }

  /** Compiles the functions and `tail`; returns what `tail` returns, with the source. */
  compile<T> (tail: string): { readonly compiled: T, readonly source: string } {
    const source = this.source(tail)
    return { compiled: compileWithHelpers(source) as T, source }
  }
}
