import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { isDeepStrictEqual } from 'node:util'
import expandPlugin from '../../plugin/index.js'
import { dialects, inOneWave, namesAsWrittenOn, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { openTenants, readCallers, rows, tenantResources, type ResourceName } from '../fixtures/tenants.js'
import { propertyParameters } from '../hardening/support.js'
import { countGoesWithPage, isCountStatement, pageRunsCount } from '../helpers/page-count.js'

// Random callers (a tenant, none, or an admin), random fieldsFor answers (a
// random subset of each resource's fields, or undefined), random expansions
// through the fixture's relations (depth up to 3, wildcards, unknown names)
// with random fields/omit: every answer is exactly what a naive in-memory
// reference predicts from the fixture's rows (so no row outside the caller's
// scope and no field outside its visible set), it runs exactly the statements
// the reference counts (no more than the same request without access rules),
// and no statement selects a hidden column other than a primary key.
//
// The reference reads the documentation (docs/access.md, docs/queries.md): it filters rows and fields in memory and shapes
// the body; it does not use the plugin's planner or loader.

// ---------------------------------------------------------------- the model

interface RelationModel {
  target: ResourceName
  many: boolean
  /** to-one: the column of the owner's table holding the related id. */
  column?: string
  /** to-many: the column of the target's table holding the owner's id. */
  foreignKey?: string
  through?: { table: 'post_tags'; from: 'post_id'; to: 'tag_id' }
}

interface ResourceModel {
  table: 'tenants' | 'authors' | 'posts' | 'tags' | 'comments'
  /** Every field of the schema. */
  schema: string[]
  /** The default fields, in order. */
  fields: string[]
  /** In `expandable` order. */
  relations: Record<string, RelationModel>
}

const model: Record<ResourceName, ResourceModel> = {
  Tenant: { table: 'tenants', schema: ['id', 'name', 'plan'], fields: ['id', 'name', 'plan'], relations: {} },
  Author: {
    table: 'authors',
    schema: ['id', 'name', 'email', 'tenant', 'posts'],
    fields: ['id', 'name', 'email', 'tenant', 'posts'],
    relations: {
      tenant: { target: 'Tenant', many: false, column: 'tenant_id' },
      posts: { target: 'Post', many: true, foreignKey: 'author_id' },
    },
  },
  Post: {
    table: 'posts',
    schema: ['id', 'title', 'notes', 'author', 'tags', 'comments', 'editor'],
    fields: ['id', 'title', 'notes', 'author', 'tags'],
    relations: {
      author: { target: 'Author', many: false, column: 'author_id' },
      tags: { target: 'Tag', many: true, through: { table: 'post_tags', from: 'post_id', to: 'tag_id' } },
      comments: { target: 'Comment', many: true, foreignKey: 'post_id' },
      editor: { target: 'Author', many: false, column: 'editor_id' },
    },
  },
  Tag: { table: 'tags', schema: ['id', 'label'], fields: ['id', 'label'], relations: {} },
  Comment: {
    table: 'comments',
    schema: ['id', 'body', 'author', 'post'],
    fields: ['id', 'body', 'author', 'post'],
    relations: {
      author: { target: 'Author', many: false, column: 'author_id' },
      post: { target: 'Post', many: false, column: 'post_id' },
    },
  },
}
const resourceNames = Object.keys(model) as ResourceName[]
const routeOf: Record<ResourceName, string> = { Tenant: '/tenants', Author: '/authors', Post: '/posts', Tag: '/tags', Comment: '/comments' }

type Row = Record<string, unknown>
type Visible = Partial<Record<ResourceName, string[]>>
interface Caller { admin: boolean; tenant: number; visible: Visible }

/** The fixture's scopes, in memory. */
function inScope (caller: Caller, resource: ResourceName, row: Row): boolean {
  if (caller.admin) return true
  switch (resource) {
    case 'Tenant': return row.id === caller.tenant
    case 'Tag': return row.tenant_id === null || row.tenant_id === caller.tenant
    default: return row.deleted_at === null && row.tenant_id === caller.tenant
  }
}

function tableRows (resource: ResourceName): Row[] {
  return rows[model[resource].table] as Row[]
}

function visibleRows (caller: Caller, resource: ResourceName): Row[] {
  return tableRows(resource).filter((row) => inScope(caller, resource, row)).sort((a, b) => (a.id as number) - (b.id as number))
}

function visibleFields (caller: Caller, resource: ResourceName): Set<string> {
  return new Set(caller.visible[resource] ?? model[resource].schema)
}

// ---------------------------------------------------------------- the reference plan

interface Tree { leaf: boolean; children: Map<string, Tree> }

function toTree (paths: readonly string[]): Tree | undefined {
  if (paths.length === 0) return undefined
  const root: Tree = { leaf: false, children: new Map() }
  for (const path of paths) {
    let node = root
    for (const segment of path.split('.')) {
      let child = node.children.get(segment)
      if (child === undefined) {
        child = { leaf: false, children: new Map() }
        node.children.set(segment, child)
      }
      node = child
    }
    node.leaf = true
  }
  return root
}

function merge (a: Tree, b: Tree): Tree {
  const merged: Tree = { leaf: a.leaf || b.leaf, children: new Map(a.children) }
  for (const [name, child] of b.children) {
    const existing = merged.children.get(name)
    merged.children.set(name, existing === undefined ? child : merge(existing, child))
  }
  return merged
}

type Field =
  | { kind: 'value'; name: string }
  | { kind: 'id'; name: string; relation: RelationModel }
  | { kind: 'expanded'; name: string; relation: RelationModel; level: Level }
interface Level { resource: ResourceName; fields: Field[] }
interface ErrorBody { statusCode: number; code: string; error: string; message: string }

const forbidden = (message: string): ErrorBody => ({ statusCode: 403, code: 'FST_EXPAND_FORBIDDEN', error: 'Forbidden', message })
const unknownField = (message: string): ErrorBody => ({ statusCode: 400, code: 'FST_EXPAND_UNKNOWN_FIELD', error: 'Bad Request', message })

/**
 * The documentation's reading of expand/fields/omit with fieldsFor: `errors` collects
 * every error the request deserves (the plugin answers with one of them).
 */
class ReferencePlanner {
  readonly errors: ErrorBody[] = []
  constructor (private readonly caller: Caller, private readonly ignore: boolean) {}

  level (
    resource: ResourceName,
    expand: Tree | undefined,
    fields: Tree | undefined,
    omit: Tree | undefined,
    path: string[],
    emitted: boolean
  ): Level {
    const definition = model[resource]
    const visible = visibleFields(this.caller, resource)
    const prefix = path.length > 0 ? `${path.join('.')}.` : ''
    const names = [...new Set([...definition.fields, ...Object.keys(definition.relations)])]
    const visibleNames = names.filter((name) => visible.has(name))
    if (emitted && !this.ignore) {
      for (const name of fields?.children.keys() ?? []) {
        if (name === '*' || visibleNames.includes(name)) continue
        if (names.includes(name)) this.errors.push(forbidden(`Field '${prefix}${name}' in 'fields' is not available to this request`))
        else this.errors.push(unknownField(`Unknown field '${prefix}${name}' in 'fields': ${resource} has ${visibleNames.join(', ')}`))
      }
      for (const name of omit?.children.keys() ?? []) {
        if (names.includes(name)) continue // visible, or hidden: no effect
        this.errors.push(unknownField(`Unknown field '${prefix}${name}' in 'omit': ${resource} has ${visibleNames.join(', ')}`))
      }
    }

    const requested = new Map<string, Tree>()
    const add = (name: string, below: Tree) => {
      const existing = requested.get(name)
      requested.set(name, existing === undefined ? below : merge(existing, below))
    }
    const visibleRelations = Object.keys(definition.relations).filter((name) => visible.has(name))
    for (const [name, below] of expand?.children ?? []) {
      if (name === '*') {
        for (const relation of visibleRelations) add(relation, below)
      } else if (!(name in definition.relations)) {
        if (!this.ignore) {
          this.errors.push(unknownField(`Cannot expand '${prefix}${name}' on ${resource}: ${visibleRelations.length > 0 ? `expandable fields are ${visibleRelations.join(', ')}` : 'it has no expandable fields'}`))
        }
      } else if (!visible.has(name)) {
        if (!this.ignore) this.errors.push(forbidden(`Cannot expand '${prefix}${name}' on ${resource}: it is not available to this request`))
      } else {
        add(name, below)
      }
    }

    const candidates = definition.fields.filter((name) => visible.has(name))
    for (const name of Object.keys(definition.relations)) {
      if (!candidates.includes(name) && requested.has(name)) candidates.push(name)
    }
    const selected = fields !== undefined && !fields.children.has('*') ? fields.children : undefined
    const planned: Field[] = []
    for (const name of candidates) {
      if (selected !== undefined && !selected.has(name)) continue
      if (omit?.children.get(name)?.leaf === true) continue
      const relation = definition.relations[name]
      const below = requested.get(name)
      // A to-many id array is made of the target's primary keys: absent unless expanded when they are hidden.
      if (relation?.many === true && below === undefined && !visibleFields(this.caller, relation.target).has('id')) continue
      if (relation === undefined) planned.push({ kind: 'value', name })
      else if (below === undefined) planned.push({ kind: 'id', name, relation })
      else {
        const nested = fields?.children.get(name)
        const nestedFields = nested !== undefined && nested.children.size > 0 ? nested : undefined
        const level = this.level(relation.target, below, nestedFields, omit?.children.get(name), [...path, name], emitted)
        planned.push({ kind: 'expanded', name, relation, level })
      }
    }
    // Every expand path is validated, even below a relation that fields or omit leave out.
    for (const [name, below] of requested) {
      if (planned.some((field) => field.name === name) || below.children.size === 0) continue
      this.level(definition.relations[name]!.target, below, undefined, undefined, [...path, name], false)
    }
    return { resource, fields: planned }
  }
}

// ---------------------------------------------------------------- the reference body and statements

class ReferenceLoader {
  statements = 0
  constructor (private readonly caller: Caller) {}

  private related (relation: RelationModel, parent: Row): Row[] {
    const targets = visibleRows(this.caller, relation.target)
    if (relation.through !== undefined) {
      const { table, from, to } = relation.through
      const ids = new Set((rows[table] as Row[]).filter((link) => link[from] === parent.id).map((link) => link[to]))
      return targets.filter((row) => ids.has(row.id))
    }
    return targets.filter((row) => row[relation.foreignKey!] === parent.id)
  }

  /** Shapes `parents` (rows of `level.resource`), counting one statement per relation path whose values must be loaded. */
  shape (level: Level, parents: Row[]): Row[] {
    const shaped: Row[] = parents.map(() => ({}))
    for (const field of level.fields) {
      if (field.kind === 'value') {
        parents.forEach((parent, index) => { shaped[index]![field.name] = parent[field.name] })
        continue
      }
      const { relation } = field
      if (!relation.many) {
        const keys = parents.map((parent) => parent[relation.column!] as number | null)
        if (field.kind === 'id') {
          keys.forEach((key, index) => { shaped[index]![field.name] = key })
          continue
        }
        if (keys.every((key) => key === null)) {
          shaped.forEach((row) => { row[field.name] = null })
          continue
        }
        this.statements++
        const targets = visibleRows(this.caller, relation.target).filter((row) => keys.includes(row.id as number))
        const shapedTargets = this.shape(field.level, targets)
        const children = new Map(targets.map((row, index) => [row.id, shapedTargets[index]]))
        keys.forEach((key, index) => { shaped[index]![field.name] = children.get(key) ?? null })
        continue
      }
      if (parents.length === 0) continue
      this.statements++
      const groups = parents.map((parent) => this.related(relation, parent))
      if (field.kind === 'id') {
        groups.forEach((group, index) => { shaped[index]![field.name] = group.map((row) => row.id) })
        continue
      }
      const all = groups.flat()
      const children = this.shape(field.level, all)
      let next = 0
      groups.forEach((group, index) => { shaped[index]![field.name] = group.map(() => children[next++]) })
    }
    return shaped
  }
}

/**
 * The relation statements of a plan sent in one wave (plugin/load/one-wave.ts):
 * one per relation path that reads a table, whatever rows the levels above hold.
 */
function planStatements (level: Level): number {
  let count = 0
  for (const field of level.fields) {
    if (field.kind === 'value') continue
    if (field.kind === 'id') {
      if (field.relation.many) count++
      continue
    }
    count += 1 + planStatements(field.level)
  }
  return count
}

// ---------------------------------------------------------------- random requests

interface Sample {
  who: 0 | 1 | 2 | 3 | 'admin'
  visible: Visible
  root: ResourceName
  /** A list page (limit, offset; undefined: the defaults) or a detail id. */
  target: { list: true; page: [number, number] | undefined } | { list: false; id: number }
  expand: Array<[number[], 'walk' | 'star' | 'nope']>
  fields: Array<[number, number, 'root' | 'nested' | 'star' | 'nope']> | undefined
  omit: Array<[number, number, 'root' | 'nested' | 'nope']> | undefined
  ignore: boolean
}

const visibleArbitrary: fc.Arbitrary<Visible> = fc.record(
  Object.fromEntries(resourceNames.map((name) => [name, fc.option(fc.subarray(model[name].schema), { nil: undefined, freq: 2 })])) as
    Record<ResourceName, fc.Arbitrary<string[] | undefined>>
).map((visible) => Object.fromEntries(Object.entries(visible).filter(([, fields]) => fields !== undefined)) as Visible)

const sampleArbitrary: fc.Arbitrary<Sample> = fc.record({
  who: fc.constantFrom<Sample['who']>(0, 1, 1, 2, 2, 3, 'admin'),
  visible: visibleArbitrary,
  root: fc.constantFrom<ResourceName>('Post', 'Post', 'Post', 'Author', 'Author', 'Comment', 'Comment', 'Tag', 'Tenant'),
  target: fc.oneof(
    fc.record({
      list: fc.constant(true as const),
      page: fc.option(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 4 })), { nil: undefined }),
    }),
    fc.record({ list: fc.constant(false as const), id: fc.integer({ min: 1, max: 8 }) })
  ),
  expand: fc.array(fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), fc.constantFrom<'walk' | 'star' | 'nope'>('walk', 'walk', 'walk', 'walk', 'star', 'nope')), { maxLength: 3 }),
  fields: fc.option(fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom<'root' | 'nested' | 'star' | 'nope'>('root', 'root', 'root', 'nested', 'nested', 'star', 'nope')), { minLength: 1, maxLength: 4 }), { nil: undefined, freq: 2 }),
  omit: fc.option(fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom<'root' | 'nested' | 'nope'>('root', 'root', 'nested', 'nope')), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 3 }),
  ignore: fc.boolean(),
})

