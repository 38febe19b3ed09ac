import createError from '@fastify/error'

// Request errors: the client sent an expansion the route cannot serve.
export const UnknownFieldError = createError<'FST_EXPAND_UNKNOWN_FIELD', 400, [string]>('FST_EXPAND_UNKNOWN_FIELD', '%s', 400)
export const NotPermittedError = createError<'FST_EXPAND_NOT_PERMITTED', 400, [string]>('FST_EXPAND_NOT_PERMITTED', '%s', 400)
export const TooDeepError = createError<'FST_EXPAND_TOO_DEEP', 400, [string]>('FST_EXPAND_TOO_DEEP', '%s', 400)
export const RecursiveError = createError<'FST_EXPAND_RECURSIVE', 400, [string]>('FST_EXPAND_RECURSIVE', '%s', 400)
export const MalformedError = createError<'FST_EXPAND_MALFORMED', 400, [string]>('FST_EXPAND_MALFORMED', '%s', 400)
// The request names a field that the resource's fieldsFor hides from it.
export const ForbiddenError = createError<'FST_EXPAND_FORBIDDEN', 403, [string]>('FST_EXPAND_FORBIDDEN', '%s', 403)
// List routes of `app.expand.routes`: a filter, sort or cursor the route does not take.
export const BadFilterError = createError<'FST_EXPAND_BAD_FILTER', 400, [string]>('FST_EXPAND_BAD_FILTER', '%s', 400)
export const BadSortError = createError<'FST_EXPAND_BAD_SORT', 400, [string]>('FST_EXPAND_BAD_SORT', '%s', 400)
export const BadCursorError = createError<'FST_EXPAND_BAD_CURSOR', 400, [string]>('FST_EXPAND_BAD_CURSOR', '%s', 400)
// Found while loading: to-many levels multiply, so only the rows themselves tell how large a response gets.
export const TooLargeError = createError<'FST_EXPAND_TOO_LARGE', 400, [string]>('FST_EXPAND_TOO_LARGE', '%s', 400)
// The detail route of `app.expand.routes`: no row with that id (or none this request may see).
export const NotFoundError = createError<'FST_EXPAND_NOT_FOUND', 404, [string]>('FST_EXPAND_NOT_FOUND', '%s', 404)

// Server errors. Their bodies say what kind of failure it was, never what the data or the driver said.
// Data a handler (or the database) produced does not fit the plan: the message names the resource and the path.
export const InvalidDataError = createError<'FST_EXPAND_INVALID_DATA', 500, [string]>('FST_EXPAND_INVALID_DATA', '%s', 500)
// The database cannot be reached (refused, dropped or timed-out connections, a server shutting down, too many
// connections, a busy SQLite file): worth retrying, so a 503 with Retry-After; the driver's error is the `cause`.
export const UnavailableError = createError<'FST_EXPAND_UNAVAILABLE', 503, [{ cause: unknown }]>(
  'FST_EXPAND_UNAVAILABLE', 'Service Unavailable', 503)
// The client went away while its relations were being loaded: the remaining statements are not run. Logged only.
export const RequestAbortedError = createError<'FST_EXPAND_REQUEST_ABORTED', 499, []>(
  'FST_EXPAND_REQUEST_ABORTED', 'The client closed the request before its relations were loaded', 499)
// A statement the plugin ran failed: the driver's error is the `cause` (logged), never the body.
export const DatabaseError = createError<'FST_EXPAND_DATABASE_ERROR', 500, [{ cause: unknown }]>(
  'FST_EXPAND_DATABASE_ERROR', 'Internal Server Error', 500)

// Startup errors: a definition or an option is wrong; raised by defineResource,
// register() or ready(), never while serving a request.
export const InvalidDefinitionError = createError<'FST_EXPAND_INVALID_DEFINITION', 500, [string]>(
  'FST_EXPAND_INVALID_DEFINITION', '%s', 500, TypeError)
export const InvalidOptionError = createError<'FST_EXPAND_INVALID_OPTION', 500, [string]>('FST_EXPAND_INVALID_OPTION', '%s', 500, TypeError)

/**
 * The wording of the messages, in one place. One code covers several mistakes
 * (an unknown name in `expand` or in `fields`), so each message is a template
 * of its own, filled by the module that finds the mistake.
 */
