import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/*
 * docs/how-it-works.md's layout table names every file of plugin/: each
 * folder's row lists exactly the .ts files in it (and in its dialects/
 * folder, written dialects/name.ts), and every folder has a row; the files at
 * the top are named in the paragraph after the table.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const page = readFileSync(join(root, 'docs/how-it-works.md'), 'utf8')
const plugin = join(root, 'plugin')

/** The .ts files of a folder of plugin/, with those of its subfolders as `sub/name.ts`. */
function filesOf (folder: string): string[] {
  return readdirSync(join(plugin, folder), { withFileTypes: true }).flatMap((entry) => entry.isDirectory()
    ? filesOf(join(folder, entry.name)).map((name) => `${entry.name}/${name}`)
    : entry.name.endsWith('.ts') ? [entry.name] : []).sort()
}

/** The file names a table row lists in its last cell: each `name.ts` in backquotes. */
function namedIn (cell: string): string[] {
  return [...cell.matchAll(/`([\w/-]+\.ts)`/g)].map((match) => match[1]!).sort()
}

const rows = new Map([...page.matchAll(/^\| `(\w+)\/` \|.*\| ([^|]*) \|$/gm)].map((match) => [match[1]!, match[2]!]))
const folders = readdirSync(plugin, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()

t.test('every folder of plugin/ has a row naming exactly its files', async (t) => {
  t.same([...rows.keys()].sort(), folders, 'a row per folder')
  for (const folder of folders) t.same(namedIn(rows.get(folder) ?? ''), filesOf(folder), `${folder}/`)
})

t.test('the files at the top of plugin/ are named after the table', async (t) => {
  const after = page.slice(page.indexOf('At the top:'))
  const paragraph = after.slice(0, after.indexOf('\n\n'))
  t.same(namedIn(paragraph), filesOf('.').filter((name) => !name.includes('/')))
})
