import {
  ForbiddenError,
  InvalidDefinitionError,
  MalformedError,
  messages,
  NotPermittedError,
  RecursiveError,
  TooDeepError,
  UnknownFieldError,
} from '../errors.js'
import type { ResolvedOptions } from '../options.js'
import type { Expansion } from '../request-helpers.js'
import { emptyPathNode, parsePaths, toPathTree, withPaths, type PathNode, type RawExpansionQuery } from '../parse/query.js'
import { ownerColumn, relationAt, type RelationEdge, type ResourceNode } from '../graph/resource-graph.js'
import { fullVisibility, planKey, type ExpansionPlan, type LevelPlan, type PlannedField, type PlanTarget, type Visibility } from './plan.js'

/** Definition-level expansions (nested fields, relation `expand`) deeper than this can only be a cycle. */
const definitionDepthGuard = 32

/** Requested expansions of one relation: from the query (checked) and from definitions (trusted). */
interface Requested {
  query: PathNode | undefined
  always: PathNode | undefined
}

/**
 * Turns the raw query values of one request into a validated plan. Limits
 * are checked before names: malformed input and depth first, then each
 * level against the resource graph.
 */
export function planExpansion (
  target: PlanTarget,
  raw: RawExpansionQuery,
  options: ResolvedOptions,
  visibility: Visibility = fullVisibility
): ExpansionPlan {
  const expandPaths = parsePaths(raw.expand, options.expandParam, options)
  const fieldsPaths = parsePaths(raw.fields, options.fieldsParam, options)
  const omitPaths = parsePaths(raw.omit, options.omitParam, options)
  checkWildcards(fieldsPaths, options.fieldsParam, options, true)
  checkWildcards(omitPaths, options.omitParam, options, false)
  for (const path of expandPaths) {
    if (path.length > target.maxDepth) {
      throw new TooDeepError(messages.tooDeep(path.join('.'), target.maxDepth))
    }
  }
  const planner = new Planner(target, options, visibility)
  // A route's defaultExpand, checked at startup, is applied as a definition's expansions are: a
  // relation this request may not see (fieldsFor) is left out silently, since the client named nothing.
  const defaults = raw.expandAbsent === true && target.defaultExpand !== undefined && target.defaultExpand.length > 0
    ? toPathTree(target.defaultExpand)
    : undefined
  const root = planner.level(
    target.node,
    target.node.defaultFields,
    target.node.clientFields,
    { query: expandPaths.length > 0 ? toPathTree(expandPaths) : undefined, always: defaults },
    fieldsPaths.length > 0 ? toPathTree(fieldsPaths) : undefined,
    omitPaths.length > 0 ? toPathTree(omitPaths) : undefined,
    [],
    true
  )
  const key = planKey(target, root)
  const expansion: Expansion = Object.freeze({ key, expandedPaths: planner.expanded, includedPaths: planner.included })
  const plan: ExpansionPlan = Object.freeze({
    target, root, key, expandedPaths: planner.expanded, includedPaths: planner.included, expansion, visibility
  })
  return plan
}

class Planner {
  readonly expanded = new Set<string>()
  readonly included = new Set<string>()
  private expansions = 0

  constructor (private readonly target: PlanTarget, private readonly options: ResolvedOptions, private readonly visibility: Visibility) {}

