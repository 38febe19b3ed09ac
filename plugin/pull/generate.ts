// The one generator of `fastify-expand pull`: a DatabaseModel (model.ts) to
// the text of a TypeScript module of `defineResource` calls, and what it
// left out and why. Pure: no database, no file.

import { isIdentifier, isTableName } from '../graph/checks.js'
import type { ColumnKind, ColumnModel, ColumnType, DatabaseModel, ForeignKeyModel, TableModel } from './model.js'
import { fieldName, resourceName, withoutKeySuffix, type Naming } from './naming.js'

export interface GenerateOptions {
  readonly naming: Naming
  /** The module the generated code imports `defineResource` from (and augments): 'fastify-expand'. */
  readonly importFrom?: string
}

/** Something the generated module leaves out: a table, a column or a relation, and why. */
export interface Skipped {
  readonly table: string
  readonly column?: string
  readonly reason: string
}

export interface GeneratedModule {
  readonly text: string
  /** The resources' names, in the module's order. */
  readonly resources: readonly string[]
  readonly skipped: readonly Skipped[]
}

/** How a skipped item is printed: `table: reason` or `table.column: reason`. */
export function describeSkipped (skipped: Skipped): string {
  return `${skipped.table}${skipped.column === undefined ? '' : `.${skipped.column}`}: ${skipped.reason}`
}

const databaseNames = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
  mysql: 'MariaDB/MySQL',
} satisfies Record<DatabaseModel['dialect'], string>

/** Why a table or column is left out when its name cannot be written into SQL as it is (plugin/graph/checks.ts). */
const notAName = 'its name is not letters, digits and underscores, not starting with a digit'

/** A column's TypeBox schema, not nullable; undefined for a type the generator leaves out. */
const schemaOf = {
  integer: () => 'Type.Integer()',
  // Declared a plain string: the plugin reads the column as its exact text (docs/databases.md, "Wide keys").
  'wide-integer': () => 'Type.String()',
  'decimal-text': () => 'Type.String()',
  number: () => 'Type.Number()',
  boolean: () => 'Type.Boolean()',
  text: () => 'Type.String()',
  date: () => "Type.String({ format: 'date' })",
  'date-time': () => "Type.String({ format: 'date-time' })",
  enum: (type) => type.values.map((value) => `Type.Literal(${quoted(value)})`),
  unsupported: () => undefined,
} satisfies { [K in ColumnKind]: (type: Extract<ColumnType, { kind: K }>) => string | string[] | undefined }

function columnSchema (column: ColumnModel): string | undefined {
  const type = column.type
  const members = (schemaOf[type.kind] as (type: ColumnType) => string | string[] | undefined)(type)
  if (members === undefined) return undefined
  const list = typeof members === 'string' ? [members] : members
  const all = column.nullable ? [...list, 'Type.Null()'] : list
  return all.length === 1 ? all[0] : `Type.Union([${all.join(', ')}])`
}

/** A JavaScript string literal in single quotes. */
function quoted (value: string): string {
  return `'${JSON.stringify(value).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`
}

interface Field {
  readonly name: string
  readonly schema: string
  /** The column it is read from: undefined for a to-many or many-to-many field. */
  readonly column?: string
  /** Its entry in `expandable`, when it is a relation. */
  readonly relation?: string
}

interface Generated {
  readonly table: TableModel
  readonly name: string
  readonly primaryKey: ColumnModel
  readonly fields: Field[]
}

/** A table of two columns, each a foreign key of its own to a generated table's key: a many-to-many link. */
interface ThroughTable {
  readonly table: TableModel
  readonly from: ForeignKeyModel
  readonly to: ForeignKeyModel
}

