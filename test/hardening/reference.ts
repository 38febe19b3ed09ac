import { listPermits, records } from './support.js'

/**
 * A second, deliberately naive reading of the documentation for the pets fixture, to
 * check the planner against: paths stay flat lists of segments, nothing is
 * folded into trees or cached. It predicts the set of codes a request may be
 * answered with (several name errors may exist; which one is reported first
 * is the planner's business) or, when there is none, the exact body.
 */

interface RelationModel {
  type: string
  many: boolean
  /** The nested field set: the relation option's `fields` (or the target's), less its `omit`. */
  base: string[]
}

interface ResourceModel {
  defaults: string[]
  relations: Record<string, RelationModel>
}

const model: Record<string, ResourceModel> = {
  Company: { defaults: ['name', 'public'], relations: {} },
  Person: {
    defaults: ['id', 'name', 'hobbies'],

    relations: { employer: { type: 'Company', many: false, base: ['name', 'public'] } },
  },
  PetStore: { defaults: ['id', 'name', 'address'], relations: {} },
  Toy: { defaults: ['id', 'name', 'secret'], relations: {} },
  Pet: {
    defaults: ['id', 'name', 'species', 'owner', 'sold_from', 'toys'],

    relations: {
      owner: { type: 'Person', many: false, base: ['id', 'name', 'hobbies'] },
      sold_from: { type: 'PetStore', many: false, base: ['id', 'name'] },
      toys: { type: 'Toy', many: true, base: ['id', 'name'] },
    },
  },
}

export interface ReferenceLimits {
  maxParamLength: number
  maxPaths: number
  maxDepth: number
}

export const defaultLimits: ReferenceLimits = { maxParamLength: 2000, maxPaths: 100, maxDepth: 5 }

export interface ReferenceQuery {
  /** The values of each parameter as received: plain ones, then bracketed ones. */
  expand: string[]
  fields: string[]
  omit: string[]
}

export type ReferenceAnswer =
  | { status: 200; body: unknown }
  | { status: 400; codes: Set<string> }

const isWildcard = (segment: string) => segment === '*' || segment === '~all'
const hasOwn = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key)

export function referenceAnswer (list: boolean, query: ReferenceQuery, limits: ReferenceLimits = defaultLimits): ReferenceAnswer {
  const malformed = (): ReferenceAnswer => ({ status: 400, codes: new Set(['FST_EXPAND_MALFORMED']) })
  // The limit counts the characters of the values, not the commas that join them.
  const length = (values: string[]) => values.reduce((sum, value) => sum + value.length, 0)
  if ([query.expand, query.fields, query.omit].some((values) => length(values) > limits.maxParamLength)) return malformed()
  const parsed: string[][][] = []
  for (const values of [query.expand, query.fields, query.omit]) {
    const items = values.flatMap((value) => value.split(',')).map((item) => item.trim()).filter((item) => item !== '')
    const paths = items.map((item) => item.split('.'))
    if (paths.some((path) => path.includes(''))) return malformed()
    if (paths.length > limits.maxPaths) return malformed()
    parsed.push(paths)
  }
  const [expand, fields, omit] = parsed
  // A wildcard may end a `fields` path; anywhere else in fields, and anywhere in omit, it is malformed.
  if (fields.some((path) => path.slice(0, -1).some(isWildcard)) || omit.some((path) => path.some(isWildcard))) return malformed()
  if (expand.some((path) => path.length > limits.maxDepth)) return { status: 400, codes: new Set(['FST_EXPAND_TOO_DEEP']) }

  const permitted = (path: string) => !list || listPermits.some((listed) => listed === path || listed.startsWith(`${path}.`))
  const errors = new Set<string>()
  for (const path of expand) checkExpandPath('Pet', path, '', permitted, errors)

  const root = levelOf('Pet', model.Pet.defaults, expand, fields, omit, '', permitted, errors)
  const body = list ? Object.values(records.Pet).map((record) => shape(root, record)) : shape(root, records.Pet[1])
  if (errors.size > 0) return { status: 400, codes: errors }
  return { status: 200, body }
}

