import { InvalidDefinitionError, messages } from '../errors.js'
import { casedColumn } from './casing.js'
import { resolveDerived, type DerivedField } from './derived-fields.js'
import { toOutputSchema } from './output-schemas.js'
import { checkCompositeKeys } from './composite-relations.js'
import type { KeyPartType, ResourceKey } from './identifiers.js'
import { keyPartType } from './relation-definitions.js'
import { collectReachable, qualifiedNameOf, resolveThunk, splitDefinition } from './resource-references.js'
import {
  type AnyResource,
  type KeyColumns,
  type RelationDefinition,
  type RelationKeys,
  type RelationLoad,
} from './resource.js'

/** A JSON schema as fast-json-stringify takes it: plain data, no TypeBox symbols. */
export type JsonSchema = Record<string, unknown>
/**
 * A field's schema as the resource declares it, from either TypeBox (0.34 or
 * 1.x) or written by hand: read only as the JSON it serializes to, so neither
 * package's types are needed here (nor in the declarations shipped).
 */
export type SourceSchema = object

/** A resource as one registry sees it: every reference resolved. */
export interface ResourceNode {
  readonly resource: AnyResource
  /** `namespace.Name`, or `Name` without a namespace. */
  readonly qualifiedName: string
  readonly name: string
  /** Every schema field and the JSON schema it is written with. */
  readonly fieldSchemas: ReadonlyMap<string, JsonSchema>
  /** Fields the schema does not require (`Type.Optional`): absent from a body when absent from the data. */
  readonly optionalFields: ReadonlySet<string>
  /** The declared schema of each field, for documentation. */
  readonly sourceSchemas: ReadonlyMap<string, SourceSchema>
  readonly defaultFields: readonly string[]
  /** Expandable relations first (in `expandable` order), then always-nested ones. */
  readonly relations: ReadonlyMap<string, RelationEdge>
  readonly expandableFields: readonly string[]
  /** The names a client may use where the resource is the root of a response, in order: `clientFieldNames`. */
  readonly clientFields: ReadonlySet<string>
  readonly maxDepth: number | undefined
  /**
   * The primary key field; for a composite key, its fields joined by ','
   * (no field of that name: what reads `key` instead finds the parts).
   */
  readonly primaryKey: string
  /** The primary key: one field, or a composite key's fields and their types. */
  readonly key: ResourceKey
  readonly table: string | undefined
  /**
   * The resources whose `scope` decides the rows of this one: itself when it
   * has a scope; otherwise every resource of the registry with a scope on
   * the same `table` (their conditions AND-ed); none for every row.
   */
  readonly scopedBy: readonly ResourceNode[]
  /** Aggregates and computed fields, by name, in declaration order (aggregates first). */
  readonly derived: ReadonlyMap<string, DerivedField>
  /** The column a field is read from. */
  column(field: string): string
}

export interface RelationEdge {
  readonly field: string
  readonly owner: ResourceNode
  readonly target: ResourceNode
  /** Declared under `nested`: shown as an object whether or not it is expanded. */
  readonly alwaysNested: boolean
  readonly many: boolean
  /** The field set of the nested level: the option's `fields` (or the target's), less `omit`. */
  readonly baseFields: readonly string[]
  /**
   * Every name a client may use at the nested level, in order: the option's
   * `fields` less `omit` when it has `fields` (what it does not list does not
   * exist there, deferred relations included, as in drf-flex-fields); else
   * the target's names (`clientFields`) less `omit`.
   */
  readonly clientFields: ReadonlySet<string>
  /** Expansions always applied below this relation, as paths. */
  readonly alwaysExpand: readonly (readonly string[])[]
  readonly keys: RelationKeys
  /** How the related rows are found: the relation's kind and its keys. */
  readonly link: RelationLink
}

/**
 * A relation's kind, with the keys that kind needs: a to-one relation through
 * a column of the owner's table, a to-many relation through a foreign key on
 * the related table, a many-to-many relation through a join table. A to-many
 * relation without a foreign key is one a handler fills itself. A relation
 * resolved by a function (its `load` option) reads no table: to-one by the
 * values of a column of the owner's table, to-many by the owners' primary keys.
 */
export type RelationLink =
  | { readonly kind: 'to-one'; readonly column: KeyColumns }
  | { readonly kind: 'to-many'; readonly foreignKey: KeyColumns | undefined }
  | { readonly kind: 'many-to-many'; readonly through: { readonly table: string; readonly from: KeyColumns; readonly to: KeyColumns } }
  | FunctionLink

/** A relation resolved by its `load` function: see load/function-relations.ts. */
export type FunctionLink =
  | { readonly kind: 'function'; readonly many: false; readonly column: string; readonly load: RelationLoad }
  | { readonly kind: 'function'; readonly many: true; readonly load: RelationLoad }