export const messages = {
  // parse/: the query string's form.
  bracketForm: (key: string, name: string) =>
    `'${key}' is not a form of '${name}': send ${name}=a,b, repeat ${name}, or use ${name}[]`,
  notAList: (name: string) => `'${name}' must be a comma-separated list of field paths`,
  tooLong: (name: string, length: number, limit: number) => `'${name}' is ${length} characters long; the limit is ${limit}`,
  emptySegment: (name: string, item: string) => `'${name}' has an empty segment in '${item}'`,
  tooManyPaths: (name: string, limit: number) => `'${name}' names more than ${limit} paths`,

  // plan/: the paths against the resources.
  tooDeep: (path: string, limit: number) => `Cannot expand '${path}': the maximum expansion depth is ${limit}`,
  tooManyRelations: (limit: number) => `The request expands more than ${limit} relations`,
  noMatchBelow: (path: string, resource: string, permittedOnly: boolean, name: string) =>
    `Cannot expand '${path}' on ${resource}: no relation ${permittedOnly ? 'permitted ' : ''}at that level has '${name}'`,
  hiddenRelation: (path: string, resource: string) => `Cannot expand '${path}' on ${resource}: it is not available to this request`,
  notExpandable: (path: string, resource: string, expandable: readonly string[]) =>
    `Cannot expand '${path}' on ${resource}: ${expandable.length > 0 ? `expandable fields are ${expandable.join(', ')}` : 'it has no expandable fields'}`,
  recursive: (path: string, name: string) => `Cannot expand '${path}': '${name}' repeats in the path and recursive expansion is disabled`,
  notPermitted: (path: string, list: boolean, resource: string, permitted: readonly string[]) =>
    `Cannot expand '${path}' on ${list ? 'a list of ' : ''}${resource}: permitted expansions are ${permitted.join(', ') || 'none'}`,
  hiddenField: (path: string, param: string) => `Field '${path}' in '${param}' is not available to this request`,
  unknownField: (path: string, param: string, resource: string, shown: readonly string[]) =>
    `Unknown field '${path}' in '${param}': ${resource} has ${shown.join(', ')}`,
  wildcardNotLast: (param: string, wildcard: string, path: string) =>
    `'${param}' takes a wildcard only at the end of a path ('${wildcard}', 'owner.${wildcard}'), not in '${path}'`,
  wildcardInOmit: (param: string, path: string) => `'${param}' takes field names, not the wildcard in '${path}'`,

  // Startup: definitions (engine.ts, plan/) and routes (route.ts, route-declarations.ts).
  expansionCycle: (resource: string, unit: string) =>
    `The always-applied expansions of ${resource} (nested fields or relation 'expand' options) form a cycle: '${unit}' repeats without end`,
  defaultNotPermitted: (context: string, path: string, permitted: readonly string[]) =>
    `${context}: default expansion '${path}' is not permitted by permitListExpands (${permitted.join(', ') || 'none'})`,
  defaultNotPlanned: (context: string, path: string, reason: string) => `${context}: default expansion '${path}': ${reason}`,
  fieldsForNotArray: (resource: string) => `Resource '${resource}': fieldsFor must return an array of field names or undefined`,
  fieldsForUnknown: (resource: string, field: string) => `Resource '${resource}': fieldsFor returned '${field}', which is not in its schema`,
  notARelation: (context: string, path: string, segment: string, resource: string) =>
    `${context}: '${path}' names '${segment}', which is not a relation of ${resource}`,
  alwaysExpandFails: (resource: string, expand: string, reason: string) =>
    `Resource '${resource}': expanding '${expand}' with its always-applied expansions fails: ${reason}`,
  successSchema: (context: string, statuses: readonly string[]) =>
    `${context}: schema.response declares ${statuses.map((status) => `'${status}'`).join(', ')}, ` +
    "but an expandable route's success body is written by fastify-expand for each request: " +
    'remove it (expandOpenApi documents the body), or declare error statuses (4xx, 5xx) only',
  querystringSchema: (context: string, expand: string, fields: string, omit: string) =>
    `${context}: schema.querystring must be an object schema ({ type: 'object', properties }) so that fastify-expand can declare ` +
    `'${expand}', '${fields}' and '${omit}' in it`,
  notPrepared: (routes: readonly string[]) =>
    `${routes.join(', ')} ${routes.length === 1 ? 'is' : 'are'} expandable but no fastify-expand instance prepared ` +
    `${routes.length === 1 ? 'it' : 'them'}: register the plugin before declaring expandable routes, in the same context or an enclosing one`,

  // options.ts: the plugin's options, each message naming the option.
  pluginOptionsNotObject: 'fastify-expand: options must be an object',
  unknownPluginOption: (name: string) => `fastify-expand: unknown option '${name}'`,
  notAParameterName: (option: string) => `fastify-expand: ${option} must be a query parameter name`,
  notAPositiveInteger: (option: string) => `fastify-expand: ${option} must be a positive integer`,
  badWildcards: 'fastify-expand: wildcards must be an array of tokens without dots, commas or spaces, or null',
  badOnInvalidExpand: "fastify-expand: onInvalidExpand must be 'error' or 'ignore'",
  badAllowRecursive: 'fastify-expand: allowRecursive must be a boolean',
  badResources: 'fastify-expand: resources must be an array of resources',
  badDb: 'fastify-expand: db must be a Kysely instance or a function of the request returning one',
  sameParameterNames: 'fastify-expand: expandParam, fieldsParam and omitParam must differ',

  // route.ts: a route's `expandable` setting, each message naming the property.
  routeSettingNotObject: (route: string) => `${route}: expandable must be an object`,
  unknownRouteOption: (route: string, name: string) => `${route}: expandable has an unknown option '${name}'`,
  badRouteResource: (route: string) => `${route}: expandable.resource must be a resource or a resource name`,
  badRouteList: (route: string) => `${route}: expandable.list must be a boolean`,
  badRouteEnvelope: (route: string) => `${route}: expandable.envelope must be a property name`,
  envelopeNeedsList: (route: string) => `${route}: expandable.envelope needs list: true`,
  badPermitListExpands: (route: string) => `${route}: expandable.permitListExpands must be an array of paths`,
  permitListExpandsNeedsList: (route: string) =>
    `${route}: expandable.permitListExpands needs list: true (detail routes are never restricted by it)`,
  badDefaultExpand: (route: string) => `${route}: expandable.defaultExpand must be an array of paths`,

  // route.ts: a body Fastify would send as it is.
  unserializedBody: (resource: string, sent: string) =>
    `Data for ${resource} does not fit the response: the handler sent ${sent}; return the data itself and fastify-expand writes it`,

  // openapi/: expandOpenApi's options and the document it completes.
  openApiComponentPrefix: 'expandOpenApi: componentPrefix may hold letters, digits, dots, dashes and underscores only',
  openApiMaxEnumeratedPaths: 'expandOpenApi: maxEnumeratedPaths must be a positive integer',
  openApiVersion: "expandOpenApi: the transform documents OpenAPI 3 only; give @fastify/swagger an 'openapi' option",
  openApiQuerystringStyle: (route: string, style: string, explode: boolean, expand: string, fields: string, omit: string) =>
    `expandOpenApi: ${route} declares querystring style '${style}'${explode ? '' : ' without explode'}, ` +
    `which @fastify/swagger would apply to '${expand}', '${fields}' and '${omit}' too: they are form style, exploded`,
  openApiComponent: (name: string) =>
    `expandOpenApi: the document already has a component '${name}'; set componentPrefix to keep the resource schemas apart`,
} as const

