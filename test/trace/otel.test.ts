import { context, trace, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { DataPointType, MeterProvider, MetricReader, type HistogramMetricData, type MetricData } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { expandInstrumentation } from '../../plugin/otel/index.js'
import { asWrittenOn, dialects, inOneWave, inWave, keySubqueryOf, type Dialect, type TestDatabase } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources } from '../fixtures/tables.js'

/*
 * `fastify-expand/otel`: the channels as spans under the request's span
 * (made here by an onRequest hook, as @fastify/otel makes one) with exact
 * attributes, and as metrics: a statement duration per statement, the cache
 * hits and misses, the rows of each request. No attribute holds a value of
 * the request or of a row.
 */

/** Metrics read when the test asks (no export interval). */
class CollectingReader extends MetricReader {
  protected override async onForceFlush (): Promise<void> {}
  protected override async onShutdown (): Promise<void> {}
}

const contextManager = new AsyncLocalStorageContextManager().enable()
context.setGlobalContextManager(contextManager)
t.teardown(() => { context.disable() })

/** The request's span, as an HTTP instrumentation makes it: started on request, active for the rest of it, ended on response. */
function withRequestSpans (app: FastifyInstance, tracer: Tracer): void {
  const spans = new WeakMap<object, Span>()
  app.addHook('onRequest', (request, _reply, done) => {
    const span = tracer.startSpan('request', { attributes: { 'http.route': request.routeOptions.url ?? '' } })
    spans.set(request, span)
    context.with(trace.setSpan(context.active(), span), done)
  })
  app.addHook('onResponse', (request, _reply, done) => {
    spans.get(request)?.end()
    done()
  })
}

const filterSecret = 'filter-secret-0c6e'

async function build (database: TestDatabase, tracer: Tracer): Promise<FastifyInstance> {
  const app = Fastify()
  withRequestSpans(app, tracer)
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet, { filter: { name: ['ne'] } })
  await app.ready()
  return app
}

function metric (metrics: MetricData[], name: string): MetricData | undefined {
  return metrics.find((found) => found.descriptor.name === name)
}

/** A counter's total over its data points; 0 when it has none. */
function total (metrics: MetricData[], name: string): number {
  const found = metric(metrics, name)
  return found === undefined ? 0 : found.dataPoints.reduce((sum, point) => sum + (point.value as number), 0)
}

const systemName = { sqlite: 'sqlite', 'sqlite with cached statements': 'sqlite', postgres: 'postgresql', mariadb: 'mariadb' } as const satisfies Record<Dialect['name'], string>

