import { listBodySchema, type EnvelopeShape } from '../compile/response-schema.js'
import type { JsonSchema, ResourceNode } from '../graph/resource-graph.js'
import type { GeneratedListRoute, GeneratedRoute } from '../routes/generated-route.js'
import type { CursorPage, ListPage } from '../routes/list-pages.js'
import { defaultExample } from './level-schemas.js'

/** How the route wraps its items, as its `expandable` setting says. */
export interface BodyShape {
  readonly list: boolean
  readonly envelope: string | undefined
}

/**
 * The 2xx body of a route showing `node`, whose item (one row) is `item`:
 * the item itself, a bare array, or an envelope, written by the serializers'
 * envelope writer (`listBodySchema`). The envelope of a generated list route
 * is its page, exactly; an application's holds the array and whatever else
 * the handler puts there (`envelopeProperties` documents some).
 */
export function successBody (
  node: ResourceNode,
  item: JsonSchema,
  shape: BodyShape,
  generated: GeneratedRoute | undefined,
  envelopeProperties: Readonly<Record<string, JsonSchema>> | undefined
): JsonSchema {
  if (!shape.list) return { description: `One ${node.name}`, ...item }
  const description = `A list of ${node.name}`
  // An inline item carries its example; a component's is the component's.
  const itemExample = (Array.isArray(item.examples) ? item.examples[0] : undefined) as unknown ?? defaultExample(node)
  const examples = (value: unknown) => (itemExample === undefined ? {} : { examples: [value] })
  const { envelope } = shape
  const page = generated?.kind === 'list' && envelope !== undefined ? pageOf(generated) : undefined
  const envelopeShape = page?.shape ?? applicationEnvelope(envelopeProperties ?? {})
  const example = envelope === undefined ? [itemExample] : { [envelope]: [itemExample], ...page?.example }
  return { description, ...listBodySchema(item, envelope, envelopeShape), ...examples(example) }
}

/** An application's envelope: the array, the documented properties, anything else admitted. */
function applicationEnvelope (properties: Readonly<Record<string, JsonSchema>>): EnvelopeShape {
  return { properties, required: 'array', additionalProperties: undefined }
}

/** The page a generated list route answers (`ListPage` and `CursorPage` of routes/list-pages.ts), and its example. */
interface Page {
  readonly shape: EnvelopeShape
  readonly example: Record<string, unknown>
}

/** The envelope of app.expand.routes: exactly these properties, by the route's pagination. */
const pages = {
  offset: (route) => {
    const counted = { total: { type: 'integer', minimum: 0, description: 'Rows in the whole list' } }
    const properties = {
      limit: limitSchema(route),
      offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Rows skipped' },
      ...(route.total ? counted : {}),
    } satisfies PageProperties<ListPage, 'total'>
    return {
      shape: { properties, required: 'all', additionalProperties: false },
      example: { limit: route.pageSize, offset: 0, ...(route.total ? { total: 1 } : {}) },
    }
  },
  cursor: (route) => {
    const properties = {
      limit: limitSchema(route),
      next: {
        type: ['string', 'null'],
        description: 'The `after` of the following page (same sort and filters); null on the last page',
      },
      prev: {
        type: ['string', 'null'],
        description: 'The `before` of the page before (same sort and filters); ' +
          'null on a page asked for without a cursor, and on a `before` page with no earlier row',
      },
    } satisfies PageProperties<CursorPage, never>
    return {
      shape: { properties, required: 'all', additionalProperties: false },
      example: { limit: route.pageSize, next: null, prev: null },
    }
  },
} satisfies Record<GeneratedListRoute['pagination'], (route: GeneratedListRoute) => Page>

/**
 * The schemas of a page's properties besides the array, named as the page
 * type the handler returns names them (`Optional` ones may be left out), so
 * that the document and the handler's body cannot name different properties.
 */
type PageProperties<Body, Optional extends keyof Body> =
  Record<Exclude<keyof Body, 'data' | Optional>, JsonSchema> & Partial<Record<Optional, JsonSchema>>

function pageOf (route: GeneratedListRoute): Page {
  return pages[route.pagination](route)
}

/** The page's `limit`: the one asked for, clamped as the route clamps it. */
function limitSchema (route: GeneratedListRoute): JsonSchema {
  return {
    type: 'integer',
    minimum: 1,
    maximum: route.maxPageSize,
    description: `Rows per page: the limit asked for (default ${route.pageSize}), at most ${route.maxPageSize}`,
  }
}
