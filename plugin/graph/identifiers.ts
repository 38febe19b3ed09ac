import { integerText } from './checks.js'

/** What one part of a key holds, as its identifier writes it. */
export type KeyPartType = 'integer' | 'string'

/**
 * A resource's primary key: one field, or the fields of a composite key in
 * key order, with what each holds. A single key is written as its value is;
 * a composite key by its identifier (`identifierOf`).
 */
export type ResourceKey =
  | { readonly kind: 'single'; readonly field: string; readonly fields: readonly [string] }
  | { readonly kind: 'composite'; readonly fields: readonly string[]; readonly types: readonly KeyPartType[] }

/**
 * The identifier of a composite key: each part's value in key order,
 * integers in decimal and strings through encodeURIComponent (so a ',' or a
 * '%' inside a part is escaped), joined by ','. Null when a part is null (a
 * key with a null part finds no row); undefined when a part is absent.
 */
export function identifierOf (parts: readonly unknown[]): string | null | undefined {
  let identifier = ''
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]
    if (part === undefined) return undefined
    if (part === null) return null
    if (index > 0) identifier += ','
    identifier += typeof part === 'string' ? encodeURIComponent(part) : String(part)
  }
  return identifier
}

/**
 * A composite key's parts from its identifier, each as its field holds it,
 * or undefined when the text is not one: a wrong number of parts, an integer
 * part that is not an integer JavaScript holds exactly, a string part that
 * does not decode.
 */
export function partsOf (identifier: string, types: readonly KeyPartType[]): unknown[] | undefined {
  const texts = identifier.split(',')
  if (texts.length !== types.length) return undefined
  const parts: unknown[] = []
  for (let index = 0; index < texts.length; index++) {
    const text = texts[index]!
    if (types[index] === 'integer') {
      const value = Number(text)
      if (!integerText.test(text) || !Number.isSafeInteger(value)) return undefined
      parts.push(value)
      continue
    }
    try {
      parts.push(decodeURIComponent(text))
    } catch {
      return undefined
    }
  }
  return parts
}

/** A row's key: its primary key's value, or for a composite key its identifier (null when a part is null). */
export function rowKey (key: ResourceKey, row: Readonly<Record<string, unknown>>): unknown {
  if (key.kind === 'single') return row[key.field]
  return identifierOf(key.fields.map((field) => row[field]))
}

/** The pattern an identifier of these parts matches: an integer part `-?[0-9]+`, a string part anything but ','. */
export function identifierPattern (types: readonly KeyPartType[]): string {
  return `^${types.map((type) => (type === 'integer' ? '-?[0-9]+' : '[^,]*')).join(',')}$`
}

/** How documentation describes the identifier of a composite key. */
export function identifierDescription (fields: readonly string[], types: readonly KeyPartType[]): string {
  const strings = types.includes('string') ? ' (string parts percent-encoded)' : ''
  return `Composite key: ${fields.join(', ')}, joined by ','${strings}`
}

/** What every schema of a composite key's identifier carries: the pattern of its parts and the description naming them. */
export function identifierDocumentation (key: Extract<ResourceKey, { kind: 'composite' }>): { pattern: string; description: string } {
  return { pattern: identifierPattern(key.types), description: identifierDescription(key.fields, key.types) }
}