  /**
   * `base`: the level's fields shown by default; `names`: every name a
   * client may use at it (a relation's `fields`/`omit` options remove the
   * others: they do not exist there).
   */
  level (
    node: ResourceNode,
    base: readonly string[],
    names: ReadonlySet<string>,
    requestedHere: Requested,
    fieldsTree: PathNode | undefined,
    omitTree: PathNode | undefined,
    path: readonly string[],
    emit: boolean,
    definitionDepth = 0
  ): LevelPlan {
    if (definitionDepth > definitionDepthGuard) {
      throw new InvalidDefinitionError(messages.expansionCycle(this.target.node.qualifiedName, repeatingUnit(path)))
    }
    const visible = this.visibility.visible(node)
    if (emit && (fieldsTree !== undefined || omitTree !== undefined)) {
      const all = [...names]
      const shownNames = visible === undefined ? all : all.filter((name) => visible.has(name))
      this.checkFieldNames(node, shownNames, all, fieldsTree, this.options.fieldsParam, path, true)
      this.checkFieldNames(node, shownNames, all, omitTree, this.options.omitParam, path, false)
    }
    const requested = this.requestedRelations(node, names, requestedHere, path, emit, visible)

    const candidates = candidateFields(node, base, requested, fieldsTree, visible)
    const selected = fieldsTree !== undefined && !this.hasWildcard(fieldsTree) ? fieldsTree.children : undefined
    const fields: PlannedField[] = []
    const prefix = path.length > 0 ? `${path.join('.')}.` : ''
    const shown = new Set<string>()
    for (const name of candidates) {
      if (selected !== undefined && !selected.has(name)) continue
      if (omitTree?.children.get(name)?.leaf === true) continue
      const derived = node.derived.get(name)
      if (derived !== undefined) {
        shown.add(name)
        if (emit) this.included.add(prefix + name)
        fields.push(derived.kind === 'aggregate'
          ? { kind: 'aggregate', name, aggregate: derived }
          : { kind: 'computed', name, computed: derived })
        continue
      }
      const relation = node.relations.get(name)
      const wanted = requested.get(name)
      // A to-many id array is made of the related primary keys: absent when this request may not see them.
      const idsHidden = relation !== undefined && relation.many &&
        relation.target.key.fields.some((part) => this.hides(relation.target, part))
      if (idsHidden && wanted === undefined) continue
      shown.add(name)
      if (emit) this.included.add(prefix + name)
      if (relation === undefined) {
        fields.push({ kind: 'value', name })
      } else if (wanted === undefined) {
        fields.push({ kind: 'id', name, relation, orderBy: this.orderOf(relation) })
      } else {
        if (emit) this.expanded.add(prefix + name)
        if (wanted.query !== undefined) this.countExpansion()
        const nestedFields = fieldsTree?.children.get(name)
        const level = this.level(
          relation.target,
          relation.baseFields,
          relation.clientFields,
          {
            query: wanted.query,
            always: relation.alwaysExpand.length === 0 ? wanted.always : withPaths(wanted.always, relation.alwaysExpand),
          },
          nestedFields !== undefined && nestedFields.children.size > 0 ? nestedFields : undefined,
          omitTree?.children.get(name),
          [...path, name],
          emit,
          wanted.query === undefined ? definitionDepth + 1 : 0
        )
        fields.push({ kind: 'expanded', name, relation, level, orderBy: this.orderOf(relation) })
      }
    }
    // fields/omit take precedence over expand, but every requested path is still validated.
    for (const [name, wanted] of requested) {
      if (shown.has(name) || wanted.query === undefined || wanted.query.children.size === 0 || node.derived.has(name)) continue
      const relation = node.relations.get(name)!
      this.countExpansion()
      const wantedByQuery = { query: wanted.query, always: undefined }
      this.level(relation.target, relation.baseFields, relation.clientFields, wantedByQuery, undefined, undefined, [...path, name], false)
    }
    return Object.freeze({ node, fields: Object.freeze(fields) })
  }

  /**
   * maxPaths bounds the relations the query expands (wildcards multiply them):
   * the root and the expansions a definition always applies are not the client's doing.
   */
  private countExpansion (): void {
    if (++this.expansions > this.options.maxPaths) {
      throw new MalformedError(messages.tooManyRelations(this.options.maxPaths))
    }
  }