/**
 * A path through the relations of `root` (every relation, hidden ones
 * included), possibly ended by a wildcard or an unknown name; empty when
 * `root` has no relations and nothing ends it.
 */
function expandPath (root: ResourceName, [steps, end]: Sample['expand'][number]): string {
  const segments: string[] = []
  let resource = root
  for (const step of steps) {
    const relations = Object.keys(model[resource].relations)
    if (relations.length === 0) break
    const name = relations[step % relations.length]!
    segments.push(name)
    resource = model[resource].relations[name]!.target
  }
  if (end === 'star') segments.push('*')
  if (end === 'nope') segments.push('nope')
  return segments.join('.')
}

function fieldPath (root: ResourceName, [first, second, kind]: [number, number, string]): string {
  const { schema, relations } = model[root]
  const relationNames = Object.keys(relations)
  if (kind === 'star') return '*'
  if (kind === 'nope') return 'nope'
  if (kind === 'nested' && relationNames.length > 0) {
    const name = relationNames[first % relationNames.length]!
    const target = model[relations[name]!.target].schema
    return `${name}.${target[second % target.length]!}`
  }
  return schema[first % schema.length]!
}

interface Request { url: string; headers: Record<string, string>; caller: Caller; expand: string[]; fields: string[]; omit: string[] }

