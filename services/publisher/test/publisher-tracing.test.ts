/**
 * The publisher with tracing on, in this process (memory buses, a local OTLP receiver): an event
 * posted over HTTP or consumed from a source topic goes onto the fan-out stream carrying the context
 * of its PRODUCER span, which is the child of the request's SERVER span or the message's CONSUMER
 * span, itself under the caller's context.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { type OtlpReceiver, startOtlpReceiver, waitFor } from '@gatehouse/testkit';
import { startTracing, type TracingHandle } from '@gatehouse/tracing';
import { startPublisherFixture } from './publisher-fixture.ts';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpan = '00f067aa0ba902b7';
const traceparent = `00-${traceId}-${callerSpan}-01`;

describe('publisher tracing', () => {
  let receiver: OtlpReceiver;
  let tracing: TracingHandle;
  let p: Awaited<ReturnType<typeof startPublisherFixture>>;
  const source = new MemoryBus();
  before(async () => {
    receiver = await startOtlpReceiver();
    tracing = await startTracing({ serviceName: 'publisher', endpoint: receiver.url, env: receiver.env });
    p = await startPublisherFixture({}, [{ bus: source, topics: ['orders'], group: 'g' }]);
  });
  after(async () => {
    await p?.stop();
    await tracing?.shutdown();
    await receiver?.close();
  });

  it('traces POST /_gw/v1/events and a source message to the fan-out stream', async () => {
    const res = await fetch(`${p.edge}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json', traceparent, tracestate: 'e2e=1' },
      body: JSON.stringify({ specversion: '1.0', id: 'h-1', source: 't', type: 'from.http' }),
    });
    assert.equal(res.status, 202);
    await source.publish('orders', {
      value: JSON.stringify({ specversion: '1.0', id: 's-1', source: 't', type: 'from.source', traceparent }),
    });
    await waitFor(() => p.events().length === 2);
    await tracing.shutdown();

    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const server = spans.find((s) => s.kind === 'server')!;
    assert.equal(server.name, 'POST /_gw/v1/events');
    assert.equal(server.parentSpanId, callerSpan);
    assert.equal(server.attributes['http.response.status_code'], 202);
    const consumer = spans.find((s) => s.kind === 'consumer')!;
    assert.equal(consumer.name, 'process orders');
    assert.equal(consumer.parentSpanId, callerSpan);
    assert.equal(consumer.attributes['messaging.consumer.group.name'], 'g');
    assert.equal(consumer.attributes['messaging.system'], 'memory');

    const producers = spans.filter((s) => s.kind === 'producer');
    assert.equal(producers.length, 2);
    const [fromHttp, fromSource] = ['h-1', 's-1'].map(
      (id) => producers.find((s) => s.attributes['cloudevents.event_id'] === id)!,
    );
    assert.equal(fromHttp!.parentSpanId, server.spanId);
    assert.equal(fromSource!.parentSpanId, consumer.spanId);
    assert.equal(fromHttp!.name, 'send gw.events');
    const onStream = Object.fromEntries(p.events().map((e) => [e['id'], e]));
    assert.equal(onStream['h-1']!['traceparent'], `00-${traceId}-${fromHttp!.spanId}-01`);
    assert.equal(onStream['h-1']!['tracestate'], 'e2e=1');
    assert.equal(onStream['s-1']!['traceparent'], `00-${traceId}-${fromSource!.spanId}-01`);
  });
});
