import { Type } from '@sinclair/typebox'
import fc from 'fast-check'
import { defineResource } from '../../plugin/index.js'

/*
 * Helpers for trust-property.test.ts: what a client's numbers mean (part A),
 * an in-memory resource set with an independent validator and renderer of
 * handler data (part B), and the words a driver error would leave in a body
 * (part C).
 */

// ---------------------------------------------------------------- A. numbers from clients

export const maxSafe = Number.MAX_SAFE_INTEGER

/** Query and path values a client may send for an integer, as raw (unencoded) strings. */
const oddNumbers = [
  '0', '-1', '2147483647', '2147483648', '-2147483648', '-2147483649', '4294967296',
  '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740991',
  '9223372036854775807', '9223372036854775808', '-9223372036854775808', '18446744073709551616',
  '1e20', '1e400', '-1e400', '1e1', '4e0', '-0', '1.5', '1.0', '0.0', '01', '007', '+1', ' 1', '1 ', '\u00a01',
  '0x10', '0b1', '0o7', '1_000', '1,2', 'Infinity', '-Infinity', 'NaN', '', ' ', 'true', 'null', 'abc', '[1]',
  '\u0661', '\uff11', '\u0967', '\u{1D7CF}', '\u00b9', '1\u0000', '2\u200b',
]
const longDigits = ['1'.repeat(25), '9'.repeat(80), `${'0'.repeat(60)}1`, '1'.repeat(400), `${'0'.repeat(300)}3`, `-${'9'.repeat(40)}`]

/** A number as a client writes it: small in-range integers most often, then everything odd. */
export const clientNumber: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 30 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 99, max: 125 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: -50, max: -1 }).map(String) },
  { weight: 5, arbitrary: fc.constantFrom(...oddNumbers) },
  { weight: 1, arbitrary: fc.constantFrom(...longDigits) }
)

/** Path ids: Fastify answers 414 past its own maxParamLength (100), which is not the plugin's business. */
export const clientId: fc.Arbitrary<string> = clientNumber.filter((value) => value !== '' && value.length <= 90)

export type NumberMeaning =
  /** A plain decimal integer in range: must be accepted with this value. */
  | { kind: 'valid'; value: number }
  /** Not an integer, or out of range: must be refused (400). */
  | { kind: 'invalid' }
  /** An integer in range written oddly ('01', '+1', ' 1', '0x10', '1.0', '-0'): refused, or accepted as this value. */
  | { kind: 'either'; value: number }

/** A plain decimal integer: no sign but '-', no leading zero, no '-0'. */
const plainDecimal = /^(0|-?[1-9][0-9]*)$/

/** What a client's value for an integer in [min, 2^53 - 1] means. */
export function meaningOf (sent: string, min: number): NumberMeaning {
  const value = Number(sent)
  if (sent.trim() === '' || !Number.isInteger(value)) return { kind: 'invalid' }
  if (value < min || value > maxSafe) return { kind: 'invalid' }
  const normalized = value === 0 ? 0 : value // -0 is written 0
  if (plainDecimal.test(sent)) return { kind: 'valid', value: normalized }
  return { kind: 'either', value: normalized }
}

/** Whether a detail id is a plain decimal integer (any size). */
export const isPlainDecimal = (sent: string): boolean => plainDecimal.test(sent)

/** The pets of test/fixtures/tables.ts seed(db, extraPets) with their default fields, ordered by id. */
export function referencePets (extraPets: number): Array<Record<string, unknown>> {
  const pets: Array<Record<string, unknown>> = [
    { id: 1, name: 'Garfield', species: 'cat', owner: 1, sold_from: 1, toys: [1, 2] },
    { id: 2, name: 'Odie', species: 'dog', owner: 1, sold_from: 2, toys: [3] },
    { id: 3, name: 'Nemo', species: 'fish', owner: 2, sold_from: null, toys: [] },
    { id: 4, name: 'Rex', species: 'dog', owner: 4, sold_from: 1, toys: [1] },
  ]
  const species = ['cat', 'dog', 'fish', 'bird']
  for (let index = 0; index < extraPets; index++) {
    const id = 100 + index
    pets.push({
      id,
      name: `pet${id}`,
      species: species[index % 4],
      owner: (index % 4) + 1,
      sold_from: index % 3 === 0 ? null : (index % 2) + 1,
      toys: [(index % 3) + 1],
    })
  }
  return pets
}