function requestOf (sample: Sample): Request {
  const expand = sample.expand.map((path) => expandPath(sample.root, path)).filter((path) => path !== '')
  const fields = (sample.fields ?? []).map((path) => fieldPath(sample.root, path))
  const omit = (sample.omit ?? []).map((path) => fieldPath(sample.root, path))
  const query: string[] = []
  if (expand.length > 0) query.push(`expand=${encodeURIComponent(expand.join(','))}`)
  if (fields.length > 0) query.push(`fields=${encodeURIComponent(fields.join(','))}`)
  if (omit.length > 0) query.push(`omit=${encodeURIComponent(omit.join(','))}`)
  const { target } = sample
  if (target.list && target.page !== undefined) query.push(`limit=${target.page[0]}`, `offset=${target.page[1]}`)
  const path = target.list ? routeOf[sample.root] : `${routeOf[sample.root]}/${target.id}`
  const headers: Record<string, string> = { 'x-visible': JSON.stringify(sample.visible) }
  if (sample.who === 'admin') headers['x-role'] = 'admin'
  else headers['x-tenant'] = String(sample.who)
  const caller: Caller = { admin: sample.who === 'admin', tenant: sample.who === 'admin' ? 0 : sample.who, visible: sample.visible }
  return { url: query.length > 0 ? `${path}?${query.join('&')}` : path, headers, caller, expand, fields, omit }
}

