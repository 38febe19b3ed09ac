import type { CompanyRow, PersonRow, PetRow, RelationWorld, TagRow, ToyRow } from '../fixtures/relation-lists.js'

/**
 * A naive reading of docs/lists.md for lists of people (test/fixtures/relation-lists.ts): every row in
 * memory, each filter read from its path as written, each candidate combination of related rows tried.
 * Nothing is grouped into trees or statements: a person matches when some choice of one related row per
 * relation path the filters name (the same row for every filter sharing that path, each in its resource's
 * scope) satisfies every filter.
 */

type Operator = 'eq' | 'ne' | 'lt' | 'gte' | 'in' | 'null' | 'contains' | 'exists'

/** A filter as the request writes it: `filter[path][operator]=raw`. */
export interface ListFilter {
  readonly path: string
  readonly operator: Operator
  readonly raw: string
}

export type SortName = 'name' | 'born' | 'employer.name' | 'manager.name' | 'manager.employer.name'

export interface ListSortKey {
  readonly name: SortName
  readonly descending: boolean
}

type AnyRow = CompanyRow | PersonRow | PetRow | ToyRow | TagRow
type ResourceName = 'Person' | 'Pet' | 'Company' | 'Toy' | 'Tag'

interface RelationModel {
  readonly target: ResourceName
  /** The related rows the request may see: those of the relation, in the target's scope. */
  readonly rows: (world: RelationWorld, row: AnyRow) => AnyRow[]
}

/** The rows each scoped resource lets a request see: the fixture's scopes, or a test's own. */
export interface Scopes {
  readonly company: (company: CompanyRow) => boolean
  readonly pet: (pet: PetRow) => boolean
  readonly tag: (tag: TagRow) => boolean
}

/** The scopes of test/fixtures/relation-lists.ts: hidden companies, deleted pets and secret tags exist for no request. */
export const fixtureScopes: Scopes = {
  company: (company) => company.hidden === 0,
  pet: (pet) => pet.deleted === 0,
  tag: (tag) => tag.secret === 0,
}

const person = (world: RelationWorld, id: number | null) => world.people.filter((candidate) => candidate.id === id)

/** Each resource's relations, their related rows read under `scopes`. */
function relationsUnder (scopes: Scopes): Record<ResourceName, Record<string, RelationModel>> {
  return {
    Person: {
      employer: {
        target: 'Company',
        rows: (world, row) => world.companies.filter((company) => company.id === (row as PersonRow).employer_id && scopes.company(company)),
      },
      manager: { target: 'Person', rows: (world, row) => person(world, (row as PersonRow).manager_id) },
      pets: { target: 'Pet', rows: (world, row) => world.pets.filter((pet) => pet.owner_id === row.id && scopes.pet(pet)) },
      reports: { target: 'Person', rows: (world, row) => world.people.filter((candidate) => candidate.manager_id === row.id) },
    },
    Pet: {
      owner: { target: 'Person', rows: (world, row) => person(world, (row as PetRow).owner_id) },
      toys: { target: 'Toy', rows: (world, row) => world.toys.filter((toy) => toy.pet_id === row.id) },
      tags: {
        target: 'Tag',
        rows: (world, row) => world.tags.filter((tag) => scopes.tag(tag) &&
          world.pet_tags.some((link) => link.pet_id === row.id && link.tag_id === tag.id)),
      },
    },
    Company: {},
    Toy: {},
    Tag: {},
  }
}

const fixtureRelations = relationsUnder(fixtureScopes)
const relationsByScopes = new WeakMap<Scopes, ReturnType<typeof relationsUnder>>([[fixtureScopes, fixtureRelations]])
function relationsOf (scopes: Scopes): ReturnType<typeof relationsUnder> {
  let found = relationsByScopes.get(scopes)
  if (found === undefined) relationsByScopes.set(scopes, found = relationsUnder(scopes))
  return found
}

/** The resource a relation path (`pets.toys`) leads to from Person. */
function resourceAt (segments: readonly string[]): ResourceName {
  let resource: ResourceName = 'Person'
  for (const segment of segments) resource = fixtureRelations[resource][segment]!.target
  return resource
}

/** The field's value as the database compares it: NULL as null. */
const fieldValue = (row: AnyRow, field: string): string | number | null =>
  (row as unknown as Record<string, string | number | null>)[field]!

function holds (filter: ListFilter, value: string | number | null): boolean {
  const { operator, raw } = filter
  switch (operator) {
    case 'null': return (value === null) === (raw === 'true')
    case 'eq': return value !== null && String(value) === raw
    case 'ne': return value !== null && String(value) !== raw
    case 'lt': return value !== null && String(value) < raw
    case 'gte': return value !== null && String(value) >= raw
    case 'in': return value !== null && raw.split(',').includes(String(value))
    case 'contains': return value !== null && String(value).toLowerCase().includes(raw.toLowerCase())
    case 'exists': throw new Error('exists is a question about related rows')
  }
}

/** The relation path a filter's condition sits on: its path less the field (for `exists`, less the relation). */
const prefixOf = (filter: ListFilter): string => filter.path.split('.').slice(0, -1).join('.')