export function generateModule (model: DatabaseModel, options: GenerateOptions): GeneratedModule {
  const skipped: Skipped[] = []
  const skip = (table: string, reason: string, column?: string) => {
    skipped.push(column === undefined ? { table, reason } : { table, column, reason })
  }

  // Resources: tables with a primary key of one column of a supported type.
  const resources = new Map<string, Generated>()
  const taken = new Map<string, string>()
  const candidates: TableModel[] = []
  for (const table of model.tables) {
    if (!isTableName(table.name)) { skip(table.name, notAName); continue }
    candidates.push(table)
  }
  const throughTables: ThroughTable[] = []
  for (const table of candidates) {
    const through = asThroughTable(table, candidates)
    if (through !== undefined) { throughTables.push(through); continue }
    if (table.primaryKey.length === 0) { skip(table.name, 'no primary key'); continue }
    if (table.primaryKey.length > 1) { skip(table.name, `a composite primary key (${table.primaryKey.join(', ')}), not supported yet`); continue }
    const primaryKey = table.columns.find((column) => column.name === table.primaryKey[0])!
    if (primaryKey.type.kind === 'unsupported' || !isIdentifier(primaryKey.name)) {
      skip(table.name, `its primary key ${primaryKey.name} is not a column the generator reads (${typeName(primaryKey.type)})`)
      continue
    }
    const name = resourceName(table.name)
    if (!isIdentifier(name)) { skip(table.name, `its resource name ${name} is not an identifier`); continue }
    const other = taken.get(name)
    if (other !== undefined) { skip(table.name, `its resource name ${name} is taken by table ${other}`); continue }
    taken.set(name, table.name)
    resources.set(table.name, { table, name, primaryKey, fields: [] })
  }
  // Only keys to a generated resource's primary key become relations.
  const relationTarget = (key: ForeignKeyModel): Generated | undefined => {
    const target = resources.get(key.referencedTable)
    return target !== undefined && key.columns.length === 1 && key.referencedColumns[0] === target.primaryKey.name ? target : undefined
  }
  const keyType = (target: Generated) => columnSchema({ ...target.primaryKey, nullable: false })!

  for (const resource of resources.values()) {
    const { table } = resource
    const columnFields = new Set(table.columns.map((column) => fieldName(column.name, options.naming)))
    const toOne = new Map<string, Generated>()
    for (const key of table.foreignKeys) {
      const where = key.columns.join(', ')
      if (key.columns.length > 1) { skip(table.name, `the composite foreign key (${where}) to ${key.referencedTable} is not supported yet`); continue }
      const target = relationTarget(key)
      if (target === undefined) {
        skip(table.name, resources.has(key.referencedTable)
          ? `its foreign key to ${key.referencedTable}.${key.referencedColumns[0]} is not to the primary key: no relation`
          : `its foreign key to ${key.referencedTable} is not a relation: ${key.referencedTable} is not generated`, key.columns[0])
        continue
      }
      toOne.set(key.columns[0]!, target)
    }
    for (const column of table.columns) {
      const schema = columnSchema(column)
      if (!isIdentifier(column.name)) { skip(table.name, notAName, column.name); continue }
      if (schema === undefined) { skip(table.name, `unsupported type ${typeName(column.type)}`, column.name); continue }
      const target = toOne.get(column.name)
      const plain = fieldName(column.name, options.naming)
      if (target === undefined) { resource.fields.push({ name: plain, schema, column: column.name }); continue }
      const stripped = withoutKeySuffix(column.name)
      const named = stripped === undefined ? plain : fieldName(stripped, options.naming)
      const name = named !== plain && columnFields.has(named) ? plain : named
      resource.fields.push({ name, schema, column: column.name, relation: quoted(target.name) })
    }
  }

  // To-many relations, then many-to-many ones, in table order.
  const addRelation = (resource: Generated, name: string, field: Omit<Field, 'name'>, table: string, column: string) => {
    if (resource.fields.some((existing) => existing.name === name)) {
      skip(table, `its relation ${resource.name}.${name} is not generated: ${resource.name} has a field ${name}`, column)
      return
    }
    resource.fields.push({ name, ...field })
  }
  for (const referencing of resources.values()) {
    const keys = referencing.table.foreignKeys.filter((key) => relationTarget(key) !== undefined && key.columns.length === 1)
    for (const key of keys) {
      const target = relationTarget(key)!
      const column = key.columns[0]!
      const toSameTarget = keys.filter((other) => other.referencedTable === key.referencedTable).length
      const name = fieldName(toSameTarget > 1 ? `${withoutKeySuffix(column) ?? column}_${referencing.table.name}` : referencing.table.name, options.naming)
      addRelation(target, name, {
        schema: `Type.Array(${keyType(referencing)})`,
        relation: `[${quoted(referencing.name)}, { many: true, foreignKey: ${quoted(column)} }]`,
      }, referencing.table.name, column)
    }
  }
  for (const { table, from, to } of throughTables) {
    const reason = 'a many-to-many through table'
    if (relationTarget(from) === undefined || relationTarget(to) === undefined) {
      skip(table.name, `${reason} between tables that are not both generated`)
      continue
    }
    const links: Array<[ForeignKeyModel, ForeignKeyModel]> = [[from, to], [to, from]]
    const names = links.map(([, far]) => {
      const farTable = far.referencedTable
      return fieldName(from.referencedTable === to.referencedTable ? `${withoutKeySuffix(far.columns[0]!) ?? far.columns[0]!}_${farTable}` : farTable, options.naming)
    })
    links.forEach(([near, far], index) => {
      const source = relationTarget(near)!
      const target = relationTarget(far)!
      const through = `{ table: ${quoted(table.name)}, from: ${quoted(near.columns[0]!)}, to: ${quoted(far.columns[0]!)} }`
      addRelation(source, names[index]!, {
        schema: `Type.Array(${keyType(target)})`,
        relation: `[${quoted(target.name)}, { many: true, through: ${through} }]`,
      }, table.name, near.columns[0]!)
    })
    const linked = links.map((_, index) => `${relationTarget(links[index]![0])!.name}.${names[index]}`).join(' and ')
    skip(table.name, `${reason} (${linked}), not a resource itself: composite keys are not supported yet`)
  }

  const generated = [...resources.values()]
  return { text: moduleText(model, generated, options), resources: generated.map((resource) => resource.name), skipped }
}

