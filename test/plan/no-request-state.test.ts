// A request's plan is attached to the request (a decoration) and read from
// there; nothing in plugin/ keeps per-request state in a module-level table
// keyed on a request or its query (where a hook that replaced `request.query`
// once turned a filtered list into every row). Module-level tables are keyed
// on what lives longer: a Kysely instance, a plan, a route, a registry.
import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'

const root = new URL('../../plugin/', import.meta.url)
const sources = readdirSync(root, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts'))
  .map((name) => [name, readFileSync(new URL(name, root), 'utf8')] as const)

/** The key types of every Map, WeakMap, Set and WeakSet a source makes. */
function tableKeys (source: string): string[] {
  return [...source.matchAll(/new (?:Weak)?(?:Map|Set)<([^,>]+)/g)].map((match) => match[1]!.trim())
}

t.ok(sources.length > 30, 'the plugin sources are read')

/**
 * The one table keyed on something standing for a request: the OpenTelemetry
 * subscriber's rows per request, keyed on the token its messages carry (it
 * sees nothing else of a request). The token lives on the request (a
 * decoration) and is never replaced; the table is its instance's, weak.
 */
const subscriberTables = new Set(['otel/instrumentation.ts: RequestToken'])

t.test('no table in plugin/ is keyed on a request, a reply or a query', async (t) => {
  for (const [name, source] of sources) {
    for (const key of tableKeys(source)) {
      if (subscriberTables.has(`${name}: ${key}`)) continue
      t.notMatch(key, /Request|Reply|query|Query|Expansion\b/, `${name}: a table keyed on ${key}`)
    }
  }
})

t.test('the check sees a table keyed on a request', async (t) => {
  t.same(tableKeys('const plans = new WeakMap<FastifyRequest, Plan>()\nconst seen = new Set<string>()'), ['FastifyRequest', 'string'])
  t.same(tableKeys('const plans = new WeakMap<Expansion, ExpansionPlan>()'), ['Expansion'])
})
