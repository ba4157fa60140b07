/**
 * The embedded runner with tracing on: one SDK for the process, every span under `service.name`
 * gatehouse and the replica id, the services told apart by their instrumentation scope, and an
 * event posted to the edge and delivered over SSE still one trace. stop() flushes the spans.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, type OtlpReceiver, startOtlpReceiver, waitFor } from '@gatehouse/testkit';
import { ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpan = '00f067aa0ba902b7';

describe('embedded gateway tracing', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  it('exports one trace from the edge to the SSE delivery, under one service name', async () => {
    const gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      REPLICA_ID: 'embedded-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      ...receiver.env,
    });
    const edge = `http://127.0.0.1:${gw.publicPort}`;
    const wanted = encodeURIComponent(JSON.stringify([{ eventType: 'embedded.traced' }]));
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?subscriptions=${wanted}`);
    try {
      await waitFor(() => sse.frames.length >= 2);
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: {
          'content-type': 'application/cloudevents+json',
          traceparent: `00-${traceId}-${callerSpan}-01`,
        },
        body: JSON.stringify({ specversion: '1.0', id: 'e-1', source: 't', type: 'embedded.traced' }),
      });
      assert.equal(res.status, 202);
      await waitFor(() => sse.events('embedded.traced').length === 1);
    } finally {
      sse.close();
      await gw.stop();
    }

    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    assert.deepEqual(spans.map((s) => `${s.scope} ${s.kind} ${s.name}`).sort(), [
      '@gatehouse/publisher producer send gw.events',
      '@gatehouse/publisher server POST /_gw/v1/events',
      '@gatehouse/push-hub consumer deliver gw.events',
    ]);
    for (const s of spans) {
      assert.equal(s.resource['service.name'], 'gatehouse');
      assert.equal(s.resource['service.instance.id'], 'embedded-1');
      assert.equal(s.resource['service.version'], '0.1.0');
    }
    const [server, producer, delivery] = ['server', 'producer', 'consumer'].map(
      (kind) => spans.find((s) => s.kind === kind)!,
    );
    assert.equal(server!.parentSpanId, callerSpan);
    assert.equal(producer!.parentSpanId, server!.spanId);
    assert.equal(delivery!.parentSpanId, producer!.spanId);
    assert.equal(delivery!.attributes['messaging.system'], 'memory');
  });
});
