import type { FastifyRequest } from 'fastify'
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { columnNameRule, isIdentifier, isPositiveInteger, isReservedName, isTableName, tableNameRule, unknownKey } from './checks.js'
import { checkKeyFields, checkRelationMap, relationOptions } from './relation-definitions.js'
import { InvalidDefinitionError, messages } from '../errors.js'
import type { ObjectSchema } from './expanded.js'
import { casedColumn, isColumnCasing, namedCasings, type ColumnCasing } from './casing.js'
import {
  aggregateRelation, checkAggregates, checkComputed, type AggregateDefinition, type ComputedDefinition,
} from './derived-definitions.js'

/** A column holding a key, or the columns holding a composite key's parts in the order of its `primaryKey`. */
export type KeyColumns = string | readonly string[]

/** The keys of a relation, for loading it from the database. */
export interface RelationKeys {
  /**
   * to-one: the column of this resource's table holding the related id (default: the field's column); to a
   * resource with a composite key, the columns holding its key parts, in the order of its `primaryKey`.
   */
  column?: KeyColumns
  /** to-many: the column of the related table holding this resource's primary key (its columns, for a composite key). */
  foreignKey?: KeyColumns
  /**
   * many-to-many: the join table, its column holding this resource's key and the one holding the related key
   * (for a composite key, its columns in the order of that resource's `primaryKey`).
   */
  through?: { table: string; from: KeyColumns; to: KeyColumns }
  /** to-many: order by this column of the related table (`-column`: descending); the related key breaks ties. */
  orderBy?: string
  /** to-many: at most this many related rows per parent (the first ones in the relation's order), expanded or as ids. */
  limit?: number
}

export interface RelationOptions extends RelationKeys {
  /** to-many: expanded as an array. */
  many?: boolean
  /**
   * Resolves the relation by a function instead of the database (another
   * service, a cache): called at most once per relation path per request with
   * the distinct keys, the values of `column` for a to-one relation, the
   * parents' primary keys with `many: true`. It returns a Map from key to row
   * (to-one) or to rows (to-many); a key it leaves out is `null` / `[]`.
   */
  load?: RelationLoad
  /** the nested resource's field set (defaults to its own `fields`). */
  fields?: readonly string[]
  /** fields removed from the nested resource's field set. */
  omit?: readonly string[]
  /** nested expansions always applied when this relation is expanded (dot paths). */
  expand?: readonly string[]
}

/** What a relation's `load` function is given beside its keys. */
export interface RelationLoadContext {
  /** The request the relation is loaded for. */
  readonly request: FastifyRequest
  /** Aborted when the client goes away before its response is sent: pass it on to what the function waits for. */
  readonly signal: AbortSignal
}

/** A row as a relation's `load` function returns it: the related resource's fields by name. */
export type LoadedRow = Readonly<Record<string, unknown>>

/**
 * A relation's `load` function. `keys` are distinct, each as the parents'
 * rows hold it (the driver's value: a number for an integer column, a string
 * for PostgreSQL's bigint); the Map may use any form of the same key (1, '1'
 * and 1n are one key, as the loader compares keys).
 */
export type RelationLoad = (
  keys: readonly unknown[],
  context: RelationLoadContext
) => Promise<ReadonlyMap<unknown, LoadedRow | readonly LoadedRow[] | null | undefined>>

/** A resource, a lazy name resolved through the plugin's registry, or a thunk. */
export type ResourceReference = AnyResource | string | (() => AnyResource)

/**
 * The four forms of a relation, as in drf-flex-fields: a resource, `[resource, options]`, a lazy reference,
 * `[lazy reference, options]`.
 */
export type RelationDefinition = ResourceReference | readonly [ResourceReference, RelationOptions]

/** The field names of a schema. */
export type FieldName<S extends ObjectSchema> = keyof S['properties'] & string

/** Relations by field name, as `expandable` and `nested` take them. */
export type RelationMap<S extends ObjectSchema = ObjectSchema> = { readonly [K in FieldName<S>]?: RelationDefinition }

/** Derived fields by name, as `aggregates` and `computed` take them. */
export type AggregateMap<S extends ObjectSchema = ObjectSchema> = { readonly [name: string]: AggregateDefinition<FieldName<S>> }
export type ComputedMap = { readonly [name: string]: ComputedDefinition }

/** Refuses keys that are not fields: `E` is inferred from the map, so excess keys would otherwise pass. */
type OnlyFields<E, S extends ObjectSchema> = { readonly [K in Exclude<keyof E & string, FieldName<S>>]: never }

