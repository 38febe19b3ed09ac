import { InvalidDefinitionError, messages } from '../errors.js'
import type { KeyColumns } from './resource.js'
import type { RelationEdge } from './resource-graph.js'

/** A relation's key columns as a list: one column, or a composite key's columns in key order. */
export function columnsOf (columns: KeyColumns): readonly string[] {
  return typeof columns === 'string' ? [columns] : columns
}

/** Whether loading a relation reads a composite key: its owner's (to-many, many-to-many) or its target's. */
export function readsCompositeKey (relation: RelationEdge): boolean {
  const { link, owner, target } = relation
  switch (link.kind) {
    case 'to-one': return target.key.kind === 'composite'
    case 'to-many':
    case 'many-to-many': return owner.key.kind === 'composite' || target.key.kind === 'composite'
    case 'function': return link.many ? owner.key.kind === 'composite' : target.key.kind === 'composite'
    default: return link satisfies never
  }
}

/**
 * The key columns a relation declares against the keys they hold: a to-one
 * relation's `column` holds its target's key parts, a to-many relation's
 * `foreignKey` its owner's, a many-to-many relation's `through.from` its
 * owner's and `through.to` its target's, as many as the key has parts. What
 * a relation over a composite key does not support yet is refused here:
 * `load` functions, `limit`, aggregates (derived-definitions.ts).
 */
export function checkCompositeKeys (relation: RelationEdge, context: string): void {
  const { link, owner, target } = relation
  const fail = (message: string): never => { throw new InvalidDefinitionError(`${context}: ${message}`) }
  const count = (what: string, columns: KeyColumns, parts: readonly string[], of: string) => {
    if (columnsOf(columns).length !== parts.length) fail(messages.keyColumnCount(what, columnsOf(columns), of, parts))
  }
  switch (link.kind) {
    case 'to-one':
      count('column', link.column, target.key.fields, target.qualifiedName)
      break
    case 'to-many':
      if (link.foreignKey !== undefined && target.table !== undefined) {
        count('foreignKey', link.foreignKey, owner.key.fields, owner.qualifiedName)
      }
      break
    case 'many-to-many':
      count('through.from', link.through.from, owner.key.fields, owner.qualifiedName)
      count('through.to', link.through.to, target.key.fields, target.qualifiedName)
      break
    case 'function':
      break
    default:
      link satisfies never
  }
  if (!readsCompositeKey(relation)) return
  if (link.kind === 'function') fail(messages.compositeKeyNotSupported('load'))
  if (relation.keys.limit !== undefined) fail(messages.compositeKeyNotSupported('limit'))
}
