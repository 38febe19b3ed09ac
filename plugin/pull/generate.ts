// The one generator of `fastify-expand pull`: a DatabaseModel (model.ts) to
// the text of a TypeScript module of `defineResource` calls, and what it
// left out and why. Pure: no database, no file.

import { casedColumn, namedCasings } from '../graph/casing.js'
import { isIdentifier, isReservedName, isTableName } from '../graph/checks.js'
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
/** Why a table or column whose name begins as the plugin's own do is left out (`isReservedName`). */
const reservedName = 'its name begins with __expand_, which fastify-expand keeps for the names in its own statements'

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
  /** The column it is read from: undefined for a to-many or many-to-many field, and a to-one over several columns. */
  readonly column?: string
  /** A to-one relation over several columns (a composite foreign key): its columns, in the related key's order. */
  readonly columns?: readonly string[]
  /** Its entry in `expandable`, when it is a relation. */
  readonly relation?: string
}

interface Generated {
  readonly table: TableModel
  readonly name: string
  /** The primary key's columns, in key order: one, or the parts of a composite key. */
  readonly primaryKey: readonly ColumnModel[]
  readonly fields: Field[]
}

/** A table of two columns, each a foreign key of its own to a generated table's key: a many-to-many link. */
interface ThroughTable {
  readonly table: TableModel
  readonly from: ForeignKeyModel
  readonly to: ForeignKeyModel
}

/** What the phases of the generator share: the resources so far, where skipped things go, the naming. */
interface Generation {
  readonly options: GenerateOptions
  readonly resources: Map<string, Generated>
  readonly skip: (table: string, reason: string, column?: string) => void
}

export function generateModule (model: DatabaseModel, options: GenerateOptions): GeneratedModule {
  const skipped: Skipped[] = []
  const generation: Generation = {
    options,
    resources: new Map(),
    skip: (table, reason, column) => { skipped.push(column === undefined ? { table, reason } : { table, column, reason }) },
  }
  const throughTables = chooseResources(model, generation)
  for (const resource of generation.resources.values()) addColumnFields(resource, generation)
  // To-many relations, then many-to-many ones, in table order.
  for (const resource of generation.resources.values()) addToManyFields(resource, generation)
  for (const through of throughTables) addManyToManyFields(through, generation)
  const generated = [...generation.resources.values()]
  return { text: moduleText(model, generated, options), resources: generated.map((resource) => resource.name), skipped }
}

/** The resources (tables with a primary key of one column the generator reads) and the many-to-many link tables. */
function chooseResources (model: DatabaseModel, { resources, skip }: Generation): ThroughTable[] {
  const taken = new Map<string, string>()
  const candidates = model.tables.filter((table) => {
    const unwritable = !isTableName(table.name) ? notAName : isReservedName(table.name) ? reservedName : undefined
    if (unwritable !== undefined) skip(table.name, unwritable)
    return unwritable === undefined
  })
  const throughTables: ThroughTable[] = []
  for (const table of candidates) {
    // A link table is the `through` of its many-to-many relations, and a resource of its own where it has a key.
    const through = asThroughTable(table, candidates)
    if (through !== undefined) throughTables.push(through)
    if (table.primaryKey.length === 0) {
      if (through === undefined) skip(table.name, 'no primary key')
      continue
    }
    const primaryKey = table.primaryKey.map((name) => table.columns.find((column) => column.name === name)!)
    const unread = primaryKey.find((column) =>
      column.type.kind === 'unsupported' || !isIdentifier(column.name) || isReservedName(column.name))
    if (unread !== undefined) {
      skip(table.name, `its primary key ${unread.name} is not a column the generator reads (${typeName(unread.type)})`)
      continue
    }
    const notAPart = primaryKey.length > 1 ? primaryKey.find((column) => !keyPartKinds.has(column.type.kind)) : undefined
    if (notAPart !== undefined) {
      skip(table.name, `its composite primary key's part ${notAPart.name} is not an integer or a string (${typeName(notAPart.type)})`)
      continue
    }
    const name = resourceName(table.name)
    if (!isIdentifier(name)) { skip(table.name, `its resource name ${name} is not an identifier`); continue }
    const other = taken.get(name)
    if (other !== undefined) { skip(table.name, `its resource name ${name} is taken by table ${other}`); continue }
    taken.set(name, table.name)
    resources.set(table.name, { table, name, primaryKey, fields: [] })
  }
  return throughTables
}

/** What a composite key's parts may be: what its identifier writes, an integer or a string (graph/identifiers.ts). */
const keyPartKinds = new Set<ColumnKind>(['integer', 'wide-integer', 'decimal-text', 'text'])

/** A relation a foreign key makes: its target, and its columns in the order of the target's key parts. */
interface KeyRelation {
  readonly target: Generated
  readonly columns: readonly string[]
}

