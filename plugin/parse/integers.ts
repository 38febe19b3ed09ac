/**
 * The integer parameters of the generated routes (`limit`, `offset`, `:id`),
 * read by the routes' validator (route-parameters.ts) and again by the list
 * part of a request's query (list-query.ts), which a hook may have changed
 * since: both answer a value out of range with the same 400.
 */

const digits = /^-?[0-9]{1,16}$/

/**
 * An integer query parameter as the query holds it when the request is
 * planned: a safe integer from `minimum`, undefined when absent, or the 400
 * the validator gives (as Fastify completes it).
 */
export function integerParameter (query: Record<string, unknown>, name: string, minimum: number): number | undefined {
  const raw = query[name]
  if (raw === undefined) return undefined
  const value = safeInteger(raw, minimum)
  if (value === undefined) {
    throw Object.assign(integerError(name, minimum), { statusCode: 400, code: 'FST_ERR_VALIDATION', validationContext: 'querystring' })
  }
  return value
}

export function integerError (name: string, minimum: number): Error {
  return new Error(`querystring/${name} must be an integer from ${minimum} to ${Number.MAX_SAFE_INTEGER}`)
}

/** A decimal integer (as text, or already a number) from `minimum` to 2^53 - 1; undefined otherwise. */
export function safeInteger (value: unknown, minimum: number): number | undefined {
  const number = typeof value === 'number' ? value : typeof value === 'string' && digits.test(value) ? Number(value) : NaN
  return Number.isSafeInteger(number) && number >= minimum ? number : undefined
}
