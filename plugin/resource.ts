import type { FastifyRequest } from 'fastify'
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { columnNameRule, isIdentifier, isPositiveInteger, isTableName, tableNameRule, unknownKey } from './checks.js'
import { InvalidDefinitionError } from './errors.js'
import type { ObjectSchema } from './expanded.js'

/** The keys of a relation, for loading it from the database. */
export interface RelationKeys {
  /** to-one: the column of this resource's table holding the related id (default: the field's column). */
  column?: string
  /** to-many: the column of the related table holding this resource's primary key. */
  foreignKey?: string
  /** many-to-many: the join table, its column holding this resource's key and the one holding the related key. */
  through?: { table: string; from: string; to: string }
  /** to-many: order by this column of the related table (`-column`: descending); the related key breaks ties. */
  orderBy?: string
  /** to-many: at most this many related rows per parent (the first ones in the relation's order), expanded or as ids. */
  limit?: number
}

export interface RelationOptions extends RelationKeys {
  /** to-many: expanded as an array. */
  many?: boolean
  /** the nested resource's field set (defaults to its own `fields`). */
  fields?: readonly string[]
  /** fields removed from the nested resource's field set. */
  omit?: readonly string[]
  /** nested expansions always applied when this relation is expanded (dot paths). */
  expand?: readonly string[]
}

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

/** Refuses keys that are not fields: `E` is inferred from the map, so excess keys would otherwise pass. */
type OnlyFields<E, S extends ObjectSchema> = { readonly [K in Exclude<keyof E & string, FieldName<S>>]: never }

/**
 * A resource's definition. The type parameters keep what `Expanded` reads:
 * the schema, the default fields, the relations and the name; `defineResource`
 * infers them.
 */
export interface ResourceDefinition<
  S extends ObjectSchema = ObjectSchema,
  F extends FieldName<S> = FieldName<S>,
  E extends RelationMap<S> = RelationMap<S>,
  N extends RelationMap<S> = RelationMap<S>