/** The relation of a foreign key to a generated resource's whole primary key (in any column order); undefined for others. */
function relationTarget (key: ForeignKeyModel, { resources }: Generation): KeyRelation | undefined {
  const target = resources.get(key.referencedTable)
  if (target === undefined || key.columns.length !== target.primaryKey.length) return undefined
  const columns = target.primaryKey.map((part) => key.columns[key.referencedColumns.indexOf(part.name)])
  return columns.every((column) => column !== undefined) ? { target, columns: columns as string[] } : undefined
}

/** The schema of a resource's key, as the ids of a to-many field hold it: a composite key's identifier is a string. */
function keyType (resource: Generated): string {
  if (resource.primaryKey.length > 1) return 'Type.String()'
  return columnSchema({ ...resource.primaryKey[0]!, nullable: false })!
}

/** Key columns as a relation option writes them: a column, or the list of a composite key's. */
function keyColumnsText (columns: readonly string[]): string {
  return columns.length === 1 ? quoted(columns[0]!) : `[${columns.map(quoted).join(', ')}]`
}

/** A field per column the generator reads; a foreign key's is a to-one relation, named without the key suffix. */
function addColumnFields (resource: Generated, generation: Generation): void {
  const { skip, resources, options } = generation
  const { table } = resource
  const columnFields = new Set(table.columns.map((column) => fieldName(column.name, options.naming)))
  const toOne = new Map<string, Generated>()
  const overSeveral: KeyRelation[] = []
  for (const key of table.foreignKeys) {
    const relation = relationTarget(key, generation)
    if (relation === undefined) {
      const several = key.columns.length > 1
      const where = several ? ` (${key.columns.join(', ')})` : ''
      const referenced = several ? ` (${key.referencedColumns.join(', ')})` : `.${key.referencedColumns[0]}`
      skip(table.name, resources.has(key.referencedTable)
        ? `its foreign key${where} to ${key.referencedTable}${referenced} is not to the primary key: no relation`
        : `its foreign key${where} to ${key.referencedTable} is not a relation: ${key.referencedTable} is not generated`,
      several ? undefined : key.columns[0])
      continue
    }
    if (relation.columns.length > 1) overSeveral.push(relation)
    else toOne.set(relation.columns[0]!, relation.target)
  }
  // A composite key's part is a field of its own: a relation's field holds the related row once expanded.
  const keyParts = new Set(table.primaryKey.length > 1 ? table.primaryKey : [])
  for (const column of table.columns) {
    const schema = columnSchema(column)
    if (!isIdentifier(column.name)) { skip(table.name, notAName, column.name); continue }
    if (isReservedName(column.name)) { skip(table.name, reservedName, column.name); continue }
    if (schema === undefined) { skip(table.name, `unsupported type ${typeName(column.type)}`, column.name); continue }
    const target = toOne.get(column.name)
    const free = (name: string) => !resource.fields.some((field) => field.name === name)
    // Two columns named alike (user_name and userName, both userName in camelCase): the second keeps its own name.
    const plain = [fieldName(column.name, options.naming), column.name].find(free)
    if (plain === undefined) { skip(table.name, `its field name ${column.name} is taken`, column.name); continue }
    if (target === undefined || keyParts.has(column.name)) resource.fields.push({ name: plain, schema, column: column.name })
    if (target === undefined) continue
    const stripped = withoutKeySuffix(column.name)
    const named = stripped === undefined ? plain : fieldName(stripped, options.naming)
    // The column's own name where the shorter one is another column's or another key's field.
    const name = named !== plain && (columnFields.has(named) || !free(named)) ? plain : named
    if (!free(name)) { skip(table.name, `its relation field ${name} is taken`, column.name); continue }
    resource.fields.push({ name, schema, column: column.name, relation: quoted(target.name) })
  }
  // A foreign key of several columns: a to-one field named after the related resource, holding its identifier.
  for (const { target, columns } of overSeveral) {
    const name = fieldName(target.name, options.naming)
    if (resource.fields.some((field) => field.name === name) || columnFields.has(name)) {
      skip(table.name, `its relation to ${target.name} over (${columns.join(', ')}) is not generated: ${resource.name} has a field ${name}`)
      continue
    }
    const nullable = columns.some((column) => table.columns.find((candidate) => candidate.name === column)?.nullable === true)
    resource.fields.push({
      name,
      schema: nullable ? 'Type.Union([Type.String(), Type.Null()])' : 'Type.String()',
      columns,
      relation: `[${quoted(target.name)}, { column: ${keyColumnsText(columns)} }]`,
    })
  }
}

/** A relation field, unless the resource has a field of that name (then printed as skipped). */
function addRelation (resource: Generated, field: Field & { relation: string }, table: string, column: string, { skip }: Generation): void {
  if (resource.fields.some((existing) => existing.name === field.name)) {
    skip(table, `its relation ${resource.name}.${field.name} is not generated: ${resource.name} has a field ${field.name}`, column)
    return
  }
  resource.fields.push(field)
}

