import type { TObject, TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { InvalidDefinitionError } from './errors.js'

/** The keys of a relation, for loading it from the database. */
export interface RelationKeys {
  /** to-one: the column of this resource's table holding the related id (default: the field's column). */
  column?: string
  /** to-many: the column of the related table holding this resource's primary key. */
  foreignKey?: string
  /** many-to-many: the join table, its column holding this resource's key and the one holding the related key. */
  through?: { table: string; from: string; to: string }
  /** to-many: order by this column of the related table instead of its primary key. */
  orderBy?: string
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

/** The four forms of a relation, as in drf-flex-fields: a resource, `[resource, options]`, a lazy reference, `[lazy reference, options]`. */
export type RelationDefinition = ResourceReference | readonly [ResourceReference, RelationOptions]

type FieldName<S extends TObject> = keyof S['properties'] & string

export interface ResourceDefinition<S extends TObject = TObject> {
  /** Unique within a registry (with `namespace`). */
  name: string
  /** Enables the qualified references `'namespace.Name'` and `'namespace.resources.Name'`. */
  namespace?: string
  /** Every field that may ever be shown; relation fields hold the identifier type. */
  schema: S
  /** The default fields, in output order. */
  fields: readonly FieldName<S>[]
  /** Relations a client may expand; those not in `fields` are deferred. */
  expandable?: { readonly [K in FieldName<S>]?: RelationDefinition }
  /** Relations always shown as nested objects (a nested serializer declared as a field). */
  nested?: { readonly [K in FieldName<S>]?: RelationDefinition }
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
  fieldsFor?: (request: FastifyRequest) => readonly FieldName<S>[] | undefined
}

/** A resource's row rule: the request's condition on the table, or undefined for none. */
// The tables are the application's: the builder is typed loosely, as the plugin's own statements are.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ResourceScope = (eb: ExpressionBuilder<any, any>, request: FastifyRequest) => Expression<SqlBool> | undefined

/** A defined resource: the definition, checked and frozen. */
export interface Resource<S extends TObject = TObject> extends Readonly<ResourceDefinition<S>> {
  readonly kind: 'fastify-expand/resource'
  readonly primaryKey: FieldName<S>
}

/**
 * A resource of any schema: what relations, routes and registries accept.
 * `Resource<TObject>` would not do: TypeBox's phantom `static` type makes a
 * specific schema unassignable to the general one.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyResource = Resource<any>

const definitionKeys = new Set(['name', 'namespace', 'schema', 'fields', 'expandable', 'nested', 'maxDepth', 'table', 'primaryKey', 'columns', 'scope', 'fieldsFor'])
const relationOptionKeys = new Set(['many', 'fields', 'omit', 'expand', 'column', 'foreignKey', 'through', 'orderBy'])
const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/

export function isResource (value: unknown): value is AnyResource {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'fastify-expand/resource'
}

/**
 * Declares a resource. Everything that can be checked without the other
 * resources is checked here; references are resolved by the plugin's registry.
 */
export function defineResource<S extends TObject> (definition: ResourceDefinition<S>): Resource<S> {
  const label = typeof definition?.name === 'string' ? `Resource '${definition.name}'` : 'Resource'
  const fail = (message: string): never => { throw new InvalidDefinitionError(`${label}: ${message}`) }

  if (typeof definition !== 'object' || definition === null) fail('the definition must be an object')
  for (const key of Object.keys(definition)) {
    if (!definitionKeys.has(key)) fail(`unknown option '${key}' (known: ${[...definitionKeys].join(', ')})`)
  }
  if (typeof definition.name !== 'string' || !identifier.test(definition.name)) fail('name must be an identifier')
  if (definition.namespace !== undefined && (typeof definition.namespace !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(definition.namespace))) {
    fail('namespace must be a dotted identifier')
  }
  const schema = definition.schema as TSchema
  if (typeof schema !== 'object' || schema === null || schema.type !== 'object' || typeof schema.properties !== 'object') {
    fail('schema must be a TypeBox Type.Object')
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

  const expandable = checkRelationMap(definition.expandable, 'expandable', checkField, fail)
  const nested = checkRelationMap(definition.nested, 'nested', checkField, fail)
  for (const field of Object.keys(nested)) {
    if (Object.hasOwn(expandable, field)) fail(`field '${field}' is both expandable and nested`)
  }

  if (definition.maxDepth !== undefined && (!Number.isInteger(definition.maxDepth) || definition.maxDepth < 1)) {
    fail('maxDepth must be a positive integer')
  }
  if (definition.table !== undefined && (typeof definition.table !== 'string' || definition.table === '')) fail('table must be a table name')
  const primaryKey = definition.primaryKey ?? 'id'
  if (!hasField(primaryKey) && definition.table !== undefined) fail(`primaryKey '${primaryKey}' is not in its schema`)
  if (definition.columns !== undefined) {
    if (typeof definition.columns !== 'object' || definition.columns === null) fail('columns must map fields to column names')
    for (const [field, column] of Object.entries(definition.columns)) {
      checkField(field, 'columns')
      if (typeof column !== 'string' || column === '') fail(`columns.${field} must be a column name`)
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
  }) as Resource<S>
}

function checkRelationMap (
  map: unknown,
  where: string,
  checkField: (field: unknown, where: string) => void,
  fail: (message: string) => never
): Record<string, RelationDefinition> {
  if (map === undefined) return {}
  if (typeof map !== 'object' || map === null || Array.isArray(map)) fail(`${where} must map field names to relations`)
  const checked: Record<string, RelationDefinition> = {}
  for (const [field, relation] of Object.entries(map as Record<string, unknown>)) {
    checkField(field, where)
    checkRelationDefinition(relation, (message) => fail(`${where} field '${field}': ${message}`))
    checked[field] = relation as RelationDefinition
  }
  return checked
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
  for (const key of Object.keys(options)) {
    if (!relationOptionKeys.has(key)) fail(`unknown option '${key}' (known: ${[...relationOptionKeys].join(', ')})`)
  }
  if (options.many !== undefined && typeof options.many !== 'boolean') fail('many must be a boolean')
  for (const key of ['fields', 'omit', 'expand'] as const) {
    const list = options[key]
    if (list !== undefined && (!Array.isArray(list) || !list.every((item) => typeof item === 'string' && item !== ''))) {
      fail(`${key} must be an array of field names`)
    }
  }
  for (const key of ['column', 'foreignKey', 'orderBy'] as const) {
    if (options[key] !== undefined && (typeof options[key] !== 'string' || options[key] === '')) fail(`${key} must be a column name`)
  }
  if (options.through !== undefined) {
    const through = options.through as Record<string, unknown>
    if (typeof through !== 'object' || through === null || !['table', 'from', 'to'].every((key) => typeof through[key] === 'string' && through[key] !== '')) {
      fail('through must be { table, from, to }')
    }
    if (options.many !== true) fail('through needs many: true')
  }
  if (options.foreignKey !== undefined && options.many !== true) fail('foreignKey needs many: true')
  if (options.foreignKey !== undefined && options.through !== undefined) fail('a relation has either foreignKey or through, not both')
  if (options.column !== undefined && options.many === true) fail('column is for to-one relations; a to-many relation takes foreignKey or through')
}
