// The `fastify-expand/otel` entry: the tracing channels as OpenTelemetry spans and metrics (docs/observability.md).
export { ExpandInstrumentation, expandInstrumentation, instrumentationName, type ExpandInstrumentationConfig } from './instrumentation.js'
export type {
  LoadMessage, PlanMessage, RequestToken, SerializeMessage, StatementKind, StatementLabel, WriterKind,
} from '../trace/channels.js'