/** Every code a request's query string can be answered with (400), whatever the data. */
export const requestErrorCodes = [
  'FST_EXPAND_UNKNOWN_FIELD',
  'FST_EXPAND_NOT_PERMITTED',
  'FST_EXPAND_TOO_DEEP',
  'FST_EXPAND_RECURSIVE',
  'FST_EXPAND_MALFORMED',
] as const

/** Codes a request can get from its caller's access rules (`fieldsFor`): 403. */
export const accessErrorCodes = ['FST_EXPAND_FORBIDDEN'] as const

/** Codes the list route of `app.expand.routes` answers for its `filter`, `sort` and `after` parameters. */
export const listErrorCodes = ['FST_EXPAND_BAD_FILTER', 'FST_EXPAND_BAD_SORT', 'FST_EXPAND_BAD_CURSOR'] as const

/** Codes a request can get while its relations are loaded (`app.expand.load`, `app.expand.routes`). */
export const loadingErrorCodes = ['FST_EXPAND_TOO_LARGE'] as const

/** Codes of a 500 the plugin itself answers: data that does not fit the plan, a failed statement. */
export const serverErrorCodes = ['FST_EXPAND_INVALID_DATA', 'FST_EXPAND_DATABASE_ERROR'] as const

/** Codes of a 503 the plugin answers when the database cannot be reached (with a Retry-After header). */
export const unavailableErrorCodes = ['FST_EXPAND_UNAVAILABLE'] as const

export type RequestErrorCode = typeof requestErrorCodes[number]
