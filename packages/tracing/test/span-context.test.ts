import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { context, INVALID_SPAN_CONTEXT, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import {
  contextWithRemoteParent,
  fromSpanContext,
  hopTraceContext,
  startHop,
  type TraceContext,
  toSpanContext,
} from '../src/index.ts';

const incoming: TraceContext = {
  traceparent: {
    version: '00',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    parentId: 'b7ad6b7169203331',
    traceFlags: 1,
  },
  tracestate: [
    { key: 'rojo', value: '00f067aa0ba902b7' },
    { key: 'congo', value: 't61rcWkgMzE' },
  ],
};

describe('OpenTelemetry span context bridge', () => {
  it('converts to a remote SpanContext and back', () => {
    const spanContext = toSpanContext(incoming);
    assert.equal(spanContext.traceId, incoming.traceparent.traceId);
    assert.equal(spanContext.spanId, incoming.traceparent.parentId);
    assert.equal(spanContext.traceFlags, 1);
    assert.equal(spanContext.isRemote, true);
    assert.equal(spanContext.traceState?.serialize(), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.deepEqual(fromSpanContext(spanContext), incoming);
  });

  it('leaves out an empty trace state and rejects an invalid span context', () => {
    assert.equal(toSpanContext({ ...incoming, tracestate: [] }).traceState, undefined);
    assert.equal(fromSpanContext(INVALID_SPAN_CONTEXT), undefined);
  });

  it('puts the remote parent into a context, or leaves the context alone without one', () => {
    const ctx = contextWithRemoteParent(incoming, ROOT_CONTEXT);
    assert.equal(trace.getSpanContext(ctx)?.traceId, incoming.traceparent.traceId);
    assert.equal(contextWithRemoteParent(undefined, ROOT_CONTEXT), ROOT_CONTEXT);
    assert.equal(contextWithRemoteParent(undefined), context.active());
  });

  it('makes a new hop when no SDK gives a span ids of its own', () => {
    const tracer = trace.getTracer('test');
    const span = tracer.startSpan('publish', {}, contextWithRemoteParent(incoming, ROOT_CONTEXT));
    assert.equal(span.isRecording(), false);
    assert.equal(
      span.spanContext().spanId,
      incoming.traceparent.parentId,
      'the no-op span echoes its parent',
    );
    const hop = hopTraceContext(span, incoming);
    assert.equal(hop.traceparent.traceId, incoming.traceparent.traceId);
    assert.notEqual(hop.traceparent.parentId, incoming.traceparent.parentId);
    assert.deepEqual(hop.tracestate, incoming.tracestate);
    const root = hopTraceContext(tracer.startSpan('root', {}, ROOT_CONTEXT), undefined);
    assert.notEqual(root.traceparent.traceId, incoming.traceparent.traceId);
    span.end();
  });

  it('uses a span’s own ids when it has them', () => {
    const own = startHop(incoming);
    const span = trace.wrapSpanContext(toSpanContext(own));
    assert.deepEqual(hopTraceContext(span, incoming), own);
  });
});
