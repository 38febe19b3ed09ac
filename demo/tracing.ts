import { context, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import type { FastifyInstance } from 'fastify'
import { expandInstrumentation, type ExpandInstrumentation } from '../plugin/otel/index.js'

/*
 * `OTEL_CONSOLE=1 npm start`: each request's spans printed as they end
 * (ConsoleSpanExporter). The request's own span is made by an onRequest hook
 * here, as @fastify/otel (or an HTTP instrumentation) makes it in an
 * application; fastify-expand/otel puts its spans (the plan, each
 * statement, the body) under it. docs/observability.md shows its output.
 */

export interface DemoTracing {
  /** Adds the request span hooks: called on the app before its routes are declared. */
  requestSpans(app: FastifyInstance): void
  readonly instrumentation: ExpandInstrumentation
  shutdown(): Promise<void>
}

/** Tracing to `exporter` (default: the console), with the context manager that carries the request's span across awaits. */
export function demoTracing (exporter: SpanExporter = new ConsoleSpanExporter()): DemoTracing {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const instrumentation = expandInstrumentation({ tracerProvider: provider })
  const tracer: Tracer = provider.getTracer('fastify-expand demo')
  return {
    requestSpans (app) {
      const spans = new WeakMap<object, Span>()
      app.addHook('onRequest', (request, _reply, done) => {
        const span = tracer.startSpan(`${request.method} ${request.routeOptions.url ?? 'unknown route'}`, {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': request.method, 'http.route': request.routeOptions.url ?? '' },
        })
        spans.set(request, span)
        context.with(trace.setSpan(context.active(), span), done)
      })
      app.addHook('onResponse', (request, reply, done) => {
        const span = spans.get(request)
        span?.setAttribute('http.response.status_code', reply.statusCode)
        span?.end()
        done()
      })
    },
    instrumentation,
    async shutdown () {
      instrumentation.disable()
      await provider.shutdown()
    },
  }
}