type Expected =
  | { kind: 'error'; bodies: ErrorBody[] }
  | { kind: 'ok'; status: 200 | 404; body: unknown; statements: number }

function expectedAnswer (sample: Sample, request: Request, dialect: Dialect): Expected {
  const oneWave = inOneWave(dialect)
  const planner = new ReferencePlanner(request.caller, sample.ignore)
  const level = planner.level(sample.root, toTree(request.expand), toTree(request.fields), toTree(request.omit), [], true)
  if (planner.errors.length > 0) return { kind: 'error', bodies: planner.errors }
  const loader = new ReferenceLoader(request.caller)
  // In one wave every relation statement is sent with the root's, before its rows (and whether there are any) are known,
  // and so is the COUNT of a list (its requests have no filters).
  const relationStatements = () => oneWave ? planStatements(level) : loader.statements
  const visible = visibleRows(request.caller, sample.root)
  const { target } = sample
  if (target.list) {
    const [limit, offset] = target.page ?? [20, 0]
    const page = visible.slice(offset, offset + limit)
    const data = loader.shape(level, page)
    return { kind: 'ok', status: 200, body: { data, limit, offset, total: visible.length }, statements: 1 + (pageRunsCount(page.length, limit, offset, countGoesWithPage(dialect, false)) ? 1 : 0) + relationStatements() }
  }
  const row = visible.find((candidate) => candidate.id === target.id)
  if (row === undefined) {
    return { kind: 'ok', status: 404, body: { statusCode: 404, code: 'FST_EXPAND_NOT_FOUND', error: 'Not Found', message: `${sample.root} ${target.id} not found` }, statements: 1 + (oneWave ? planStatements(level) : 0) }
  }
  const body = loader.shape(level, [row])[0]
  return { kind: 'ok', status: 200, body, statements: 1 + relationStatements() }
}