// ---------------------------------------------------------------- B. malformed handler data

export const Tag = defineResource({
  name: 'Tag',
  schema: Type.Object({ id: Type.Integer(), label: Type.String() }),
  fields: ['id', 'label'],
})

export const Owner = defineResource({
  name: 'Owner',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), verified: Type.Boolean(), joined: Type.String({ format: 'date-time' }) }),
  fields: ['id', 'name', 'verified', 'joined'],
})

export const Item = defineResource({
  name: 'Item',
  schema: Type.Object({
    id: Type.Integer(),
    title: Type.String(),
    count: Type.Integer(),
    price: Type.Number(),
    active: Type.Boolean(),
    parent: Type.Union([Type.Integer(), Type.Null()]),
    created: Type.String({ format: 'date-time' }),
    owner: Type.Integer(),
    tags: Type.Array(Type.Integer()),
  }),
  fields: ['id', 'title', 'count', 'price', 'active', 'parent', 'created', 'owner', 'tags'],
  expandable: { owner: Owner, tags: [Tag, { many: true }] },
})

export const itemResources = [Item, Owner, Tag]

type ScalarType = 'integer' | 'nullable-integer' | 'number' | 'boolean' | 'string' | 'date-time'
type ModelField =
  | { name: string; scalar: ScalarType }
  | { name: string; relation: 'Owner' | 'Tag'; many: boolean }

/** The three resources as the reference reads them: fields in definition order. */
const model: Record<'Item' | 'Owner' | 'Tag', ModelField[]> = {
  Tag: [{ name: 'id', scalar: 'integer' }, { name: 'label', scalar: 'string' }],
  Owner: [
    { name: 'id', scalar: 'integer' }, { name: 'name', scalar: 'string' },
    { name: 'verified', scalar: 'boolean' }, { name: 'joined', scalar: 'date-time' },
  ],
  Item: [
    { name: 'id', scalar: 'integer' }, { name: 'title', scalar: 'string' }, { name: 'count', scalar: 'integer' },
    { name: 'price', scalar: 'number' }, { name: 'active', scalar: 'boolean' }, { name: 'parent', scalar: 'nullable-integer' },
    { name: 'created', scalar: 'date-time' }, { name: 'owner', relation: 'Owner', many: false }, { name: 'tags', relation: 'Tag', many: true },
  ],
}

export type RefField =
  | { name: string; kind: 'value'; scalar: ScalarType }
  | { name: string; kind: 'id'; many: boolean }
  | { name: string; kind: 'expanded'; many: boolean; level: RefField[] }

export interface ItemQuery {
  expand?: string[]
  fields?: string[]
  omit?: string[]
}

const itemNames = model.Item.map((field) => field.name)
/** Every query uses only names that exist, so the plugin always plans it (no 400s in part B). */
export const itemQuery: fc.Arbitrary<ItemQuery> = fc.record({
  expand: fc.option(fc.subarray(['owner', 'tags', '*'], { minLength: 1 }), { nil: undefined }),
  fields: fc.option(fc.subarray([...itemNames, 'owner.id', 'owner.name', 'owner.verified', 'owner.joined', 'tags.id', 'tags.label'], { minLength: 1, maxLength: 6 }), { nil: undefined }),
  omit: fc.option(fc.subarray([...itemNames, 'owner.verified', 'owner.name', 'tags.label'], { minLength: 1, maxLength: 3 }), { nil: undefined }),
}, { requiredKeys: [] })

export function itemQueryString (query: ItemQuery): string {
  const pairs: string[] = []
  for (const name of ['expand', 'fields', 'omit'] as const) {
    const values = query[name]
    if (values !== undefined) pairs.push(`${name}=${encodeURIComponent(values.join(','))}`)
  }
  return pairs.join('&')
}

