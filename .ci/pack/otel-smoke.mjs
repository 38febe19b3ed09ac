// Smoke test of the packed package's `fastify-expand/otel` entry, in the
// scratch project that installed @opentelemetry/api (the optional peer) and
// the SDK's trace package and context manager: an expanded request under a
// request span gives one span per stage, its statements' with their SQL.
import assert from 'node:assert/strict'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { expandInstrumentation } from 'fastify-expand/otel'
import { peopleApp } from './people-app.mjs'

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const instrumentation = expandInstrumentation({ tracerProvider })
assert.equal(instrumentation.instrumentationVersion, JSON.parse(
  (await import('node:fs')).readFileSync(new URL('./node_modules/fastify-expand/package.json', import.meta.url), 'utf8')).version)

const { app, db } = await peopleApp()

const tracer = tracerProvider.getTracer('smoke')
await tracer.startActiveSpan('request', async (span) => {
  const response = await app.inject('/people/1?expand=employer')
  assert.equal(response.statusCode, 200, response.body)
  span.end()
})
const spans = exporter.getFinishedSpans()
const request = spans.find((span) => span.name === 'request')
assert.deepEqual(spans.map((span) => span.name).sort(),
  ['fastify-expand one', 'fastify-expand plan', 'fastify-expand rows employer', 'fastify-expand serialize', 'request'])
for (const span of spans) if (span !== request) assert.equal(span.parentSpanContext?.spanId, request.spanContext().spanId, span.name)
assert.equal(spans.find((span) => span.name === 'fastify-expand rows employer').attributes['db.query.text'],
  'select "companies"."id" as "id", cast("companies"."name" as text) as "name" from "companies" where "companies"."id" in (+?)')
instrumentation.disable()
await app.close()
await db.destroy()
console.log('pack otel smoke test: ok')