> {
  /** Unique within a registry (with `namespace`). */
  name: string
  /** Enables the qualified references `'namespace.Name'` and `'namespace.resources.Name'`. */
  namespace?: string
  /** Every field that may ever be shown; relation fields hold the identifier type. */
  schema: S
  /** The default fields, in output order. */
  fields: readonly F[]
  /** Relations a client may expand; those not in `fields` are deferred. */
  expandable?: E & OnlyFields<E, S>
  /** Relations always shown as nested objects (a nested serializer declared as a field). */
  nested?: N & OnlyFields<N, S>
  /** Maximum expansion depth of requests rooted at this resource (overrides the plugin's). */
  maxDepth?: number
  /** Database binding: the table holding this resource. */
  table?: string
  /** Database binding: the primary key field (default `id`). */
  primaryKey?: FieldName<S>
  /** Database binding: field -> column, for fields whose column has another name. */
  columns?: { readonly [K in FieldName<S>]?: string }
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

/** A defined resource: the definition, checked and frozen. */
export interface Resource<
  S extends ObjectSchema = ObjectSchema,
  F extends FieldName<S> = FieldName<S>,
  E extends RelationMap<S> = RelationMap<S>,
  N extends RelationMap<S> = RelationMap<S>
> extends Readonly<Omit<ResourceDefinition<S, F, E, N>, 'expandable' | 'nested'>> {
  readonly kind: 'fastify-expand/resource'
  readonly primaryKey: FieldName<S>
  /** Relations a client may expand (empty when the definition has none). */
  readonly expandable: E
  /** Relations always shown as nested objects (empty when the definition has none). */
  readonly nested: N
}

/**
 * A resource of any schema: what relations, routes and registries accept.
 * `Resource<ObjectSchema>` would not do: a specific schema's field names
 * (in `fields`, `columns`, `expandable`) make it unassignable to the general one.
 */
export type AnyResource = Resource<any, any, any, any>

const definitionKeys = new Set([
  'name', 'namespace', 'schema', 'fields', 'expandable', 'nested', 'maxDepth', 'table', 'primaryKey', 'columns', 'scope', 'fieldsFor',
])
const relationOptionKeys = new Set(['many', 'fields', 'omit', 'expand', 'column', 'foreignKey', 'through', 'orderBy', 'limit'])
const throughKeys = ['table', 'from', 'to']

export function isResource (value: unknown): value is AnyResource {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'fastify-expand/resource'
}

/**
 * Declares a resource. Everything that can be checked without the other
 * resources is checked here; references are resolved by the plugin's registry.
 */
export function defineResource<
  S extends ObjectSchema,
  const F extends FieldName<S>,
  const E extends RelationMap<S> = {},
  const N extends RelationMap<S> = {}
> (definition: ResourceDefinition<S, F, E, N>): Resource<S, F, E, N> {
  const label = typeof definition?.name === 'string' ? `Resource '${definition.name}'` : 'Resource'
  const fail = (message: string): never => { throw new InvalidDefinitionError(`${label}: ${message}`) }

  if (typeof definition !== 'object' || definition === null) fail('the definition must be an object')
  const unknownOption = unknownKey(definition, definitionKeys)
  if (unknownOption !== undefined) fail(`unknown option '${unknownOption}' (known: ${[...definitionKeys].join(', ')})`)
  if (!isIdentifier(definition.name)) fail('name must be an identifier')
  if (definition.namespace !== undefined && (typeof definition.namespace !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(definition.namespace))) {
    fail('namespace must be a dotted identifier')
  }
  const schema = definition.schema as { type?: unknown; properties?: unknown } | null
  if (typeof schema !== 'object' || schema === null || schema.type !== 'object' || typeof schema.properties !== 'object') {
    fail('schema must be a TypeBox Type.Object (@sinclair/typebox 0.34 or typebox 1.x)')
  }
  const properties: Record<string, unknown> = definition.schema.properties
  const hasField = (field: string) => Object.hasOwn(properties, field)
  const checkField = (field: unknown, where: string) => {
    if (typeof field !== 'string' || !hasField(field)) fail(`${where} names field '${String(field)}', which is not in its schema`)
  }

  if (!Array.isArray(definition.fields)) fail('fields must be an array of field names')
  const seen = new Set<string>()
  for (const field of definition.fields) {
    checkField(field, 'fields')
    if (seen.has(field)) fail(`fields lists '${field}' twice`)
    seen.add(field)
  }

  const expandable = checkRelationMap(definition.expandable, 'expandable', properties, checkField, fail)
  const nested = checkRelationMap(definition.nested, 'nested', properties, checkField, fail)
  for (const field of Object.keys(nested)) {
    if (Object.hasOwn(expandable, field)) fail(`field '${field}' is both expandable and nested`)
    if (!seen.has(field)) fail(`nested field '${field}': nested fields are always shown: list '${field}' in fields`)
  }

  if (definition.maxDepth !== undefined && !isPositiveInteger(definition.maxDepth)) {
    fail('maxDepth must be a positive integer')
  }
  // Table and column names are written into SQL as they are: identifiers only, so no SQL can hide in them.
  const table = definition.table
  if (table !== undefined && !isTableName(table)) fail(`table '${String(table)}' must be a table name (${tableNameRule})`)
  const primaryKey = definition.primaryKey ?? 'id'
  if (!hasField(primaryKey) && (table !== undefined || definition.primaryKey !== undefined)) fail(`primaryKey '${primaryKey}' is not in its schema`)
  const relations: Record<string, RelationDefinition> = { ...expandable, ...nested }
  // Every field but a to-many relation is read from a column: its own name unless columns maps it.
  const toMany = new Set(Object.keys(relations).filter((field) => relationOptions(relations[field]!).many === true))
  const columns: Record<string, unknown> = definition.columns === undefined ? {} : definition.columns
  if (typeof columns !== 'object' || columns === null) fail('columns must map fields to column names')
  for (const [field, column] of Object.entries(columns)) {
    checkField(field, 'columns')
    if (!isIdentifier(column)) fail(`columns.${field} '${String(column)}' must be a column name (${columnNameRule})`)
    if (toMany.has(field)) fail(`columns.${field}: '${field}' is a to-many relation, which has no column of its own: its rows are found by foreignKey or through`)
    const relationColumn = Object.hasOwn(relations, field) ? relationOptions(relations[field]!).column : undefined
    if (relationColumn !== undefined && relationColumn !== column) {
      fail(`field '${field}' is given two columns, columns.${field} '${column}' and the relation's column '${relationColumn}': keep one`)
    }
  }
  if (table !== undefined) {
    if (!isIdentifier(primaryKey)) fail(`primaryKey '${primaryKey}' must be a field whose name is an identifier (${columnNameRule})`)
    for (const field of Object.keys(properties)) {
      if (!toMany.has(field) && !Object.hasOwn(columns, field) && !isIdentifier(field)) {
        fail(`field '${field}' is read from the column of the same name, which is not a column name (${columnNameRule}): map it in columns`)
      }
    }
  }

  for (const key of ['scope', 'fieldsFor'] as const) {
    if (definition[key] !== undefined && typeof definition[key] !== 'function') fail(`${key} must be a function of the request`)
  }
  if (definition.scope !== undefined && definition.table === undefined) fail('scope needs a table: it is a condition on the rows the plugin reads')

  return Object.freeze({
    ...definition,
    fields: Object.freeze([...definition.fields]),
    expandable: Object.freeze(expandable),
    nested: Object.freeze(nested),
    primaryKey: primaryKey as FieldName<S>,
    kind: 'fastify-expand/resource' as const,
  }) as Resource<S, F, E, N>
}

function checkRelationMap (
  map: unknown,
  where: string,
  properties: Record<string, unknown>,
  checkField: (field: unknown, where: string) => void,
  fail: (message: string) => never
): Record<string, RelationDefinition> {
  if (map === undefined) return {}
  if (typeof map !== 'object' || map === null || Array.isArray(map)) fail(`${where} must map field names to relations`)
  const checked: Record<string, RelationDefinition> = {}
  for (const [field, relation] of Object.entries(map as Record<string, unknown>)) {
    checkField(field, where)
    const failHere = (message: string) => fail(`${where} field '${field}': ${message}`)
    checkRelationDefinition(relation, failHere)
    // The field's schema says whether it holds one identifier or an array of them.
    const many = relationOptions(relation as RelationDefinition).many === true
    const shape = valueShape(properties[field])
    if (many && shape === 'single') failHere(`many: true needs an array schema: declare '${field}' as Type.Array of the related identifier, or remove many`)
    if (!many && shape === 'array') failHere(`its schema is an array, so the relation is to-many: add many: true, or declare '${field}' as the related identifier`)
    checked[field] = relation as RelationDefinition
  }
  return checked
}

function relationOptions (relation: RelationDefinition): RelationOptions {
  return Array.isArray(relation) ? relation[1] : {}
}

/**
 * Whether a field's schema holds an array or a single value; undefined when
 * it cannot tell (Type.Any, a reference, a union of both). `null` is neither:
 * `Type.Union([Type.Integer(), Type.Null()])` holds a single value.
 */
function valueShape (schema: unknown): 'array' | 'single' | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  const { type, anyOf, oneOf } = schema as { type?: unknown; anyOf?: unknown; oneOf?: unknown }
  const members = Array.isArray(anyOf)
    ? anyOf
    : Array.isArray(oneOf) ? oneOf : Array.isArray(type) ? type.map((member) => ({ type: member })) : undefined
  if (members !== undefined) {
    const shapes = new Set(members.filter((member) => (member as { type?: unknown })?.type !== 'null').map(valueShape))
    return shapes.size === 1 ? [...shapes][0] : undefined
  }
  if (type === 'array') return 'array'
  return typeof type === 'string' && type !== 'null' ? 'single' : undefined
}

