// What `fastify-expand pull` reads from a PostgreSQL database: the tables of
// the current schema (the first of the search path) from pg_catalog.

import { sql, type Kysely } from 'kysely'
import { databaseModel, type ColumnType, type DatabaseModel, type TableModel } from './model.js'

/** Types by pg_type.typname; an enum type (typtype 'e') is read from pg_enum, the rest is left out. */
const kindsByTypeName: Readonly<Record<string, ColumnType>> = {
  int2: { kind: 'integer' },
  int4: { kind: 'integer' },
  // pg returns an int8 as text: declared Type.String(), read as its exact text.
  int8: { kind: 'wide-integer' },
  // pg returns a numeric as text.
  numeric: { kind: 'decimal-text' },
  float4: { kind: 'number' },
  float8: { kind: 'number' },
  bool: { kind: 'boolean' },
  text: { kind: 'text' },
  varchar: { kind: 'text' },
  bpchar: { kind: 'text' },
  citext: { kind: 'text' },
  uuid: { kind: 'text' },
  date: { kind: 'date' },
  timestamp: { kind: 'date-time' },
  timestamptz: { kind: 'date-time' },
}

interface ColumnRow {
  table: string
  column: string
  attnum: number
  nullable: boolean
  typname: string
  typtype: string
  type_oid: string
  declared: string
}
interface ConstraintRow { table: string; contype: 'p' | 'f'; conkey: number[]; confkey: number[] | null; referenced: string | null }

export async function introspectPostgres (db: Kysely<any>): Promise<DatabaseModel> {
  const { rows: columnRows } = await sql<ColumnRow>`
    select c.relname as "table", a.attname as "column", a.attnum, not a.attnotnull as nullable, t.typname, t.typtype,
      t.oid::text as type_oid, format_type(a.atttypid, a.atttypmod) as declared
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    join pg_type t on t.oid = a.atttypid
    where n.nspname = current_schema() and c.relkind in ('r', 'p')
    order by c.relname, a.attnum`.execute(db)
  const { rows: labelRows } = await sql<{ type_oid: string; label: string }>`
    select enumtypid::text as type_oid, enumlabel as label from pg_enum order by enumtypid, enumsortorder`.execute(db)
  // A key to a table of another schema names it schema.table: it is not generated, so it is reported, not followed.
  const { rows: constraintRows } = await sql<ConstraintRow>`
    select c.relname as "table", co.contype, co.conkey, co.confkey,
      case when fn.nspname = current_schema() then fc.relname else fn.nspname || '.' || fc.relname end as referenced
    from pg_constraint co
    join pg_class c on c.oid = co.conrelid
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_class fc on fc.oid = co.confrelid
    left join pg_namespace fn on fn.oid = fc.relnamespace
    where n.nspname = current_schema() and co.contype in ('p', 'f')
    order by c.relname, co.conname`.execute(db)

  const labels = new Map<string, string[]>()
  for (const row of labelRows) labels.set(row.type_oid, [...(labels.get(row.type_oid) ?? []), row.label])
  const columnsOf = new Map<string, ColumnRow[]>()
  for (const row of columnRows) columnsOf.set(row.table, [...(columnsOf.get(row.table) ?? []), row])
  const named = (table: string, attnums: readonly number[]) =>
    attnums.map((attnum) => columnsOf.get(table)?.find((column) => column.attnum === attnum)?.column ?? '')

  const tables: TableModel[] = [...columnsOf].map(([name, columns]) => {
    const constraints = constraintRows.filter((row) => row.table === name)
    const primary = constraints.find((row) => row.contype === 'p')
    return {
      name,
      columns: columns.map((column) => ({ name: column.column, type: columnType(column, labels), nullable: column.nullable })),
      primaryKey: primary === undefined ? [] : named(name, primary.conkey),
      foreignKeys: constraints.filter((row) => row.contype === 'f').map((row) => ({
        columns: named(name, row.conkey),
        referencedTable: row.referenced!,
        referencedColumns: named(row.referenced!, row.confkey!),
      })),
    }
  })
  return databaseModel('postgres', tables)
}

function columnType (column: ColumnRow, labels: ReadonlyMap<string, readonly string[]>): ColumnType {
  if (column.typtype === 'e') return { kind: 'enum', values: labels.get(column.type_oid) ?? [] }
  return (column.typtype === 'b' ? kindsByTypeName[column.typname] : undefined) ?? { kind: 'unsupported', databaseType: column.declared }
}
