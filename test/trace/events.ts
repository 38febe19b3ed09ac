import { tracingChannel } from 'node:diagnostics_channel'
import type { LoadMessage, PlanMessage, SerializeMessage } from '../../plugin/trace/channels.js'

/** The three channels the plugin publishes on (docs/observability.md), by their public names. */
export const channelNames = ['plan', 'load', 'serialize'] as const
export type ChannelName = typeof channelNames[number]
export const eventNames = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const
export type EventName = typeof eventNames[number]

export interface RecordedEvent {
  channel: ChannelName
  event: EventName
  /** A copy of the message as it was when the event was published (messages gain properties as the stage goes on). */
  message: Record<string, unknown>
  /** The message object itself: the same object for every event of one stage. */
  original: PlanMessage | LoadMessage | SerializeMessage
  /**
   * The message's request token, numbered in the order the recorder first met
   * each (1, 2, ...): the same number for every message of one request.
   * Left out of `message`, which the tests compare as it reads otherwise.
   */
  request: number | undefined
}

/**
 * Subscribes to every event of the three channels and records them in
 * order; `stop` unsubscribes. A test that subscribes must stop in its
 * teardown: the channels are the process's.
 */
export function recordEvents (): { events: RecordedEvent[]; stop: () => void } {
  const events: RecordedEvent[] = []
  const numbers = new Map<object, number>()
  const numberOf = (token: object | undefined): number | undefined => {
    if (token === undefined) return undefined
    if (!numbers.has(token)) numbers.set(token, numbers.size + 1)
    return numbers.get(token)
  }
  const subscriptions = channelNames.map((channel) => {
    const traced = tracingChannel<unknown, PlanMessage | LoadMessage | SerializeMessage>(`fastify-expand:${channel}`)
    const handler = (event: EventName) => (message: PlanMessage | LoadMessage | SerializeMessage) => {
      const { request, ...rest } = message
      events.push({ channel, event, message: rest, original: message, request: numberOf(request) })
    }
    const handlers = {
      start: handler('start'),
      end: handler('end'),
      asyncStart: handler('asyncStart'),
      asyncEnd: handler('asyncEnd'),
      error: handler('error'),
    }
    traced.subscribe(handlers)
    return () => traced.unsubscribe(handlers)
  })
  return { events, stop: () => { for (const stop of subscriptions) stop() } }
}
