import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  activeOrCarriedContext,
  activeTraceContext,
  endHttpClientSpan,
  endHttpServerSpan,
  endSpan,
  linkOtherTrace,
  startConsumerSpan,
  startHttpClientSpan,
  startHttpServerSpan,
  startProducerSpan,
  type TraceContext,
  withActiveSpan,
} from '../src/index.ts';

const exporter = new InMemorySpanExporter();
const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }).getTracer(
  'test',
);

const caller: TraceContext = {
  traceparent: {
    version: '00',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    parentId: 'b7ad6b7169203331',
    traceFlags: 1,
  },
  tracestate: [{ key: 'vendor', value: 'abc' }],
};

function finished(name: string): ReadableSpan {
  const span = exporter.getFinishedSpans().find((s) => s.name === name);
  assert.ok(
    span,
    `span ${name} in ${exporter
      .getFinishedSpans()
      .map((s) => s.name)
      .join(', ')}`,
  );
  return span;
}

describe('gateway spans', () => {
  const manager = new AsyncLocalStorageContextManager();
  before(() => context.setGlobalContextManager(manager.enable()));
  after(() => context.disable());
  beforeEach(() => exporter.reset());

  it('SERVER: `{method} {route}` under the caller, HTTP attributes, failed only on a 5xx', () => {
    const ok = startHttpServerSpan(
      tracer,
      { method: 'POST', path: '/shop/1', route: '/shop/(.*)', scheme: 'https' },
      caller,
    );
    endHttpServerSpan(ok, 404);
    const span = finished('POST /shop/(.*)');
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.spanContext().traceId, caller.traceparent.traceId);
    assert.equal(span.parentSpanContext?.spanId, caller.traceparent.parentId);
    assert.equal(span.spanContext().traceState?.get('vendor'), 'abc', 'the caller tracestate goes on');
    assert.deepEqual(span.attributes, {
      'http.request.method': 'POST',
      'url.path': '/shop/1',
      'url.scheme': 'https',
      'http.route': '/shop/(.*)',
      'http.response.status_code': 404,
    });
    assert.equal(span.status.code, SpanStatusCode.UNSET, 'a 4xx is the client error');

    endHttpServerSpan(
      startHttpServerSpan(tracer, { method: 'GET', path: '/x', scheme: 'http' }, undefined),
      503,
    );
    const failed = finished('GET');
    assert.equal(failed.parentSpanContext, undefined, 'no caller: a new trace');
    assert.equal(failed.status.code, SpanStatusCode.ERROR);
    assert.equal(failed.attributes['error.type'], '503');
  });

  it('CLIENT: under the active span, failed on a 4xx or when no response came', () => {
    const server = startHttpServerSpan(tracer, { method: 'GET', path: '/a', scheme: 'http' }, caller);
    withActiveSpan(server, () => {
      endHttpClientSpan(startHttpClientSpan(tracer, 'GET', new URL('http://backend:8085/a?b=1')), 404);
      endHttpClientSpan(startHttpClientSpan(tracer, 'PUT', new URL('https://backend/a')), 'unreachable');
    });
    server.end();
    const got = finished('GET');
    assert.equal(got.kind, SpanKind.CLIENT);
    assert.equal(got.parentSpanContext?.spanId, server.spanContext().spanId);
    assert.equal(got.attributes['server.address'], 'backend');
    assert.equal(got.attributes['server.port'], 8085);
    assert.equal(got.attributes['url.full'], 'http://backend:8085/a?b=1');
    assert.equal(got.status.code, SpanStatusCode.ERROR);
    const put = finished('PUT');
    assert.equal(put.attributes['server.port'], 443);
    assert.equal(put.attributes['error.type'], 'unreachable');
    assert.equal(put.attributes['http.response.status_code'], undefined);
  });

  it('PRODUCER and CONSUMER: messaging names and attributes, the consumer under the carried context', () => {
    const event = { id: 'e-1', type: 'order.created' };
    endSpan(startProducerSpan(tracer, { system: 'kafka', destination: 'orders', event }, ROOT_CONTEXT));
    const consumer = startConsumerSpan(
      tracer,
      { system: 'redis', destination: 'gw.events', operation: 'deliver', consumerGroup: 'hubs', event },
      caller,
    );
    endSpan(consumer, new TypeError('boom'));
    const sent = finished('send orders');
    assert.equal(sent.kind, SpanKind.PRODUCER);
    assert.deepEqual(sent.attributes, {
      'messaging.system': 'kafka',
      'messaging.destination.name': 'orders',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'cloudevents.event_id': 'e-1',
      'cloudevents.event_type': 'order.created',
    });
    const delivered = finished('deliver gw.events');
    assert.equal(delivered.kind, SpanKind.CONSUMER);
    assert.equal(delivered.parentSpanContext?.spanId, caller.traceparent.parentId);
    assert.equal(delivered.attributes['messaging.operation.type'], 'process');
    assert.equal(delivered.attributes['messaging.operation.name'], 'deliver');
    assert.equal(delivered.attributes['messaging.consumer.group.name'], 'hubs');
    assert.equal(delivered.status.code, SpanStatusCode.ERROR);
    assert.equal(delivered.attributes['error.type'], 'TypeError');
  });

  it('links a context of another trace, never one of the same trace', () => {
    const span = startProducerSpan(tracer, { system: 'kafka', destination: 't' }, ROOT_CONTEXT);
    linkOtherTrace(span, caller);
    linkOtherTrace(span, {
      traceparent: { ...caller.traceparent, traceId: span.spanContext().traceId },
      tracestate: [],
    });
    linkOtherTrace(span, undefined);
    span.end();
    const links = finished('send t').links;
    assert.equal(links.length, 1);
    assert.equal(links[0]!.context.traceId, caller.traceparent.traceId);
    assert.equal(links[0]!.context.spanId, caller.traceparent.parentId);
  });

  it('work for a message goes under the active span, else under the context it carried', async () => {
    assert.equal(
      trace.getSpan(activeOrCarriedContext(caller))?.spanContext().spanId,
      caller.traceparent.parentId,
    );
    assert.equal(trace.getSpan(activeOrCarriedContext(undefined)), undefined);
    const server = startHttpServerSpan(tracer, { method: 'GET', path: '/', scheme: 'http' }, undefined);
    await withActiveSpan(server, async () => {
      await new Promise((r) => setTimeout(r, 1));
      assert.equal(
        trace.getSpan(activeOrCarriedContext(caller)),
        server,
        'the active span survives an await',
      );
      assert.equal(activeTraceContext()?.traceparent.parentId, server.spanContext().spanId);
    });
    assert.equal(activeTraceContext(), undefined);
    server.end();
  });
});
