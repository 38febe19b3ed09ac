import { channel, tracingChannel, type Channel } from 'node:diagnostics_channel'
import Fastify from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources } from '../fixtures/tables.js'
import { channelNames, eventNames, recordEvents } from './events.js'

/*
 * Without a subscriber the tracing channels cost nothing: every stage asks
 * `hasSubscribers` first, so no message is made and nothing is published (a
 * spy on each of the fifteen channels under the three tracing channels counts
 * every publish, even one nobody would receive). A subscriber turns them on,
 * and unsubscribing turns them off again.
 */

interface Spy { readonly name: string; calls: number; restore(): void }

/** Counts the publishes of every event of the three channels, subscribed or not. */
function spyOnPublish (): Spy[] {
  return channelNames.flatMap((name) => eventNames.map((event) => {
    const spied = channel(`tracing:fastify-expand:${name}:${event}`) as Channel & { publish: (message: unknown) => void }
    const original = spied.publish
    const spy: Spy = {
      name: `${name} ${event}`,
      calls: 0,
      // The own property goes: a channel that gets a subscriber publishes by its prototype's method.
      restore: () => { delete (spied as { publish?: unknown }).publish },
    }
    spied.publish = function publish (this: Channel, message: unknown) {
      spy.calls++
      original.call(this, message)
    }
    return spy
  }))
}

t.test('no subscriber: nothing published; a subscriber turns the channels on, and off again', async (t) => {
  const database = await openSeeded(t, dialects()[0]!)
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet)
  t.teardown(() => app.close())
  const urls = ['/pets?expand=owner.employer,toys', '/pets/1?expand=owner,toys', '/pets?expand=nothing']
  const published = (spies: Spy[]) => Object.fromEntries(spies.filter((spy) => spy.calls > 0).map((spy) => [spy.name, spy.calls]))

  for (const name of channelNames) t.equal(tracingChannel(`fastify-expand:${name}`).hasSubscribers, false, `${name}: no subscriber`)
  let spies = spyOnPublish()
  for (const url of urls) await app.inject(url)
  for (const spy of spies) spy.restore()
  t.strictSame(published(spies), {}, 'nothing published without a subscriber')

  const recorder = recordEvents()
  for (const url of urls) await app.inject(url)
  recorder.stop()
  const kinds = new Set(recorder.events.map(({ channel, event }) => `${channel} ${event}`))
  t.strictSame([...kinds].sort(), [
    'load asyncEnd', 'load asyncStart', 'load end', 'load start', 'plan end', 'plan error', 'plan start', 'serialize end', 'serialize start',
  ], 'a subscriber gets every stage')

  spies = spyOnPublish()
  for (const url of urls) await app.inject(url)
  for (const spy of spies) spy.restore()
  t.strictSame(published(spies), {}, 'nothing published once the subscriber has gone')
})
