import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { columnNameRule, isIdentifier } from './checks.js'
import { messages } from '../errors.js'

// Aggregates and computed fields: fields a resource derives rather than
// stores, as `defineResource` takes them (`aggregates`, `computed`), and the
// checks of their definitions.

/**
 * A count or aggregate over a to-many or many-to-many relation of the
 * resource: `{ count: 'pets' }`, `{ max: ['pets', 'born'] }` (a field of the
 * related resource). `where` narrows the related rows it reads, its columns
 * written `table.column` of the related table, as `scope` writes them.
 */
export type AggregateDefinition<Relation extends string = string> =
  | { readonly count: Relation; readonly where?: AggregateCondition }
  | { readonly min: readonly [Relation, string]; readonly where?: AggregateCondition }
  | { readonly max: readonly [Relation, string]; readonly where?: AggregateCondition }
  | { readonly sum: readonly [Relation, string]; readonly where?: AggregateCondition }
  | { readonly avg: readonly [Relation, string]; readonly where?: AggregateCondition }

/** The aggregate functions, as `AggregateDefinition` names them. */
export const aggregateFunctions = ['count', 'min', 'max', 'sum', 'avg'] as const
export type AggregateFunction = typeof aggregateFunctions[number]

/** An aggregate's `where`: a boolean expression over the related table (a definition's, the same for every request). */
// The tables are the application's: the builder is typed loosely, as the plugin's own statements are.
export type AggregateCondition = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>

/**
 * A field computed by the database in the statement that reads the row: an
 * expression over the resource's table (columns written `table.column`),
 * and the schema of its value.
 */
export interface ComputedDefinition<Schema extends object = object> {
  readonly schema: Schema
  // The tables are the application's: the builder is typed loosely, as the plugin's own statements are.
  readonly sql: (eb: ExpressionBuilder<any, any>) => Expression<unknown>
}

/** The function an aggregate applies, and the relation it reads. */
export function aggregateFunctionOf (aggregate: AggregateDefinition): AggregateFunction {
  return aggregateFunctions.find((name) => Object.hasOwn(aggregate, name))!
}

export function aggregateRelation (aggregate: AggregateDefinition): string {
  const argument = (aggregate as Record<string, unknown>)[aggregateFunctionOf(aggregate)]
  return typeof argument === 'string' ? argument : (argument as readonly [string, string])[0]
}

/** The related resource's field an aggregate other than `count` reads; undefined for `count`. */
export function aggregateField (aggregate: AggregateDefinition): string | undefined {
  const argument = (aggregate as Record<string, unknown>)[aggregateFunctionOf(aggregate)]
  return typeof argument === 'string' ? undefined : (argument as readonly [string, string])[1]
}

/** A derived field's name: a column name's form, and no field of the schema (its value is not stored). */
function checkDerivedName (name: string, where: string, properties: Record<string, unknown>, fail: (message: string) => never): void {
  if (!isIdentifier(name)) fail(messages.notAColumnName(`${where}.${name}`, name, columnNameRule))
  if (Object.hasOwn(properties, name)) fail(messages.derivedInSchema(where, name))
}

export function checkAggregates (
  map: unknown, properties: Record<string, unknown>, fail: (message: string) => never
): Record<string, AggregateDefinition> {
  if (map === undefined) return {}
  if (typeof map !== 'object' || map === null || Array.isArray(map)) fail(messages.badDerivedMap('aggregates'))
  const checked: Record<string, AggregateDefinition> = {}
  for (const [name, aggregate] of Object.entries(map as Record<string, unknown>)) {
    checkDerivedName(name, 'aggregates', properties, fail)
    const failHere = (message: string): never => fail(`aggregates.${name}: ${message}`)
    if (typeof aggregate !== 'object' || aggregate === null || Array.isArray(aggregate)) failHere(messages.badAggregate(aggregateFunctions))
    const keys = Object.keys(aggregate as object)
    const functions = keys.filter((key) => (aggregateFunctions as readonly string[]).includes(key))
    if (functions.length !== 1) failHere(messages.badAggregate(aggregateFunctions))
    const unknown = keys.find((key) => key !== functions[0] && key !== 'where')
    if (unknown !== undefined) failHere(messages.unknownDefinitionOption(unknown, [...aggregateFunctions, 'where']))
    const argument = (aggregate as Record<string, unknown>)[functions[0]!]
    const fits = functions[0] === 'count'
      ? isIdentifier(argument)
      : Array.isArray(argument) && argument.length === 2 && argument.every(isIdentifier)
    if (!fits) failHere(messages.badAggregateArgument(functions[0]!))
    const { where } = aggregate as { where?: unknown }
    if (where !== undefined && typeof where !== 'function') failHere(messages.aggregateWhereNotFunction)
    checked[name] = aggregate as AggregateDefinition
  }
  return checked
}

export function checkComputed (
  map: unknown, properties: Record<string, unknown>, fail: (message: string) => never
): Record<string, ComputedDefinition> {
  if (map === undefined) return {}
  if (typeof map !== 'object' || map === null || Array.isArray(map)) fail(messages.badDerivedMap('computed'))
  const checked: Record<string, ComputedDefinition> = {}
  for (const [name, computed] of Object.entries(map as Record<string, unknown>)) {
    checkDerivedName(name, 'computed', properties, fail)
    const { schema, sql, ...rest } = (typeof computed === 'object' && computed !== null ? computed : {}) as Record<string, unknown>
    if (typeof schema !== 'object' || schema === null || typeof sql !== 'function') fail(messages.badComputed(name))
    const unknown = Object.keys(rest)[0]
    if (unknown !== undefined) fail(`computed.${name}: ${messages.unknownDefinitionOption(unknown, ['schema', 'sql'])}`)
    checked[name] = computed as ComputedDefinition
  }
  return checked
}