/** The to-many fields of the tables `referencing`'s foreign keys relate to, named after `referencing`'s table. */
function addToManyFields (referencing: Generated, generation: Generation): void {
  const keys = referencing.table.foreignKeys.filter((key) => relationTarget(key, generation) !== undefined)
  for (const key of keys) {
    const { target, columns } = relationTarget(key, generation)!
    const column = columns[0]!
    const toSameTarget = keys.filter((other) => other.referencedTable === key.referencedTable).length
    const table = referencing.table.name
    const name = fieldName(toSameTarget > 1 ? `${withoutKeySuffix(column) ?? column}_${table}` : table, generation.options.naming)
    addRelation(target, {
      name,
      schema: `Type.Array(${keyType(referencing)})`,
      relation: `[${quoted(referencing.name)}, { many: true, foreignKey: ${keyColumnsText(columns)} }]`,
    }, table, column, generation)
  }
}

/** The two many-to-many fields a link table makes, each named after the far table; the table itself is printed as skipped. */
function addManyToManyFields ({ table, from, to }: ThroughTable, generation: Generation): void {
  const reason = 'a many-to-many through table'
  const source = relationTarget(from, generation)?.target
  const target = relationTarget(to, generation)?.target
  if (source === undefined || target === undefined) {
    generation.skip(table.name, `${reason} between tables that are not both generated`)
    return
  }
  const sides = [[from, to, source, target], [to, from, target, source]] as const
  const names = sides.map(([, far]) => {
    const farTable = far.referencedTable
    const name = from.referencedTable === to.referencedTable ? `${withoutKeySuffix(far.columns[0]!) ?? far.columns[0]!}_${farTable}` : farTable
    return fieldName(name, generation.options.naming)
  })
  sides.forEach(([near, far, nearResource, farResource], index) => {
    const through = `{ table: ${quoted(table.name)}, from: ${quoted(near.columns[0]!)}, to: ${quoted(far.columns[0]!)} }`
    addRelation(nearResource, {
      name: names[index]!,
      schema: `Type.Array(${keyType(farResource)})`,
      relation: `[${quoted(farResource.name)}, { many: true, through: ${through} }]`,
    }, table.name, near.columns[0]!, generation)
  })
  if (table.primaryKey.length > 0) return
  const linked = sides.map(([, , nearResource], index) => `${nearResource.name}.${names[index]}`).join(' and ')
  generation.skip(table.name, `${reason} (${linked}), not a resource itself: it has no primary key`)
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
    '// - A table keyed by several columns lists their fields in primaryKey; a foreign key of several columns is a',
    '//   to-one field named after the related resource, holding its identifier (its key parts joined by \',\': 1,5).',
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
  // A key part's field: the plain field of its column (a relation reading the same column comes after it).
  const keyFields = primaryKey.map((part) => fields.find((field) => field.column === part.name)!.name)
  if (keyFields.length > 1) lines.push(`  primaryKey: [${keyFields.map(quoted).join(', ')}],`)
  else if (keyFields[0] !== 'id') lines.push(`  primaryKey: ${quoted(keyFields[0]!)},`)
  const { casing, renamed } = columnNaming(fields)
  if (casing !== undefined) lines.push(`  casing: ${quoted(casing)},`)
  if (renamed.length > 0) lines.push(`  columns: { ${renamed.map((field) => `${field.name}: ${quoted(field.column!)}`).join(', ')} },`)
  const shown = fields.filter((field) => field.column !== undefined || field.columns !== undefined)
  lines.push(`  fields: [${shown.map((field) => quoted(field.name)).join(', ')}],`)
  const relations = fields.filter((field) => field.relation !== undefined)
  if (relations.length > 0) {
    lines.push('  expandable: {')
    for (const field of relations) lines.push(`    ${field.name}: ${field.relation},`)
    lines.push('  },')
  }
  lines.push('})')
  return lines
}

/**
 * How a resource names the columns of its fields: the `casing` that leaves
 * the fewest fields to map in `columns` (each field whose column it does not
 * give), where it leaves two fewer at least than mapping each renamed field
 * (a column that is not its field's name) would: its own line must pay.
 */
function columnNaming (fields: readonly Field[]): { casing: Casing | undefined; renamed: Field[] } {
  const columned = fields.filter((field) => field.column !== undefined)
  const plain = columned.filter((field) => field.column !== field.name)
  let best: { casing: Casing | undefined; renamed: Field[] } = { casing: undefined, renamed: plain }
  for (const casing of namedCasings) {
    const renamed = columned.filter((field) => casedColumn(casing, field.name) !== field.column)
    if (renamed.length <= plain.length - 2 && renamed.length < best.renamed.length) best = { casing, renamed }
  }
  return best
}

type Casing = typeof namedCasings[number]