/** Whether `person` is in the list the filters select. */
export function matches (world: RelationWorld, person: PersonRow, filters: readonly ListFilter[], scopes = fixtureScopes): boolean {
  const relations = relationsOf(scopes)
  // Every relation path a filter sits on, with all its ancestors, parents before children.
  const prefixes = new Set<string>()
  for (const filter of filters) {
    const segments = prefixOf(filter).split('.').filter((segment) => segment !== '')
    for (let length = 1; length <= segments.length; length++) prefixes.add(segments.slice(0, length).join('.'))
  }
  const ordered = [...prefixes].sort((a, b) => a.split('.').length - b.split('.').length)
  const chosen = new Map<string, AnyRow>([['', person]])
  const satisfied = (): boolean => filters.every((filter) => {
    const row = chosen.get(prefixOf(filter))!
    const field = filter.path.split('.').at(-1)!
    if (filter.operator === 'exists') {
      const resource = resourceAt(prefixOf(filter).split('.').filter((segment) => segment !== ''))
      return (relations[resource][field]!.rows(world, row).length > 0) === (filter.raw === 'true')
    }
    return holds(filter, fieldValue(row, field))
  })
  // Try every choice of one related row per path, each among the rows related to its parent's choice.
  const choose = (index: number): boolean => {
    if (index === ordered.length) return satisfied()
    const prefix = ordered[index]!
    const segments = prefix.split('.')
    const parent = chosen.get(segments.slice(0, -1).join('.'))!
    const relation = relations[resourceAt(segments.slice(0, -1))][segments.at(-1)!]!
    for (const row of relation.rows(world, parent)) {
      chosen.set(prefix, row)
      if (choose(index + 1)) return true
    }
    chosen.delete(prefix)
    return false
  }
  return choose(0)
}

/** A sort key's value for `person`: through to-one relations, null where a related row is missing or out of scope. */
export function sortValue (world: RelationWorld, person: PersonRow, name: SortName, scopes = fixtureScopes): string | null {
  const relations = relationsOf(scopes)
  const segments = name.split('.')
  let row: AnyRow | undefined = person
  let resource: ResourceName = 'Person'
  for (const segment of segments.slice(0, -1)) {
    const relation: RelationModel = relations[resource][segment]!
    row = relation.rows(world, row)[0]
    resource = relation.target
    if (row === undefined) return null
  }
  return fieldValue(row, segments.at(-1)!) as string | null
}

/** A person's position in the order: its sort keys' values, then its id. */
export type Position = ReadonlyArray<string | number | null>

export function positionOf (world: RelationWorld, person: PersonRow, sort: readonly ListSortKey[], scopes = fixtureScopes): Position {
  return [...sort.map(({ name }) => sortValue(world, person, name, scopes)), person.id]
}

/** Compares two positions: NULL larger than every value, each key in its direction, the id ascending last. */
export function comparePositions (sort: readonly ListSortKey[], a: Position, b: Position): number {
  for (let index = 0; index < a.length; index++) {
    const left = a[index]!
    const right = b[index]!
    if (left === right) continue
    const ascending = left === null ? 1 : right === null ? -1 : left < right ? -1 : 1
    return sort[index]?.descending === true ? -ascending : ascending
  }
  return 0
}

/** The list: the people the filters select, in the order of the sort keys, then the id. */
export function referenceList (
  world: RelationWorld, filters: readonly ListFilter[], sort: readonly ListSortKey[], scopes = fixtureScopes
): PersonRow[] {
  const positions = new Map(world.people.map((row) => [row.id, positionOf(world, row, sort, scopes)]))
  return world.people.filter((row) => matches(world, row, filters, scopes))
    .sort((a, b) => comparePositions(sort, positions.get(a.id)!, positions.get(b.id)!))
}

/** A person as the list writes it with its default fields. */
export function personBody (row: PersonRow): Record<string, unknown> {
  return { id: row.id, name: row.name, born: row.born, employer: row.employer_id, manager: row.manager_id }
}

/** What a request expands and who asks: `x-role: guest` sees neither Person.born nor Pet.species. */
export interface Shaping {
  readonly expand: readonly string[]
  readonly guest: boolean
}

/** Whether a guest may not use the filters or the sort: each names a field hidden from it (403). */
export function forbiddenToGuest (filters: readonly ListFilter[], sort: readonly ListSortKey[]): boolean {
  return filters.some(({ path }) => path === 'born' || path.endsWith('pets.species')) || sort.some(({ name }) => name === 'born')
}

/**
 * A person as the list writes it: its default fields (less `born` for a guest), each expanded relation in
 * place of its key or, for a to-many one, after them; related rows in their resource's scope (a hidden or
 * missing one: null), to-many rows by id, never narrowed by the list's filters.
 */
export function shapedPerson (world: RelationWorld, row: PersonRow, shaping: Shaping, scopes = fixtureScopes): Record<string, unknown> {
  const relations = relationsOf(scopes)
  const expanded = (path: string) => shaping.expand.includes(path)
  const plain = (person: PersonRow) => shaping.guest
    ? { id: person.id, name: person.name, employer: person.employer_id, manager: person.manager_id }
    : personBody(person)
  const body: Record<string, unknown> = plain(row)
  if (expanded('employer')) {
    const company = relations.Person.employer!.rows(world, row)[0] as CompanyRow | undefined
    body.employer = company === undefined ? null : { id: company.id, name: company.name }
  }
  if (expanded('manager')) {
    const manager = relations.Person.manager!.rows(world, row)[0] as PersonRow | undefined
    body.manager = manager === undefined ? null : plain(manager)
  }
  if (expanded('pets') || expanded('pets.tags')) {
    const pets = (relations.Person.pets!.rows(world, row) as PetRow[]).sort((a, b) => a.id - b.id)
    body.pets = pets.map((pet) => {
      const written: Record<string, unknown> = shaping.guest
        ? { id: pet.id, name: pet.name, owner: pet.owner_id }
        : { id: pet.id, name: pet.name, species: pet.species, owner: pet.owner_id }
      if (expanded('pets.tags')) {
        written.tags = (relations.Pet.tags!.rows(world, pet) as TagRow[]).sort((a, b) => a.id - b.id).map(({ id, name }) => ({ id, name }))
      }
      return written
    })
  }
  return body
}
