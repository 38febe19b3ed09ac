import { tracingChannel, type TracingChannelSubscribers } from 'node:diagnostics_channel'
import { readFileSync } from 'node:fs'
import {
  context, metrics, SpanKind, SpanStatusCode, trace,
  type Attributes, type Counter, type Histogram, type MeterProvider, type Span, type Tracer, type TracerProvider,
} from '@opentelemetry/api'
import type { LoadMessage, PlanMessage, RequestToken, SerializeMessage } from '../trace/channels.js'

/*
 * The tracing channels (trace/channels.ts) as OpenTelemetry spans and
 * metrics. This module is the package's `fastify-expand/otel` entry: the
 * main entry never loads it, nor `@opentelemetry/api` (an optional peer).
 * It reads the channels by their public names, as any subscriber does.
 */

export const instrumentationName = 'fastify-expand'

/**
 * The package's version, for the tracer and meter: read from its
 * package.json, two folders up from the sources and three from the built
 * files (dist/plugin/otel).
 */
function packageVersion (): string {
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      const found = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown }
      if (found.name === instrumentationName && typeof found.version === 'string') return found.version
    } catch {}
  }
  return 'unknown'
}

const version = packageVersion()

export interface ExpandInstrumentationConfig {
  /** Subscribe at once (default true), as OpenTelemetry's instrumentations do; false: at `enable()`. */
  enabled?: boolean
  /** Default: the global tracer provider (`trace.getTracerProvider()`), as registered by the SDK. */
  tracerProvider?: TracerProvider
  /** Default: the global meter provider. */
  meterProvider?: MeterProvider
  /**
   * `db.system.name` of every statement, instead of the one its dialect
   * publishes: 'mariadb' for MariaDB, whose statements are written as MySQL's.
   */
  dbSystemName?: string
}

/** What a span of a message needs when it ends. */
interface Open {
  readonly span: Span
  readonly started: number
}

/** The instruments, made from one meter provider. */
interface Instruments {
  readonly statementDuration: Histogram
  readonly rowsPerRequest: Histogram
  readonly planHits: Counter
  readonly planMisses: Counter
  readonly serializerHits: Counter
  readonly serializerMisses: Counter
}

/**
 * Spans and metrics of fastify-expand's stages, under the request's span
 * (the active span when a stage starts: the one `@fastify/otel` or an HTTP
 * instrumentation made). The shape of OpenTelemetry's `Instrumentation`
 * (`enable`, `disable`, `setTracerProvider`, `setMeterProvider`,
 * `getConfig`, `setConfig`), so that it can be given to the SDK's
 * `instrumentations` or to `registerInstrumentations` as it is; it patches
 * nothing, it subscribes.
 *
 * Spans: `fastify-expand plan`, one per statement (`fastify-expand <kind>
 * <path>`, a client span), `fastify-expand serialize`. Metrics:
 * `fastify_expand.statement.duration` (s), `fastify_expand.request.rows`
 * (rows the statements of one request read, recorded when its body is
 * written), and the hits and misses of the plan and serializer caches.
 */
export class ExpandInstrumentation {
  readonly instrumentationName = instrumentationName
  readonly instrumentationVersion: string = version
  private config: ExpandInstrumentationConfig
  private tracer: Tracer
  private instruments: Instruments
  private subscribed = false
  private readonly open = new WeakMap<object, Open>()
  /**
   * Rows read so far by each request being loaded, by its token (concurrent
   * requests of one trace each have theirs); a request that never writes a
   * body takes its count with it.
   */
  private rowsByRequest = new WeakMap<RequestToken, number>()

  constructor (config: ExpandInstrumentationConfig = {}) {
    this.config = { ...config }
    this.tracer = (config.tracerProvider ?? trace.getTracerProvider()).getTracer(instrumentationName, this.instrumentationVersion)
    this.instruments = makeInstruments(config.meterProvider ?? metrics.getMeterProvider(), this.instrumentationVersion)
    if (config.enabled !== false) this.enable()
  }

  enable (): void {
    if (this.subscribed) return
    this.subscribed = true
    tracingChannel<unknown, PlanMessage>('fastify-expand:plan').subscribe(this.planEvents)
    tracingChannel<unknown, LoadMessage>('fastify-expand:load').subscribe(this.loadEvents)
    tracingChannel<unknown, SerializeMessage>('fastify-expand:serialize').subscribe(this.serializeEvents)
  }

  disable (): void {
    if (!this.subscribed) return
    this.subscribed = false
    tracingChannel<unknown, PlanMessage>('fastify-expand:plan').unsubscribe(this.planEvents)
    tracingChannel<unknown, LoadMessage>('fastify-expand:load').unsubscribe(this.loadEvents)
    tracingChannel<unknown, SerializeMessage>('fastify-expand:serialize').unsubscribe(this.serializeEvents)
    this.rowsByRequest = new WeakMap()
  }

  /** Whether it is subscribed to the channels now. */
  get isEnabled (): boolean {
    return this.subscribed
  }

  setTracerProvider (provider: TracerProvider): void {
    this.tracer = provider.getTracer(instrumentationName, this.instrumentationVersion)
  }

  setMeterProvider (provider: MeterProvider): void {
    this.instruments = makeInstruments(provider, this.instrumentationVersion)
  }

  /** The configuration; `enabled` tells whether it is subscribed (registerInstrumentations enables one that is not). */
  getConfig (): ExpandInstrumentationConfig {
    return { ...this.config, enabled: this.subscribed }
  }

