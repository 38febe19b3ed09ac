import createError from '@fastify/error'

/** When a code is answered: what the OpenAPI document and the error table (docs/errors.md) group it under. */
export type ErrorGroup = 'request' | 'access' | 'list' | 'loading' | 'not-found' | 'server' | 'unavailable' | 'aborted' | 'startup'

interface ErrorEntry {
  readonly code: `FST_EXPAND_${string}`
  readonly status: number
  /** The @fastify/error template: '%s' where the module that finds the mistake writes the message (see `messages`). */
  readonly template: string
  readonly group: ErrorGroup
  /** Startup mistakes are TypeErrors, as Fastify's own option errors are. */
  readonly typeError?: true
}

/**
 * Every code the plugin answers or throws, once: its status, its template
 * and its group. The error classes below and the code lists the OpenAPI
 * document enumerates are made from this table; the error table in docs/errors.md is
 * tested against it both ways.
 */
export const errorTable = [
  // Request errors: the client sent an expansion the route cannot serve.
  { code: 'FST_EXPAND_UNKNOWN_FIELD', status: 400, template: '%s', group: 'request' },
  { code: 'FST_EXPAND_NOT_PERMITTED', status: 400, template: '%s', group: 'request' },
  { code: 'FST_EXPAND_TOO_DEEP', status: 400, template: '%s', group: 'request' },
  { code: 'FST_EXPAND_RECURSIVE', status: 400, template: '%s', group: 'request' },
  { code: 'FST_EXPAND_MALFORMED', status: 400, template: '%s', group: 'request' },
  // The request names a field that the resource's fieldsFor hides from it.
  { code: 'FST_EXPAND_FORBIDDEN', status: 403, template: '%s', group: 'access' },
  // List routes of `app.expand.routes`: a filter, sort or cursor the route does not take.
  { code: 'FST_EXPAND_BAD_FILTER', status: 400, template: '%s', group: 'list' },
  { code: 'FST_EXPAND_BAD_SORT', status: 400, template: '%s', group: 'list' },
  { code: 'FST_EXPAND_BAD_CURSOR', status: 400, template: '%s', group: 'list' },
  // Found while loading: to-many levels multiply, so only the rows themselves tell how large a response gets.
  { code: 'FST_EXPAND_TOO_LARGE', status: 400, template: '%s', group: 'loading' },
  // The detail route of `app.expand.routes`: no row with that id (or none this request may see).
  { code: 'FST_EXPAND_NOT_FOUND', status: 404, template: '%s', group: 'not-found' },
  // Server errors. Their bodies say what kind of failure it was, never what the data or the driver said.
  // Data a handler (or the database) produced does not fit the plan: the message names the resource and the path.
  { code: 'FST_EXPAND_INVALID_DATA', status: 500, template: '%s', group: 'server' },
  // A statement the plugin ran failed: the driver's error is the `cause` (logged), never the body.
  { code: 'FST_EXPAND_DATABASE_ERROR', status: 500, template: 'Internal Server Error', group: 'server' },
  // A relation's `load` function threw or rejected: the error is the `cause` (logged), never the body.
  {
    code: 'FST_EXPAND_RELATION_LOAD_FAILED',
    status: 500,
    template: 'A relation resolved by a function could not be loaded',
    group: 'server',
  },
  // A route's handler found no plan for its request: the route was not prepared as the plugin registered it.
  { code: 'FST_EXPAND_NO_PLAN', status: 500, template: '%s', group: 'server' },
  // The database cannot be reached (refused, dropped or timed-out connections, a server shutting down, too many
  // connections, a busy SQLite file, a statement cancelled by its time limit): worth retrying, so a 503 with
  // Retry-After; the driver's error is the `cause`.
  { code: 'FST_EXPAND_UNAVAILABLE', status: 503, template: 'Service Unavailable', group: 'unavailable' },
  // The client went away while its relations were being loaded: the remaining statements are not run. Logged only.
  {
    code: 'FST_EXPAND_REQUEST_ABORTED',
    status: 499,
    template: 'The client closed the request before its relations were loaded',
    group: 'aborted',
  },
  // Startup errors: a definition or an option is wrong; raised by defineResource, register() or ready(), never
  // while serving a request.
  { code: 'FST_EXPAND_INVALID_DEFINITION', status: 500, template: '%s', group: 'startup', typeError: true },
  { code: 'FST_EXPAND_INVALID_OPTION', status: 500, template: '%s', group: 'startup', typeError: true },
] as const satisfies readonly ErrorEntry[]