/**
 * A resource's definition. The type parameters keep what `Expanded` reads:
 * the schema, the default fields, the relations and the name; `defineResource`
 * infers them.
 */
export interface ResourceDefinition<
  S extends ObjectSchema = ObjectSchema,
  F extends string = FieldName<S>,
  E extends RelationMap<S> = RelationMap<S>,
  N extends RelationMap<S> = RelationMap<S>,
  A extends AggregateMap<S> = AggregateMap<S>,
  C extends ComputedMap = ComputedMap
> {
  /** Unique within a registry (with `namespace`). */
  name: string
  /** Enables the qualified references `'namespace.Name'` and `'namespace.resources.Name'`. */
  namespace?: string
  /** Every field that may ever be shown; relation fields hold the identifier type. */
  schema: S
  /** The default fields, in output order: schema fields, and derived fields (aggregates, computed) shown by default. */
  fields: readonly F[]
  /**
   * Relations a client may expand; those not in `fields` are deferred.
   * (`RelationMap<S>` again beside the inferred `E`: it types the parameters
   * of a relation's `load` function, which inferring `E` alone leaves untyped.)
   */
  expandable?: E & RelationMap<S> & OnlyFields<E, S>
  /** Relations always shown as nested objects (a nested serializer declared as a field). */
  nested?: N & RelationMap<S> & OnlyFields<N, S>
  /**
   * Counts and aggregates over to-many relations, by field name: deferred
   * (shown when named in `expand` or `fields`, or listed in `fields`), one
   * grouped statement per relation path per request, under the related scope.
   */
  aggregates?: A & AggregateMap<S>
  /** Fields the database computes in the statement reading the row, by field name: deferred as aggregates are. */
  computed?: C & ComputedMap
  /** Maximum expansion depth of requests rooted at this resource (overrides the plugin's). */
  maxDepth?: number
  /** Database binding: the table holding this resource. */
  table?: string
  /**
   * Database binding: the primary key field (default `id`), or the fields of a
   * composite key in key order (integer or string fields), whose identifier
   * is its parts' values joined by ',' (graph/identifiers.ts).
   */
  primaryKey?: FieldName<S> | readonly FieldName<S>[]
  /** Database binding: field -> column, for fields whose column has another name. */
  columns?: { readonly [K in FieldName<S>]?: string }
  /**
   * Database binding: the column of a field `columns` does not map, in the
   * database's case (`'snake_case'`: `albumId` reads `album_id`;
   * `'camelCase'`; `'PascalCase'`: `AlbumId`), or a function of the field.
   * Without it, a field reads the column of its own name.
   */
  casing?: ColumnCasing
  /**
   * The rows this request may see: a boolean expression over the resource's
   * table (columns written `table.column`), or undefined for every row.
   * Applied to every statement that reads the table for a request, at any depth.
   */
  scope?: ResourceScope
  /** The fields this request may see (undefined: every field), at every level where the resource appears. */
  fieldsFor?: (request: FastifyRequest) => readonly string[] | undefined
}

/** A resource's row rule: the request's condition on the table, or undefined for none. */
// The tables are the application's: the builder is typed loosely, as the plugin's own statements are.
export type ResourceScope = (eb: ExpressionBuilder<any, any>, request: FastifyRequest) => Expression<SqlBool> | undefined

/**
 * A defined resource: the definition, checked and frozen. `P`: its primary
 * key as declared (a field, or a composite key's fields in order), which
 * `Expanded` reads to type a composite key's identifier.
 */
export interface Resource<
  S extends ObjectSchema = ObjectSchema,
  F extends string = FieldName<S>,
  E extends RelationMap<S> = RelationMap<S>,
  N extends RelationMap<S> = RelationMap<S>,
  A extends AggregateMap<S> = AggregateMap<S>,
  C extends ComputedMap = ComputedMap,
  P extends string | readonly string[] = FieldName<S> | readonly FieldName<S>[]
> extends Readonly<Omit<ResourceDefinition<S, F, E, N, A, C>, 'expandable' | 'nested' | 'aggregates' | 'computed' | 'primaryKey'>> {
  readonly kind: 'fastify-expand/resource'
  readonly primaryKey: P
  /** Relations a client may expand (empty when the definition has none). */
  readonly expandable: E
  /** Relations always shown as nested objects (empty when the definition has none). */
  readonly nested: N
  /** Counts and aggregates over relations (empty when the definition has none). */
  readonly aggregates: A
  /** Fields computed by the database (empty when the definition has none). */
  readonly computed: C
}

