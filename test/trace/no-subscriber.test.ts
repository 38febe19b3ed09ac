import { tracingChannel } from 'node:diagnostics_channel'
import Fastify from 'fastify'
import t from 'tap'
import * as channels from '../../plugin/trace/channels.js'
import * as positions from '../../plugin/trace/positions.js'
import { channelNames, recordEvents } from './events.js'

/*
 * Without a subscriber the tracing channels cost nothing: no message, label
 * or traced writer is made (each is made by one of the functions counted
 * here, which the plugin calls only while `hasSubscribers` says someone
 * listens), and nothing is published. A bare subscriber turns them on, and
 * unsubscribing turns them off again.
 */

// The mocks are keyed by the modules' source files, as the test runner loads them.
const made = { statements: 0, plans: 0, writers: 0, positions: 0 }
type World = typeof import('./plugin-with-tables.js')
const { expandPlugin, Pet, resources, dialects, openSeeded } = await t.mockImport<World>('./plugin-with-tables.js', {
  '../../plugin/trace/channels.ts': {
    ...channels,
    tracedStatement: (...args: Parameters<typeof channels.tracedStatement>) => {
      made.statements++
      return channels.tracedStatement(...args)
    },
    tracedPlan: (...args: Parameters<typeof channels.tracedPlan>) => { made.plans++; return channels.tracedPlan(...args) },
    tracedWriter: (...args: Parameters<typeof channels.tracedWriter>) => { made.writers++; return channels.tracedWriter(...args) },
  },
  '../../plugin/trace/positions.ts': {
    ...positions,
    positionsOf: (...args: Parameters<typeof positions.positionsOf>) => { made.positions++; return positions.positionsOf(...args) },
  },
})

t.test('no subscriber: nothing is made, nothing published; a subscriber turns the channels on and off', async (t) => {
  const database = await openSeeded(t, dialects()[0]!)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet)
  t.teardown(() => app.close())
  const urls = ['/pets?expand=owner.employer,toys', '/pets/1?expand=owner,toys', '/pets?expand=nothing']

  for (const name of channelNames) t.equal(tracingChannel(`fastify-expand:${name}`).hasSubscribers, false, `${name}: no subscriber`)
  for (const url of urls) await app.inject(url)
  t.strictSame(made, { statements: 0, plans: 0, writers: 0, positions: 0 }, 'nothing made without a subscriber')

  const recorder = recordEvents()
  for (const url of urls) await app.inject(url)
  recorder.stop()
  t.ok(recorder.events.length > 0)
  t.ok(made.statements > 0 && made.plans === 3 && made.writers === 2 && made.positions > 0, JSON.stringify(made))

  const before = { ...made }
  const published = recorder.events.length
  for (const url of urls) await app.inject(url)
  t.strictSame(made, before, 'nothing made once the subscriber has gone')
  t.equal(recorder.events.length, published, 'nothing published')
})
