// The names `fastify-expand pull` gives resources and fields (the rules are
// printed in the generated module's header: generate.ts).

import { isIdentifier } from '../graph/checks.js'

/** How a column's name becomes a field's: camelCase, snake_case, or the column's own name. */
export const namings = ['camel', 'snake', 'keep'] as const
export type Naming = typeof namings[number]

/** The words of a name: split at underscores and where a lowercase letter or digit meets a capital (ArtistId, HTTPCode). */
function words (name: string): string[] {
  return name
    .split(/[^A-Za-z0-9]+/)
    .flatMap((part) => part.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/))
    .filter((word) => word !== '')
}

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase()

const byNaming = {
  camel: (name: string) => words(name).map((word, index) => (index === 0 ? word.toLowerCase() : capitalized(word))).join(''),
  snake: (name: string) => words(name).map((word) => word.toLowerCase()).join('_'),
  keep: (name: string) => name,
} satisfies Record<Naming, (name: string) => string>

/** A field's name for a column's (or a joined) name; the name itself where the naming would make no identifier. */
export function fieldName (name: string, naming: Naming): string {
  const named = byNaming[naming](name)
  return isIdentifier(named) ? named : name
}

/** A foreign key column's name without its `_id`, `Id` or `ID` suffix; undefined when nothing would remain. */
export function withoutKeySuffix (column: string): string | undefined {
  const stripped = column.replace(/(?:_(?:id|Id|ID)|Id|ID)$/, '')
  return stripped === column || stripped === '' || stripped.endsWith('_') ? undefined : stripped
}

/**
 * Last words whose singular no suffix rule gives: irregular plurals, and words
 * spelt alike in both numbers that the rules would cut (species → Specy).
 */
const irregularSingulars: Readonly<Record<string, string>> = {
  people: 'person',
  children: 'child',
  men: 'man',
  women: 'woman',
  mice: 'mouse',
  species: 'species',
  series: 'series',
}

/**
 * A resource's name: the table's name in PascalCase, its last word made
 * singular where that is plain (categories → Category, addresses → Address,
 * boxes → Box, genres → Genre, people → Person; status, analysis, class and
 * species are kept). Not always an identifier (a table named `2024_sales`):
 * the generator checks.
 */
export function resourceName (table: string): string {
  const pascal = words(table).map((word) => word.charAt(0).toUpperCase() + word.slice(1))
  const last = pascal.pop() ?? ''
  const irregular = Object.hasOwn(irregularSingulars, last.toLowerCase()) ? irregularSingulars[last.toLowerCase()] : undefined
  const singular = irregular === undefined
    ? last.replace(/ies$/, 'y').replace(/(ss|x|ch|sh)es$/, '$1').replace(/([^isu])s$/, '$1')
    : irregular.charAt(0).toUpperCase() + irregular.slice(1)
  return pascal.join('') + singular
}
