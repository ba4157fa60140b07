/**
 * The bridge between our TraceContext and OpenTelemetry's SpanContext, so a service can open an
 * OpenTelemetry span under the trace that came in with a request or an event, and emit that span's
 * context on the events it produces.
 */
import {
  type Context,
  context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  trace,
} from '@opentelemetry/api';
import { type TraceContext, startHop } from './propagation.ts';
import { formatTraceState, parseTraceState } from './tracestate.ts';

export function toSpanContext(traceContext: TraceContext): SpanContext {
  const { traceId, parentId, traceFlags } = traceContext.traceparent;
  const state = formatTraceState(traceContext.tracestate);
  const spanContext: SpanContext = { traceId, spanId: parentId, traceFlags, isRemote: true };
  if (state !== '') spanContext.traceState = createTraceState(state);
  return spanContext;
}

export function fromSpanContext(spanContext: SpanContext): TraceContext | undefined {
  if (!isSpanContextValid(spanContext)) return undefined;
  const { traceId, spanId, traceFlags } = spanContext;
  return {
    traceparent: { version: '00', traceId, parentId: spanId, traceFlags },
    tracestate: parseTraceState(spanContext.traceState?.serialize()),
  };
}

/** `base` with the remote parent set, for `tracer.startSpan(name, options, ctx)`; unchanged without one. */
export function contextWithRemoteParent(
  parent: TraceContext | undefined,
  base: Context = context.active(),
): Context {
  return parent === undefined ? base : trace.setSpanContext(base, toSpanContext(parent));
}

/** The context of the span active here (a request's SERVER span …), if any. */
export function activeTraceContext(): TraceContext | undefined {
  const span = trace.getActiveSpan();
  return span === undefined ? undefined : fromSpanContext(span.spanContext());
}

/**
 * The parent for work done for a message: the span active here when there is one (a request's or a
 * consumer's span), else the context the message carried (a new trace without one).
 */
export function activeOrCarriedContext(carried: TraceContext | undefined): Context {
  const active = context.active();
  return trace.getSpan(active) !== undefined ? active : contextWithRemoteParent(carried, ROOT_CONTEXT);
}

/**
 * The context to emit for work done in `span`: the span's own when the SDK gave it an id of its
 * own, else a new hop under `parent`. Without a running SDK a span only echoes its parent's ids,
 * and emitting those would make the next hop look like a sibling instead of a child.
 */
export function hopTraceContext(span: Span, parent: TraceContext | undefined): TraceContext {
  const own = fromSpanContext(span.spanContext());
  const isEcho =
    own !== undefined && parent !== undefined && own.traceparent.parentId === parent.traceparent.parentId;
  return own !== undefined && !isEcho ? own : startHop(parent);
}