  /** The relations expanded at this level, each with what is requested below it. */
  private requestedRelations (
    node: ResourceNode,
    names: ReadonlySet<string>,
    here: Requested,
    path: readonly string[],
    emit: boolean,
    visible: ReadonlySet<string> | undefined
  ): Map<string, Requested> {
    const requested = new Map<string, Requested>()
    const add = (field: string, source: 'query' | 'always', below: PathNode) => {
      const entry = requested.get(field) ?? { query: undefined, always: undefined }
      entry[source] = entry[source] === undefined ? below : mergePathNodes(entry[source], below)
      requested.set(field, entry)
    }
    if (emit) {
      for (const relation of node.relations.values()) {
        if (relation.alwaysNested && names.has(relation.field)) add(relation.field, 'always', emptyPathNode())
      }
      if (here.always !== undefined) {
        for (const [field, below] of here.always.children) add(field, 'always', below)
      }
    }
    if (here.query === undefined) return requested
    const prefix = path.length > 0 ? `${path.join('.')}.` : ''
    for (const [name, below] of here.query.children) {
      if (this.options.wildcards.has(name)) {
        // `*.employer` expands employer below every relation that has one (and so that relation), not the others.
        const named = [...below.children.keys()].filter((child) => !this.options.wildcards.has(child))
        const matched = new Set<string>()
        for (const [field, relation] of node.relations) {
          if (!names.has(field)) continue
          if (visible !== undefined && !visible.has(field)) continue
          if (!this.options.allowRecursive && path.includes(field)) continue
          if (!this.permits(prefix + field)) continue
          const applying = namesOf(below, relation, this.options.wildcards)
          if (!below.leaf && below.children.size > 0 && applying.children.size === 0) continue
          for (const child of applying.children.keys()) matched.add(child)
          add(field, 'query', applying)
        }
        const unmatched = named.find((child) => !matched.has(child))
        if (unmatched !== undefined && this.options.onInvalidExpand === 'error') {
          const permittedOnly = this.target.permitted !== undefined
          throw new UnknownFieldError(messages.noMatchBelow(`${prefix}${name}.${unmatched}`, node.name, permittedOnly, unmatched))
        }
        continue
      }
      if (node.derived.has(name) && names.has(name)) {
        // An aggregate or computed field is named in `expand` as a deferred relation is, and has nothing below it.
        if (visible !== undefined && !visible.has(name)) {
          if (this.options.onInvalidExpand === 'ignore') continue
          throw new ForbiddenError(messages.hiddenField(prefix + name, this.options.expandParam))
        }
        if (below.children.size > 0) {
          if (this.options.onInvalidExpand === 'ignore') continue
          throw new UnknownFieldError(messages.belowDerived(`${prefix}${name}.${[...below.children.keys()][0]!}`, prefix + name))
        }
        add(name, 'query', below)
        continue
      }
      const relation = relationAt(node, names, name)
      if (relation !== undefined && visible !== undefined && !visible.has(name)) {
        if (this.options.onInvalidExpand === 'ignore') continue
        throw new ForbiddenError(messages.hiddenRelation(prefix + name, node.name))
      }
      if (relation === undefined) {
        if (this.options.onInvalidExpand === 'ignore') continue
        const expandable = [...node.relations.keys()].filter((field) => names.has(field) && (visible === undefined || visible.has(field)))
        throw new UnknownFieldError(messages.notExpandable(prefix + name, node.name, expandable))
      }
      if (!this.options.allowRecursive && path.includes(name)) {
        throw new RecursiveError(messages.recursive(prefix + name, name))
      }
      if (!this.permits(prefix + name)) {
        if (this.options.onInvalidExpand === 'ignore') continue
        const permitted = [...this.target.permitted ?? []]
        throw new NotPermittedError(messages.notPermitted(prefix + name, this.target.list, this.target.node.name, permitted))
      }
      add(name, 'query', below)
    }
    return requested
  }

  /** Whether `fieldsFor` hides `field` of `node` from this request. */
  private hides (node: ResourceNode, field: string): boolean {
    const visible = this.visibility.visible(node)
    return visible !== undefined && !visible.has(field)
  }

  /**
   * The relation's `orderBy` for this request: dropped when the column it
   * names is a field of the related resource that this request may not see.
   * A column that is no field (a position kept for ordering) is the
   * definition's own order and stays.
   */
  private orderOf (relation: RelationEdge): string | undefined {
    const { orderBy } = relation.keys
    if (orderBy === undefined) return undefined
    const column = orderBy.replace(/^-/, '')
    const target = relation.target
    for (const field of target.fieldSchemas.keys()) {
      if (target.derived.has(field)) continue
      const link = target.relations.get(field)?.link
      const fieldColumn = link === undefined ? target.column(field) : ownerColumn(link)
      if (fieldColumn === column && this.hides(target, field)) return undefined
    }
    return orderBy
  }

  private permits (path: string): boolean {
    return this.target.permitted === undefined || this.target.permitted.has(path)
  }

  private hasWildcard (tree: PathNode): boolean {
    for (const name of tree.children.keys()) if (this.options.wildcards.has(name)) return true
    return false
  }