function checkRelationDefinition (relation: unknown, fail: (message: string) => never): void {
  const checkReference = (reference: unknown) => {
    if (isResource(reference) || typeof reference === 'function') return
    if (typeof reference === 'string' && /^[A-Za-z_][A-Za-z0-9_.]*$/.test(reference) && !reference.includes('..')) return
    fail(`'${String(reference)}' is not a resource, a resource name or a function returning a resource`)
  }
  if (!Array.isArray(relation)) return checkReference(relation)
  if (relation.length !== 2) fail('a relation tuple is [resource, options]')
  checkReference(relation[0])
  const options = relation[1] as Record<string, unknown>
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('relation options must be an object')
  const unknownOption = unknownKey(options, relationOptionKeys)
  if (unknownOption !== undefined) fail(`unknown option '${unknownOption}' (known: ${[...relationOptionKeys].join(', ')})`)
  if (options.many !== undefined && typeof options.many !== 'boolean') fail('many must be a boolean')
  for (const key of ['fields', 'omit', 'expand'] as const) {
    const list = options[key]
    if (list !== undefined && (!Array.isArray(list) || !list.every((item) => typeof item === 'string' && item !== ''))) {
      fail(`${key} must be an array of field names`)
    }
  }
  for (const key of ['column', 'foreignKey'] as const) {
    if (options[key] !== undefined && !isIdentifier(options[key])) fail(`${key} '${String(options[key])}' must be a column name (${columnNameRule})`)
  }
  if (options.orderBy !== undefined) {
    if (typeof options.orderBy !== 'string' || !isIdentifier(options.orderBy.replace(/^-/, ''))) {
      fail(`orderBy '${String(options.orderBy)}' must be a column name (${columnNameRule}), or '-' and a column name for descending order`)
    }
    if (options.many !== true) fail('orderBy orders the rows of a to-many relation: it needs many: true')
  }
  if (options.limit !== undefined) {
    if (!isPositiveInteger(options.limit) || !Number.isSafeInteger(options.limit)) fail(`limit ${String(options.limit)} must be a positive integer (the most related rows shown per parent)`)
    if (options.many !== true) fail('limit bounds the rows of a to-many relation: it needs many: true')
    if (options.foreignKey === undefined && options.through === undefined) {
      fail('limit bounds the rows loaded from the database: it needs foreignKey or through')
    }
  }
  if (options.through !== undefined) {
    const through = options.through as Record<string, unknown>
    if (typeof through !== 'object' || through === null || Array.isArray(through) ||
      !throughKeys.every((key) => Object.hasOwn(through, key))) {
      fail('through must be { table, from, to }')
    }
    const unknownThrough = unknownKey(through, new Set(throughKeys))
    if (unknownThrough !== undefined) fail(`through has an unknown option '${unknownThrough}' (known: ${throughKeys.join(', ')})`)
    if (!isTableName(through.table)) fail(`through.table '${String(through.table)}' must be a table name (${tableNameRule})`)
    for (const key of ['from', 'to'] as const) {
      if (!isIdentifier(through[key])) fail(`through.${key} '${String(through[key])}' must be a column name (${columnNameRule})`)
    }
    if (options.many !== true) fail('through needs many: true')
  }
  if (options.foreignKey !== undefined && options.many !== true) fail('foreignKey needs many: true')
  if (options.foreignKey !== undefined && options.through !== undefined) fail('a relation has either foreignKey or through, not both')
  if (options.column !== undefined && options.many === true) fail('column is for to-one relations; a to-many relation takes foreignKey or through')
}