function checkExpandPath (type: string, path: string[], prefix: string, permitted: (path: string) => boolean, errors: Set<string>): void {
  const [segment, ...rest] = path
  const relations = model[type].relations
  let targets: string[]
  if (isWildcard(segment)) {
    // `*.x` reaches x below every permitted relation that has one; none having it is an unknown name.
    targets = Object.keys(relations).filter((name) => permitted(prefix + name) && (rest.length === 0 || applies(relations[name], rest[0])))
    if (rest.length > 0 && !isWildcard(rest[0]) && targets.length === 0) {
      errors.add('FST_EXPAND_UNKNOWN_FIELD')
      return
    }
  } else if (!hasOwn(relations, segment)) {
    errors.add('FST_EXPAND_UNKNOWN_FIELD')
    return
  } else if (!permitted(prefix + segment)) {
    errors.add('FST_EXPAND_NOT_PERMITTED')
    return
  } else {
    targets = [segment]
  }
  if (rest.length === 0) return
  for (const name of targets) checkExpandPath(relations[name].type, rest, `${prefix}${name}.`, permitted, errors)
}

/** Whether a name below a wildcard applies to a relation: a wildcard, or a relation of its target. */
function applies (relation: RelationModel, next: string): boolean {
  return isWildcard(next) || hasOwn(model[relation.type].relations, next)
}

/** One level of the answer: the fields written, in order, and what each expanded relation shows. */
interface ReferenceLevel {
  fields: Array<{ name: string; relation?: RelationModel; level?: ReferenceLevel }>
}

function levelOf (
  type: string,
  base: string[],
  expand: string[][],
  fields: string[][],
  omit: string[][],
  prefix: string,
  permitted: (path: string) => boolean,
  errors: Set<string>
): ReferenceLevel {
  const resource = model[type]
  for (const path of [...fields, ...omit]) {
    // A field outside the level's set (its base and its relations) does not exist for clients.
    if (!isWildcard(path[0]) && !base.includes(path[0]) && !hasOwn(resource.relations, path[0])) errors.add('FST_EXPAND_UNKNOWN_FIELD')
  }
  const viaWildcard = (path: string[], name: string) => isWildcard(path[0]) && permitted(prefix + name) &&
    (path.length === 1 || applies(resource.relations[name], path[1]))
  const expands = (name: string) => hasOwn(resource.relations, name) &&
    expand.some((path) => path[0] === name || viaWildcard(path, name))
  const deferred = Object.keys(resource.relations).filter((name) => !base.includes(name) && expands(name))
  const restrictToFields = fields.length > 0 && !fields.some((path) => isWildcard(path[0]))
  const shown = [...base, ...deferred]
    .filter((name) => !restrictToFields || fields.some((path) => path[0] === name))
    .filter((name) => !omit.some((path) => path.length === 1 && path[0] === name))

  const below = (paths: string[][], name: string, throughWildcard: boolean) => paths
    .filter((path) => path.length > 1 && (path[0] === name || (throughWildcard && viaWildcard(path, name))))
    .map((path) => path.slice(1))

  return {
    fields: shown.map((name) => {
      if (!expands(name)) return { name }
      const relation = resource.relations[name]
      const level = levelOf(relation.type, relation.base, below(expand, name, true), below(fields, name, false), below(omit, name, false), `${prefix}${name}.`, permitted, errors)
      return { name, relation, level }
    }),
  }
}

function shape (level: ReferenceLevel, record: Record<string, unknown>): Record<string, unknown> {
  const shaped: Record<string, unknown> = {}
  for (const { name, relation, level: nested } of level.fields) {
    if (relation === undefined || nested === undefined) {
      shaped[name] = record[name]
      continue
    }
    const load = (id: unknown) => {
      const related = records[relation.type][id as number]
      return related === undefined ? null : shape(nested, related)
    }
    shaped[name] = relation.many ? (record[name] as unknown[]).map(load) : load(record[name])
  }
  return shaped
}
