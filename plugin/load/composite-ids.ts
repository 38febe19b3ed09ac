import { InvalidDataError, messages } from '../errors.js'
import { identifierOf } from '../graph/identifiers.js'
import type { RelationEdge } from '../graph/resource-graph.js'
import { partAlias } from '../sql/selection.js'
import type { Row } from '../sql/selection.js'

/**
 * A to-one relation over several columns shows its related row's identifier
 * (graph/identifiers.ts) when not expanded: made from the columns' values,
 * which the level's statement selects under the field's part aliases
 * (sql/selection.ts); null when one of them is null. A row a handler gives
 * may carry the identifier itself, or the columns under their names. Other
 * relations hold no ids of their own.
 */
export function copyCompositeToOneIds (relation: RelationEdge, rows: Row[]): void {
  const { link, field } = relation
  if (link.kind !== 'to-one' || typeof link.column === 'string') return
  const columns = link.column
  const aliases = columns.map((_, index) => partAlias(field, index))
  for (const row of rows) {
    if (row[field] !== undefined) continue
    // The level's statement selects each column under its alias; a handler's row may hold it under the column's name.
    const id = identifierOf(aliases.map((alias, index) => row[alias] !== undefined ? row[alias] : row[columns[index]!]))
    if (id === undefined) {
      const { owner, target } = relation
      throw new InvalidDataError(messages.rowsLackReferenceColumns(owner.qualifiedName, field, columns, target.qualifiedName))
    }
    row[field] = id
  }
}
