import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildApp, docsPath } from './app.js'
import { connect } from './database.js'
import { seedIfEmpty } from './seed.js'

/*
 * The walkthrough of docs/walkthrough.md, generated from real responses of the demo app
 * (in-process, on a freshly seeded in-memory database, which `npm start`
 * seeds identically). `npx tsx demo/readme-examples.ts` rewrites the section;
 * test/demo/readme.test.ts replays every request in it and fails when a
 * response changes.
 */

/** The page the walkthrough is written in. */
export const walkthroughPath = fileURLToPath(new URL('../docs/walkthrough.md', import.meta.url))
const walkthroughStart = '<!-- walkthrough:start -->'
const walkthroughEnd = '<!-- walkthrough:end -->'
/** The address `npm start` listens on by default, as written in the examples. */
export const exampleBase = 'http://127.0.0.1:3000'

export interface WalkthroughStep {
  /** Markdown before the request. */
  text: string
  /**
   * Path and query; requested with GET. A function receives the previous
   * step's response body (to follow its cursor, say).
   */
  path?: string | ((previous: unknown) => string)
}

export const walkthroughSteps: readonly WalkthroughStep[] = [
  {
    text: `\`npm start\` serves a veterinary network (companies, people, pets, pet stores,
toys, vets, visits: about 61,000 rows) from \`demo.db\`, an SQLite file it seeds
on first start, or from PostgreSQL (\`DATABASE_URL=postgres://...\`) or MariaDB/MySQL
(\`DATABASE_URL=mysql://...\`), seeded alike; \`REPLICA_URL\` names a hot standby of a
PostgreSQL primary to read from ([Beyond one machine](beyond-one-machine.md#read-replicas)).
\`PORT\` and \`HOST\` default to 3000 and 127.0.0.1. Every response below is the demo's real answer.

A pet as stored: relations are identifiers (\`owner\`, the nullable \`sold_from\`,
the many-to-many \`toys\`); \`visits\` is deferred, absent unless expanded.`,
    path: '/pets/10',
  },
  {
    text: 'Expand a relation, and a relation of that relation, with dot notation. `sold_from` shows the two fields its relation options allow:',
    path: '/pets/10?expand=owner.employer,sold_from',
  },
  {
    text: 'A many-to-many relation (through `pet_toys`) and a deferred to-many one, expanded:',
    path: '/pets/5?expand=toys,visits',
  },
  {
    text: '`fields` keeps only the fields named, at any level; it also decides what is loaded: `toys` is not shown, so this request runs three statements (pets, people, companies):',
    path: '/pets/10?expand=owner.employer&fields=name,owner.name,owner.employer.name',
  },
  {
    text: '`omit` leaves fields out, at any level (`Person.pets` itself omits each pet\'s `owner`: it is the person shown). People have a `password_hash` column that no resource declares: it is never selected, so no request can show it.',
    path: '/people/8768?expand=pets&omit=email,hobbies,pets.born,pets.toys',
  },
  {
    text: 'Lists are paginated (`limit`, `offset`; `total` counts the whole table). Each distinct combination of expand/fields/omit is served by its own compiled serializer:',
    path: '/pets?limit=2&offset=10&expand=owner&fields=id,name,owner.name',
  },
  {
    text: 'List routes permit only the expansions they list (`/pets` permits `owner.employer`, `sold_from`, `toys` and `recent_visits`, at most three visits per pet), so a page of pets cannot pull every visit of every pet:',
    path: '/pets?expand=visits',
  },
  {
    text: `List routes take the filters and sort keys their options declare (\`/pets\` filters
\`species\`, \`name\`, \`born\`, \`sold_from\` and \`owner.employer\`, and sorts by
\`born\`, \`name\` or \`species\`): \`filter[field]=value\` or
\`filter[field][operator]=value\`, \`sort\` with \`-\` for descending. The youngest cats:`,
    path: '/pets?filter[species]=cat&sort=-born&limit=3&fields=id,name,born',
  },
  {
    text: `\`/visits\` is paged by cursor: the body holds \`next\` instead of \`offset\` and
\`total\`, and no row is skipped or repeated when visits are added between two
requests. Its \`defaultExpand\` shows each visit's vet unless the request names
its own \`expand\`. The latest visits:`,
    path: '/visits?sort=-date&limit=2&fields=id,date,reason,vet.name',
  },
  {
    text: 'The next page: `next` passed back as `after`, with the same sort and filters (the cursor is encrypted with the published key of demo/app.ts; `npm start` uses `CURSOR_SECRET`, or a random key it warns about):',
    path: (previous) => `/visits?sort=-date&limit=2&fields=id,date,reason,vet.name&after=${(previous as { next: string }).next}`,
  },
  {
    text: 'A to-many relation may keep only the first rows in its own order: `recent_visits` is `visits` with `orderBy: \'-visited_on\'` and `limit: 3`, still one statement for any number of pets (pet 1887 has five visits):',
    path: '/pets/1887?expand=recent_visits&fields=id,name,recent_visits',
  },
  {
    text: 'Detail routes are not restricted (`/pets/5?expand=visits` above). `*` expands every relation of a level that the route permits:',
    path: '/toys?limit=2&expand=*',
  },
  {
    text: `Derived data is deferred as \`visits\` is: absent unless \`expand\` or \`fields\` names it.
A count over a to-many relation: \`Person.pet_count\` is \`aggregates: { pet_count: { count: 'pets' } }\`
(see [Derived data](derived.md)). It costs one grouped statement
(\`select pets.owner_id, count(*) … where pets.owner_id in (…) group by pets.owner_id\`)
for every person of the response at once, run after the statement that read them:`,
    path: '/people/8768?fields=id,name,pet_count',
  },
  {
    text: `\`/people\` declares \`sort: ['pet_count', 'name']\` and \`filter: { pet_count: ['eq', 'gte'] }\`. The people
with the most pets: the page statement joins the pets counted per person, one grouped scan of
\`pets\` per page (ties are broken by \`id\`):`,
    path: '/people?sort=-pet_count&limit=3&fields=id,name,pet_count',
  },
  {
    text: `A computed field: \`Pet.label\` is the expression \`concat(pets.name, ' the ', pets.species)\`
(\`computed: { label: { schema: Type.String(), sql: (eb) => … } }\`), one more column of the
statement that reads the pets, no statement of its own:`,
    path: '/pets?limit=3&fields=id,label',
  },
  {
    text: `A relation resolved by a function: the demo has no table of today's prices; \`Toy.price\` is
\`['Price', { column: 'id', load: async (toyIds, { signal }) => fakePriceService(toyIds, signal) }]\`,
a stand-in for a pricing service (schemas/price-service.ts) that answers after 5 ms and stops
waiting when the client goes away. It is called once per request with the distinct keys: here one
call with the three toy ids \`[552, 1224, 1319]\`, after the statements of the pet and its toys:`,
    path: '/pets/5?expand=toys.price&fields=id,name,toys.id,toys.name,toys.price',
  },
  {
    text: 'Mistakes are 400s with a stable code, never a silently different body:',
    path: '/pets/10?expand=vet',
  },
  {
    text: 'Below a relation, only what its options keep exists: `Person.pets` omits `owner` (the person above is the owner):',
    path: '/people/1?expand=pets.owner',
  },
  {
    text: 'The demo limits expansion depth to 3 (the plugin\'s `maxDepth` option):',
    path: '/pets/10?expand=owner.pets.toys.maker',
  },
  {
    text: 'A missing row is a 404 in Fastify\'s error shape:',
    path: '/pets/999999',
  },
  {
    text: `The OpenAPI documentation, generated from the resource definitions by
\`expandOpenApi\` (see [OpenAPI](openapi.md)), is served at ${exampleBase}${docsPath}
(the document itself at \`${docsPath}/json\`): each route lists its valid
\`expand\` paths, on list routes exactly the permitted ones.`,
  },
]

