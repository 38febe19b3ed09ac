import {
  OperationNodeTransformer, RawNode, ValueListNode, ValueNode,
  type KyselyPlugin, type PrimitiveValueListNode, type QueryResult, type UnknownRow,
} from 'kysely'

/**
 * Writes every value a SQLite statement binds as `+?` rather than `?`.
 *
 * better-sqlite3 builds SQLite with SQLITE_ENABLE_STAT4. SQLite plans a
 * statement for the value of a bare parameter where it can read one: a
 * `LIMIT ?`, and, on a database that ANALYZE (or `PRAGMA optimize`) has left
 * samples for (`sqlite_stat4`), a `?` compared with an indexed column.
 * Binding a value again expires that plan, so every run of the statement
 * prepared it again: a grouped statement over 128 keys of the derived-data
 * benchmark's table ran in 124.8 µs, 85.7 µs written so
 * (benchmarks/investigations/sqlite-planned-values.ts). The planner reads a
 * bare parameter only: behind unary plus, a no-op that keeps the value, its
 * type and its lack of affinity (the column's affinity and collation still
 * apply as to `?`), the value is not read, and the statement is prepared
 * once and planned for any value, as a PostgreSQL generic plan is. A literal
 * (`sql.lit`, a statement's bound on its rows) stays as it is.
 */
class ValuesBehindPlus extends OperationNodeTransformer {
  protected override transformValue (node: ValueNode): ValueNode {
    // A RawNode where a ValueNode stood: the compiler dispatches on each node's kind.
    return node.immediate === true ? node : behindPlus(node) as unknown as ValueNode
  }

  protected override transformPrimitiveValueList (node: PrimitiveValueListNode): PrimitiveValueListNode {
    return ValueListNode.create(node.values.map((value) => behindPlus(ValueNode.create(value)))) as unknown as PrimitiveValueListNode
  }
}

function behindPlus (value: ValueNode): RawNode {
  return RawNode.create(['+', ''], [value])
}

const transformer = new ValuesBehindPlus()

/** The Kysely plugin SQLite's dialect compiles each statement with (`ExpandDialect.compile`). */
export const valuesPlannedOnce: KyselyPlugin = {
  transformQuery: ({ node, queryId }) => transformer.transformNode(node, queryId),
  transformResult: ({ result }): Promise<QueryResult<UnknownRow>> => Promise.resolve(result),
}