type ErrorRow = typeof errorTable[number]
export type ErrorCode = ErrorRow['code']
type RowOf<C extends ErrorCode> = Extract<ErrorRow, { code: C }>
/** The codes of the rows of group G, in the table's order, as a tuple type. */
type CodesOf<Rows extends readonly ErrorRow[], G extends ErrorGroup> =
  Rows extends readonly [infer Row extends ErrorRow, ...infer Rest extends readonly ErrorRow[]]
    ? Row['group'] extends G ? [Row['code'], ...CodesOf<Rest, G>] : CodesOf<Rest, G>
    : []

const rows = new Map<string, ErrorEntry>(errorTable.map((row) => [row.code, row]))

/** The error class of `code`, made from its row of the table. */
function declareError<C extends ErrorCode, Args extends unknown[] = [string]> (code: C) {
  const { status, template, typeError } = rows.get(code)!
  return typeError === true
    ? createError<C, RowOf<C>['status'], Args>(code, template, status as RowOf<C>['status'], TypeError)
    : createError<C, RowOf<C>['status'], Args>(code, template, status as RowOf<C>['status'])
}

/** The codes of one group, in the table's order. */
function codesOf<G extends ErrorGroup> (group: G): Readonly<CodesOf<typeof errorTable, G>> {
  const codes = errorTable.filter((row) => row.group === group).map((row) => row.code)
  return Object.freeze(codes) as unknown as Readonly<CodesOf<typeof errorTable, G>>
}

export const UnknownFieldError = declareError('FST_EXPAND_UNKNOWN_FIELD')
export const NotPermittedError = declareError('FST_EXPAND_NOT_PERMITTED')
export const TooDeepError = declareError('FST_EXPAND_TOO_DEEP')
export const RecursiveError = declareError('FST_EXPAND_RECURSIVE')
export const MalformedError = declareError('FST_EXPAND_MALFORMED')
export const ForbiddenError = declareError('FST_EXPAND_FORBIDDEN')
export const BadFilterError = declareError('FST_EXPAND_BAD_FILTER')
export const BadSortError = declareError('FST_EXPAND_BAD_SORT')
export const BadCursorError = declareError('FST_EXPAND_BAD_CURSOR')
export const TooLargeError = declareError('FST_EXPAND_TOO_LARGE')
export const NotFoundError = declareError('FST_EXPAND_NOT_FOUND')
export const InvalidDataError = declareError('FST_EXPAND_INVALID_DATA')
export const NoPlanError = declareError('FST_EXPAND_NO_PLAN')
export const DatabaseError = declareError<'FST_EXPAND_DATABASE_ERROR', [{ cause: unknown }]>('FST_EXPAND_DATABASE_ERROR')
export const UnavailableError = declareError<'FST_EXPAND_UNAVAILABLE', [{ cause: unknown }]>('FST_EXPAND_UNAVAILABLE')
export const RelationLoadFailedError =
  declareError<'FST_EXPAND_RELATION_LOAD_FAILED', [{ cause: unknown }]>('FST_EXPAND_RELATION_LOAD_FAILED')
