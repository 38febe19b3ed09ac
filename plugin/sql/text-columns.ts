import { ownerColumn, type JsonSchema, type ResourceNode } from '../graph/resource-graph.js'

/**
 * Which columns a statement reads as text (the dialect's `asText`), decided
 * from the resource's declarations alone: a field declared a plain string
 * (`Type.String()`, nullable or not, without a format), and the keys of a
 * resource whose primary key is declared so. Such a column may hold
 * integers past 2^53 (an int8 or bigint key, as distributed
 * PostgreSQL-protocol databases number rows; an amount in a bigint), which
 * SQLite's driver and mysql2 would hand over as rounded JavaScript numbers,
 * and node-postgres an int4 as a number: read as text, each value is its
 * exact decimal text on every database, and a parent and its children meet
 * by that text. Filters and cursors bind the text back, which every
 * database compares with an integer column exactly. Over a text column the
 * cast changes nothing.
 *
 * Keys: the primary key, a to-one relation's column, a to-many relation's
 * ids, and the parent key a to-many statement tags its rows with.
 */

// Asked for each column of each statement a request builds: decided once per field.
const decided = new WeakMap<ResourceNode, Map<string, boolean>>()

/** Whether a field's column is read as text: a field, the primary key or a to-one relation's id, declared a plain string. */
export function fieldReadAsText (node: ResourceNode, field: string): boolean {
  let fields = decided.get(node)
  if (fields === undefined) {
    fields = new Map()
    decided.set(node, fields)
  }
  let asText = fields.get(field)
  if (asText === undefined) {
    const relation = node.relations.get(field)
    const inColumn = relation === undefined || ownerColumn(relation.link) !== undefined
    asText = inColumn && isPlainString(node.fieldSchemas.get(field))
    fields.set(field, asText)
  }
  return asText
}

/** Whether a to-many relation field's ids are read as text: its items declared a plain string. */
export function idsReadAsText (node: ResourceNode, field: string): boolean {
  return isPlainString(node.fieldSchemas.get(field)?.items as JsonSchema | undefined)
}

/** Whether a to-many statement tags its rows with their parent's key as text: the owner's primary key is read so. */
export function parentKeyReadAsText (owner: ResourceNode): boolean {
  return fieldReadAsText(owner, owner.primaryKey)
}

/** `Type.String()`, or it or null: a string of no format (a `date`, a `uuid`, ... is not an integer's text). */
function isPlainString (schema: JsonSchema | undefined): boolean {
  if (schema === undefined || schema.format !== undefined) return false
  const types = Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  const plain = types.filter((type) => type !== 'null')
  return plain.length === 1 && plain[0] === 'string'
}
