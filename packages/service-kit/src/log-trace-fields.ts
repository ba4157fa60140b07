/**
 * The trace fields of a log line written inside a traced request or event: the active span's ids,
 * so a log backend links the line to its trace.
 * - `LOG_FMT=GCL`: Google Cloud Logging's special fields `logging.googleapis.com/trace`
 *   (`projects/<GOOGLE_CLOUD_PROJECT>/traces/<trace id>`), `logging.googleapis.com/spanId` and
 *   `logging.googleapis.com/trace_sampled`. Without a project id the trace field holds the bare
 *   trace id: lines of one request still group under it in Logs Explorer, but the console links
 *   to Cloud Trace only from the project form, so set GOOGLE_CLOUD_PROJECT there.
 * - `LOG_FMT=JSON`: `trace_id`, `span_id` and `trace_flags`, the names OpenTelemetry's log
 *   correlation uses.
 * Outside a span (or with tracing off: the API's context is then always empty) a line gets nothing.
 */
import { context, isSpanContextValid, type SpanContext, TraceFlags, trace } from '@opentelemetry/api';
import type { LogFormat } from './log-format.ts';

export function traceLogFields(format: LogFormat, projectId: string | undefined): () => object {
  const render = format === 'GCL' ? gclFields(projectId) : jsonFields;
  // A new object each time: pino merges the line's own fields into what the mixin returns.
  return () => {
    const span = trace.getSpan(context.active());
    if (span === undefined) return {};
    const spanContext = span.spanContext();
    return isSpanContextValid(spanContext) ? render(spanContext) : {};
  };
}

function gclFields(projectId: string | undefined) {
  const prefix = projectId ? `projects/${projectId}/traces/` : '';
  return (s: SpanContext) => ({
    'logging.googleapis.com/trace': prefix + s.traceId,
    'logging.googleapis.com/spanId': s.spanId,
    'logging.googleapis.com/trace_sampled': (s.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
  });
}

function jsonFields(s: SpanContext) {
  return { trace_id: s.traceId, span_id: s.spanId, trace_flags: `0${s.traceFlags.toString(16)}`.slice(-2) };
}
