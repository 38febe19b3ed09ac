import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import t from 'tap'
import type { ColumnType } from '../../plugin/pull/model.js'
import { mysqlColumnType } from '../../plugin/pull/mysql.js'
import { introspectSqlite, sqliteColumnType } from '../../plugin/pull/sqlite.js'

// The column types each dialect's introspection reads (the music fixture covers the rest on every dialect:
// test/pull/generated-module.test.ts), and SQLite's catalog details: a foreign key written without its columns
// references the primary key, and SQLite's own tables and views are not tables to generate.

t.test('SQLite declared types, by its affinity rules and the names that say more', async (t) => {
  const cases: Array<[string, ColumnType]> = [
    ['', { kind: 'unsupported', databaseType: 'no declared type' }],
    ['JSON', { kind: 'unsupported', databaseType: 'json' }],
    ['BLOB', { kind: 'unsupported', databaseType: 'blob' }],
    ['geometry', { kind: 'unsupported', databaseType: 'geometry' }],
    ['boolean', { kind: 'boolean' }],
    ['BIGINT', { kind: 'wide-integer' }],
    ['int8', { kind: 'wide-integer' }],
    ['UNSIGNED BIG INT', { kind: 'wide-integer' }],
    ['INTEGER', { kind: 'integer' }],
    ['mediumint', { kind: 'integer' }],
    ['datetime', { kind: 'date-time' }],
    ['TIMESTAMP', { kind: 'date-time' }],
    ['date', { kind: 'date' }],
    ['varchar(20)', { kind: 'text' }],
    ['CLOB', { kind: 'text' }],
    ['real', { kind: 'number' }],
    ['double precision', { kind: 'number' }],
    ['numeric(10, 2)', { kind: 'number' }],
    ['DECIMAL', { kind: 'number' }],
  ]
  for (const [declared, type] of cases) t.same(sqliteColumnType(declared), type, declared)
})

t.test('MariaDB/MySQL types', async (t) => {
  const cases: Array<[string, string, ColumnType]> = [
    ['tinyint', 'tinyint(1)', { kind: 'boolean' }],
    ['tinyint', 'tinyint(4)', { kind: 'integer' }],
    ['int', 'int(10) unsigned', { kind: 'integer' }],
    ['bigint', 'bigint(20) unsigned', { kind: 'wide-integer' }],
    ['decimal', 'decimal(10,2)', { kind: 'decimal-text' }],
    ['double', 'double', { kind: 'number' }],
    ['enum', "enum('it''s','a,b','')", { kind: 'enum', values: ["it's", 'a,b', ''] }],
    ['json', 'json', { kind: 'unsupported', databaseType: 'json' }],
    ['time', 'time(3)', { kind: 'unsupported', databaseType: 'time(3)' }],
    ['DATETIME', 'datetime(6)', { kind: 'date-time' }],
  ]
  for (const [dataType, columnType, type] of cases) {
    t.same(mysqlColumnType({ data_type: dataType, column_type: columnType }), type, columnType)
  }
})

t.test('SQLite: a key written without columns, autoincrement and views', async (t) => {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) })
  t.teardown(() => db.destroy())
  for (const statement of [
    'create table owners (code text primary key, name text)',
    'create table pets (id integer primary key autoincrement, owner_code text not null references owners, nickname)',
    'create view named_pets as select id, nickname from pets',
  ]) await sql.raw(statement).execute(db)
  t.same(await introspectSqlite(db), {
    dialect: 'sqlite',
    tables: [
      {
        name: 'owners',
        columns: [{ name: 'code', type: { kind: 'text' }, nullable: false }, { name: 'name', type: { kind: 'text' }, nullable: true }],
        primaryKey: ['code'],
        foreignKeys: [],
      },
      {
        name: 'pets',
        columns: [
          { name: 'id', type: { kind: 'integer' }, nullable: false },
          { name: 'owner_code', type: { kind: 'text' }, nullable: false },
          { name: 'nickname', type: { kind: 'unsupported', databaseType: 'no declared type' }, nullable: true },
        ],
        primaryKey: ['id'],
        foreignKeys: [{ columns: ['owner_code'], referencedTable: 'owners', referencedColumns: ['code'] }],
      },
    ],
  })
})
