import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '@gatehouse/service-kit';
import { type OtlpReceiver, startOtlpReceiver } from '@gatehouse/testkit';
import { startTracing } from '@gatehouse/tracing';
import type { Connection } from '../../src/connections/connection.ts';
import type { OutgoingEvent } from '../../src/connections/gateway-events.ts';
import { EventRing } from '../../src/delivery/event-ring.ts';
import { Hub } from '../../src/delivery/hub.ts';
import { HubMetrics } from '../../src/metrics/hub-metrics.ts';

function connection(id: string): Connection & { got: OutgoingEvent[] } {
  const got: OutgoingEvent[] = [];
  return {
    id,
    transport: 'sse',
    sessionId: undefined,
    got,
    send: (e) => got.push(e) > 0,
    get eventsWritten() {
      return got.length;
    },
    queuedBytes: () => 0,
    whenDrained: (ready) => setImmediate(ready),
    close() {},
  };
}

function hubWith(connections: Connection[], eventType: string): Hub {
  const hub = new Hub({
    extractors: new Map(),
    ring: new EventRing(10),
    metrics: new HubMetrics(createRegistry()),
    fanout: { system: 'redis', topic: 'gw.events' },
  });
  for (const conn of connections) hub.add(conn, [{ eventType, oneOf: [] }], { token: 't' });
  return hub;
}

const traceId = '0af7651916cd43dd8448eb211c80319c';
const producerSpan = 'b7ad6b7169203331';
const event = (id: string, type: string) =>
  JSON.stringify({
    specversion: '1.0',
    id,
    type,
    source: 't',
    traceparent: `00-${traceId}-${producerSpan}-01`,
  });

describe('delivery spans', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  it('one span per event on this replica, however many connections get it, under the event context', async () => {
    const conns = [connection('a'), connection('b'), connection('c')];
    const hub = hubWith(conns, 'order');
    const tracing = await startTracing({
      serviceName: 'push-hub',
      endpoint: receiver.url,
      env: receiver.env,
    });
    hub.dispatch('1-0', event('e-1', 'order'));
    hub.dispatch('2-0', event('e-2', 'other'));
    await tracing.shutdown();

    for (const conn of conns)
      assert.deepEqual(
        conn.got.slice(2).map((e) => e.position),
        ['1-0'],
      );
    const spans = receiver.spans.filter((s) => s.name === 'deliver gw.events');
    assert.equal(spans.length, 2, 'one per event, none per connection');
    const [first, second] = spans;
    assert.equal(first!.kind, 'consumer');
    assert.equal(first!.traceId, traceId);
    assert.equal(first!.parentSpanId, producerSpan);
    assert.equal(first!.attributes['gw.delivery.recipients'], 3);
    assert.equal(first!.attributes['messaging.system'], 'redis');
    assert.equal(first!.attributes['cloudevents.event_id'], 'e-1');
    assert.equal(second!.attributes['gw.delivery.recipients'], 0, 'an event nobody wants is still one span');
  });

  it('makes no span while tracing is off', async () => {
    const before = receiver.spans.length;
    const conn = connection('a');
    hubWith([conn], 'order').dispatch('1-0', event('e-3', 'order'));
    assert.equal(conn.got.length, 3, 'delivered all the same');
    assert.equal(receiver.spans.length, before);
  });
});
