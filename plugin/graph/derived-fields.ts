import { InvalidDefinitionError, messages } from '../errors.js'
import {
  aggregateField,
  aggregateFunctionOf,
  aggregateRelation,
  type AggregateCondition,
  type AggregateFunction,
  type ComputedDefinition,
} from './derived-definitions.js'
import { readsCompositeKey } from './composite-relations.js'
import { toOutputSchema } from './output-schemas.js'
import type { JsonSchema, RelationEdge, ResourceNode, SourceSchema } from './resource-graph.js'

/**
 * A field whose value the database derives rather than stores: an
 * aggregate over a to-many relation, read by a grouped statement of its own,
 * or a computed expression, read with its row.
 */
export type DerivedField =
  | {
    readonly kind: 'aggregate'
    readonly name: string
    readonly function: AggregateFunction
    readonly relation: RelationEdge
    /** The related resource's field it reads (not `count`), and that field's column. */
    readonly field: string | undefined
    readonly column: string | undefined
    readonly where: AggregateCondition | undefined
  }
  | { readonly kind: 'computed'; readonly name: string; readonly sql: ComputedDefinition['sql'] }

export type DerivedKind = DerivedField['kind']

/** A node while the graph resolves it: its derived fields and their schemas are added here. */
interface DerivingNode extends ResourceNode {
  derived: Map<string, DerivedField>
  fieldSchemas: Map<string, JsonSchema>
  sourceSchemas: Map<string, SourceSchema>
}

/**
 * The aggregates and computed fields of a node, each checked against the
 * relation and field it reads, and their schemas: `count` an integer, `avg`
 * a number, `min`/`max`/`sum` the related field's type; all but `count` may
 * be null (no related rows). Written read-only: no client sends them.
 */
export function resolveDerived (node: DerivingNode): void {
  const { aggregates = {}, computed = {} } = node.resource as { aggregates?: Record<string, unknown>; computed?: Record<string, unknown> }
  const context = (name: string) => `Resource '${node.qualifiedName}', aggregates.${name}`
  for (const [name, definition] of Object.entries(aggregates as Record<string, Parameters<typeof aggregateRelation>[0]>)) {
    const fn = aggregateFunctionOf(definition)
    const relation = node.relations.get(aggregateRelation(definition))!
    const { link, target } = relation
    const keyed = link.kind === 'many-to-many' || (link.kind === 'to-many' && link.foreignKey !== undefined)
    if (target.table === undefined || !keyed) throw new InvalidDefinitionError(messages.aggregateNotLoadable(context(name), relation.field))
    // An aggregate over a composite key is not read yet: its statement groups by one key column.
    if (readsCompositeKey(relation)) throw new InvalidDefinitionError(messages.aggregateOverCompositeKey(context(name), relation.field))
    const field = aggregateField(definition)
    let schema: JsonSchema
    if (field === undefined) {
      schema = { type: 'integer' }
    } else {
      const fieldSchema = target.fieldSchemas.get(field)
      if (fieldSchema === undefined || target.relations.has(field)) {
        throw new InvalidDefinitionError(messages.aggregateFieldNotColumn(context(name), field, target.qualifiedName))
      }
      const types = (Array.isArray(fieldSchema.type) ? fieldSchema.type : [fieldSchema.type]).filter((type) => type !== 'null')
      const numeric = types.length === 1 && (types[0] === 'integer' || types[0] === 'number')
      if ((fn === 'sum' || fn === 'avg') && !numeric) {
        throw new InvalidDefinitionError(messages.aggregateNotNumeric(context(name), fn, field))
      }
      schema = fn === 'avg' ? { type: ['number', 'null'] } : withNull(fieldSchema)
    }
    node.derived.set(name, Object.freeze({
      kind: 'aggregate' as const,
      name,
      function: fn,
      relation,
      field,
      column: field === undefined ? undefined : target.column(field),
      where: definition.where,
    }))
    node.fieldSchemas.set(name, { ...schema, readOnly: true })
    node.sourceSchemas.set(name, schema)
  }
  for (const [name, definition] of Object.entries(computed as Record<string, ComputedDefinition>)) {
    node.derived.set(name, Object.freeze({ kind: 'computed' as const, name, sql: definition.sql }))
    node.fieldSchemas.set(name, { ...toOutputSchema(definition.schema), readOnly: true })
    node.sourceSchemas.set(name, definition.schema)
  }
}

/** A field's schema that also takes null. */
function withNull (schema: JsonSchema): JsonSchema {
  const types = Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  if (types.includes('null')) return schema
  return { ...schema, type: [...types, 'null'] }
}
