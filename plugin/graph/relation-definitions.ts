import { columnNameRule, isIdentifier, isPositiveInteger, isResource, isTableName, tableNameRule, unknownKey } from './checks.js'
import { messages } from '../errors.js'
import type { RelationDefinition, RelationOptions } from './resource.js'

// What a resource's relations and keys may hold, checked by `defineResource` (resource.ts) before any other
// resource is known: references, options, key columns and the primary key's fields.

const relationOptionKeys = new Set(['many', 'fields', 'omit', 'expand', 'column', 'foreignKey', 'through', 'orderBy', 'limit', 'load'])
const throughKeys = ['table', 'from', 'to']

/** A relation map (`expandable`, `nested`), each relation checked against its field's schema. */
export function checkRelationMap (
  map: unknown,
  where: string,
  properties: Record<string, unknown>,
  checkField: (field: unknown, where: string) => void,
  fail: (message: string) => never
): Record<string, RelationDefinition> {
  if (map === undefined) return {}
  if (typeof map !== 'object' || map === null || Array.isArray(map)) fail(messages.badRelationMap(where))
  const checked: Record<string, RelationDefinition> = {}
  for (const [field, relation] of Object.entries(map as Record<string, unknown>)) {
    checkField(field, where)
    const failHere = (message: string) => fail(messages.relationField(where, field, message))
    checkRelationDefinition(relation, failHere)
    // The field's schema says whether it holds one identifier or an array of them.
    const many = relationOptions(relation as RelationDefinition).many === true
    const shape = valueShape(properties[field])
    if (many && shape === 'single') failHere(messages.manyNeedsArray(field))
    if (!many && shape === 'array') failHere(messages.arrayNeedsMany(field))
    checked[field] = relation as RelationDefinition
  }
  return checked
}

/** A relation's options: the second member of its tuple, none for a bare reference. */
export function relationOptions (relation: RelationDefinition): RelationOptions {
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
    fail(messages.badReference(String(reference)))
  }
  if (!Array.isArray(relation)) return checkReference(relation)
  if (relation.length !== 2) fail(messages.badRelationTuple)
  checkReference(relation[0])
  const options = relation[1] as Record<string, unknown>
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail(messages.relationOptionsNotObject)
  const unknownOption = unknownKey(options, relationOptionKeys)
  if (unknownOption !== undefined) fail(messages.unknownDefinitionOption(unknownOption, [...relationOptionKeys]))
  if (options.many !== undefined && typeof options.many !== 'boolean') fail(messages.badMany)
  // A relation resolved by a function reads no table: the options naming its table's keys and rows do not apply.
  if (options.load !== undefined) {
    if (typeof options.load !== 'function') fail(messages.badLoad)
    if (Array.isArray(options.column)) fail(messages.compositeKeyNotSupported('load'))
    for (const key of ['through', 'foreignKey', 'orderBy', 'limit'] as const) {
      if (options[key] !== undefined) fail(messages.loadWithKeys(key))
    }
  }
  for (const key of ['fields', 'omit', 'expand'] as const) {
    const list = options[key]
    if (list !== undefined && (!Array.isArray(list) || !list.every((item) => typeof item === 'string' && item !== ''))) {
      fail(messages.notFieldNames(key))
    }
  }
  for (const key of ['column', 'foreignKey'] as const) {
    if (options[key] !== undefined) checkKeyColumns(options[key], key, fail)
  }
  if (options.orderBy !== undefined) {
    if (typeof options.orderBy !== 'string' || !isIdentifier(options.orderBy.replace(/^-/, ''))) {
      fail(messages.badOrderBy(String(options.orderBy), columnNameRule))
    }
    if (options.many !== true) fail(messages.orderByNeedsMany)
  }
  if (options.limit !== undefined) {
    if (!isPositiveInteger(options.limit) || !Number.isSafeInteger(options.limit)) fail(messages.badRelationLimit(String(options.limit)))
    if (options.many !== true) fail(messages.limitNeedsMany)
    if (options.foreignKey === undefined && options.through === undefined) {
      fail(messages.limitNeedsKeys)
    }
  }
  if (options.through !== undefined) {
    const through = options.through as Record<string, unknown>
    if (typeof through !== 'object' || through === null || Array.isArray(through) ||
      !throughKeys.every((key) => Object.hasOwn(through, key))) {
      fail(messages.badThrough)
    }
    const unknownThrough = unknownKey(through, new Set(throughKeys))
    if (unknownThrough !== undefined) fail(messages.unknownThroughOption(unknownThrough, throughKeys))
    if (!isTableName(through.table)) fail(messages.notATableName('through.table', String(through.table), tableNameRule))
    for (const key of ['from', 'to'] as const) checkKeyColumns(through[key], `through.${key}`, fail)
    if (options.many !== true) fail(messages.throughNeedsMany)
  }
  if (options.foreignKey !== undefined && options.many !== true) fail(messages.foreignKeyNeedsMany)
  if (options.foreignKey !== undefined && options.through !== undefined) fail(messages.foreignKeyAndThrough)
  if (options.column !== undefined && options.many === true) fail(messages.columnOnToMany)
}

/**
 * The fields of the primary key, in key order: `id` by default, one field, or
 * the fields of a composite key (at least two, each once, each an integer or
 * a string field, whose values the identifier writes: graph/identifiers.ts).
 */
export function checkKeyFields (
  primaryKey: unknown, properties: Record<string, unknown>, fail: (message: string) => never
): readonly string[] {
  if (primaryKey === undefined) return ['id']
  if (!Array.isArray(primaryKey)) return [primaryKey as string]
  if (primaryKey.length < 2 || new Set(primaryKey).size !== primaryKey.length || !primaryKey.every((field) => typeof field === 'string')) {
    fail(messages.badCompositeKey(primaryKey.map(String)))
  }
  for (const field of primaryKey as string[]) {
    if (!Object.hasOwn(properties, field)) fail(messages.primaryKeyNotInItsSchema(field))
    if (keyPartType(properties[field]) === undefined) fail(messages.compositeKeyPartType(field))
  }
  return primaryKey as string[]
}

/** What a composite key's part holds, as its identifier writes it: an integer, or a string (undefined for anything else). */
export function keyPartType (schema: unknown): 'integer' | 'string' | undefined {
  const type = (schema as { type?: unknown } | null)?.type
  return type === 'integer' || type === 'string' ? type : undefined
}

/** A relation's key columns: a column name, or the names of a composite key's columns (two at least). */
function checkKeyColumns (columns: unknown, what: string, fail: (message: string) => never): void {
  if (!Array.isArray(columns)) {
    if (!isIdentifier(columns)) fail(messages.notAColumnName(what, String(columns), columnNameRule))
    return
  }
  if (columns.length < 2) fail(messages.keyColumnsTooFew(what))
  for (const column of columns) if (!isIdentifier(column)) fail(messages.notAColumnName(what, String(column), columnNameRule))
}