/**
 * A resource of any schema: what relations, routes and registries accept.
 * `Resource<ObjectSchema>` would not do: a specific schema's field names
 * (in `fields`, `columns`, `expandable`) make it unassignable to the general one.
 */
export type AnyResource = Resource<any, any, any, any, any, any, any>

const definitionKeys = new Set([
  'name', 'namespace', 'schema', 'fields', 'expandable', 'nested', 'aggregates', 'computed', 'maxDepth', 'table', 'primaryKey', 'casing',
  'columns', 'scope', 'fieldsFor',
])

export { isResource } from './checks.js'

/**
 * Declares a resource. Everything that can be checked without the other
 * resources is checked here; references are resolved by the plugin's registry.
 */
export function defineResource<
  S extends ObjectSchema,
  const F extends string,
  const E extends RelationMap<S> = {},
  const N extends RelationMap<S> = {},
  const A extends AggregateMap<S> = {},
  const C extends ComputedMap = {},
  AggregateName extends string = never,
  ComputedName extends string = never,
  const P extends string | readonly string[] = FieldName<S> | readonly FieldName<S>[]
> (
  // The names of aggregates and computed fields are inferred from their maps' keys alone (their values hold
  // functions, inferred last): what `fields` may list besides the schema's fields.
  definition: ResourceDefinition<S, F, E, N, A, C> & {
    fields: ReadonlyArray<FieldName<S> | NoInfer<AggregateName | ComputedName>>
    aggregates?: { readonly [K in AggregateName]: AggregateDefinition<FieldName<S>> }
    computed?: { readonly [K in ComputedName]: ComputedDefinition }
    primaryKey?: P
  }
): Resource<S, F, E, N, A, C, P> {
  const label = typeof definition?.name === 'string' ? `Resource '${definition.name}'` : 'Resource'
  const fail = (message: string): never => { throw new InvalidDefinitionError(`${label}: ${message}`) }

  if (typeof definition !== 'object' || definition === null) fail(messages.definitionNotObject)
  const unknownOption = unknownKey(definition, definitionKeys)
  if (unknownOption !== undefined) fail(messages.unknownDefinitionOption(unknownOption, [...definitionKeys]))
  if (!isIdentifier(definition.name)) fail(messages.badResourceName)
  if (definition.namespace !== undefined && (typeof definition.namespace !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(definition.namespace))) {
    fail(messages.badNamespace)
  }
  const schema = definition.schema as { type?: unknown; properties?: unknown } | null
  if (typeof schema !== 'object' || schema === null || schema.type !== 'object' || typeof schema.properties !== 'object') {
    fail(messages.badSchema)
  }
  const properties: Record<string, unknown> = definition.schema.properties
  const hasField = (field: string) => Object.hasOwn(properties, field)
  const checkField = (field: unknown, where: string) => {
    if (typeof field !== 'string' || !hasField(field)) fail(messages.fieldNotInSchema(where, String(field)))
  }

  const aggregates = checkAggregates(definition.aggregates, properties, fail)
  const computed = checkComputed(definition.computed, properties, fail)
  for (const name of Object.keys(computed)) {
    if (Object.hasOwn(aggregates, name)) fail(messages.derivedTwice(name))
  }
  const isDerived = (name: unknown) => typeof name === 'string' && (Object.hasOwn(aggregates, name) || Object.hasOwn(computed, name))

  if (!Array.isArray(definition.fields)) fail(messages.notFieldNames('fields'))
  const seen = new Set<string>()
  for (const field of definition.fields) {
    if (!isDerived(field)) checkField(field, 'fields')
    if (seen.has(field)) fail(messages.fieldListedTwice(field))
    seen.add(field)
  }

  const expandable = checkRelationMap(definition.expandable, 'expandable', properties, checkField, fail)
  const nested = checkRelationMap(definition.nested, 'nested', properties, checkField, fail)
  for (const field of Object.keys(nested)) {
    if (Object.hasOwn(expandable, field)) fail(messages.expandableAndNested(field))
    if (!seen.has(field)) fail(messages.nestedNotInFields(field))
  }

  if (definition.maxDepth !== undefined && !isPositiveInteger(definition.maxDepth)) {
    fail(messages.badMaxDepth)
  }
  // Table and column names are written into SQL as they are: identifiers only, so no SQL can hide in them.
  const table = definition.table
  if (table !== undefined && !isTableName(table)) fail(messages.notATableName('table', String(table), tableNameRule))
  if (table !== undefined) {
    // The statements read a resource's fields under their names, beside columns and tables of their own named __expand_...
    if (isReservedName(String(table))) fail(messages.reservedName('table', String(table)))
    for (const field of Object.keys(properties)) if (isReservedName(field)) fail(messages.reservedName('field', field))
    for (const name of Object.keys(aggregates)) if (isReservedName(name)) fail(messages.reservedName('aggregate', name))
    for (const name of Object.keys(computed)) if (isReservedName(name)) fail(messages.reservedName('computed field', name))
  }
  const keyFields = checkKeyFields(definition.primaryKey, properties, fail)
  const primaryKey = keyFields.length === 1 ? keyFields[0]! : keyFields
  for (const field of keyFields) {
    if (!hasField(field) && (table !== undefined || definition.primaryKey !== undefined)) {
      fail(messages.primaryKeyNotInItsSchema(field))
    }
  }
  const relations: Record<string, RelationDefinition> = { ...expandable, ...nested }
  // A relation's field holds its related row once expanded: a composite key's parts are read from plain fields.
  for (const field of keyFields) if (keyFields.length > 1 && Object.hasOwn(relations, field)) fail(messages.keyPartIsRelation(field))
  // Every field but a to-many relation is read from a column: its own name unless columns maps it.
  const toMany = new Set(Object.keys(relations).filter((field) => relationOptions(relations[field]!).many === true))
  const columns: Record<string, unknown> = definition.columns === undefined ? {} : definition.columns
  if (typeof columns !== 'object' || columns === null) fail(messages.badColumns)
  for (const [field, column] of Object.entries(columns)) {
    checkField(field, 'columns')
    if (!isIdentifier(column)) fail(messages.notAColumnName(`columns.${field}`, String(column), columnNameRule))
    if (toMany.has(field)) fail(messages.toManyColumn(field))
    const relationColumn = Object.hasOwn(relations, field) ? relationOptions(relations[field]!).column : undefined
    if (relationColumn !== undefined && relationColumn !== column) {
      fail(messages.twoColumns(field, String(column), String(relationColumn)))
    }
  }
  const { casing } = definition
  if (casing !== undefined && !isColumnCasing(casing)) fail(messages.badCasing(String(casing), namedCasings))
  if (table !== undefined) {
    // The column each field reads (casing's form unless columns maps it) is written into SQL: it must be an identifier.
    const columnOf = (field: string) => (Object.hasOwn(columns, field) ? columns[field] : casedColumn(casing, field))
    for (const field of keyFields) if (!isIdentifier(field)) fail(messages.primaryKeyNotIdentifier(field, columnNameRule))
    for (const field of Object.keys(properties)) {
      if (toMany.has(field) || Object.hasOwn(columns, field)) continue
      const column = columnOf(field)
      if (isIdentifier(column)) continue
      fail(casing === undefined
        ? messages.fieldNotAColumnName(field, columnNameRule)
        : messages.casedNotAColumnName(field, column, columnNameRule))
    }
  }

  for (const key of ['scope', 'fieldsFor'] as const) {
    if (definition[key] !== undefined && typeof definition[key] !== 'function') fail(messages.notARequestFunction(key))
  }
  if (definition.scope !== undefined && definition.table === undefined) fail(messages.scopeNeedsTable)
  if (definition.table === undefined && (Object.keys(aggregates).length > 0 || Object.keys(computed).length > 0)) {
    fail(messages.derivedNeedsTable)
  }
  for (const [name, aggregate] of Object.entries(aggregates)) {
    const relation = aggregateRelation(aggregate)
    const definitionOfRelation = Object.hasOwn(relations, relation) ? relations[relation] : undefined
    if (definitionOfRelation === undefined || !toMany.has(relation)) fail(messages.aggregateNotToMany(name, relation))
  }

  return Object.freeze({
    ...definition,
    fields: Object.freeze([...definition.fields]),
    expandable: Object.freeze(expandable),
    nested: Object.freeze(nested),
    aggregates: Object.freeze(aggregates),
    computed: Object.freeze(computed),
    primaryKey: (typeof primaryKey === 'string' ? primaryKey : Object.freeze([...primaryKey])) as FieldName<S>,
    kind: 'fastify-expand/resource' as const,
  }) as unknown as Resource<S, F, E, N, A, C, P>
}