/** The fields each level writes, read from README's rules (a reading of its own, not the planner). */
export function referencePlan (query: ItemQuery): RefField[] {
  const split = (values: string[] | undefined) => (values ?? []).map((value) => value.split('.'))
  return planLevel('Item', split(query.expand), split(query.fields), split(query.omit))
}

function planLevel (type: keyof typeof model, expand: string[][], fields: string[][], omit: string[][]): RefField[] {
  const expands = (name: string) => expand.some((path) => path[0] === name || path[0] === '*')
  const below = (paths: string[][], name: string) =>
    paths.filter((path) => path.length > 1 && path[0] === name).map((path) => path.slice(1))
  return model[type]
    .filter((field) => fields.length === 0 || fields.some((path) => path[0] === field.name))
    .filter((field) => !omit.some((path) => path.length === 1 && path[0] === field.name))
    .map((field): RefField => {
      if ('scalar' in field) return { name: field.name, kind: 'value', scalar: field.scalar }
      if (!expands(field.name)) return { name: field.name, kind: 'id', many: field.many }
      return { name: field.name, kind: 'expanded', many: field.many, level: planLevel(field.relation, [], below(fields, field.name), below(omit, field.name)) }
    })
}

export class InvalidData extends Error {}
const invalid = (where: string, why: string): never => { throw new InvalidData(`${where}: ${why}`) }
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * One value as the body must show it, or InvalidData when it does not fit.
 * Types are taken exactly; the only other representations accepted are the
 * ones drivers return: bigints (written with all their digits) and plain
 * decimal strings of safe integers in integer fields, decimal strings and
 * safe bigints in number fields, 0/1 in boolean fields, and valid Date
 * objects in date-time fields (text there only in a form dates are read in).
 */
/**
 * The date-time texts tried, each with the one form a body writes it in
 * (README, "Dates and times"); any other text is not a date-time.
 */
const dateTimeTexts = new Map([
  ['2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z'],
  ['2021-01-01 00:00:00', '2021-01-01T00:00:00.000Z'],
  ['2021-01-01T02:00:00.5+02:00', '2021-01-01T00:00:00.500Z'],
  ['2021-01-01t00:00z', '2021-01-01T00:00:00.000Z'],
])

/** Text as `toISOString()` writes it (years 0001 to 9999), written as it is. */
function isIsoText (value: string): boolean {
  const time = Date.parse(value)
  return /^[0-9]{4}-/.test(value) && !value.startsWith('0000') && !Number.isNaN(time) && new Date(time).toISOString() === value
}

/** A decimal number as pg returns a numeric column. */
const decimalNumber = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/

function renderScalar (type: ScalarType, value: unknown, where: string): unknown {
  switch (type) {
    case 'nullable-integer':
      if (value === null) return null
      return renderScalar('integer', value, where)
    case 'integer':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return value
      // A bigint is written with all its digits; parsed back, it is this number.
      if (typeof value === 'bigint') return Number(value)
      if (typeof value === 'string' && plainDecimal.test(value) && Number.isSafeInteger(Number(value))) return Number(value)
      return invalid(where, 'not an integer')
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return value
      if (typeof value === 'bigint' && value >= -BigInt(maxSafe) && value <= BigInt(maxSafe)) return Number(value)
      if (typeof value === 'string' && decimalNumber.test(value) && Number.isFinite(Number(value))) return Number(value)
      return invalid(where, 'not a finite number')
    case 'boolean':
      if (typeof value === 'boolean') return value
      if (value === 0 || value === 1) return value === 1
      return invalid(where, 'not a boolean')
    case 'string':
      if (typeof value === 'string') return value
      return invalid(where, 'not a string')
    case 'date-time':
      if (typeof value === 'string') return dateTimeTexts.get(value) ?? (isIsoText(value) ? value : invalid(where, 'not a date-time'))
      if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
      return invalid(where, 'not a date-time')
  }
}

