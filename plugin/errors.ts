import createError from '@fastify/error'

// Request errors: the client sent an expansion the route cannot serve.
export const UnknownFieldError = createError<'FST_EXPAND_UNKNOWN_FIELD', 400, [string]>('FST_EXPAND_UNKNOWN_FIELD', '%s', 400)
export const NotPermittedError = createError<'FST_EXPAND_NOT_PERMITTED', 400, [string]>('FST_EXPAND_NOT_PERMITTED', '%s', 400)
export const TooDeepError = createError<'FST_EXPAND_TOO_DEEP', 400, [string]>('FST_EXPAND_TOO_DEEP', '%s', 400)
export const RecursiveError = createError<'FST_EXPAND_RECURSIVE', 400, [string]>('FST_EXPAND_RECURSIVE', '%s', 400)
export const MalformedError = createError<'FST_EXPAND_MALFORMED', 400, [string]>('FST_EXPAND_MALFORMED', '%s', 400)
// Found while loading: to-many levels multiply, so only the rows themselves tell how large a response gets.
export const TooLargeError = createError<'FST_EXPAND_TOO_LARGE', 400, [string]>('FST_EXPAND_TOO_LARGE', '%s', 400)

// Startup errors: a definition or an option is wrong; raised by defineResource,
// register() or ready(), never while serving a request.
export const InvalidDefinitionError = createError<'FST_EXPAND_INVALID_DEFINITION', 500, [string]>('FST_EXPAND_INVALID_DEFINITION', '%s', 500, TypeError)
export const InvalidOptionError = createError<'FST_EXPAND_INVALID_OPTION', 500, [string]>('FST_EXPAND_INVALID_OPTION', '%s', 500, TypeError)

/** Every code a request's query string can be answered with (400), whatever the data. */
export const requestErrorCodes = [
  'FST_EXPAND_UNKNOWN_FIELD',
  'FST_EXPAND_NOT_PERMITTED',
  'FST_EXPAND_TOO_DEEP',
  'FST_EXPAND_RECURSIVE',
  'FST_EXPAND_MALFORMED',
] as const

/** Codes a request can get while its relations are loaded (`app.expand.load`, `app.expand.routes`). */
export const loadingErrorCodes = ['FST_EXPAND_TOO_LARGE'] as const

export type RequestErrorCode = typeof requestErrorCodes[number]