function curlCommand (path: string): string {
  return `curl -s '${exampleBase}${path}'`
}

/** The markdown between the markers, from the app's real answers. */
export async function renderWalkthrough (app: FastifyInstance): Promise<string> {
  const parts: string[] = []
  let previous: unknown
  for (const step of walkthroughSteps) {
    parts.push(step.text)
    if (step.path === undefined) continue
    const path = typeof step.path === 'function' ? step.path(previous) : step.path
    const response = await app.inject({ method: 'GET', url: path })
    previous = JSON.parse(response.body)
    const body = JSON.stringify(previous, null, 2)
    parts.push(`\`\`\`sh\n${curlCommand(path)}\n\`\`\`\n\n\`\`\`json\n${body}\n\`\`\``)
  }
  return parts.join('\n\n')
}

/** Where the walkthrough sits in its page: the end of the start marker, and the end marker. */
function walkthroughBounds (page: string): { from: number; to: number } {
  const start = page.indexOf(walkthroughStart)
  const end = page.indexOf(walkthroughEnd)
  if (start === -1 || end < start) throw new Error(`docs/walkthrough.md needs the markers ${walkthroughStart} and ${walkthroughEnd}`)
  return { from: start + walkthroughStart.length, to: end }
}

function replaceWalkthrough (page: string, section: string): string {
  const { from, to } = walkthroughBounds(page)
  return `${page.slice(0, from)}\n${section}\n${page.slice(to)}`
}

export function walkthroughOf (page: string): string {
  const { from, to } = walkthroughBounds(page)
  return page.slice(from, to).trim()
}

/** A seeded in-memory database and the demo app on it, as the tests use them. */
export async function inMemoryDemo (): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const db = connect({ sqliteFile: ':memory:' })
  await seedIfEmpty(db)
  const app = await buildApp({ db })
  await app.ready()
  return { app, close: async () => { await app.close(); await db.destroy() } }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { app, close } = await inMemoryDemo()
  try {
    const page = await readFile(walkthroughPath, 'utf8')
    await writeFile(walkthroughPath, replaceWalkthrough(page, await renderWalkthrough(app)))
    console.log(`docs/walkthrough.md: ${walkthroughSteps.filter((step) => step.path !== undefined).length} examples written`)
  } finally {
    await close()
  }
}