for (const dialect of dialects()) {
  t.test(`spans and metrics on ${dialect.name}`, async (t) => {
    const database = await openSeeded(t, dialect)
    const exporter = new InMemorySpanExporter()
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const reader = new CollectingReader()
    const meterProvider = new MeterProvider({ readers: [reader] })
    const instrumentation = expandInstrumentation({
      tracerProvider, meterProvider, dbSystemName: dialect.name === 'mariadb' ? 'mariadb' : undefined,
    })
    t.teardown(() => instrumentation.disable())
    t.equal(instrumentation.isEnabled, true)
    t.equal(instrumentation.getConfig().enabled, true)
    const app = await build(database, tracerProvider.getTracer('test'))
    t.teardown(() => app.close())
    const p = (index: number) => (dialect.name === 'postgres' ? `$${index}` : asWrittenOn(dialect, '?'))
    const system = systemName[dialect.name]

    const url = `/pets/1?expand=owner.employer,toys&filter[name][ne]=${filterSecret}`
    for (let request = 0; request < 2; request++) {
      const response = await app.inject(url)
      t.equal(response.statusCode, 200)
    }
    const list = await app.inject(`/pets?expand=owner&filter[name][ne]=${filterSecret}`)
    t.equal(list.statusCode, 200)
    const listBytes = Buffer.byteLength(list.body)

    const spans = exporter.getFinishedSpans()
    const requests = spans.filter((span) => span.name === 'request')
    t.equal(requests.length, 3)
    const under = (parent: ReadableSpan) => spans
      .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
      .map((span) => ({ name: span.name, kind: span.kind, attributes: span.attributes }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const oneWave = inOneWave(dialect)
    /** What a relation's statement reads its keys from: its parent statement's `column` in one wave, else the keys bound. */
    const keyed = (parent: string, column: string, keys: string) => oneWave ? keySubqueryOf(parent, column) : keys
    // In one wave, every relation's statement is sent with the root's (wave 0) and binds no keys of its own.
    const relation = (path: string, wave: number, sql: string, rows: number, keys: number) =>
      oneWave ? statement('rows', path, 0, inWave(dialect, sql), rows) : statement('rows', path, wave, sql, rows, keys)
    const statement = (kind: string, path: string, wave: number, sql: string, rows: number, keys?: number) => ({
      name: path === '' ? `fastify-expand ${kind}` : `fastify-expand ${kind} ${path}`,
      kind: 2,
      attributes: {
        'db.system.name': system,
        'db.query.text': asWrittenOn(dialect, sql),
        'fastify_expand.relation.path': path,
        'fastify_expand.statement.kind': kind,
        'fastify_expand.load.wave': wave,
        ...(keys === undefined ? {} : { 'fastify_expand.load.keys': keys }),
        'db.response.returned_rows': rows,
      },
    })
    const petColumns = '"pets"."id" as "id", cast("pets"."name" as text) as "name", cast("pets"."species" as text) as "species", "pets"."owner_id" as "owner", "pets"."sold_from_id" as "sold_from"'
    const people = (keys: string) => `select "people"."id" as "id", cast("people"."name" as text) as "name", cast("people"."hobbies" as text) as "hobbies", "people"."employer_id" as "employer" from "people" where "people"."id" in (${keys})`
    const pet = `select ${petColumns} from "pets" where "pets"."id" = ${p(1)}`
    const owner = people(keyed(pet, '"pets"."owner_id"', p(1)))
    const detail = (cached: boolean, mechanism: unknown) => [
      statement('one', '', 0, pet, 1),
      { name: 'fastify-expand plan', kind: 0, attributes: { 'http.route': '/pets/:id', 'http.request.method': 'GET', 'fastify_expand.plan.cached': cached } },
      relation('owner', 1, owner, 1, 1),
      relation('owner.employer', 2,
        `select "companies"."id" as "id", cast("companies"."name" as text) as "name", "companies"."public" as "public" from "companies" where "companies"."id" in (${keyed(owner, '"people"."employer_id"', p(1))})`, 1, 1),
      relation('toys', 1,
        `select "toys"."id" as "id", cast("toys"."name" as text) as "name", "pet_toys"."pet_id" as "__expand_parent" from "toys" inner join "pet_toys" on "pet_toys"."toy_id" = "toys"."id" where "pet_toys"."pet_id" in (${keyed(pet, '"pets"."id"', p(1))}) order by "pet_toys"."pet_id", "pet_toys"."toy_id" limit 16384`, 2, 1),
      {
        name: 'fastify-expand serialize',
        kind: 0,
        attributes: { 'fastify_expand.serializer.mechanism': mechanism, 'fastify_expand.serializer.cached': cached, 'http.response.body.size': 217 },
      },
    ]
    const [first, second, third] = requests
    const mechanism = under(first!).find((span) => span.name === 'fastify-expand serialize')?.attributes['fastify_expand.serializer.mechanism']
    t.strictSame(under(first!), detail(false, mechanism), 'every stage a child of the request span, with these attributes exactly')
    t.strictSame(under(second!), detail(true, mechanism), 'from the caches')
    const listSpans = under(third!)
    t.strictSame(listSpans.map(({ name }) => name), [
      'fastify-expand ids toys', 'fastify-expand page', 'fastify-expand plan', 'fastify-expand rows owner', 'fastify-expand serialize',
    ], 'a page short of the limit needs no count')
    t.equal(listSpans.find(({ name }) => name === 'fastify-expand serialize')!.attributes['http.response.body.size'], listBytes)
    const page = `select ${petColumns} from "pets" where "pets"."name" <> ${p(1)} order by "pets"."id" asc limit ${p(2)} offset ${p(3)}`
    t.strictSame(listSpans.find(({ name }) => name === 'fastify-expand rows owner')!.attributes['db.query.text'],
      asWrittenOn(dialect, oneWave ? inWave(dialect, people(keyed(page, '"pets"."owner_id"', ''))) : people([p(1), p(2), p(3), p(4)].join(', '))),
      oneWave ? 'keyed by the page\'s statement' : 'three owners, padded to four keys')
    t.ok(spans.every((span) => span.spanContext().traceId === span.parentSpanContext?.traceId || span.name === 'request'))
    t.notOk(JSON.stringify(spans.map((span) => span.attributes)).includes(filterSecret), 'no attribute holds a value of the request')
    t.notOk(JSON.stringify(spans.map((span) => span.attributes)).includes('Garfield'), 'nor of a row')

    const { resourceMetrics } = await reader.collect()
    const metrics = resourceMetrics.scopeMetrics.filter((scope) => scope.scope.name === 'fastify-expand').flatMap((scope) => scope.metrics)
    const durations = metric(metrics, 'fastify_expand.statement.duration') as HistogramMetricData
    t.equal(durations.dataPointType, DataPointType.HISTOGRAM)
    const statements = spans.filter((span) => span.kind === 2).length
    t.equal(statements, 11)
    t.equal(durations.dataPoints.reduce((sum, point) => sum + point.value.count, 0), statements, 'one duration per statement')
    t.ok(durations.dataPoints.every((point) => point.attributes['db.system.name'] === system))
    t.equal(total(metrics, 'fastify_expand.plan.cache.misses'), 2, 'the detail once, the list once')
    t.equal(total(metrics, 'fastify_expand.plan.cache.hits'), 1)
    t.equal(total(metrics, 'fastify_expand.serializer.cache.misses'), 2)
    t.equal(total(metrics, 'fastify_expand.serializer.cache.hits'), 1)
    const rows = metric(metrics, 'fastify_expand.request.rows') as HistogramMetricData
    t.equal(rows.dataPoints[0]!.value.count, 3, 'one record per request')
    t.equal(rows.dataPoints[0]!.value.sum, 5 + 5 + 11,
      'the rows of its statements: 1 + 1 + 1 + 2 twice, then 4 pets, 3 owners and 4 toy ids (in one statement with the page, a relation\'s rows alone)')

    instrumentation.disable()
    t.equal(instrumentation.isEnabled, false)
    exporter.reset()
    await app.inject(url)
    t.strictSame(exporter.getFinishedSpans().map((span) => span.name), ['request'], 'disabled: no span of its own')
    instrumentation.enable()
    instrumentation.enable()
    await app.inject(url)
    t.equal(exporter.getFinishedSpans().length, 1 + 1 + 6, 'enabled again, once')
  })
}

t.test('statements that fail, and a refused plan: their spans say so by code', async (t) => {
  const database = await openSeeded(t, dialects()[0]!)
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const instrumentation = expandInstrumentation({ enabled: false })
  t.equal(instrumentation.isEnabled, false)
  instrumentation.setTracerProvider(tracerProvider)
  instrumentation.setMeterProvider(new MeterProvider())
  instrumentation.setConfig({ dbSystemName: 'sqlite' })
  t.strictSame(instrumentation.getConfig(), { dbSystemName: 'sqlite', enabled: false })
  instrumentation.enable()
  t.teardown(() => instrumentation.disable())
  const app = await build(database, tracerProvider.getTracer('test'))
  t.teardown(() => app.close())

  t.equal((await app.inject('/pets?expand=nothing')).statusCode, 400)
  await database.db.schema.dropTable('pet_toys').execute()
  t.equal((await app.inject('/pets/1?expand=toys')).statusCode, 500)
  const failed = exporter.getFinishedSpans().filter((span) => span.status.code === 2)
    .map((span) => ({ name: span.name, status: span.status, error: span.attributes['error.type'] }))
  t.strictSame(failed, [
    { name: 'fastify-expand plan', status: { code: 2, message: 'FST_EXPAND_UNKNOWN_FIELD' }, error: 'FST_EXPAND_UNKNOWN_FIELD' },
    { name: 'fastify-expand rows toys', status: { code: 2, message: 'FST_EXPAND_DATABASE_ERROR' }, error: 'FST_EXPAND_DATABASE_ERROR' },
  ])
})

t.test('requests of one trace served at once: each records its own rows', async (t) => {
  const database = await openSeeded(t, dialects()[0]!)
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] })
  const tracer = tracerProvider.getTracer('test')
  const reader = new CollectingReader()
  const instrumentation = expandInstrumentation({ tracerProvider, meterProvider: new MeterProvider({ readers: [reader] }) })
  t.teardown(() => instrumentation.disable())
  // A browser page's calls under one traceparent: each request's span a child of the page's.
  const page = tracer.startSpan('browser page')
  t.teardown(() => page.end())
  const app = Fastify()
  const spans = new WeakMap<object, Span>()
  app.addHook('onRequest', (request, _reply, done) => {
    const span = tracer.startSpan('request', {}, trace.setSpan(context.active(), page))
    spans.set(request, span)
    context.with(trace.setSpan(context.active(), span), done)
  })
  app.addHook('onResponse', (request, _reply, done) => {
    spans.get(request)?.end()
    done()
  })
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet)
  await app.ready()
  t.teardown(() => app.close())
  const recorded = async () => {
    const { resourceMetrics } = await reader.collect()
    const rows = metric(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics), 'fastify_expand.request.rows') as HistogramMetricData
    return { count: rows.dataPoints[0]!.value.count, sum: rows.dataPoints[0]!.value.sum }
  }
  await app.inject('/pets?expand=owner,toys')
  await app.inject('/pets/3')
  // 4 pets (a page short of its limit: no count), 3 owners and 4 toy ids; then pet 3, which has no toys.
  t.strictSame(await recorded(), { count: 2, sum: 4 + 3 + 4 + 1 }, 'one after the other')
  await Promise.all([app.inject('/pets?expand=owner,toys'), app.inject('/pets/3')])
  t.strictSame(await recorded(), { count: 4, sum: 2 * 12 }, 'at once: two more records, the same rows')
})

