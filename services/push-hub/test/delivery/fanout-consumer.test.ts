/**
 * The fan-out consumer's decision from a record's headers: an event of a type no connection here
 * subscribes to is kept unread in the ring (its body not parsed) and sent to nobody, yet a resume
 * through it gets it; a wanted type, one a long poll waits for, and a record without the headers
 * are read and dispatched as before.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { MemoryBus, publishedAtHeaders, type Subscription } from '@gatehouse/bus';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { createLogger, createRegistry, type Registry } from '@gatehouse/service-kit';
import { startOtlpReceiver, waitFor } from '@gatehouse/testkit';
import { startTracing } from '@gatehouse/tracing';
import { EventRing, type RingEvent } from '../../src/delivery/event-ring.ts';
import { consumeFanout } from '../../src/delivery/fanout-consumer.ts';
import { Hub } from '../../src/delivery/hub.ts';
import { UnreadEvent } from '../../src/delivery/unread-event.ts';
import { HubMetrics } from '../../src/metrics/hub-metrics.ts';
import { RecordingConnection } from '../recording-connection.ts';

const topic = 'events';
const cloudEvent = (type: string, n: number, id = `e${n}`) => ({
  specversion: '1.0',
  id,
  source: 'test',
  type,
  data: { n },
});

async function counterValue(registry: Registry, name: string, labels: Record<string, string>) {
  const metric = registry.getSingleMetric(name);
  const values = (await metric?.get())?.values ?? [];
  const found = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return found?.value ?? 0;
}

describe('fan-out consumer: routing by the record headers', () => {
  const open: Subscription[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });

  async function start(
    options: { warmUp?: boolean; wants?: (type: string) => boolean; bus?: MemoryBus } = {},
  ) {
    const bus = options.bus ?? new MemoryBus();
    const registry = createRegistry();
    const metrics = new HubMetrics(registry);
    const ring = new EventRing(100);
    const hub = new Hub({ extractors: new Map(), ring, metrics });
    const dispatched: RingEvent[] = [];
    open.push(
      await consumeFanout({
        bus,
        topic,
        hub,
        warmUp: options.warmUp ?? false,
        dispatched: (e) => dispatched.push(e),
        ...(options.wants && { wants: options.wants }),
        metrics,
        logger: createLogger({ name: 'fanout-test', level: 'silent' }),
      }),
    );
    const publish = (event: Record<string, unknown>, headers = streamEventHeaders(event as never)) =>
      bus.publish(topic, { value: JSON.stringify(event), headers });
    const held = (position: string) =>
      [...Array(ring.end).keys()].map((s) => ring.get(s)).find((e) => e?.position === position);
    const outcome = (o: string) => counterValue(registry, 'gw_fanout_events_total', { outcome: o });
    return { bus, hub, ring, registry, metrics, dispatched, publish, held, outcome };
  }

  it('keeps an event no connection wants unread, sends it to nobody, and counts it skipped', async () => {
    const f = await start();
    const conn = new RecordingConnection();
    f.hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't' });
    const position = await f.publish(cloudEvent('other', 1));
    await waitFor(() => f.ring.size === 1);
    const e = f.held(position);
    assert.ok(e instanceof UnreadEvent && !e.read, 'held unread');
    assert.deepEqual(conn.numbers(), []);
    assert.deepEqual(f.dispatched, [], 'no long poll is woken');
    assert.equal(await f.outcome('skipped'), 1);
    assert.equal(await f.outcome('dispatched'), 0);
    assert.equal(await counterValue(f.registry, 'gw_events_forwarded_total', { type: 'other' }), 1);
  });

  it('times dispatched events from their publish, not skipped ones, yet notes the lag from those', async () => {
    const f = await start();
    f.hub.add(new RecordingConnection(), [{ eventType: 'tick', oneOf: [] }], { token: 't' });
    const stamped = (event: Record<string, unknown>) => ({
      ...publishedAtHeaders(Date.now() - 3000),
      ...streamEventHeaders(event as never),
    });
    const observed = async () => {
      const text = await f.registry.getSingleMetricAsString('gw_fanout_delivery_seconds');
      return Number(/^gw_fanout_delivery_seconds_count (\d+)$/m.exec(text)?.[1]);
    };
    for (let n = 0; n < 3; n++) await f.publish(cloudEvent('other', n), stamped(cloudEvent('other', n)));
    await waitFor(() => f.ring.size === 3);
    assert.equal(await f.outcome('skipped'), 3);
    assert.equal(await observed(), 0, 'a skipped event is delivered to nobody');
    const lag = f.metrics.lastDelaySeconds;
    assert.ok(lag !== undefined && lag >= 3, `the lag noted from a skipped event (${lag})`);
    await f.publish(cloudEvent('tick', 3), stamped(cloudEvent('tick', 3)));
    await waitFor(() => f.ring.size === 4);
    assert.equal(await observed(), 1);
    assert.equal(
      f.metrics.tally.snapshot().delivery.counts.reduce((a, b) => a + b),
      1,
      'the console sees the same',
    );
  });

  it('reads and delivers an event of a type a connection subscribes to', async () => {
    const f = await start();
    const conn = new RecordingConnection();
    f.hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't' });
    await f.publish(cloudEvent('tick', 1));
    await waitFor(() => conn.numbers().length === 1);
    assert.equal(f.dispatched.length, 1);
    assert.equal(await f.outcome('dispatched'), 1);
    assert.equal(await f.outcome('skipped'), 0);
  });

  it('reads an event a long poll waits for, and wakes it', async () => {
    const f = await start({ wants: (type) => type === 'polled' });
    await f.publish(cloudEvent('polled', 1));
    await waitFor(() => f.dispatched.length === 1);
    assert.equal(f.dispatched[0]!.type, 'polled');
    assert.equal(await f.outcome('dispatched'), 1);
  });

  it('reads a record without the headers as before, wanted or not', async () => {
    const f = await start();
    const withoutType = streamEventHeaders(cloudEvent('other', 1) as never);
    delete withoutType['ce_type'];
    const a = await f.publish(cloudEvent('other', 1), withoutType);
    const b = await f.publish(cloudEvent('other', 2), {});
    await waitFor(() => f.ring.size === 2);
    for (const position of [a, b]) assert.ok(!(f.held(position) instanceof UnreadEvent));
    assert.equal(f.dispatched.length, 2);
    assert.equal(await f.outcome('dispatched'), 2);
  });

  it('gives a resume through unread events exactly the ones it is owed, a duplicate once', async () => {
    const f = await start();
    const from = await f.publish(cloudEvent('tick', 0));
    await f.publish(cloudEvent('tick', 1));
    await f.publish(cloudEvent('other', 2));
    await f.publish(cloudEvent('tick', 1)); // the same source and id again: nobody gets it twice
    await f.publish(cloudEvent('tick', 3));
    await waitFor(() => f.ring.size === 4);
    assert.equal(await counterValue(f.registry, 'gw_events_dropped_total', { reason: 'duplicate' }), 1);
    const conn = new RecordingConnection();
    f.hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: from });
    await waitFor(() => conn.numbers().length === 2);
    assert.deepEqual(conn.numbers(), [1, 3]);
    assert.deepEqual(conn.ids(), ['e1', 'e3']);
    const before = f.held(from);
    assert.ok(before instanceof UnreadEvent && !before.read, 'not read: it is before the resume');
    const other = f.ring.get(2)!;
    assert.ok(
      other instanceof UnreadEvent && !other.read,
      'an event of a type it does not want stays unread',
    );
  });

  it('sends nobody an event whose body is not what its headers named, live or resumed', async () => {
    const f = await start();
    const conn = new RecordingConnection();
    f.hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't' });
    const from = await f.publish(cloudEvent('other', 0));
    await f.publish(cloudEvent('tick', 1), streamEventHeaders(cloudEvent('other', 1) as never));
    await f.publish(cloudEvent('tick', 2));
    await waitFor(() => conn.numbers().length === 1);
    const resumed = new RecordingConnection();
    f.hub.add(resumed, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: from });
    await waitFor(() => resumed.numbers().length === 1);
    assert.deepEqual(conn.numbers(), [2]);
    assert.deepEqual(resumed.numbers(), [2]);
  });

  // The only test here that starts tracing: a process sets its tracer provider once.
  it('reads an event nobody here wants while deliveries are traced: it is still one span', async () => {
    const receiver = await startOtlpReceiver();
    const bus = new MemoryBus();
    const ring = new EventRing(10);
    const hub = new Hub({
      extractors: new Map(),
      ring,
      metrics: new HubMetrics(createRegistry()),
      fanout: { system: 'memory', topic },
    });
    hub.add(new RecordingConnection(), [{ eventType: 'tick', oneOf: [] }], { token: 't' });
    const tracing = await startTracing({
      serviceName: 'push-hub',
      endpoint: receiver.url,
      env: receiver.env,
    });
    try {
      open.push(
        await consumeFanout({
          bus,
          topic,
          hub,
          warmUp: false,
          dispatched: () => {},
          logger: createLogger({ name: 'fanout-test', level: 'silent' }),
        }),
      );
      const traced = {
        ...cloudEvent('other', 1),
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      };
      await bus.publish(topic, { value: JSON.stringify(traced), headers: streamEventHeaders(traced) });
      await waitFor(() => ring.size === 1);
      assert.ok(!(ring.get(0) instanceof UnreadEvent), 'read, for its trace context');
    } finally {
      await tracing.shutdown();
      await receiver.close();
    }
    const span = receiver.spans.find((s) => s.attributes['cloudevents.event_id'] === 'e1');
    assert.equal(span?.name, `deliver ${topic}`);
    assert.equal(span?.attributes['gw.delivery.recipients'], 0);
    assert.equal(span?.parentSpanId, 'b7ad6b7169203331');
  });

  it('keeps the warm-up unread, and a resume after it reads what it needs', async () => {
    const bus = new MemoryBus();
    const first = await bus.publish(topic, {
      value: JSON.stringify(cloudEvent('tick', 0)),
      headers: streamEventHeaders(cloudEvent('tick', 0) as never),
    });
    for (let n = 1; n < 5; n++) {
      const event = cloudEvent(n % 2 ? 'tick' : 'other', n);
      await bus.publish(topic, { value: JSON.stringify(event), headers: streamEventHeaders(event as never) });
    }
    const f = await start({ bus, warmUp: true });
    assert.equal(f.ring.size, 5);
    for (let s = 0; s < 5; s++) assert.ok(f.ring.get(s) instanceof UnreadEvent);
    const conn = new RecordingConnection();
    f.hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: first });
    await waitFor(() => conn.numbers().length === 2);
    assert.deepEqual(conn.numbers(), [1, 3]);
    assert.equal(await f.outcome('skipped'), 0, 'the warm-up is not live');
  });
});
