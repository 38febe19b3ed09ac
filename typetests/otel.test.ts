// Type tests (tstyche): what a TypeScript user of the `fastify-expand/otel` entry sees.
import type { MeterProvider, TracerProvider } from '@opentelemetry/api'
import { describe, expect, test } from 'tstyche'
import {
  ExpandInstrumentation,
  expandInstrumentation,
  instrumentationName,
  type ExpandInstrumentationConfig,
  type LoadMessage,
  type PlanMessage,
  type SerializeMessage,
  type StatementKind,
  type WriterKind,
} from '../plugin/otel/index.js'
import type { LoadMessage as MainLoadMessage } from '../plugin/index.js'

describe('expandInstrumentation', () => {
  test('takes optional providers and answers an instrumentation', () => {
    expect(expandInstrumentation()).type.toBe<ExpandInstrumentation>()
    expect(expandInstrumentation({})).type.toBe<ExpandInstrumentation>()
    expect(expandInstrumentation).type.toBeCallableWith({
      tracerProvider: {} as TracerProvider, meterProvider: {} as MeterProvider, enabled: false, dbSystemName: 'mariadb',
    })
    expect(expandInstrumentation).type.not.toBeCallableWith({ dbSystemName: 1 })
    expect(expandInstrumentation).type.not.toBeCallableWith({ tracer: {} })
    expect(new ExpandInstrumentation()).type.toBe<ExpandInstrumentation>()
    expect(instrumentationName).type.toBe<'fastify-expand'>()
  })

  test("has the shape of OpenTelemetry's Instrumentation", () => {
    const instrumentation = expandInstrumentation()
    expect(instrumentation.enable).type.toBe<() => void>()
    expect(instrumentation.disable).type.toBe<() => void>()
    expect(instrumentation.setTracerProvider).type.toBe<(provider: TracerProvider) => void>()
    expect(instrumentation.setMeterProvider).type.toBe<(provider: MeterProvider) => void>()
    expect(instrumentation.getConfig()).type.toBe<ExpandInstrumentationConfig>()
    expect(instrumentation.instrumentationName).type.toBe<'fastify-expand'>()
    expect(instrumentation.instrumentationVersion).type.toBe<string>()
    expect(instrumentation.isEnabled).type.toBe<boolean>()
  })
})

describe('channel messages', () => {
  test('hold paths, SQL and counts, typed without any', () => {
    expect<LoadMessage['path']>().type.toBe<string>()
    expect<LoadMessage['sql']>().type.toBe<string>()
    expect<LoadMessage['rowCount']>().type.toBe<number | undefined>()
    expect<LoadMessage['keyCount']>().type.toBe<number | undefined>()
    expect<LoadMessage['wave']>().type.toBe<number>()
    expect<LoadMessage['system']>().type.toBe<'sqlite' | 'postgresql' | 'mysql'>()
    expect<StatementKind>().type.toBe<'page' | 'one' | 'count' | 'rows' | 'ids' | 'aggregates'>()
    expect<PlanMessage['route']>().type.toBe<string>()
    expect<PlanMessage['cached']>().type.toBe<boolean | undefined>()
    expect<SerializeMessage['bytes']>().type.toBe<number | undefined>()
    expect<WriterKind>().type.toBe<'fast-json-stringify' | 'projection' | 'generic'>()
    expect<MainLoadMessage>().type.toBe<LoadMessage>()
  })
})
