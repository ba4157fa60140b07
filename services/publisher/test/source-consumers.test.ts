import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Bus, type Message, MemoryBus, RedisBus } from '@gatehouse/bus/all';
import { createLogger, createRegistry } from '@gatehouse/service-kit';
import { sleep, waitFor } from '@gatehouse/testkit';
import { createFanoutProducer } from '../src/fanout-producer.ts';
import { PublisherMetrics } from '../src/publisher-metrics.ts';
import { type SourceSpec, startSourceConsumers } from '../src/source-consumers.ts';

const logger = createLogger({ name: 'source-consumers-test', level: 'silent' });

/** One publisher replica's source consumers, putting events on `fanout`. */
function consumers(source: SourceSpec, fanout: Bus) {
  const metrics = new PublisherMetrics(createRegistry());
  return startSourceConsumers([source], {
    producer: createFanoutProducer(fanout, 'gw.events', metrics),
    metrics,
    logger,
    wrappedType: undefined,
    maxJsonDepth: 128,
  });
}

/**
 * Source consumers on the topic `orders` of a memory bus, putting events on another; `use` gets
 * the source, the fan-out messages so far and the metrics text; everything is closed after it.
 */
async function onOrders(
  use: (t: { source: MemoryBus; fanned: Message[]; metrics: () => Promise<string> }) => Promise<void>,
) {
  const source = new MemoryBus();
  const fanout = new MemoryBus();
  const registry = createRegistry();
  const metrics = new PublisherMetrics(registry);
  const fanned: Message[] = [];
  const watch = await fanout.subscribe('gw.events', (m) => void fanned.push(m));
  const running = await startSourceConsumers([{ bus: source, topics: ['orders'], group: 'publishers' }], {
    producer: createFanoutProducer(fanout, 'gw.events', metrics),
    metrics,
    logger,
    wrappedType: undefined,
    maxJsonDepth: 128,
  });
  try {
    await use({ source, fanned, metrics: () => registry.metrics() });
  } finally {
    await running.close();
    await watch.close();
    await fanout.close();
    await source.close();
  }
}

describe('source consumers', () => {
  it('drop a CloudEvent whose type holds CR/LF and count it as malformed', () =>
    onOrders(async ({ source, fanned, metrics }) => {
      const forged = { specversion: '1.0', id: 'f', source: '/s', type: 'a\r\nevent: admin\r\ndata: {}' };
      await source.publish('orders', { value: JSON.stringify(forged) });
      await source.publish('orders', { value: JSON.stringify({ ...forged, id: 'ok', type: 'a' }) });
      await waitFor(() => fanned.length === 1, { what: 'the valid event' });
      assert.equal(JSON.parse(fanned[0]!.value.toString()).id, 'ok');
      assert.match(
        await metrics(),
        /gw_consumed_events_failed_total\{source="memory",topic="orders",reason="malformed"\} 1/,
      );
    }));

  it("drop events of the gateway's own namespace (gw.… types, source gatehouse), count them as reserved, and go on", () =>
    onOrders(async ({ source, fanned, metrics }) => {
      const forged = [
        { type: 'gw.session_killed', source: 'gatehouse' },
        { type: 'gw.connection.create', source: '/s', data: { connection_token: 'forged' } },
        { type: 'GW.Subscriptions_Set', source: '/s' },
        { type: 'order.created', source: 'Gatehouse' },
      ];
      for (const [i, f] of forged.entries())
        await source.publish('orders', { value: JSON.stringify({ specversion: '1.0', id: `f${i}`, ...f }) });
      await source.publish('orders', { value: '{"order":1}' });
      await waitFor(() => fanned.length === 1, { what: 'the message after the forged ones' });
      assert.deepEqual(JSON.parse(fanned[0]!.value.toString()).data, { order: 1 });
      assert.match(
        await metrics(),
        /gw_consumed_events_failed_total\{source="memory",topic="orders",reason="reserved"\} 4/,
      );
    }));

  it('drop a message nested deeper than MAX_JSON_DEPTH, count it as malformed, and go on with the next', () =>
    onOrders(async ({ source, fanned, metrics }) => {
      // Deeper than JSON.stringify goes (about 4,400 levels): the fan-out producer could not write it.
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      await source.publish('orders', { value: deep });
      await source.publish('orders', {
        value: `{"specversion":"1.0","id":"d","source":"/s","type":"a","data":${deep}}`,
      });
      await source.publish('orders', { value: '{"order":1}' });
      await waitFor(() => fanned.length === 1, { what: 'the message after the deep ones' });
      assert.deepEqual(JSON.parse(fanned[0]!.value.toString()).data, { order: 1 });
      assert.match(
        await metrics(),
        /gw_consumed_events_failed_total\{source="memory",topic="orders",reason="malformed"\} 2/,
      );
    }));

  it('leave a message whose event the fan-out stream never took to another replica when they stop', async () => {
    const source = new MemoryBus();
    const spec: SourceSpec = { bus: source, topics: ['orders'], group: 'publishers' };
    // A fan-out stream that is down: a Redis nobody listens on, which rejects every publish at once.
    const down = new RedisBus({ url: 'redis://127.0.0.1:1' });
    const up = new MemoryBus();
    const fanned: Message[] = [];
    const watch = await up.subscribe('gw.events', (m) => void fanned.push(m));
    try {
      const first = await consumers(spec, down);
      const position = await source.publish('orders', { value: '{"order":1}' });
      await sleep(500); // a few retries against the stream that is down
      const started = Date.now();
      await first.close();
      assert.ok(Date.now() - started < 2000, `stopped promptly (${Date.now() - started} ms)`);

      const second = await consumers(spec, up);
      await waitFor(() => fanned.length === 1, { what: 'the event from the replica that took over' });
      const event = JSON.parse(fanned[0]!.value.toString()) as Record<string, unknown>;
      assert.deepEqual(event['data'], { order: 1 });
      assert.equal(event['id'], position, 'the id is the source position, the same on every delivery');
      await source.publish('orders', { value: '{"order":2}' });
      await waitFor(() => fanned.length === 2, { what: 'the next event' });
      await sleep(200);
      assert.equal(fanned.length, 2, 'nothing twice');
      await second.close();
    } finally {
      await watch.close();
      await down.close();
      await up.close();
      await source.close();
    }
  });

  it('finish a message whose event the stream takes, and stop taking in new ones', async () => {
    const source = new MemoryBus();
    const spec: SourceSpec = { bus: source, topics: ['orders'], group: 'publishers' };
    const fanout = new MemoryBus();
    const fanned: Message[] = [];
    const watch = await fanout.subscribe('gw.events', (m) => void fanned.push(m));
    try {
      const running = await consumers(spec, fanout);
      await source.publish('orders', { value: '{"order":1}' });
      await waitFor(() => fanned.length === 1, { what: 'the first event' });
      await running.close();
      await source.publish('orders', { value: '{"order":2}' });
      await sleep(300);
      assert.equal(fanned.length, 1, 'a stopped replica takes nothing in');
      const next = await consumers(spec, fanout);
      await waitFor(() => fanned.length === 2, { what: 'the message published meanwhile' });
      await next.close();
    } finally {
      await watch.close();
      await fanout.close();
      await source.close();
    }
  });
});
