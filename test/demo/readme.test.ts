import { readFile } from 'node:fs/promises'
import { test } from 'tap'
import { buildApp } from '../../demo/app.js'
import { seedIfEmpty } from '../../demo/seed.js'
import { exampleBase, renderWalkthrough, walkthroughOf, walkthroughPath } from '../../demo/readme-examples.js'
import { dialects } from '../fixtures/dialects.js'

interface ReadmeExample { path: string; body: unknown }

/** Every `curl` block of the walkthrough with the JSON block that follows it. */
function examplesOf (section: string): ReadmeExample[] {
  const pattern = /```sh\ncurl -s '([^']+)'\n```\s*```json\n([\s\S]*?)\n```/g
  const found: ReadmeExample[] = []
  for (const match of section.matchAll(pattern)) {
    if (!match[1].startsWith(exampleBase)) throw new Error(`example ${match[1]} does not use ${exampleBase}`)
    found.push({ path: match[1].slice(exampleBase.length), body: JSON.parse(match[2]) })
  }
  return found
}

const page = await readFile(walkthroughPath, 'utf8')
const section = walkthroughOf(page)
const examples = examplesOf(section)

test('the walkthrough holds the examples it promises', async (t) => {
  t.equal(examples.length, 20, 'every curl block is followed by its response')
  t.equal(section.match(/```sh/g)?.length, examples.length, 'no curl block lacks a parsed response')
  const paths = examples.map((example) => example.path)
  t.ok(paths.some((path) => path.includes('expand=owner.employer')), 'nested expansion')
  t.ok(paths.some((path) => path.includes('fields=')), 'sparse fields')
  t.ok(paths.some((path) => path.includes('omit=')), 'omit')
  t.ok(examples.some((example) => (example.body as { code?: string }).code === 'FST_EXPAND_NOT_PERMITTED'), 'list restriction')
  t.ok(paths.some((path) => path.includes('filter[') && path.includes('sort=-')), 'a filtered and sorted list')
  const cursorPage = examples.find((example) => typeof (example.body as { next?: unknown }).next === 'string')
  t.ok(cursorPage, 'a cursor page')
  t.ok(examples.some((example) => example.path.includes(`after=${(cursorPage?.body as { next: string }).next}`)), 'the page its cursor leads to')
  t.ok(paths.some((path) => path.includes('expand=recent_visits')), 'a relation with a limit')
  t.ok(paths.includes('/people/1?expand=pets.owner'), "a field a relation's options remove")
  t.ok(paths.includes('/people/8768?fields=id,name,pet_count'), 'a count')
  t.ok(paths.includes('/people?sort=-pet_count&limit=3&fields=id,name,pet_count'), 'a list sorted by a count')
  t.ok(paths.includes('/pets?limit=3&fields=id,label'), 'a computed field')
  t.ok(paths.some((path) => path.includes('expand=toys.price')), 'a relation resolved by a function')
  t.match(section, /http:\/\/127\.0\.0\.1:3000\/docs/, 'the documentation URL')
})

for (const dialect of dialects()) {
  test(`${dialect.name}: every walkthrough response in docs/walkthrough.md is what the demo answers`, async (t) => {
    const database = await dialect.open()
    t.teardown(() => database.close())
    await seedIfEmpty(database.db)
    const app = await buildApp({ db: database.db })
    t.teardown(() => app.close())
    for (const example of examples) {
      const response = await app.inject({ method: 'GET', url: example.path })
      t.same(JSON.parse(response.body), example.body, example.path)
      t.equal(response.headers['content-type'], 'application/json; charset=utf-8', `${example.path}: content type`)
    }
    if (dialect.name === 'sqlite') {
      t.equal(await renderWalkthrough(app), section, 'docs/walkthrough.md is current: regenerate it with `npx tsx demo/readme-examples.ts`')
    }
  })
}