export const RequestAbortedError = declareError<'FST_EXPAND_REQUEST_ABORTED', []>('FST_EXPAND_REQUEST_ABORTED')
export const InvalidDefinitionError = declareError('FST_EXPAND_INVALID_DEFINITION')
export const InvalidOptionError = declareError('FST_EXPAND_INVALID_OPTION')

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

  // Startup: definitions (engine.ts, plan/) and routes (routes/).
  expansionCycle: (resource: string, unit: string) =>
    `The always-applied expansions of ${resource} (nested fields or relation 'expand' options) form a cycle: '${unit}' repeats without end`,
  defaultNotPermitted: (context: string, path: string, permitted: readonly string[], option = 'permitListExpands') =>
    `${context}: default expansion '${path}' is not permitted by ${option} (${permitted.join(', ') || 'none'})`,
  defaultNotPlanned: (context: string, path: string, reason: string) => `${context}: default expansion '${path}': ${reason}`,
  fieldsForNotArray: (resource: string) => `Resource '${resource}': fieldsFor must return an array of field names or undefined`,
  fieldsForUnknown: (resource: string, field: string) => `Resource '${resource}': fieldsFor returned '${field}', which is not in its schema`,
  notARelation: (context: string, path: string, segment: string, resource: string) =>
    `${context}: '${path}' names '${segment}', which is not a relation of ${resource}`,
  pathThroughRemoved: (context: string, path: string, segment: string, relation: string) =>
    `${context}: '${path}' names '${segment}', which ${relation} leaves out (its fields/omit option)`,
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
  badOpenApiRequiredDefaults: (context: string) => `${context}: openApiRequiredDefaults must be a boolean`,
  badResources: 'fastify-expand: resources must be an array of resources',
  badDb: 'fastify-expand: db must be a Kysely instance or a function of the request returning one',
  sameParameterNames: 'fastify-expand: expandParam, fieldsParam and omitParam must differ',

  // routes/expandable-route.ts: a route's `expandable` setting, each message naming the property.
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
  badPermitExpands: (route: string) => `${route}: expandable.permitExpands must be an array of paths`,
  permitExpandsAndListExpands: (route: string) =>
    `${route}: expandable has both permitExpands and permitListExpands: give one (permitExpands restricts any route, permitListExpands list routes only)`,

  // routes/expanded-list-declarations.ts: the expandedLists option of a route, after the route's context.
  expandedListsNotObject: (context: string) =>
    `${context}: expandedLists must be an object of to-many relation paths, each { sort, maxLimit, filter }`,
  expandedListNotObject: (context: string, path: string) => `${context}: expandedLists '${path}' must be an object ({ sort, maxLimit, filter })`,
  unknownExpandedListKey: (context: string, path: string, key: string) =>
    `${context}: expandedLists '${path}' has an unknown option '${key}' (it takes sort, maxLimit and filter)`,
  expandedListNotToMany: (context: string, path: string, reason: string) =>
    `${context}: expandedLists '${path}' is not a path of expandable relations ending in a to-many one: ${reason}`,
  badExpandedMaxLimit: (context: string, path: string) => `${context}: expandedLists '${path}': maxLimit must be a positive integer`,
  expandedListFilterPath: (context: string, path: string, field: string, resource: string) =>
    `${context}: expandedLists '${path}': filter '${field}' must be a field of ${resource} (an expanded list is filtered by its own fields)`,
  expandedListDerived: (context: string, path: string, field: string) =>
    `${context}: expandedLists '${path}': '${field}' is an aggregate or computed field: an expanded array is filtered and ordered by its stored fields`,
  expandedListSortField: (context: string, path: string, field: string) =>
    `${context}: expandedLists '${path}': sort '${field}' must be a non-nullable field of the related resource (an expanded array is ordered by its own columns)`,

  // routes/expandable-route.ts: a body Fastify would send as it is.
  unserializedBody: (resource: string, sent: string) =>
    `Data for ${resource} does not fit the response: the handler sent ${sent}; return the data itself and fastify-expand writes it`,

  // openapi/: expandOpenApi's options and the document it completes.
  openApiComponentPrefix: 'expandOpenApi: componentPrefix may hold letters, digits, dots, dashes and underscores only',
  openApiMaxEnumeratedPaths: 'expandOpenApi: maxEnumeratedPaths must be a positive integer',
  registeredAbove: 'fastify-expand is already registered in this context or one enclosing it (its routes there are the enclosing ' +
    "instance's): register a second instance in a sibling context",
  openApiHiding: 'expandOpenApi: hiddenTag must be a string and hideUntagged a boolean, as given to @fastify/swagger',
  openApiVersion: "expandOpenApi: the transform documents OpenAPI 3 only; give @fastify/swagger an 'openapi' option",
  openApiQuerystringStyle: (route: string, style: string, explode: boolean, expand: string, fields: string, omit: string) =>
    `expandOpenApi: ${route} declares querystring style '${style}'${explode ? '' : ' without explode'}, ` +
    `which @fastify/swagger would apply to '${expand}', '${fields}' and '${omit}' too: they are form style, exploded`,
  openApiComponent: (name: string) =>
    `expandOpenApi: the document already has a component '${name}'; set componentPrefix to keep the resource schemas apart`,

  // parse/list-query.ts and plan/list-plan.ts: the list route's filter, sort and after parameters.
  filterNotOnce: (written: string) => `'${written}' must be given once, as a string`,
  unknownFilter: (resource: string, path: string, filters: readonly string[]) =>
    `Cannot filter ${resource} by '${path}': ${filters.length > 0 ? `filters are ${filters.join(', ')}` : 'this list has no filters'}`,
  badFilterOperator: (resource: string, path: string, operator: string, operators: readonly string[]) =>
    `Cannot filter ${resource} by '${path}' with '${operator}': operators for '${path}' are ${operators.join(', ')}`,
  filterRepeated: (written: string) => `'${written}' is given more than once`,
  tooManyFilters: (limit: number) => `A request takes at most ${limit} filters`,
  notAFilter: (name: string) => `'${name}' is not a filter: write filter[field]=value or filter[field][operator]=value`,
  tooManyValues: (written: string, limit: number) => `'${written}' takes at most ${limit} values`,
  badFilterValue: (written: string, expected: string, raw: string) => `'${written}' must be ${expected}, got '${raw}'`,
  hiddenFilter: (path: string) => `Cannot filter by '${path}': it is not available to this request`,
  sortNotOnce: (param: string) => `'${param}' must be given once, as a comma-separated list`,
  unknownSort: (resource: string, name: string, sortFields: readonly string[]) =>
    `Cannot sort ${resource} by '${name}': ${sortFields.length > 0 ? `sort fields are ${sortFields.join(', ')}` : 'this list has no sort fields'}`,
  sortRepeated: (param: string, name: string) => `'${param}' names '${name}' more than once`,
  hiddenSort: (name: string) => `Cannot sort by '${name}': it is not available to this request`,
  noPlan: (route: string, missing: 'plan' | 'list part') =>
    `Route ${route} reached its handler without ${missing === 'plan' ? 'a plan for its request' : "the list part of its request's plan"}: ` +
    'the route was not prepared as fastify-expand registered it (an onRoute hook may have changed its expandable option or its config)',
  // parse/expanded-list-query.ts and plan/expanded-list-plan.ts: sort[path], limit[path] and where[path.field] of expanded lists.
  notAnExpandedListParameter: (name: string) =>
    `'${name}' is not a parameter of an expanded list: write sort[path]=-field,field, limit[path]=n, ` +
    'where[path.field]=value or where[path.field][operator]=value',
  badExpandedLimit: (written: string) => `'${written}' must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`,
  expandedListNotDeclared: (written: string, resource: string, declared: readonly string[]) =>
    `Cannot use '${written}' on ${resource}: ${declared.length > 0 ? `expanded lists are ${declared.join(', ')}` : 'it has no expanded lists'}`,
  expandedListNotExpanded: (written: string, path: string) => `Cannot use '${written}': this request does not expand '${path}'`,
  listQueryNotObject: (what: string) => `The query of a list route is not an object: a hook replaced request.query with ${what}`,
  cursorBothWays: (after: string, before: string) => `'${after}' and '${before}' together: a page follows one cursor, give one of them`,
  badCursor: (param: string) => `'${param}' is not a cursor of this list for this sort and these filters: ask again from the first page`,

  // load/list-query.ts: the filter and sort options of routes(), after the route's context.
  shortCursorSecret: 'cursorSecret must be a string or a Buffer of at least 16 characters (bytes)',
  badCursorBinding: 'cursorBinding must be a function of the request returning a string',
  cursorBindingWithOffset: 'cursorBinding applies to cursor pages only',
  cursorBindingNotString: (type: string) => `fastify-expand: cursorBinding must return a string, not ${type}`,
  filterOptionNotObject: 'filter must be an object of field: operators',
  filterNotRelation: (at: string, segment: string, resource: string) =>
    `${at}: '${segment}' is not a relation of ${resource} to a table whose keys the plugin knows (a to-one column, a to-many foreignKey, or through)`,
  filterThroughCompositeKey: (at: string, relation: string) =>
    `${at}: '${relation}' reads a composite key, which list filters do not follow yet`,
  existsNeedsRelation: (at: string, field: string) =>
    `${at}: 'exists' needs a relation to a table whose keys the plugin knows, and '${field}' is not one`,
  noSuchField: (at: string, resource: string, field: string) => `${at}: ${resource} has no field '${field}'`,
  notAColumn: (at: string, field: string, resource: string) => `${at}: '${field}' is not a column of ${resource}'s table`,
  badFilterFieldType: (at: string, field: string) => `${at}: '${field}' must be an integer, number, boolean or string field (optionally nullable)`,
  noFilterOperators: (at: string, operators: readonly string[]) =>
    `${at}: give an array of operators (${operators.join(', ')}), or { operators, containsMaxLength }`,
  unknownFilterKey: (at: string, key: string) => `${at}: unknown key '${key}' (a filter takes operators and containsMaxLength)`,
  badContainsMaxLength: (at: string, limit: number) => `${at}: containsMaxLength must be an integer from 1 to ${limit}`,
  unknownFilterOperator: (at: string, operator: string, operators: readonly string[]) =>
    `${at}: unknown operator '${operator}' (operators are ${operators.join(', ')})`,
  containsNeedsString: (at: string) => `${at}: 'contains' needs a string field`,
  comparisonOnBoolean: (at: string, operator: string) => `${at}: '${operator}' does not apply to a boolean field`,
  filterThroughFunction: (at: string, segment: string, resource: string) =>
    `${at}: '${segment}' of ${resource} is resolved by a function (load): its rows are in no table a statement reads, so a list cannot filter by them`,
  sortOptionNotArray: 'sort must be an array of field names',
  badSortFieldType: (name: string) => `sort: '${name}' must be an integer, number, boolean or string field (optionally nullable)`,
  sortNotRelation: (name: string, segment: string, resource: string) =>
    `sort: '${name}': '${segment}' is not a relation of ${resource} to a table`,
  sortThroughFunction: (name: string, segment: string, resource: string) =>
    `sort: '${name}' goes through '${segment}' of ${resource}, which is resolved by a function (load): its rows are in no table a statement reads, so they cannot order a list`,
  sortThroughCompositeKey: (name: string, segment: string) =>
    `sort: '${name}' goes through '${segment}', a to-one relation over a composite key, which list sorts do not follow yet`,
  sortThroughMany: (name: string, segment: string) =>
    `sort: '${name}' goes through '${segment}', a to-many relation: a row has many related rows, so none of their values orders it (sort through to-one relations only)`,

  // graph/resource-graph.ts: the resources as a whole and the references between them, at startup.
  duplicateResourceName: (name: string) => `Two different resources are named '${name}': give one a namespace or another name`,
  unregisteredResource: (context: string, name: string, registered: string) =>
    `${context}: resource '${name}' is not registered (registered: ${registered})`,
  anotherResourceOfName: (context: string, name: string) =>
    `${context}: resource '${name}' is not the one registered under that name (another defineResource call made it): ` +
    'name the registered one, or register this one',
  ambiguousReference: (context: string, reference: string, candidates: readonly string[]) =>
    `${context}: '${reference}' is ambiguous, use one of ${candidates.map((name) => `'${name}'`).join(', ')}`,
  relationOptionUnknownField: (context: string, option: string, field: string, resource: string) =>
    `${context}: ${option} names '${field}', which ${resource} does not have`,
  referenceThrew: (context: string, reason: string) => `${context}: the reference function threw: ${reason}`,
  referenceNotResource: (context: string) => `${context}: the reference function did not return a resource`,
  notAResource: (context: string) => `${context} is not a resource made by defineResource`,
  relationExpandNotARelation: (context: string, path: string, segment: string, resource: string) =>
    `${context}: expand '${path}' names '${segment}', which is not a relation of ${resource}`,
  relationExpandRemoved: (context: string, path: string, segment: string, relation: string) =>
    `${context}: expand '${path}' names '${segment}', which ${relation} leaves out (its fields/omit option)`,
  targetWithoutTable: (context: string, target: string, owner: string) =>
    `${context}: ${target} has no table, so it cannot be loaded from ${owner}'s table; give ${target} a table`,
  toManyWithoutKeys: (context: string, target: string, table: string, owner: string) =>
    `${context}: a to-many relation loaded from ${target}'s table needs foreignKey (the column of ${table} holding the ${owner}'s key) ` +
    'or through (a join table: { table, from, to })',
  primaryKeyNotInSchema: (context: string, owner: string, primaryKey: string) =>
    `${context}: the related rows are found by ${owner}'s primary key '${primaryKey}', which is not in its schema; ` +
    'set primaryKey to the field holding the key',

  // routes/resource-routes.ts: the options of routes(), after the route's context.
  routesNeedDb: "the plugin needs the 'db' option (a Kysely instance) to serve resource routes",
  unknownRoutesOption: (name: string) => `unknown option '${name}'`,
  pageSizeNotPositive: (option: string) => `${option} must be a positive integer`,
  pageSizeAboveMax: 'maxPageSize must be no smaller than pageSize',
  badPagination: "pagination must be 'offset' or 'cursor'",
  badTotal: 'total must be a boolean',
  totalWithCursor: 'total applies to offset pages only: cursor pages have none',
  routeNotObject: 'route must be an object of route options',
  unknownRouteOptionKey: (name: string, known: readonly string[]) =>
    `route: '${name}' is not passed on to the generated routes (they take ${known.join(', ')})`,
  badRouteHook: (hook: string) => `route.${hook} must be a function or an array of functions`,
  routeConfigNotObject: 'route.config must be an object',
  routeConfigExpandable: "route.config.expandable is the generated routes' own setting: use the options of routes()",
  routeSchemaNotObject: 'route.schema must be an object',
  routeSchemaNotDocumentation: (key: string, documentation: readonly string[]) =>
    `route.schema.${key}: the generated routes own their parameters and responses; route.schema takes documentation only (${documentation.join(', ')})`,

  // routes/resource-routes.ts: while serving the generated routes.
  unstorableFilterValue: 'A filter value does not fit its column in the database',
  notFound: (resource: string, id: string) => `${resource} ${id} not found`,

  // load/: the rows given to load, the loading itself, and the cachePreparedStatements option.
  rowsLackReference: (owner: string, field: string, column: string, target: string) =>
    `${owner} rows given to load lack ${column === field ? `'${column}'` : `'${field}' or its column '${column}'`}, ` +
    `which holds the ${target} of '${field}'`,
  rowsLackReferenceColumns: (owner: string, field: string, columns: readonly string[], target: string) =>
    `${owner} rows given to load lack '${field}' or its columns ${columns.map((column) => `'${column}'`).join(', ')}, ` +
    `which hold the ${target} of '${field}'`,
  rowsLackPrimaryKey: (owner: string, primaryKey: string) =>
    `${owner} rows given to load lack their primary key '${primaryKey}', which to-many relations are loaded by`,
  roundedKey: (owner: string, field: string) =>
    `${owner} '${field}' holds a key past 2^53 - 1 as a JavaScript number, which holds it only rounded: ` +
    `declare '${field}' Type.String() to read it as its exact text`,
  tooLarge: (limit: number) => `The expanded relations would hold more than ${limit} objects: expand fewer relations or ask for a smaller page`,
  noTable: (resource: string) => `Resource '${resource}' has no table: give it 'table' to load it from the database`,
  toManyNotLoadable: (resource: string, field: string) =>
    `Resource '${resource}', field '${field}': a to-many relation needs foreignKey or through to be loaded`,
  unknownStatementOption: (owner: string, name: string) => `${owner}: unknown option '${name}'`,
  // load/function-relations.ts: what a relation's `load` function returned.
  loadNotAMap: (relation: string, returned: string, many: boolean) =>
    `The load function of ${relation} returned ${returned}, expected a Map from key to ${many ? 'an array of rows' : 'row'}`,
  loadValueNotRow: (relation: string, value: string) => `The load function of ${relation} gave ${value} for a key, expected a row (an object) or null`,
  loadValueNotRows: (relation: string, value: string) => `The load function of ${relation} gave ${value} for a key, expected an array of rows (objects)`,
  statementOptionNotPositive: (owner: string, name: string, value: string) => `${owner}: ${name} must be a positive integer, got ${value}`,

  // index.ts: request.expansion assigned.
  expansionReplaced: 'request.expansion cannot be replaced: it holds what the plugin planned for the request, and only that',

  // graph/resource.ts: defineResource's definition, after "Resource '<name>': ".
  definitionNotObject: 'the definition must be an object',
  unknownDefinitionOption: (name: string, known: readonly string[]) => `unknown option '${name}' (known: ${known.join(', ')})`,
  badResourceName: 'name must be an identifier',
  badNamespace: 'namespace must be a dotted identifier',
  badSchema: 'schema must be a TypeBox Type.Object (@sinclair/typebox 0.34 or typebox 1.x)',
  fieldNotInSchema: (where: string, field: string) => `${where} names field '${field}', which is not in its schema`,
  notFieldNames: (option: string) => `${option} must be an array of field names`,
  fieldListedTwice: (field: string) => `fields lists '${field}' twice`,
  expandableAndNested: (field: string) => `field '${field}' is both expandable and nested`,
  nestedNotInFields: (field: string) => `nested field '${field}': nested fields are always shown: list '${field}' in fields`,
  badMaxDepth: 'maxDepth must be a positive integer',
  notATableName: (what: string, value: string, rule: string) => `${what} '${value}' must be a table name (${rule})`,
  notAColumnName: (what: string, value: string, rule: string) => `${what} '${value}' must be a column name (${rule})`,
  primaryKeyNotInItsSchema: (primaryKey: string) => `primaryKey '${primaryKey}' is not in its schema`,
  badCompositeKey: (fields: readonly string[]) =>
    `primaryKey [${fields.join(', ')}] must be one field, or the fields of a composite key: two or more field names, each once`,
  compositeKeyPartType: (field: string) =>
    `primaryKey part '${field}' must be an integer or a string field: a composite key's identifier writes each part's value`,
  keyColumnCount: (what: string, columns: readonly string[], owner: string, parts: readonly string[]) =>
    `${what} names ${columns.length} column${columns.length === 1 ? '' : 's'} (${columns.join(', ')}), but ${owner}'s primary key has ` +
    `${parts.length} part${parts.length === 1 ? '' : 's'} (${parts.join(', ')}): name one column per part, in the key's order`,
  compositeKeyNotSupported: (option: string) => `a relation over a composite key does not take ${option} yet`,
  keyPartIsRelation: (field: string) =>
    `primaryKey part '${field}' is a relation, whose field holds the related row once expanded: ` +
    'declare the key part as a field of its own (a relation may read the same column)',
  keyColumnsTooFew: (what: string) => `${what} must be a column name, or the columns of a composite key (two or more)`,
  badColumns: 'columns must map fields to column names',
  toManyColumn: (field: string) =>
    `columns.${field}: '${field}' is a to-many relation, which has no column of its own: its rows are found by foreignKey or through`,
  twoColumns: (field: string, column: string, relationColumn: string) =>
    `field '${field}' is given two columns, columns.${field} '${column}' and the relation's column '${relationColumn}': keep one`,
  primaryKeyNotIdentifier: (primaryKey: string, rule: string) => `primaryKey '${primaryKey}' must be a field whose name is an identifier (${rule})`,
  badCasing: (casing: string, casings: readonly string[]) =>
    `casing '${casing}' is not one of ${casings.join(', ')}, nor a function from a field to its column`,
  casedNotAColumnName: (field: string, column: unknown, rule: string) =>
    `field '${field}' is read from the column casing gives it, '${String(column)}', which is not a column name (${rule}): map it in columns`,
  fieldNotAColumnName: (field: string, rule: string) =>
    `field '${field}' is read from the column of the same name, which is not a column name (${rule}): map it in columns`,
  reservedName: (kind: string, name: string) =>
    `${kind} '${name}' begins with __expand_, which the statements of fastify-expand keep for their own names: rename it`,
  notARequestFunction: (option: string) => `${option} must be a function of the request`,
  scopeNeedsTable: 'scope needs a table: it is a condition on the rows the plugin reads',
  derivedNeedsTable: 'aggregates and computed fields need a table: the database computes them',
  derivedTwice: (name: string) => `'${name}' is both an aggregate and a computed field`,
  derivedInSchema: (where: string, name: string) =>
    `${where}.${name} is also a field of schema: a derived field is declared once, in ${where}, and typed from it`,
  badDerivedMap: (where: string) => `${where} must be an object of field name -> definition`,
  badAggregate: (functions: readonly string[]) => `an aggregate is an object with exactly one of ${functions.join(', ')}`,
  badAggregateArgument: (fn: string) => fn === 'count'
    ? 'count takes the name of a to-many relation: { count: \'pets\' }'
    : `${fn} takes a to-many relation and a field of the related resource: { ${fn}: ['pets', 'born'] }`,
  aggregateWhereNotFunction: 'where must be a function of an expression builder, returning a condition on the related table',
  badComputed: (name: string) => `computed.${name} must be { schema, sql }: sql a function of an expression builder`,
  belowDerivedOption: (at: string, path: string) => `${at}: '${path}' is an aggregate or computed value, with no fields below it`,
  derivedThroughRelation: (at: string, field: string, resource: string) =>
    `${at}: '${field}' is an aggregate or computed field of ${resource}: a list filters and sorts by those of its own resource only`,
  belowDerived: (path: string, field: string) => `'${path}': '${field}' is an aggregate or computed value, with no fields below it`,
  aggregateNotLoadable: (context: string, relation: string) =>
    `${context}: '${relation}' cannot be aggregated: its resource needs a table, and the relation a foreignKey or through`,
  aggregateOverCompositeKey: (context: string, relation: string) =>
    `${context}: '${relation}' reads a composite key, which aggregates do not follow yet`,
  aggregateFieldNotColumn: (context: string, field: string, target: string) =>
    `${context}: '${field}' is not a value field of ${target}`,
  aggregateNotNumeric: (context: string, fn: string, field: string) =>
    `${context}: ${fn} needs a number or integer field, and '${field}' is not one`,
  aggregateNotToMany: (name: string, relation: string) =>
    `aggregates.${name} reads '${relation}', which is not a to-many relation of this resource (expandable or nested, many: true)`,

  // graph/resource.ts: a relation of expandable or nested, after "<expandable|nested> field '<field>': " (relationField).
  badRelationMap: (where: string) => `${where} must map field names to relations`,
  relationField: (where: string, field: string, message: string) => `${where} field '${field}': ${message}`,
  manyNeedsArray: (field: string) => `many: true needs an array schema: declare '${field}' as Type.Array of the related identifier, or remove many`,
  arrayNeedsMany: (field: string) =>
    `its schema is an array, so the relation is to-many: add many: true, or declare '${field}' as the related identifier`,
  badReference: (reference: string) => `'${reference}' is not a resource, a resource name or a function returning a resource`,
  badRelationTuple: 'a relation tuple is [resource, options]',
  relationOptionsNotObject: 'relation options must be an object',
  badMany: 'many must be a boolean',
  badOrderBy: (orderBy: string, rule: string) =>
    `orderBy '${orderBy}' must be a column name (${rule}), or '-' and a column name for descending order`,
  orderByNeedsMany: 'orderBy orders the rows of a to-many relation: it needs many: true',
  badRelationLimit: (limit: string) => `limit ${limit} must be a positive integer (the most related rows shown per parent)`,
  limitNeedsMany: 'limit bounds the rows of a to-many relation: it needs many: true',
  limitNeedsKeys: 'limit bounds the rows loaded from the database: it needs foreignKey or through',
  badThrough: 'through must be { table, from, to }',
  unknownThroughOption: (name: string, known: readonly string[]) => `through has an unknown option '${name}' (known: ${known.join(', ')})`,
  throughNeedsMany: 'through needs many: true',
  foreignKeyNeedsMany: 'foreignKey needs many: true',
  foreignKeyAndThrough: 'a relation has either foreignKey or through, not both',
  columnOnToMany: 'column is for to-one relations; a to-many relation takes foreignKey or through',
  badLoad: 'load must be a function (keys, { request, signal }) returning a Promise of a Map from key to row (or to rows with many: true)',
  loadWithKeys: (option: string) =>
    `load resolves the relation itself: ${option} is for relations read from the database; remove it (a to-one load may take column, the column holding its key)`,
} as const

/** Every code a request's query string can be answered with (400), whatever the data. */
export const requestErrorCodes = codesOf('request')

/** Codes a request can get from its caller's access rules (`fieldsFor`): 403. */
export const accessErrorCodes = codesOf('access')

/** Codes the list route of `app.expand.routes` answers for its `filter`, `sort` and `after` parameters. */
export const listErrorCodes = codesOf('list')

/** Codes a request can get while its relations are loaded (`app.expand.load`, `app.expand.routes`). */
export const loadingErrorCodes = codesOf('loading')

/** Codes of a 500 the plugin itself answers: data that does not fit the plan, a failed statement. */
export const serverErrorCodes = codesOf('server')

/** Codes of a 503 the plugin answers when the database cannot be reached (with a Retry-After header). */
export const unavailableErrorCodes = codesOf('unavailable')

export type RequestErrorCode = typeof requestErrorCodes[number]