function typeName (type: ColumnType): string {
  return type.kind === 'unsupported' ? type.databaseType : type.kind
}

/**
 * A table whose only columns are two foreign keys of one column each, to
 * generated tables' primary keys (whatever its own key): read as a
 * many-to-many link, not as a resource.
 */
function asThroughTable (table: TableModel, tables: readonly TableModel[]): ThroughTable | undefined {
  if (table.columns.length !== 2 || table.foreignKeys.length !== 2) return undefined
  const [from, to] = table.foreignKeys as [ForeignKeyModel, ForeignKeyModel]
  const keyed = (key: ForeignKeyModel) => {
    const target = tables.find((candidate) => candidate.name === key.referencedTable)
    return key.columns.length === 1 && target !== undefined && target.primaryKey.length === 1 &&
      key.referencedColumns[0] === target.primaryKey[0]
  }
  if (!keyed(from) || !keyed(to) || from.columns[0] === to.columns[0]) return undefined
  return { table, from, to }
}

function moduleText (model: DatabaseModel, resources: readonly Generated[], options: GenerateOptions): string {
  const from = options.importFrom ?? 'fastify-expand'
  const lines = [
    `// Generated by \`fastify-expand pull\` from a ${databaseNames[model.dialect]} database, fields named --naming ${options.naming}.`,
    '// It is a start: edit it (pulling again overwrites it only with --force).',
    '//',
    '// - A resource is named after its table in PascalCase, a plural\'s last word made singular where that is plain',
    '//   (genres: Genre, categories: Category).',
    '// - A field is named after its column; a foreign key\'s field drops the column\'s _id, Id or ID suffix',
    '//   (artist_id: artist) and holds the related key.',
    '// - A to-many field is named after the referencing table; where that table has two foreign keys or more to',
    `//   this one, the key's field comes first (flights.origin_id: Airport.${fieldName('origin_flights', options.naming)}).`,
    '// - A table of two foreign keys alone is a many-to-many link: its tables get a field named after the far',
    '//   table (named as to-many fields where it links a table to itself).',
    '// - To-many and many-to-many fields are not in `fields`: they are shown when expanded.',
    '',
    "import { Type } from '@sinclair/typebox'",
    `import { defineResource } from ${quoted(from)}`,
  ]
  for (const resource of resources) lines.push('', ...resourceText(resource))
  lines.push('', `export const resources = [${resources.map((resource) => resource.name).join(', ')}]`)
  if (resources.length > 0) {
    lines.push('', '// Names the lazy references above resolve to, for `Expanded` (docs/typescript.md).')
    lines.push(`declare module ${quoted(from)} {`, '  interface ResourceRegistry {')
    for (const resource of resources) lines.push(`    ${resource.name}: typeof ${resource.name}`)
    lines.push('  }', '}')
  }
  return lines.join('\n') + '\n'
}

function resourceText ({ table, name, primaryKey, fields }: Generated): string[] {
  const lines = [`export const ${name} = defineResource({`, `  name: ${quoted(name)},`, `  table: ${quoted(table.name)},`]
  lines.push('  schema: Type.Object({')
  for (const field of fields) lines.push(`    ${field.name}: ${field.schema},`)
  lines.push('  }),')
  const keyField = fields.find((field) => field.column === primaryKey.name)!
  if (keyField.name !== 'id') lines.push(`  primaryKey: ${quoted(keyField.name)},`)
  const renamed = fields.filter((field) => field.column !== undefined && field.column !== field.name)
  if (renamed.length > 0) lines.push(`  columns: { ${renamed.map((field) => `${field.name}: ${quoted(field.column!)}`).join(', ')} },`)
  lines.push(`  fields: [${fields.filter((field) => field.column !== undefined).map((field) => quoted(field.name)).join(', ')}],`)
  const relations = fields.filter((field) => field.relation !== undefined)
  if (relations.length > 0) {
    lines.push('  expandable: {')
    for (const field of relations) lines.push(`    ${field.name}: ${field.relation},`)
    lines.push('  },')
  }
  lines.push('})')
  return lines
}