export type RelationKind = RelationLink['kind']

/**
 * What each kind of relation is, for the stages that need only that: whether
 * its value is a list (`RelationEdge.many`; undefined: its `many` option says,
 * as the link holds it). Typed by kind, so a kind added to RelationLink does
 * not compile until it says so here.
 */
export const relationKinds = {
  'to-one': { many: false },
  'to-many': { many: true },
  'many-to-many': { many: true },
  function: { many: undefined },
} as const satisfies Record<RelationKind, { readonly many: boolean | undefined }>

/**
 * The column of the owner's table that holds the related row's key: a
 * to-one relation's; undefined for kinds whose keys are elsewhere.
 */
export function ownerColumn (link: RelationLink): string | undefined {
  switch (link.kind) {
    // A to-one relation over several columns has no one column: graph/composite-relations.ts reads those.
    case 'to-one': return typeof link.column === 'string' ? link.column : undefined
    case 'to-many':
    case 'many-to-many': return undefined
    // A to-one function relation's keys are read from the owner's column, as a to-one relation's are.
    case 'function': return link.many ? undefined : link.column
    default: return link satisfies never
  }
}

interface MutableNode extends ResourceNode {
  relations: Map<string, RelationEdge>
  derived: Map<string, DerivedField>
  fieldSchemas: Map<string, JsonSchema>
  sourceSchemas: Map<string, SourceSchema>
  scopedBy: readonly ResourceNode[]
}

export interface GraphOptions {
  /**
   * The plugin loads relations from a database (it has `db`): every relation
   * with a table-bound side must then be loadable. Without it, handlers supply
   * the data and a resource needs no table.
   */
  loadsFromDatabase?: boolean
}

/**
 * The resources one plugin instance knows, by name: the registry of lazy
 * references. Built once, at registration; immutable after.
 */
export class ResourceGraph {
  readonly nodes: readonly ResourceNode[]
  private readonly byResource = new Map<AnyResource, ResourceNode>()
  private readonly byQualifiedName = new Map<string, ResourceNode>()
  private readonly byName = new Map<string, ResourceNode[]>()

  constructor (resources: readonly AnyResource[], options: GraphOptions = {}) {
    const all = collectReachable(resources)
    for (const resource of all) {
      const node = createNode(resource)
      const existing = this.byQualifiedName.get(node.qualifiedName)
      if (existing !== undefined) {
        throw new InvalidDefinitionError(messages.duplicateResourceName(node.qualifiedName))
      }
      this.byResource.set(resource, node)
      this.byQualifiedName.set(node.qualifiedName, node)
      const named = this.byName.get(node.name) ?? []
      named.push(node)
      this.byName.set(node.name, named)
    }
    this.nodes = [...this.byResource.values()]
    for (const node of this.nodes) (node as MutableNode).scopedBy = scopesOf(node, this.nodes)
    for (const node of this.nodes) this.resolveRelations(node as MutableNode)
    for (const node of this.nodes) resolveDerived(node as MutableNode)
    for (const node of this.nodes) {
      for (const edge of node.relations.values()) checkRelationOptions(edge, options.loadsFromDatabase === true)
    }
  }

  /** The node of a resource or a resource name; throws a definition error naming `context` when absent. */
  node (reference: AnyResource | string, context = 'reference'): ResourceNode {
    const node = typeof reference === 'string' ? this.lookup(reference, context) : this.byResource.get(reference)
    if (node === undefined) {
      if (typeof reference !== 'string' && this.byQualifiedName.has(qualifiedNameOf(reference))) {
        throw new InvalidDefinitionError(messages.anotherResourceOfName(context, qualifiedNameOf(reference)))
      }
      const name = typeof reference === 'string' ? reference : reference.name
      throw new InvalidDefinitionError(messages.unregisteredResource(context, name, this.names()))
    }
    return node
  }

  has (resource: AnyResource): boolean {
    return this.byResource.has(resource)
  }

  private names (): string {
    return [...this.byQualifiedName.keys()].join(', ') || 'none'
  }

  private lookup (reference: string, context: string): ResourceNode | undefined {
    if (reference.includes('.')) return this.byQualifiedName.get(reference)
    const named = this.byName.get(reference) ?? []
    if (named.length > 1) {
      throw new InvalidDefinitionError(messages.ambiguousReference(context, reference, named.map((node) => node.qualifiedName)))
    }
    return named[0]
  }

