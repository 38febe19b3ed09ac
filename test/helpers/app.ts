import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import expandPlugin, { isExpanded, type ExpandPluginOptions, type HasExpansion } from '../../plugin/index.js'

export interface JsonReply {
  status: number
  /** The raw body, for exact-string and key-order checks. */
  text: string
  body: unknown
  contentType: string | undefined
}

/** A Fastify app with the plugin registered and the routes added after it, ready to inject. */
export async function buildApp (
  pluginOptions: ExpandPluginOptions,
  addRoutes: (app: FastifyInstance) => void = () => {},
  server: FastifyServerOptions = {}
): Promise<FastifyInstance> {
  const app = Fastify(server)
  await app.register(expandPlugin, pluginOptions)
  addRoutes(app)
  await app.ready()
  return app
}

export async function getJson (app: FastifyInstance, url: string): Promise<JsonReply> {
  const reply = await app.inject({ method: 'GET', url })
  let body: unknown
  try {
    body = JSON.parse(reply.body)
  } catch {
    body = undefined
  }
  return { status: reply.statusCode, text: reply.body, body, contentType: reply.headers['content-type'] as string | undefined }
}

/** How one relation field of a stored record is looked up. */
export interface StoredRelation {
  type: string
  many?: boolean
}

/**
 * An in-memory stand-in for a database: records by type and id, and the
 * relations of each type. `shape` returns what a handler loading exactly what
 * `isExpanded` says would return: identifiers where a relation is not
 * expanded, records (with every stored property, declared or not) where it is.
 */
export class MemoryStore {
  constructor (
    private readonly records: Record<string, Record<string | number, Record<string, unknown>>>,
    private readonly relations: Record<string, Record<string, StoredRelation>>
  ) {}

  get (type: string, id: string | number): Record<string, unknown> | undefined {
    return this.records[type]?.[id]
  }

  all (type: string): Record<string, unknown>[] {
    return Object.values(this.records[type] ?? {})
  }

  shape (request: HasExpansion, type: string, record: Record<string, unknown>, prefix = ''): Record<string, unknown> {
    const shaped: Record<string, unknown> = { ...record }
    for (const [field, relation] of Object.entries(this.relations[type] ?? {})) {
      const path = prefix + field
      if (!isExpanded(request, path)) continue
      const value = record[field]
      const load = (id: unknown) => {
        const related = id === null || id === undefined ? undefined : this.get(relation.type, id as string | number)
        return related === undefined ? null : this.shape(request, relation.type, related, `${path}.`)
      }
      shaped[field] = relation.many === true ? (value as unknown[]).map(load) : load(value)
    }
    return shaped
  }

  shapeAll (request: HasExpansion, type: string): Record<string, unknown>[] {
    return this.all(type).map((record) => this.shape(request, type, record))
  }
}
