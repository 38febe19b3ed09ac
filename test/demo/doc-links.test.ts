import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/*
 * The documentation's links lead somewhere: every relative link of README.md
 * and docs/*.md names a file of the repository, and its #anchor a heading of
 * that file (as GitHub makes anchors); the package ships what README.md links
 * to.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]

/** The markdown outside fenced code blocks. */
function prose (text: string): string {
  return text.replace(/^( *)```[\s\S]*?^\1```$/gm, '')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
}

function anchorsOf (file: string): Set<string> {
  const headings = [...prose(readFileSync(join(root, file), 'utf8')).matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]))
  return new Set(headings)
}

for (const document of documents) {
  t.test(`${document}: every relative link names a file and a heading of it`, async (t) => {
    const links = [...prose(readFileSync(join(root, document), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1])
    for (const link of links.filter((target) => !/^[a-z]+:/.test(target))) {
      const [path, anchor] = link.split('#')
      const target = path === '' ? document : relative(root, join(root, dirname(document), path))
      t.ok(existsSync(join(root, target)), `${link}: ${target} exists`)
      if (anchor !== undefined && target.endsWith('.md') && existsSync(join(root, target))) {
        t.ok(anchorsOf(target).has(anchor), `${link}: ${target} has a heading #${anchor}`)
      }
    }
  })
}

t.test('the package ships the pages README.md links to', async (t) => {
  const files = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] }).files
  const readme = prose(readFileSync(join(root, 'README.md'), 'utf8'))
  // Every relative link: a reader of the installed package has what the README names, the CHANGELOG included.
  const linked = [...readme.matchAll(/\]\(([^)#\s]+)/g)].map((match) => match[1]).filter((link) => !/^[a-z]+:/.test(link))
  t.ok(linked.filter((link) => link.startsWith('docs/')).length >= 10, `${linked.length} relative links`)
  t.ok(linked.includes('CHANGELOG.md'), 'the CHANGELOG is linked')
  for (const link of linked) t.ok(files.some((entry) => link === entry || link.startsWith(`${entry}/`)), `${link} is in package.json's files`)
})