  private resolveRelations (node: MutableNode): void {
    const declare = (definitions: Readonly<Record<string, RelationDefinition | undefined>>, alwaysNested: boolean) => {
      for (const [field, definition] of Object.entries(definitions)) {
        if (definition === undefined) continue
        const [reference, options] = splitDefinition(definition)
        const context = `Resource '${node.qualifiedName}', field '${field}'`
        const target = typeof reference === 'string'
          ? this.node(reference, context)
          : this.node(resolveThunk(reference, context), context)
        for (const key of ['fields', 'omit'] as const) {
          for (const name of options[key] ?? []) {
            if (!target.fieldSchemas.has(name)) {
              throw new InvalidDefinitionError(messages.relationOptionUnknownField(context, key, name, target.qualifiedName))
            }
          }
        }
        const omit = new Set(options.omit ?? [])
        const baseFields = (options.fields ?? target.defaultFields).filter((name) => !omit.has(name))
        const clientFields = options.fields !== undefined ? baseFields : [...target.clientFields].filter((name) => !omit.has(name))
        const link: RelationLink = options.load !== undefined
          // (A relation resolved by a function reads one column: defineResource refuses several.)
          ? functionLink(options.load, options.many === true, (options.column as string | undefined) ?? node.column(field))
          : options.many !== true
            ? { kind: 'to-one', column: options.column ?? node.column(field) }
            : options.through !== undefined
              ? { kind: 'many-to-many', through: Object.freeze({ ...options.through }) }
              : { kind: 'to-many', foreignKey: options.foreignKey }
        node.relations.set(field, Object.freeze({
          field,
          owner: node,
          target,
          alwaysNested,
          many: link.kind === 'function' ? link.many : relationKinds[link.kind].many,
          baseFields: Object.freeze(baseFields),
          clientFields: Object.freeze(new Set(clientFields)),
          alwaysExpand: Object.freeze((options.expand ?? []).map((path) => Object.freeze(path.split('.')))),
          keys: Object.freeze({
            column: options.column,
            foreignKey: options.foreignKey,
            through: options.through,
            orderBy: options.orderBy,
            limit: options.limit,
          }),
          link: Object.freeze(link),
        }))
      }
    }
    declare(node.resource.expandable ?? {}, false)
    declare(node.resource.nested ?? {}, true)
  }
}

/**
 * The field names a client may use at a level whose field set is `base` (the
 * resource's `fields`, or a relation's): those and the expandable relations.
 * Any other schema field (a password hash kept for the server) does not
 * exist for clients: naming it is the same error as an unknown name.
 */
export function clientFieldNames (node: ResourceNode): string[] {
  return [...node.clientFields]
}

/**
 * The relation `field` names at a level whose names are `clientFields` (a
 * root's or a relation's): undefined when the level has no such relation,
 * and when the relation's options leave it out, for then it does not exist
 * for clients there.
 */
export function relationAt (node: ResourceNode, clientFields: ReadonlySet<string>, field: string): RelationEdge | undefined {
  return clientFields.has(field) ? node.relations.get(field) : undefined
}

/** Where a dot path of relations stops: at its end, or at the segment that is not a relation at its level (and why). */
export type PathWalk =
  | { readonly ok: true }
  | { readonly ok: false; readonly segment: string; readonly node: ResourceNode; readonly removedBy: RelationEdge | undefined }

/** Walks `path` from the root level of `node`, through each relation's own level (its `clientFields`). */
export function walkRelationPath (node: ResourceNode, path: readonly string[], from?: RelationEdge): PathWalk {
  let current = from?.target ?? node
  let names = from?.clientFields ?? node.clientFields
  let via = from
  for (const segment of path) {
    const relation = relationAt(current, names, segment)
    if (relation === undefined) {
      const removedBy = current.relations.has(segment) && !names.has(segment) ? via : undefined
      return { ok: false, segment, node: current, removedBy }
    }
    current = relation.target
    names = relation.clientFields
    via = relation
  }
  return { ok: true }
}

function createNode (resource: AnyResource): MutableNode {
  const properties = resource.schema.properties as Record<string, SourceSchema>
  const fieldSchemas = new Map<string, JsonSchema>()
  const sourceSchemas = new Map<string, SourceSchema>()
  for (const [field, schema] of Object.entries(properties)) {
    fieldSchemas.set(field, toOutputSchema(schema))
    sourceSchemas.set(field, schema)
  }
  const required = new Set(Array.isArray(resource.schema.required) ? resource.schema.required as string[] : [])
  const columns: Readonly<Record<string, string | undefined>> = resource.columns ?? {}
  // Fields are named by the plan at each request: each field's column is worked out once.
  const casedColumns = new Map<string, string>()
  const casedColumnOf = (field: string): string => {
    let column = casedColumns.get(field)
    if (column === undefined) casedColumns.set(field, column = casedColumn(resource.casing, field) as string)
    return column
  }
  return {
    resource,
    name: resource.name,
    qualifiedName: qualifiedNameOf(resource),
    fieldSchemas,
    optionalFields: new Set([...fieldSchemas.keys()].filter((field) => !required.has(field))),
    sourceSchemas,
    defaultFields: resource.fields,
    relations: new Map(),
    expandableFields: Object.keys(resource.expandable ?? {}),
    clientFields: new Set([
      ...resource.fields, ...Object.keys(resource.expandable ?? {}),
      ...Object.keys(resource.aggregates ?? {}), ...Object.keys(resource.computed ?? {}),
    ]),
    maxDepth: resource.maxDepth,
    primaryKey: typeof resource.primaryKey === 'string' ? resource.primaryKey : resource.primaryKey.join(','),
    key: keyOf(resource),
    table: resource.table,
    scopedBy: [],
    derived: new Map(),
    column: resource.casing === undefined ? (field) => columns[field] ?? field : (field) => columns[field] ?? casedColumnOf(field),
  }
}