function renderLevel (level: RefField[], value: unknown, where: string): Record<string, unknown> {
  if (!isObject(value) || value instanceof Date) return invalid(where, 'not an object')
  const shaped: Record<string, unknown> = {}
  for (const field of level) {
    const at = `${where}.${field.name}`
    const own = Object.hasOwn(value, field.name) ? value[field.name] : undefined
    if (own === undefined) invalid(at, 'missing')
    if (field.kind === 'value') {
      shaped[field.name] = renderScalar(field.scalar, own, at)
    } else if (field.kind === 'id') {
      if (!field.many) shaped[field.name] = renderScalar('integer', own, at)
      else if (!Array.isArray(own)) invalid(at, 'not an array of ids')
      else shaped[field.name] = (own as unknown[]).map((id, index) => renderScalar('integer', id, `${at}[${index}]`))
    } else if (!field.many) {
      shaped[field.name] = own === null ? null : renderLevel(field.level, own, at)
    } else if (!Array.isArray(own)) {
      invalid(at, 'not an array of objects')
    } else {
      shaped[field.name] = (own as unknown[]).map((item, index) => renderLevel(field.level, item, `${at}[${index}]`))
    }
  }
  return shaped
}

export type RouteKind = 'detail' | 'list' | 'envelope'

/** The body a 200 must carry for this data, or InvalidData. */
export function referenceBody (kind: RouteKind, plan: RefField[], data: unknown): unknown {
  if (kind === 'detail') return renderLevel(plan, data, '$')
  if (kind === 'list') {
    if (!Array.isArray(data)) return invalid('$', 'not an array')
    return data.map((item, index) => renderLevel(plan, item, `$[${index}]`))
  }
  if (!isObject(data)) return invalid('$', 'not an envelope object')
  if (!Array.isArray(data.data)) return invalid('$.data', 'not an array')
  return { ...data, data: data.data.map((item, index) => renderLevel(plan, item, `$.data[${index}]`)) }
}

// Generated records: valid values, in the representations the reference accepts.

const safeBig = BigInt(maxSafe)
const validInteger: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -1000, max: 100_000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -0, maxSafe, -maxSafe, 2147483648) },
  { weight: 1, arbitrary: fc.bigInt({ min: -safeBig, max: safeBig }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.constantFrom('9007199254740991', '-9007199254740991', '0') }
)
const validString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('', 'quote " and \\', '\u2028 line', '\u{1F600}', 'a\nb', '</script>') }
)
const validDate = fc.date({ min: new Date(0), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
const validDateTime: fc.Arbitrary<unknown> = fc.oneof(validDate, validDate.map((date) => date.toISOString()))
const validBoolean: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constantFrom(0, 1) }
)
const validNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 })
)

export interface TagRecord { id: unknown; label: unknown; hidden: string }
export interface OwnerRecord { id: unknown; name: unknown; verified: unknown; joined: unknown; hidden: string }
export interface ItemRecord {
  id: unknown;
  title: unknown;
  count: unknown;
  price: unknown;
  active: unknown;
  parent: unknown;
  created: unknown
  ownerId: unknown;
  owner: OwnerRecord | null;
  tagIds: unknown[];
  tags: TagRecord[];
  hidden: string
}

const tagRecord: fc.Arbitrary<TagRecord> = fc.record({ id: validInteger, label: validString, hidden: fc.constant('HIDDEN-tag') })
const ownerRecord: fc.Arbitrary<OwnerRecord> = fc.record({
  id: validInteger, name: validString, verified: validBoolean, joined: validDateTime, hidden: fc.constant('HIDDEN-owner'),
})
export const itemRecord: fc.Arbitrary<ItemRecord> = fc.record({
  id: validInteger,
  title: validString,
  count: validInteger,
  price: validNumber,
  active: validBoolean,
  parent: fc.oneof(fc.constant(null), validInteger),
  created: validDateTime,
  ownerId: validInteger,
  owner: fc.oneof({ weight: 4, arbitrary: ownerRecord }, { weight: 1, arbitrary: fc.constant(null) }),
  tagIds: fc.array(validInteger, { maxLength: 3 }),
  tags: fc.array(tagRecord, { maxLength: 3 }),
  hidden: fc.constant('HIDDEN-item'),
})

/** Where a value sits in the data, and what the plan expects there (which decides the odd values tried). */
export type SlotType =
  | ScalarType | 'to-one-id' | 'id-array' | 'to-one-object' | 'to-many-objects' | 'element'
  | 'detail-root' | 'list-root' | 'envelope-root'

