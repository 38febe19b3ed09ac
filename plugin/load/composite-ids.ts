import { InvalidDataError, messages } from '../errors.js'
import { identifierOf } from '../graph/identifiers.js'
import type { RelationEdge } from '../graph/resource-graph.js'
import { partAlias } from '../sql/composite-keys.js'
import type { Row } from '../sql/selection.js'

/**
 * A to-one relation over several columns shows its related row's identifier
 * (graph/identifiers.ts) when not expanded: made from the columns' values,
 * which the level's statement selects under the field's part aliases
 * (sql/selection.ts); null when one of them is null. A row a handler gives
 * may carry the identifier itself. Other relations hold no ids of their own.
 */
export function copyCompositeToOneIds (relation: RelationEdge, rows: Row[]): void {
  const { link, field } = relation
  if (link.kind !== 'to-one' || typeof link.column === 'string') return
  const aliases = link.column.map((_, index) => partAlias(field, index))
  for (const row of rows) {
    if (row[field] !== undefined) continue
    const id = identifierOf(aliases.map((alias) => row[alias]))
    if (id === undefined) {
      const { owner, target } = relation
      throw new InvalidDataError(messages.rowsLackReference(owner.qualifiedName, field, link.column.join(', '), target.qualifiedName))
    }
    row[field] = id
  }
}
