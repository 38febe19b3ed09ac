import {
  accessErrorCodes,
  listErrorCodes,
  loadingErrorCodes,
  requestErrorCodes,
  serverErrorCodes,
  unavailableErrorCodes,
} from '../errors.js'
import type { JsonSchema, ResourceNode } from '../graph/resource-graph.js'
import type { GeneratedListRoute, GeneratedRoute } from '../routes/generated-route.js'

/** The error statuses an expandable route may answer, each with its body; 403, 404 and 414 only where the route can answer them. */
export interface ErrorResponses {
  400: JsonSchema
  403?: JsonSchema
  404?: JsonSchema
  414?: JsonSchema
  500: JsonSchema
  503: JsonSchema
}

/** What decides a route's error statuses beyond its resource. */
export interface ErrorSources {
  /** The route validates some part of the request (Fastify's 400 `FST_ERR_VALIDATION`). */
  readonly validated: boolean
  /** The route's URL has path parameters (Fastify's 414 `FST_ERR_MAX_PARAM_LENGTH`). */
  readonly pathParameters: boolean
  /** What the route carries when `app.expand.routes` registered it. */
  readonly generated: GeneratedRoute | undefined
  /** The route declares `expandedLists`: it answers their `sort[...]` (bad sort) and `limit[...]`, `where[...]` (bad filter). */
  readonly expandedLists?: boolean
}

/** The error responses of a route showing `node`. */
export function errorResponses (node: ResourceNode, sources: ErrorSources): ErrorResponses {
  const { generated } = sources
  const responses: ErrorResponses = {
    400: requestErrorSchema(sources.validated, generated?.kind === 'list'
      ? listCodes(generated)
      : sources.expandedLists === true ? expandedListCodes : []),
    500: serverErrorSchema(generated !== undefined),
    503: unavailableSchema(),
  }
  if (generated?.kind === 'detail') responses[404] = notFoundSchema(node)
  if (reachesFieldRules(node)) responses[403] = forbiddenSchema()
  if (sources.pathParameters || generated?.kind === 'detail') responses[414] = uriTooLongSchema()
  return responses
}

/** Fastify's error body: `{ statusCode, code, error, message }`. */
function errorBody (description: string, statusCode: number, code: JsonSchema, codeRequired: boolean): JsonSchema {
  return {
    description,
    type: 'object',
    properties: {
      statusCode: { type: 'integer', enum: [statusCode] },
      code,
      error: { type: 'string' },
      message: { type: 'string' },
    },
    required: codeRequired ? ['statusCode', 'code', 'error', 'message'] : ['statusCode', 'error', 'message'],
  }
}

function requestErrorSchema (validated: boolean, listErrors: readonly string[]): JsonSchema {
  // Any expandable route may load through app.expand.load, which bounds the response size.
  const codes: string[] = [...requestErrorCodes, ...loadingErrorCodes, ...listErrors]
  if (validated) codes.push('FST_ERR_VALIDATION')
  // Fastify's own: a URL whose percent escapes do not decode (`/toys/%`), answered before any hook of the route.
  codes.push('FST_ERR_BAD_URL')
  const summary = 'Invalid expand, fields or omit, a response over maxObjects, another invalid parameter, or a malformed URL'
  return errorBody(summary, 400, { type: 'string', enum: codes }, true)
}

/**
 * The list errors a generated list route can answer: every list reads
 * filter[...] and sort (refusing undeclared ones); cursor lists read after.
 */
const listCodesOf = {
  offset: listErrorCodes.filter((code) => code !== 'FST_EXPAND_BAD_CURSOR'),
  cursor: [...listErrorCodes],
} satisfies Record<GeneratedListRoute['pagination'], readonly string[]>

/** What a route with `expandedLists` answers for `sort[...]`, `limit[...]` and `where[...]` (a list route's own codes hold them). */
const expandedListCodes = listErrorCodes.filter((code) => code !== 'FST_EXPAND_BAD_CURSOR')

function listCodes (route: GeneratedListRoute): readonly string[] {
  return listCodesOf[route.pagination]
}

/** Whether the resource, or one it can reach through relations, decides per request which fields are shown. */
function reachesFieldRules (node: ResourceNode): boolean {
  const seen = new Set<ResourceNode>()
  const visit = (current: ResourceNode): boolean => {
    if (seen.has(current)) return false
    seen.add(current)
    if (current.resource.fieldsFor !== undefined) return true
    for (const relation of current.relations.values()) if (visit(relation.target)) return true
    return false
  }
  return visit(node)
}

/** Any expandable route may load through the plugin: a database out of reach is a 503 with Retry-After. */
function unavailableSchema (): JsonSchema {
  const summary = 'The database cannot be reached now: retry after the seconds of its Retry-After header'
  return errorBody(summary, 503, { type: 'string', enum: [...unavailableErrorCodes] }, true)
}

function forbiddenSchema (): JsonSchema {
  return errorBody('expand or fields names a field this request may not see', 403, { type: 'string', enum: [...accessErrorCodes] }, true)
}

/** Fastify's answer to a path parameter over its `maxParamLength` server option (default 100). */
function uriTooLongSchema (): JsonSchema {
  return errorBody('A path parameter longer than the server allows', 414, { type: 'string', enum: ['FST_ERR_MAX_PARAM_LENGTH'] }, true)
}

function notFoundSchema (node: ResourceNode): JsonSchema {
  return errorBody(`No ${node.name} with this identifier`, 404, { type: 'string', enum: ['FST_EXPAND_NOT_FOUND'] }, true)
}

/**
 * 500: data that does not fit the plan (FST_EXPAND_INVALID_DATA) or a
 * statement that failed (FST_EXPAND_DATABASE_ERROR; any route may load through
 * app.expand.load). The routes of app.expand.routes answer no other 500; an
 * application's handler may throw anything, and Fastify writes the error's
 * own code, or none, so there `code` is any string and may be absent.
 */
function serverErrorSchema (generated: boolean): JsonSchema {
  const codes = [...serverErrorCodes]
  const description = 'Data that does not fit the response, or a failed database statement'
  if (generated) return errorBody(description, 500, { type: 'string', enum: codes }, true)
  return errorBody(`${description}, or an error of the handler`, 500, {
    type: 'string',
    description: `${codes.join(' or ')} from fastify-expand; another code (or none) from the handler`,
  }, false)
}