export interface Slot {
  type: SlotType
  /** The container and key, or undefined for the root. */
  parent?: Record<string, unknown> | unknown[]
  key?: string | number
}

/** A marker: delete the property (or leave an array element undefined). */
export const MISSING = Symbol('missing')

/**
 * Data shaped like the plan (relations expanded exactly where the reference
 * plan expands them), every stored field present whether planned or not,
 * plus a property no resource declares.
 */
export function buildData (kind: RouteKind, plan: RefField[], items: ItemRecord[], reversed: boolean): unknown {
  const expanded = (name: string) => plan.some((field) => field.name === name && field.kind === 'expanded')
  const order = <T extends Record<string, unknown>>(object: T): T =>
    (reversed ? Object.fromEntries(Object.entries(object).reverse()) as T : object)
  const tag = (record: TagRecord) => order({ id: record.id, label: record.label, hidden: record.hidden })
  const owner = (record: OwnerRecord | null) => record === null
    ? null
    : order({ id: record.id, name: record.name, verified: record.verified, joined: record.joined, hidden: record.hidden })
  const item = (record: ItemRecord) => order({
    id: record.id,
    title: record.title,
    count: record.count,
    price: record.price,
    active: record.active,
    parent: record.parent,
    created: record.created,
    owner: expanded('owner') ? owner(record.owner) : record.ownerId,
    tags: expanded('tags') ? record.tags.map(tag) : [...record.tagIds],
    hidden: record.hidden,
  })
  if (kind === 'detail') return item(items[0])
  if (kind === 'list') return items.map(item)
  return { total: items.length, note: 'passes through', data: items.map(item) }
}

/** Every place a value can be replaced, with the type the plan expects there. */
export function slotsOf (kind: RouteKind, plan: RefField[], data: unknown): Slot[] {
  const slots: Slot[] = [{ type: kind === 'detail' ? 'detail-root' : kind === 'list' ? 'list-root' : 'envelope-root' }]
  const expanded = (name: string) => plan.some((field) => field.name === name && field.kind === 'expanded')
  const objectSlots = (type: 'Item' | 'Owner' | 'Tag', object: Record<string, unknown>) => {
    for (const field of model[type]) {
      const value = object[field.name]
      if ('scalar' in field) {
        slots.push({ type: field.scalar, parent: object, key: field.name })
      } else if (field.many && type === 'Item' && expanded(field.name)) {
        slots.push({ type: 'to-many-objects', parent: object, key: field.name })
        ;(value as Array<Record<string, unknown>>).forEach((tag, index, array) => {
          slots.push({ type: 'element', parent: array, key: index })
          objectSlots('Tag', tag)
        })
      } else if (field.many) {
        slots.push({ type: 'id-array', parent: object, key: field.name })
        ;(value as unknown[]).forEach((_id, index, array) => slots.push({ type: 'integer', parent: array, key: index }))
      } else if (type === 'Item' && expanded(field.name)) {
        slots.push({ type: 'to-one-object', parent: object, key: field.name })
        if (value !== null) objectSlots('Owner', value as Record<string, unknown>)
      } else {
        slots.push({ type: 'to-one-id', parent: object, key: field.name })
      }
    }
    slots.push({ type: 'string', parent: object, key: 'hidden' })
  }
  const list = (array: Array<Record<string, unknown>>) => array.forEach((item, index) => {
    slots.push({ type: 'element', parent: array, key: index })
    objectSlots('Item', item)
  })
  if (kind === 'detail') objectSlots('Item', data as Record<string, unknown>)
  else if (kind === 'list') list(data as Array<Record<string, unknown>>)
  else {
    slots.push({ type: 'list-root', parent: data as Record<string, unknown>, key: 'data' })
    list((data as { data: Array<Record<string, unknown>> }).data)
  }
  return slots
}

/**
 * Values to try in a slot of this type: wrong ones mostly, some valid ones
 * (the reference decides). Values whose meaning the contract leaves open
 * ('01' or '+1' in an integer field,
 * an unsafe integer number) are not tried.
 */