// ---------------------------------------------------------------- hidden columns in the SQL

const resourceOfTable = Object.fromEntries(resourceNames.map((name) => [model[name].table, name])) as Record<string, ResourceName>

/** The field a column of `resource`'s table holds. */
function fieldOfColumn (resource: ResourceName, column: string): string | undefined {
  if (model[resource].schema.includes(column) && !(column in model[resource].relations)) return column
  return Object.entries(model[resource].relations).find(([, relation]) => relation.column === column)?.[0]
}

/** A selected column, `"table"."column" as "alias"`, quoted as the dialect quotes it. */
function selectedColumnOn (dialect: Dialect): RegExp {
  const selected = /"(\w+)"\."(\w+)"(?: as "(\w+)")?/g
  return new RegExp(namesAsWrittenOn(dialect, selected.source), selected.flags)
}

/** Columns of the select list (before the first `from`) that hold a field the caller may not see, the primary key aside. */
function hiddenSelected (dialect: Dialect, statement: string, caller: Caller): string[] {
  const selectList = statement.slice(0, statement.indexOf(' from '))
  const found: string[] = []
  for (const [, table, column, alias] of selectList.matchAll(selectedColumnOn(dialect))) {
    if (alias === '__expand_parent') continue
    const resource = resourceOfTable[table!]
    if (resource === undefined || column === 'id') continue
    const field = fieldOfColumn(resource, column!)
    if (field !== undefined && !visibleFields(caller, resource).has(field)) found.push(`${table}.${column}`)
  }
  return found
}

// ---------------------------------------------------------------- the apps

async function build (database: TestDatabase, access: boolean, onInvalidExpand: 'error' | 'ignore'): Promise<FastifyInstance> {
  const resources = tenantResources(access)
  const app = Fastify()
  readCallers(app)
  await app.register(expandPlugin, { db: database.db, resources: resources.all, onInvalidExpand })
  for (const name of resourceNames) app.expand.routes(routeOf[name], resources[name])
  await app.ready()
  return app
}

