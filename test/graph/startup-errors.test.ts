import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { StartupOutcome } from '../helpers/startup-child.js'

// Registrations are run in a child process: an error that escapes as an
// uncaught exception would otherwise end this test run instead of failing it.
const child = fileURLToPath(new URL('../helpers/startup-child.ts', import.meta.url))
const outcomes = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8' })) as Record<string, StartupOutcome>

const expected: [string, string, RegExp][] = [
  ['unknown plugin option', 'FST_EXPAND_INVALID_OPTION', /unknown option 'expandParm'/],
  ['maxDepth zero', 'FST_EXPAND_INVALID_OPTION', /maxDepth/],
  ['cacheSize not an integer', 'FST_EXPAND_INVALID_OPTION', /cacheSize/],
  ['onInvalidExpand unknown', 'FST_EXPAND_INVALID_OPTION', /onInvalidExpand/],
  ['same parameter names', 'FST_EXPAND_INVALID_OPTION', /expandParam, fieldsParam and omitParam must differ/],
  ['unresolvable reference', 'FST_EXPAND_INVALID_DEFINITION', /Resource 'Pet', field 'owner': resource 'Nobody' is not registered/],
  ['reachable resource with an unregistered reference', 'FST_EXPAND_INVALID_DEFINITION', /Resource 'Pet', field 'sold_from': resource 'PetStore' is not registered/],
  ['ambiguous bare name', 'FST_EXPAND_INVALID_DEFINITION', /Resource 'Team', field 'lead': 'Person' is ambiguous, use one of 'left.Person', 'right.Person'/],
  ['two resources of one name', 'FST_EXPAND_INVALID_DEFINITION', /Two different resources are named 'Company'/],
  ['relation option fields names an unknown field', 'FST_EXPAND_INVALID_DEFINITION', /Resource 'Job', field 'company': fields names 'revenue'/],
  ['relation option expand names an unknown relation', 'FST_EXPAND_INVALID_DEFINITION', /Resource 'Job', field 'holder': expand 'employer.parent'/],
  ['thunk returning something else', 'FST_EXPAND_INVALID_DEFINITION', /Resource 'Job', field 'holder': the reference function did not return a resource/],
  ['nested fields that nest forever', 'FST_EXPAND_INVALID_DEFINITION', /cycle/],
  ['resources not made by defineResource', 'FST_EXPAND_INVALID_DEFINITION', /resources\[0\] is not a resource/],
  // Checked with the other options, before the registry is built from them.
  ['resources an object', 'FST_EXPAND_INVALID_OPTION', /^fastify-expand: resources must be an array of resources$/],
  ['resources a string', 'FST_EXPAND_INVALID_OPTION', /^fastify-expand: resources must be an array of resources$/],
  ['resources null', 'FST_EXPAND_INVALID_OPTION', /^fastify-expand: resources must be an array of resources$/],
  ['with db, a table-bound resource relating to one without a table', 'FST_EXPAND_INVALID_DEFINITION',
    /^Resource 'Collar', field 'wearer': people\.Person has no table, so it cannot be loaded from Collar's table; give people\.Person a table$/],
]

t.test('a valid registry starts', async (t) => {
  t.same(outcomes['valid registry'], { outcome: 'ready' })
})

t.test('startup errors carry their code and a message naming resource, field and reference', async (t) => {
  for (const [name, code, message] of expected) {
    t.equal(outcomes[name]?.code, code, name)
    t.match(outcomes[name]?.message, message, name)
  }
})

t.test('startup errors reject register()/ready() instead of escaping as uncaught exceptions', async (t) => {
  for (const [name] of expected) t.equal(outcomes[name]?.outcome, 'rejected', name)
})
