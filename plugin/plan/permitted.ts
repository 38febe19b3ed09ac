/**
 * The permitted-path set of a list route: each listed path and every prefix
 * of it (`owner.employer` listed permits `owner`).
 */
export function permittedPaths (listed: readonly string[]): ReadonlySet<string> {
  const permitted = new Set<string>()
  for (const path of listed) {
    const segments = path.split('.')
    for (let length = 1; length <= segments.length; length++) permitted.add(segments.slice(0, length).join('.'))
  }
  return permitted
}
