/**
 * How a resource's fields name their columns when `columns` does not map
 * them: as written (no `casing`), or turned into the database's case, as
 * Drizzle's `casing` and Kysely's CamelCasePlugin do. A field is split into
 * words at underscores and where the case changes (`albumId`, `AlbumId` and
 * `album_id` are the words album, id; `HTTPStatus` is http, status), then
 * joined in the casing's form: `album_id`, `albumId`, `AlbumId`. A function
 * takes the field and gives its column.
 */
export type ColumnCasing = 'snake_case' | 'camelCase' | 'PascalCase' | ((field: string) => string)

/** The casings named by a string, as `casing` takes them. */
export const namedCasings = ['snake_case', 'camelCase', 'PascalCase'] as const

const wordBoundary = /_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/

function wordsOf (field: string): string[] {
  return field.split(wordBoundary).filter((word) => word.length > 0).map((word) => word.toLowerCase())
}

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

const joiners = {
  snake_case: (words: readonly string[]) => words.join('_'),
  camelCase: (words: readonly string[]) => words.map((word, index) => (index === 0 ? word : capitalized(word))).join(''),
  PascalCase: (words: readonly string[]) => words.map(capitalized).join(''),
} satisfies Record<typeof namedCasings[number], (words: readonly string[]) => string>

/** The column `casing` gives `field`: the field itself without a casing. */
export function casedColumn (casing: ColumnCasing | undefined, field: string): unknown {
  if (casing === undefined) return field
  if (typeof casing === 'function') return casing(field)
  return joiners[casing](wordsOf(field))
}

export function isColumnCasing (value: unknown): value is ColumnCasing {
  return typeof value === 'function' || (namedCasings as readonly unknown[]).includes(value)
}
