/*
 * The hunks of a unified diff as a page shows them (`@@ -12,7 +12,9 @@` and
 * the lines that follow, with no file header), applied strictly: each hunk's
 * old lines must be the text's lines at its old position, and its new position
 * must be where its new lines land, so a hunk that no longer fits the text it
 * was written for is an error, never a near match.
 */

export interface Hunk {
  readonly header: string
  readonly oldStart: number
  readonly newStart: number
  readonly oldLines: readonly string[]
  readonly newLines: readonly string[]
}

const headerPattern = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/

/** The hunks of a diff's text: lines after a header are context (` `, or empty as editors leave them), `-` or `+`. */
export function hunksOf (text: string): Hunk[] {
  const hunks: Array<Hunk & { oldLines: string[]; newLines: string[]; counts: [number, number] }> = []
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n')
  for (const line of lines) {
    const header = headerPattern.exec(line)
    if (header !== null) {
      hunks.push({
        header: line,
        oldStart: Number(header[1]),
        newStart: Number(header[3]),
        oldLines: [],
        newLines: [],
        counts: [Number(header[2] ?? 1), Number(header[4] ?? 1)],
      })
      continue
    }
    const hunk = hunks.at(-1)
    if (hunk === undefined) throw new Error(`a diff line before any hunk header: ${line}`)
    const marker = line.charAt(0)
    const content = line.slice(1)
    if (marker === ' ' || line === '') { hunk.oldLines.push(content); hunk.newLines.push(content) } else if (marker === '-') hunk.oldLines.push(content)
    else if (marker === '+') hunk.newLines.push(content)
    else throw new Error(`not a diff line in ${hunk.header}: ${line}`)
  }
  for (const { header, oldLines, newLines, counts } of hunks) {
    if (oldLines.length !== counts[0] || newLines.length !== counts[1]) {
      throw new Error(`${header} counts ${oldLines.length} old and ${newLines.length} new lines`)
    }
  }
  return hunks.map(({ header, oldStart, newStart, oldLines, newLines }) => ({ header, oldStart, newStart, oldLines, newLines }))
}

/** The text with the hunks applied in order; an error naming the first hunk that does not fit. */
export function applyHunks (text: string, hunks: readonly Hunk[]): string {
  const original = text.split('\n')
  const result: string[] = []
  let next = 0
  for (const hunk of hunks) {
    const at = hunk.oldStart - 1
    if (at < next) throw new Error(`${hunk.header} overlaps the hunk before it`)
    result.push(...original.slice(next, at))
    if (result.length !== hunk.newStart - 1) throw new Error(`${hunk.header}: its new lines start at line ${result.length + 1}`)
    const found = original.slice(at, at + hunk.oldLines.length)
    const mismatch = hunk.oldLines.findIndex((line, index) => found[index] !== line)
    if (mismatch !== -1) {
      throw new Error(`${hunk.header}: line ${at + mismatch + 1} is ${JSON.stringify(found[mismatch])}, not ${JSON.stringify(hunk.oldLines[mismatch])}`)
    }
    result.push(...hunk.newLines)
    next = at + hunk.oldLines.length
  }
  result.push(...original.slice(next))
  return result.join('\n')
}
