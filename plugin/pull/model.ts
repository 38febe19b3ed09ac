// What `fastify-expand pull` reads from a database, in one form for every
// dialect: each introspection module (sqlite.ts, postgres.ts, mysql.ts)
// produces a DatabaseModel and generate.ts turns it into code.

/**
 * A column's type as the generated schema declares it, from what the
 * dialect's driver returns for it:
 * - `integer`: a number (`Type.Integer()`);
 * - `wide-integer`: a bigint / int8, declared a plain string so the plugin reads its exact text (`Type.String()`);
 * - `decimal-text`: a numeric or decimal the driver returns as text (pg, mysql2: `Type.String()`);
 * - `number`: a float, or a numeric SQLite returns as a number (`Type.Number()`);
 * - `boolean`, `text`, `date` (`format: 'date'`), `date-time` (`format: 'date-time'`);
 * - `enum`: a PostgreSQL enum type or a MariaDB/MySQL ENUM (a union of its labels);
 * - `unsupported`: anything else (binary, JSON, time, arrays, ...): the column is left out, with the reason printed.
 */
export type ColumnType =
  | { readonly kind: 'integer' }
  | { readonly kind: 'wide-integer' }
  | { readonly kind: 'decimal-text' }
  | { readonly kind: 'number' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'text' }
  | { readonly kind: 'date' }
  | { readonly kind: 'date-time' }
  | { readonly kind: 'enum'; readonly values: readonly string[] }
  | { readonly kind: 'unsupported'; readonly databaseType: string }

export type ColumnKind = ColumnType['kind']

export interface ColumnModel {
  readonly name: string
  readonly type: ColumnType
  readonly nullable: boolean
}

/** A foreign key of one column or more (composite ones are reported and skipped by the generator). */
export interface ForeignKeyModel {
  readonly columns: readonly string[]
  readonly referencedTable: string
  readonly referencedColumns: readonly string[]
}

export interface TableModel {
  readonly name: string
  /** In the table's column order. */
  readonly columns: readonly ColumnModel[]
  /** The primary key's columns in key order; empty when the table has none. */
  readonly primaryKey: readonly string[]
  readonly foreignKeys: readonly ForeignKeyModel[]
}

export interface DatabaseModel {
  readonly dialect: 'sqlite' | 'postgres' | 'mysql'
  /** Sorted by name, so the generated module does not depend on the catalog's order. */
  readonly tables: readonly TableModel[]
}

/**
 * The model of a database from its catalog, in one order whatever the
 * catalog's: tables by name, each table's foreign keys by their columns
 * (columns stay in the table's order).
 */
export function databaseModel (dialect: DatabaseModel['dialect'], tables: readonly TableModel[]): DatabaseModel {
  const key = (foreignKey: ForeignKeyModel) => foreignKey.columns.join(',')
  return {
    dialect,
    tables: [...tables]
      .sort((a, b) => compare(a.name, b.name))
      .map((table) => ({ ...table, foreignKeys: [...table.foreignKeys].sort((a, b) => compare(key(a), key(b))) })),
  }
}

function compare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