/**
 * A scope guards a table's rows, not one view of them: a second resource on
 * the table (a lighter card) must not read what the first one hides. So a
 * resource without a scope takes every scope declared on its table, the
 * strictest reading when several differ; one with its own keeps its own.
 * Scope conditions name columns as `table.column`, so they apply unchanged.
 */
function scopesOf (node: ResourceNode, nodes: readonly ResourceNode[]): readonly ResourceNode[] {
  if (node.resource.scope !== undefined) return Object.freeze([node])
  if (node.table === undefined) return Object.freeze([])
  return Object.freeze(nodes.filter((other) => other.table === node.table && other.resource.scope !== undefined))
}

function keyOf (resource: AnyResource): ResourceKey {
  const primaryKey: string | readonly string[] = resource.primaryKey
  if (typeof primaryKey === 'string') {
    return Object.freeze({ kind: 'single', field: primaryKey, fields: Object.freeze([primaryKey] as [string]) })
  }
  const properties = resource.schema.properties as Record<string, unknown>
  const types = primaryKey.map((field) => keyPartType(properties[field]) as KeyPartType)
  return Object.freeze({ kind: 'composite', fields: primaryKey, types: Object.freeze(types) })
}

function functionLink (load: RelationLoad, many: boolean, column: string): FunctionLink {
  return many ? { kind: 'function', many, load } : { kind: 'function', many, column, load }
}

/** What needs every relation resolved first: `expand` paths, and keys for loading. */
function checkRelationOptions (edge: RelationEdge, loadsFromDatabase: boolean): void {
  const context = `Resource '${edge.owner.qualifiedName}', field '${edge.field}'`
  for (const path of edge.alwaysExpand) {
    const walk = walkRelationPath(edge.target, path, edge)
    if (walk.ok) continue
    throw new InvalidDefinitionError(walk.removedBy === undefined
      ? messages.relationExpandNotARelation(context, path.join('.'), walk.segment, walk.node.qualifiedName)
      : messages.relationExpandRemoved(context, path.join('.'), walk.segment, relationName(walk.removedBy)))
  }
  checkCompositeKeys(edge, context)
  checkLoadable(edge, context, loadsFromDatabase)
}

/** `Owner.field`, as messages name a relation. */
export function relationName (edge: RelationEdge): string {
  return `${edge.owner.qualifiedName}.${edge.field}`
}

/**
 * A relation with a table-bound side is loaded by the batch loader: its
 * target must have a table, and a to-many relation needs the keys that find
 * its rows. Between two tables this holds even without a database (the
 * definition is incomplete either way); from a resource without a table only
 * when the plugin loads (rows a handler gives are then filled by `load`).
 */
function checkLoadable (edge: RelationEdge, context: string, loadsFromDatabase: boolean): void {
  const { owner, target, keys } = edge
  // A relation resolved by a function needs no table on either side: its function finds the rows by their parents' keys.
  if (edge.link.kind === 'function') {
    if (edge.many && !owner.fieldSchemas.has(owner.primaryKey)) {
      throw new InvalidDefinitionError(messages.primaryKeyNotInSchema(context, owner.qualifiedName, owner.primaryKey))
    }
    return
  }
  if (loadsFromDatabase && owner.table !== undefined && target.table === undefined) {
    throw new InvalidDefinitionError(messages.targetWithoutTable(context, target.qualifiedName, owner.qualifiedName))
  }
  if (!edge.many || target.table === undefined || (!loadsFromDatabase && owner.table === undefined)) return
  if (keys.through === undefined && keys.foreignKey === undefined) {
    throw new InvalidDefinitionError(messages.toManyWithoutKeys(context, target.qualifiedName, target.table, owner.qualifiedName))
  }
  // Rows are grouped under their parents by the parent's primary key (a table-bound resource always has it).
  // (A composite key's fields are in its schema: defineResource checks them.)
  if (owner.key.kind === 'single' && !owner.fieldSchemas.has(owner.primaryKey)) {
    throw new InvalidDefinitionError(messages.primaryKeyNotInSchema(context, owner.qualifiedName, owner.primaryKey))
  }
}