  setConfig (config: ExpandInstrumentationConfig): void {
    this.config = { ...config }
  }

  private begin (message: object, name: string, kind: SpanKind, attributes: Attributes): void {
    const span = this.tracer.startSpan(name, { kind, attributes }, context.active())
    this.open.set(message, { span, started: performance.now() })
  }

  private finish (message: object, attributes: Attributes, failure: { code: string } | undefined): Open | undefined {
    const open = this.open.get(message)
    if (open === undefined) return undefined
    this.open.delete(message)
    open.span.setAttributes(attributes)
    if (failure !== undefined) {
      open.span.setAttribute('error.type', failure.code)
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: failure.code })
    }
    open.span.end()
    return open
  }

  private readonly planEvents: TracingChannelSubscribers<PlanMessage> = {
    start: (message) => {
      this.begin(message, 'fastify-expand plan', SpanKind.INTERNAL, { 'http.route': message.route, 'http.request.method': message.method })
    },
    end: (message) => {
      const cached = message.cached
      this.finish(message, cached === undefined ? {} : { 'fastify_expand.plan.cached': cached }, message.error)
      if (cached !== undefined) (cached ? this.instruments.planHits : this.instruments.planMisses).add(1)
    },
    asyncStart: ignore,
    asyncEnd: ignore,
    error: ignore,
  }

  private readonly loadEvents: TracingChannelSubscribers<LoadMessage> = {
    start: (message) => {
      const attributes: Attributes = {
        'db.system.name': this.systemName(message),
        'db.query.text': message.sql,
        'fastify_expand.relation.path': message.path,
        'fastify_expand.statement.kind': message.kind,
        'fastify_expand.load.wave': message.wave,
      }
      if (message.keyCount !== undefined) attributes['fastify_expand.load.keys'] = message.keyCount
      const name = message.path === '' ? `fastify-expand ${message.kind}` : `fastify-expand ${message.kind} ${message.path}`
      this.begin(message, name, SpanKind.CLIENT, attributes)
      if (message.request !== undefined && !this.rowsByRequest.has(message.request)) this.rowsByRequest.set(message.request, 0)
    },
    end: ignore,
    asyncStart: ignore,
    asyncEnd: (message) => {
      const rows = message.rowCount
      const open = this.finish(message, rows === undefined ? {} : { 'db.response.returned_rows': rows }, message.error)
      if (open === undefined) return
      const attributes: Attributes = { 'db.system.name': this.systemName(message), 'fastify_expand.statement.kind': message.kind }
      if (message.error !== undefined) attributes['error.type'] = message.error.code
      this.instruments.statementDuration.record((performance.now() - open.started) / 1000, attributes)
      const counted = message.request === undefined ? undefined : this.rowsByRequest.get(message.request)
      if (counted !== undefined && rows !== undefined) this.rowsByRequest.set(message.request!, counted + rows)
    },
    error: ignore,
  }

  private readonly serializeEvents: TracingChannelSubscribers<SerializeMessage> = {
    start: (message) => {
      this.begin(message, 'fastify-expand serialize', SpanKind.INTERNAL, {
        'fastify_expand.serializer.mechanism': message.mechanism,
        'fastify_expand.serializer.cached': message.cached,
      })
      ;(message.cached ? this.instruments.serializerHits : this.instruments.serializerMisses).add(1)
    },
    end: (message) => {
      const bytes = message.bytes
      this.finish(message, bytes === undefined ? {} : { 'http.response.body.size': bytes }, message.error)
      const rows = this.rowsByRequest.get(message.request)
      if (rows === undefined) return
      this.rowsByRequest.delete(message.request)
      this.instruments.rowsPerRequest.record(rows)
    },
    asyncStart: ignore,
    asyncEnd: ignore,
    error: ignore,
  }

  private systemName (message: LoadMessage): string {
    return this.config.dbSystemName ?? message.system
  }
}

function ignore (): void {}

function makeInstruments (provider: MeterProvider, version: string): Instruments {
  const meter = provider.getMeter(instrumentationName, version)
  return {
    statementDuration: meter.createHistogram('fastify_expand.statement.duration', {
      description: 'Duration of the statements fastify-expand runs (a page, a count, a relation path)', unit: 's',
    }),
    rowsPerRequest: meter.createHistogram('fastify_expand.request.rows', {
      description: "Rows read by one request's statements, recorded when its body is written", unit: '{row}',
    }),
    planHits: meter.createCounter('fastify_expand.plan.cache.hits', {
      description: 'Requests planned from the plan cache', unit: '{request}',
    }),
    planMisses: meter.createCounter('fastify_expand.plan.cache.misses', { description: 'Requests planned anew', unit: '{request}' }),
    serializerHits: meter.createCounter('fastify_expand.serializer.cache.hits', {
      description: 'Bodies written by a serializer the cache held', unit: '{request}',
    }),
    serializerMisses: meter.createCounter('fastify_expand.serializer.cache.misses', {
      description: 'Bodies whose serializer the cache did not hold (compiled, or the generic writer)', unit: '{request}',
    }),
  }
}

/** An `ExpandInstrumentation`: `expandInstrumentation({ tracerProvider, meterProvider })`. */
export function expandInstrumentation (config?: ExpandInstrumentationConfig): ExpandInstrumentation {
  return new ExpandInstrumentation(config)
}