for (const dialect of dialects()) {
  t.test(`random callers, fieldsFor answers and expansions on ${dialect.name}: exactly the reference's rows, fields and statements`, async (t) => {
    const database = await openTenants(t, dialect)
    const apps = { error: await build(database, true, 'error'), ignore: await build(database, true, 'ignore'), open: await build(database, false, 'ignore') }
    t.teardown(async () => { for (const app of Object.values(apps)) await app.close() })
    const outcomes: Record<string, number> = { 200: 0, 403: 0, 400: 0, 404: 0 }

    await fc.assert(fc.asyncProperty(sampleArbitrary, async (sample) => {
      const request = requestOf(sample)
      const label = `${sample.ignore ? '[ignore] ' : ''}${request.url} as ${JSON.stringify(request.headers)}`
      const expected = expectedAnswer(sample, request, dialect)
      database.reset()
      const response = await (sample.ignore ? apps.ignore : apps.error).inject({ method: 'GET', url: request.url, headers: request.headers })
      const statements = [...database.statements]
      outcomes[response.statusCode] = (outcomes[response.statusCode] ?? 0) + 1
      const body: unknown = response.json()

      if (expected.kind === 'error') {
        const matches = expected.bodies.some((one) => JSON.stringify(one) === JSON.stringify(body))
        if (response.statusCode !== (body as ErrorBody).statusCode || !matches) {
          throw new Error(`${label}: expected one of ${JSON.stringify(expected.bodies)}, got ${response.statusCode} ${response.body}`)
        }
        if (statements.length !== 0) throw new Error(`${label}: a refused request ran ${statements.length} statements`)
        return
      }
      if (response.statusCode !== expected.status) throw new Error(`${label}: expected ${expected.status} ${JSON.stringify(expected.body)}, got ${response.statusCode} ${response.body}`)
      // Key order is the definition's: compare the written text (list envelopes by their data).
      const written = sample.target.list ? JSON.stringify((body as { data: unknown }).data) : response.body
      const wanted = sample.target.list ? JSON.stringify((expected.body as { data: unknown }).data) : JSON.stringify(expected.body)
      if (written !== wanted || !isDeepStrictEqual({ ...(body as object), data: 0 }, { ...(expected.body as object), data: 0 })) {
        throw new Error(`${label}: body\n  ${response.body}\nexpected\n  ${JSON.stringify(expected.body)}`)
      }
      if (statements.length !== expected.statements) {
        throw new Error(`${label}: ${statements.length} statements, the reference counts ${expected.statements}:\n  ${statements.join('\n  ')}`)
      }
      for (const statement of statements) {
        // Every statement but a COUNT selects columns: one read as none would find nothing hidden.
        if (!isCountStatement(statement) && !selectedColumnOn(dialect).test(statement)) throw new Error(`${label}: no column read in ${statement}`)
        const hidden = hiddenSelected(dialect, statement, request.caller)
        if (hidden.length > 0) throw new Error(`${label}: selects hidden ${hidden.join(', ')}: ${statement}`)
      }
      // The same request without access rules (every row, every field) never runs fewer statements (but for the
      // COUNT, which a page shorter than its limit does without), where it answers every row the scoped one does:
      // a detail, or a list whose open page holds all its rows. A page of the open list may hold other rows (the
      // scope changes which come first), whose relations may have no key to load.
      database.reset()
      const open = await apps.open.inject({ method: 'GET', url: request.url, headers: request.headers })
      type Page = { data: unknown[]; offset: number; total?: number }
      const openPage = sample.target.list && open.statusCode === 200 ? open.json() as Page : undefined
      const holdsEveryRow = openPage === undefined || (openPage.offset === 0 && openPage.data.length === openPage.total)
      const loading = (statements: readonly string[]) => statements.filter((statement) => !isCountStatement(statement)).length
      if (open.statusCode === 200 && holdsEveryRow && loading(database.statements) < loading(statements)) {
        throw new Error(`${label}: ${statements.length} statements with access rules, ${database.statements.length} without`)
      }
    }), propertyParameters(150))
    t.ok(outcomes[200]! > 30 && outcomes[403]! > 5 && outcomes[404]! > 3, `every outcome is exercised: ${JSON.stringify(outcomes)}`)
  })
}
