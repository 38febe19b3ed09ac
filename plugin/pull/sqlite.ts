// What `fastify-expand pull` reads from a SQLite database: its tables'
// columns, primary keys and foreign keys through the table-valued pragmas.

import { sql, type Kysely } from 'kysely'
import { databaseModel, type ColumnType, type DatabaseModel, type ForeignKeyModel, type TableModel } from './model.js'

/**
 * A declared type's kind by SQLite's affinity rules (a type holding INT is an
 * integer, CHAR, CLOB or TEXT text, REAL, FLOA or DOUB a float), with the
 * names that say more: BIGINT and INT8 are wide integers, BOOL a boolean (its
 * 0 and 1 are read as false and true), DATE a date, DATETIME and TIMESTAMP
 * date-times, NUMERIC and DECIMAL numbers (the driver returns a number).
 * JSON, BLOB and no type at all are left out.
 */
export function sqliteColumnType (declared: string): ColumnType {
  const type = declared.toUpperCase()
  const unsupported = { kind: 'unsupported', databaseType: declared === '' ? 'no declared type' : declared.toLowerCase() } as const
  if (type === '' || type.includes('JSON') || type.includes('BLOB')) return unsupported
  if (type.includes('BOOL')) return { kind: 'boolean' }
  if (/BIGINT|INT8|UNSIGNED BIG INT/.test(type)) return { kind: 'wide-integer' }
  if (type.includes('INT')) return { kind: 'integer' }
  if (/DATETIME|TIMESTAMP/.test(type)) return { kind: 'date-time' }
  if (/^DATE\b/.test(type)) return { kind: 'date' }
  if (/CHAR|CLOB|TEXT/.test(type)) return { kind: 'text' }
  if (/REAL|FLOA|DOUB|NUMERIC|DECIMAL/.test(type)) return { kind: 'number' }
  return unsupported
}

interface ColumnRow { name: string; type: string; notnull: number; pk: number }
interface ForeignKeyRow { id: number; table: string; from: string; to: string | null }

export async function introspectSqlite (db: Kysely<any>): Promise<DatabaseModel> {
  const { rows: tableRows } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name`.execute(db)
  const read = async (name: string) => {
    const { rows: columns } = await sql<ColumnRow>`select name, type, "notnull", pk from pragma_table_info(${name}) order by cid`.execute(db)
    const { rows: keys } = await sql<ForeignKeyRow>`
      select id, "table", "from", "to" from pragma_foreign_key_list(${name}) order by id, seq`.execute(db)
    return { name, columns, keys }
  }
  const readTables = await Promise.all(tableRows.map((row) => read(row.name)))
  const primaryKeyOf = new Map(readTables.map(({ name, columns }) => [name, primaryKey(columns)]))
  const tables: TableModel[] = readTables.map(({ name, columns, keys }) => ({
    name,
    columns: columns.map((column) => ({
      name: column.name,
      type: sqliteColumnType(column.type),
      // A primary key column never holds NULL (SQLite would let a key that is no rowid hold it: read as not null).
      nullable: column.notnull === 0 && column.pk === 0,
    })),
    primaryKey: primaryKeyOf.get(name)!,
    foreignKeys: foreignKeys(keys, primaryKeyOf),
  }))
  return databaseModel('sqlite', tables)
}

function primaryKey (columns: readonly ColumnRow[]): string[] {
  return columns.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((column) => column.name)
}

/** The pragma's rows, one per column of each key; a key written without its columns references the primary key. */
function foreignKeys (rows: readonly ForeignKeyRow[], primaryKeyOf: ReadonlyMap<string, readonly string[]>): ForeignKeyModel[] {
  const byId = new Map<number, ForeignKeyRow[]>()
  for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row])
  return [...byId.values()].map((keyRows) => {
    const referencedTable = keyRows[0]!.table
    const implied = primaryKeyOf.get(referencedTable) ?? []
    return {
      columns: keyRows.map((row) => row.from),
      referencedTable,
      referencedColumns: keyRows.map((row, index) => row.to ?? implied[index] ?? ''),
    }
  })
}
