/**
 * What a request's expansion shows publicly: its key and paths. The plugin's
 * plan carries these and more (the resource graph, each level's fields);
 * only these are part of the API.
 */
export interface Expansion {
  /** Canonical: requests that mean the same response have the same key (and share a serializer). */
  readonly key: string
  /** Dot paths of every expanded relation (`'owner'`, `'owner.employer'`). */
  readonly expandedPaths: ReadonlySet<string>
  /** Dot paths of every written field, relations included, expanded or not. */
  readonly includedPaths: ReadonlySet<string>
}

/** Anything carrying an expansion: a Fastify request of an expandable route, `{ expansion: serializer.expansion }`. */
export interface HasExpansion {
  expansion?: Expansion | null
}

/**
 * Whether the request expands `path` (`'owner'`, `'owner.employer'`), read
 * from its validated plan: wildcards resolved, list restrictions and
 * fields/omit applied. Load exactly what this says and the data matches the serializer.
 */
export function isExpanded (request: HasExpansion, path: string): boolean {
  return request.expansion?.expandedPaths.has(path) ?? false
}

/** Whether the response of the request writes the field at `path` (`'name'`, `'owner.name'`). */
export function isIncluded (request: HasExpansion, path: string): boolean {
  return request.expansion?.includedPaths.has(path) ?? false
}
