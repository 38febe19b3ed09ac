import type { FastifyRequest } from 'fastify'
import { createSerializer } from '../../plugin/index.js'
import { buildApp } from '../../test/helpers/app.js'
import { expandOfDepth, handWrittenPageLoader, naivePage, pageRows, type Depth } from '../baselines/hand-written.js'
import { createPetsDatabase, kyselyOver, Pet, petResources, type StatementCounter } from '../domain/pets-db.js'
import { assertSameText, type BenchCase, type Contender, type Suite } from '../runner.js'

export const loadName = 'app.expand.load (batched)'
const naiveName = 'per-row loader (N+1)'
const joinName = 'hand-written JOIN'
/** Page sizes at which statements are counted: constant means no N+1 at any depth. */
export const countedRows = [10, 100, 1000] as const

export const databaseSuite: Suite = {
  id: 'database',
  title: 'Database loading',
  description: [
    `A ${pageRows}-row page of pets with expand at depth 1 (\`${expandOfDepth[1]}\`) and depth 2 (\`${expandOfDepth[2]}\`) on in-memory SQLite, from the query to the JSON text:`,
    `${loadName} selects the page through Kysely, fills it with app.expand.load and writes it with the compiled serializer;`,
    `${naiveName} runs one Kysely statement per row and relation, then JSON.stringify;`,
    `${joinName} is one JOIN prepared once in better-sqlite3, grouped and shaped by hand, then JSON.stringify (the baseline).`,
    'All three write the same bytes (checked before timing). Statements are counted per request at 10, 100 and 1,000 rows.',
  ].join(' '),
  async setup () {
    const database = createPetsDatabase()
    const counter: StatementCounter = { count: 0 }
    const db = kyselyOver(database, { counter })
    // The request is captured once per depth: app.expand.load reads the validated plan it carries.
    const captured = new Map<string, FastifyRequest>()
    const app = await buildApp({ db, resources: petResources }, (app) => {
      app.get('/pets', { expandable: { resource: Pet, list: true } }, async (request) => {
        captured.set((request.query as { expand: string }).expand, request)
        return []
      })
    })

    const cases: BenchCase[] = []
    for (const depth of [1, 2] as Depth[]) {
      const expand = expandOfDepth[depth]
      await app.inject({ url: `/pets?expand=${expand}` })
      const request = captured.get(expand)!
      const serializer = createSerializer(Pet, { expand, list: true, resources: petResources })
      const joinPage = handWrittenPageLoader(database, depth)
      let joinStatements = 0

      const pages: Record<string, (rows: number) => Promise<string>> = {
        [loadName]: async (rows) => {
          const page = await db.selectFrom('pets').selectAll().orderBy('id').limit(rows).offset(0).execute()
          return serializer.stringify(await app.expand.load(request, page))
        },
        [naiveName]: async (rows) => JSON.stringify(await naivePage(db, depth, rows, 0)),
        [joinName]: async (rows) => {
          joinStatements++
          return JSON.stringify(joinPage(rows, 0))
        },
      }
      const statementsOf = async (name: string, rows: number) => {
        counter.count = 0
        joinStatements = 0
        await pages[name]!(rows)
        return counter.count + joinStatements
      }
      const contenders: Contender[] = Object.keys(pages).map((name) => ({
        name,
        op: () => pages[name]!(pageRows),
        facts: async () => {
          const facts: Record<string, number> = {}
          for (const rows of countedRows) facts[`statements @${rows} rows`] = await statementsOf(name, rows)
          return facts
        },
      }))
      cases.push({
        name: `${pageRows} rows, depth ${depth} (expand=${expand})`,
        baseline: joinName,
        contenders,
        async check () {
          for (const rows of [pageRows, 1000]) {
            const expected = await pages[joinName]!(rows)
            for (const name of [loadName, naiveName]) assertSameText(`database depth ${depth}, ${rows} rows`, expected, await pages[name]!(rows), joinName, name)
          }
        },
      })
    }
    return {
      cases,
      async teardown () {
        await app.close()
        await db.destroy()
      },
    }
  },
}