export function candidatesFor (type: SlotType, secret: string): unknown[] {
  const scalarsWrong = (): unknown[] => [
    MISSING, undefined, null, {}, [], { id: 1 }, [1], { value: secret }, [secret], true, false, 0, 1, 1.5, -2, NaN, Infinity, -Infinity,
    new Date(0), new Date(Number.NaN),
  ]
  const strings = [secret, '', 'false', 'true', '1', '0', '1.5', 'abc']
  const owner = () => ({ id: 1, name: 'o', verified: true, joined: '2020-01-01T00:00:00.000Z' })
  switch (type) {
    case 'integer':
    case 'nullable-integer':
      return [...scalarsWrong(), ...strings, 10n, 2n ** 60n, -(2n ** 53n), maxSafe, '9007199254740991', '9007199254740993']
    case 'to-one-id':
      return [...scalarsWrong(), ...strings, 10n, 2n ** 60n, owner()]
    case 'number':
      return [...scalarsWrong(), ...strings, 0.25, -1e-7]
    case 'boolean':
      return [...scalarsWrong(), ...strings, 2, 0.5, 10n]
    case 'string':
      return [...scalarsWrong(), ...strings, 10n]
    case 'date-time':
      return [...scalarsWrong(), ...strings, 10n, 1577836800000, ...dateTimeTexts.keys(), '2021-02-30 00:00:00', '2021-01-01', '2021-01-01T24:00:00Z']
    case 'id-array':
      return [MISSING, undefined, null, {}, secret, 5, [], [1, 2], [1, secret], [1, null], [{ id: 1 }], ['1', 2n], [1.5], [true]]
    case 'to-one-object':
      return [MISSING, undefined, null, 5, secret, [], true, {}, owner(), { ...owner(), verified: secret }, { ...owner(), id: 2.5 }]
    case 'to-many-objects':
      return [MISSING, undefined, null, [], [null], [5], [{ id: 1, label: 'l' }], secret, {}, [[]], [1, 2], [{ id: 1, label: secret, extra: 1 }]]
    case 'element':
      return [MISSING, null, 5, secret, [], true, {}]
    case 'detail-root':
      return [null, [], 5, secret, true, [{ id: 1 }]]
    case 'list-root':
      return [null, {}, secret, 5, [], [null], { data: [] }, true]
    case 'envelope-root':
      return [null, [], {}, { data: null }, secret, { data: [] }, { data: {} }, 5]
  }
}

/** Puts `value` in the slot (MISSING deletes it); returns the new root. */
export function replaceAt (root: unknown, slot: Slot, value: unknown): unknown {
  if (slot.parent === undefined) return value
  if (value === MISSING) {
    if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = undefined
    else delete slot.parent[slot.key as string]
  } else if (Array.isArray(slot.parent)) {
    slot.parent[slot.key as number] = value
  } else {
    slot.parent[slot.key as string] = value
  }
  return root
}

/** A short, printable rendering of generated values (bigints, Dates, symbols, undefined). */
export function show (value: unknown): string {
  const seen = new WeakSet()
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, inner: unknown) {
    const raw = this[key]
    if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? 'Date(invalid)' : `Date(${raw.toISOString()})`
    if (typeof inner === 'bigint') return `${inner}n`
    if (typeof inner === 'symbol') return String(inner)
    if (inner === undefined) return 'undefined'
    if (typeof inner === 'number' && !Number.isFinite(inner)) return String(inner)
    if (typeof inner === 'object' && inner !== null) {
      if (seen.has(inner)) return '[cycle]'
      seen.add(inner)
    }
    return inner
  }) ?? String(value)
}

// ---------------------------------------------------------------- C. driver errors

export const databaseErrorBody = '{"statusCode":500,"code":"FST_EXPAND_DATABASE_ERROR","error":"Internal Server Error","message":"Internal Server Error"}'

/** Words a driver's error would bring into a body. */
export const driverWords = ['SQLITE', 'relation', 'column', 'syntax']
/** A SQLSTATE: five characters of digits and capitals with at least one digit ('42P01', '22003'), or class XX. */
export const sqlState = /\b(?=[0-9A-Z]{5}\b)(?:[0-9A-Z]*[0-9][0-9A-Z]*|XX[0-9A-Z]{3})\b/
