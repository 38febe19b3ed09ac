import { tracingChannel, type TracingChannelSubscribers } from 'node:diagnostics_channel'
import { setImmediate as turnOfEventLoop } from 'node:timers/promises'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { expandInstrumentation } from '../../plugin/otel/index.js'
import { assertSameText, type BenchCase } from '../runner.js'

export const noSubscriberName = 'app.expand.routes, no subscriber'
export const bareSubscriberName = 'app.expand.routes, a bare subscriber on every channel'
export const otelName = 'app.expand.routes, fastify-expand/otel (in-memory exporter)'

/** What is subscribed to the tracing channels while a contender runs. */
type Listening = 'nothing' | 'bare' | 'otel'

/** Metrics kept in memory, never read: their aggregation is the cost measured. */
class UnreadMetrics extends MetricReader {
  protected override async onForceFlush (): Promise<void> {}
  protected override async onShutdown (): Promise<void> {}
}

/** Spans kept before the in-memory exporter is emptied, so the heap does not grow with the run. */
const spansKept = 5_000

/**
 * The cost of the tracing channels (docs/observability.md) on one route: the
 * same page with no subscriber (the baseline), with a subscriber that does
 * nothing on every event of the three channels, and with fastify-expand/otel
 * enabled (spans to an InMemorySpanExporter, metrics to a reader never read,
 * no request span around). Subscriptions are the process's: each contender
 * switches them to its own when its round starts (once per round, then each
 * of its requests finds them as they are), so all three run in one process,
 * alternating.
 */
export function tracingCostCase (
  name: string, app: FastifyInstance, request: InjectOptions, records: (body: string, contender: string) => string
): { benchCase: BenchCase; teardown: () => Promise<void> } {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const meterProvider = new MeterProvider({ readers: [new UnreadMetrics()] })
  const instrumentation = expandInstrumentation({ tracerProvider, meterProvider, enabled: false })
  const ignore = () => {}
  const bare: TracingChannelSubscribers<object> = { start: ignore, end: ignore, asyncStart: ignore, asyncEnd: ignore, error: ignore }
  const channels = ['plan', 'load', 'serialize'].map((channel) => tracingChannel<unknown, object>(`fastify-expand:${channel}`))
  let listening: Listening = 'nothing'
  const listen = (wanted: Listening) => {
    if (wanted === listening) return
    if (listening === 'bare') for (const channel of channels) channel.unsubscribe(bare)
    if (listening === 'otel') instrumentation.disable()
    if (wanted === 'bare') for (const channel of channels) channel.subscribe(bare)
    if (wanted === 'otel') instrumentation.enable()
    listening = wanted
  }
  const contender = (contenderName: string, wanted: Listening) => ({
    name: contenderName,
    op: async () => {
      listen(wanted)
      const response = await app.inject(request)
      if (wanted === 'otel' && exporter.getFinishedSpans().length > spansKept) exporter.reset()
      // As in the page cases: a turn of the event loop per request.
      await turnOfEventLoop()
      return response
    },
  })
  const benchCase: BenchCase = {
    name,
    baseline: noSubscriberName,
    asRate: true,
    contenders: [contender(noSubscriberName, 'nothing'), contender(bareSubscriberName, 'bare'), contender(otelName, 'otel')],
    async check () {
      const bodies = new Map<Listening, string>()
      for (const wanted of ['nothing', 'bare', 'otel'] as const) {
        listen(wanted)
        const response = await app.inject(request)
        if (response.statusCode !== 200) throw new Error(`${wanted}: status ${response.statusCode}`)
        bodies.set(wanted, records(response.body, wanted))
      }
      if (exporter.getFinishedSpans().length === 0) throw new Error('fastify-expand/otel made no span')
      assertSameText('traced records', bodies.get('nothing')!, bodies.get('bare')!, noSubscriberName, bareSubscriberName)
      assertSameText('traced records', bodies.get('nothing')!, bodies.get('otel')!, noSubscriberName, otelName)
    },
    // The check and the last round leave a contender's subscriptions on: every case after this one would run traced.
    finish () {
      listen('nothing')
    },
  }
  return {
    benchCase,
    async teardown () {
      listen('nothing')
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}