t.test('without a request span: each stage a root span of its own, rows per request all the same; a body that does not fit', async (t) => {
  const database = await openSeeded(t, dialects()[0]!)
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new CollectingReader()
  const instrumentation = expandInstrumentation({ tracerProvider, meterProvider: new MeterProvider({ readers: [reader] }) })
  t.teardown(() => instrumentation.disable())
  const app = Fastify()
  await app.register(expandPlugin, { db: database.db, resources })
  app.expand.routes('/pets', Pet)
  app.get('/unfit', { expandable: { resource: Pet } }, async () => ({ id: 'not a number' }))
  t.teardown(() => app.close())

  t.equal((await app.inject('/pets/1?expand=owner')).statusCode, 200)
  const spans = exporter.getFinishedSpans()
  t.strictSame(spans.map((span) => span.name).sort(), ['fastify-expand ids toys', 'fastify-expand one', 'fastify-expand plan', 'fastify-expand rows owner', 'fastify-expand serialize'])
  t.ok(spans.every((span) => span.parentSpanContext === undefined), 'root spans')
  t.equal(new Set(spans.map((span) => span.spanContext().traceId)).size, spans.length, 'each its own trace')
  const { resourceMetrics } = await reader.collect()
  const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)
  const rows = metric(metrics, 'fastify_expand.request.rows') as HistogramMetricData
  t.strictSame(rows.dataPoints.map((point) => [point.value.count, point.value.sum]), [[1, 1 + 1 + 2]],
    'rows are counted per request, not per span: pet 1, its owner and its 2 toy ids')
  t.equal(total(metrics, 'fastify_expand.serializer.cache.misses'), 1)

  exporter.reset()
  t.equal((await app.inject('/unfit')).statusCode, 500)
  const serialize = exporter.getFinishedSpans().find((span) => span.name === 'fastify-expand serialize')!
  t.strictSame({ status: serialize.status, error: serialize.attributes['error.type'], bytes: serialize.attributes['http.response.body.size'] },
    { status: { code: 2, message: 'FST_EXPAND_INVALID_DATA' }, error: 'FST_EXPAND_INVALID_DATA', bytes: undefined })
})