  /**
   * `shown`: the names this request may use at the level; `all`: the level's
   * names for any request. A name only `fieldsFor` hides is forbidden in
   * `fields` and has no effect in `omit`; messages list only `shown`.
   */
  private checkFieldNames (
    node: ResourceNode,
    shown: readonly string[],
    all: readonly string[],
    tree: PathNode | undefined,
    param: string,
    path: readonly string[],
    selecting: boolean
  ): void {
    if (tree === undefined || this.options.onInvalidExpand === 'ignore') return
    for (const name of tree.children.keys()) {
      if (shown.includes(name) || this.options.wildcards.has(name)) continue
      const at = path.length > 0 ? `${path.join('.')}.${name}` : name
      if (all.includes(name)) {
        if (!selecting) continue
        throw new ForbiddenError(messages.hiddenField(at, param))
      }
      throw new UnknownFieldError(messages.unknownField(at, param, node.name, shown))
    }
  }
}

/**
 * In `fields` a wildcard keeps a level's default set, so it can only end a
 * path (`*`, `owner.*`); in `omit` it would mean nothing. Anywhere else it
 * is malformed, rather than silently ignored.
 */
function checkWildcards (paths: readonly string[][], param: string, options: ResolvedOptions, lastSegmentAllowed: boolean): void {
  if (options.wildcards.size === 0) return
  for (const path of paths) {
    path.forEach((segment, index) => {
      if (!options.wildcards.has(segment)) return
      if (lastSegmentAllowed && index === path.length - 1) return
      throw new MalformedError(lastSegmentAllowed
        ? messages.wildcardNotLast(param, segment, path.join('.'))
        : messages.wildcardInOmit(param, path.join('.')))
    })
  }
}

/** The part of a wildcard's subtree that applies below `relation`: the relations its level has, and wildcards. */
function namesOf (below: PathNode, relation: RelationEdge, wildcards: ReadonlySet<string>): PathNode {
  if (below.children.size === 0) return below
  const applying: PathNode = { leaf: below.leaf, children: new Map() }
  for (const [name, child] of below.children) {
    if (wildcards.has(name) || relationAt(relation.target, relation.clientFields, name) !== undefined) applying.children.set(name, child)
  }
  return applying
}

/**
 * The fields a level may show, in output order: its base set, then the
 * deferred relations requested beyond it, in `expandable` order, then the
 * derived fields named beyond it, in declaration order; only those the
 * request may see. A relation is requested only where the level has it
 * (a relation's `fields`/`omit` options remove the others), so a requested
 * relation outside the base set is always a deferred one.
 */
function candidateFields (
  node: ResourceNode,
  base: readonly string[],
  requested: ReadonlyMap<string, Requested>,
  fieldsTree: PathNode | undefined,
  visible: ReadonlySet<string> | undefined
): string[] {
  const candidates = visible === undefined ? [...base] : base.filter((field) => visible.has(field))
  for (const field of node.expandableFields) {
    if (base.includes(field) || !requested.has(field)) continue
    if (visible !== undefined && !visible.has(field)) continue
    candidates.push(field)
  }
  // Aggregates and computed fields cost a statement or an expression: shown where listed, or named in expand or fields.
  for (const field of node.derived.keys()) {
    if (base.includes(field) || !(requested.has(field) || fieldsTree?.children.has(field) === true)) continue
    if (visible !== undefined && !visible.has(field)) continue
    candidates.push(field)
  }
  return candidates
}

/** The shortest run of segments a cyclic path ends by repeating (`owner.pets` for `owner.pets.owner.pets…`). */
function repeatingUnit (path: readonly string[]): string {
  for (let length = 1; length * 2 <= path.length; length++) {
    const unit = path.slice(path.length - length).join('.')
    if (unit === path.slice(path.length - 2 * length, path.length - length).join('.')) return unit
  }
  return path.join('.')
}

/** A new tree holding both; neither input is changed (query trees are shared through the plan cache). */
function mergePathNodes (a: PathNode, b: PathNode): PathNode {
  const merged: PathNode = { leaf: a.leaf || b.leaf, children: new Map(a.children) }
  for (const [name, child] of b.children) {
    const existing = merged.children.get(name)
    merged.children.set(name, existing === undefined ? child : mergePathNodes(existing, child))
  }
  return merged
}
