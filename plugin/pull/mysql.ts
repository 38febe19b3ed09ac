// What `fastify-expand pull` reads from a MariaDB or MySQL database: the
// base tables of the connection's database from information_schema.

import { sql, type Kysely } from 'kysely'
import { databaseModel, type ColumnType, type DatabaseModel, type ForeignKeyModel, type TableModel } from './model.js'

/** Types by information_schema's DATA_TYPE; tinyint(1) is a boolean and an ENUM a union of its values. */
const kindsByDataType: Readonly<Record<string, ColumnType>> = {
  tinyint: { kind: 'integer' },
  smallint: { kind: 'integer' },
  mediumint: { kind: 'integer' },
  int: { kind: 'integer' },
  // Declared Type.String(): read as its exact text.
  bigint: { kind: 'wide-integer' },
  // mysql2 returns a DECIMAL as text.
  decimal: { kind: 'decimal-text' },
  float: { kind: 'number' },
  double: { kind: 'number' },
  char: { kind: 'text' },
  varchar: { kind: 'text' },
  tinytext: { kind: 'text' },
  text: { kind: 'text' },
  mediumtext: { kind: 'text' },
  longtext: { kind: 'text' },
  date: { kind: 'date' },
  datetime: { kind: 'date-time' },
  timestamp: { kind: 'date-time' },
}

interface ColumnRow { table_name: string; column_name: string; nullable: string; data_type: string; column_type: string }
interface KeyRow {
  table_name: string
  name: string
  column_name: string
  referenced_schema: string | null
  referenced_table: string | null
  referenced_column: string | null
}

export async function introspectMysql (db: Kysely<any>): Promise<DatabaseModel> {
  const { rows: columnRows } = await sql<ColumnRow>`
    select c.table_name as table_name, c.column_name as column_name, c.is_nullable as nullable, c.data_type as data_type,
      c.column_type as column_type
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = database() and t.table_type = 'BASE TABLE'
    order by c.table_name, c.ordinal_position`.execute(db)
  const { rows: keyRows } = await sql<KeyRow>`
    select table_name as table_name, constraint_name as name, column_name as column_name,
      referenced_table_schema as referenced_schema, referenced_table_name as referenced_table, referenced_column_name as referenced_column
    from information_schema.key_column_usage
    where table_schema = database() and (constraint_name = 'PRIMARY' or referenced_table_name is not null)
    order by table_name, constraint_name, ordinal_position`.execute(db)
  const { rows: [current] } = await sql<{ name: string }>`select database() as name`.execute(db)

  const columnsOf = new Map<string, ColumnRow[]>()
  for (const row of columnRows) columnsOf.set(row.table_name, [...(columnsOf.get(row.table_name) ?? []), row])
  const tables: TableModel[] = [...columnsOf].map(([name, columns]) => {
    const keys = keyRows.filter((row) => row.table_name === name)
    const foreignKeys = new Map<string, { columns: string[]; referencedTable: string; referencedColumns: string[] }>()
    for (const row of keys.filter((key) => key.referenced_table !== null)) {
      // A key to a table of another database names it database.table: it is not generated, so it is reported, not followed.
      const referencedTable = row.referenced_schema === current!.name
        ? row.referenced_table!
        : `${row.referenced_schema}.${row.referenced_table}`
      const key = foreignKeys.get(row.name) ?? { columns: [], referencedTable, referencedColumns: [] }
      key.columns.push(row.column_name)
      key.referencedColumns.push(row.referenced_column!)
      foreignKeys.set(row.name, key)
    }
    return {
      name,
      columns: columns.map((column) => ({
        name: column.column_name,
        type: mysqlColumnType(column),
        nullable: column.nullable === 'YES',
      })),
      primaryKey: keys.filter((key) => key.name === 'PRIMARY').map((key) => key.column_name),
      foreignKeys: [...foreignKeys.values()] satisfies ForeignKeyModel[],
    }
  })
  return databaseModel('mysql', tables)
}

export function mysqlColumnType (column: Pick<ColumnRow, 'data_type' | 'column_type'>): ColumnType {
  const { data_type: dataType, column_type: columnType } = column
  const type = dataType.toLowerCase()
  if (type === 'tinyint' && columnType.toLowerCase().startsWith('tinyint(1)')) return { kind: 'boolean' }
  if (type === 'enum') {
    const values = [...columnType.matchAll(/'((?:[^']|'')*)'/g)].map((match) => match[1]!.replace(/''/g, "'"))
    return { kind: 'enum', values }
  }
  return kindsByDataType[type] ?? { kind: 'unsupported', databaseType: columnType.toLowerCase() }
}
