/**
 * The batching producer of lifecycle events: a full batch goes out at once, one batch at a time;
 * a stop produces what is buffered, and what the bus did not take by the deadline is dropped and
 * counted, never waited for beyond it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBus, type OutgoingMessage, type Position } from '@gatehouse/bus';
import { createEvent } from '@gatehouse/cloudevents';
import { createLogger, createRegistry } from '@gatehouse/service-kit';
import { waitFor } from '@gatehouse/testkit';
import { LifecycleMetrics, LifecycleProducer } from '../../src/lifecycle/index.ts';

/** A bus whose publishes wait until the test lets them through (or refuses them). */
class HeldBus extends MemoryBus {
  readonly waiting: Array<{ message: OutgoingMessage; settle: (ok: boolean) => void }> = [];

  override publish(_topic: string, message: OutgoingMessage): Promise<Position> {
    return new Promise((resolve, reject) => {
      this.waiting.push({
        message,
        settle: (ok) => (ok ? resolve('0') : reject(new Error('broker unreachable'))),
      });
    });
  }

  settleAll(ok: boolean): void {
    for (const w of this.waiting.splice(0)) w.settle(ok);
  }
}

function producer(bus: MemoryBus, options: Partial<{ batchSize: number; flushIntervalMs: number }> = {}) {
  const registry = createRegistry();
  const p = new LifecycleProducer({
    bus,
    topic: 'lifecycle',
    batchSize: options.batchSize ?? 2,
    flushIntervalMs: options.flushIntervalMs ?? 60_000,
    maxBuffer: 100,
    maxBufferBytes: 1024 * 1024,
    metrics: new LifecycleMetrics(registry),
    logger: createLogger({ name: 'test', level: 'silent' }),
    retryBaseMs: 10,
    retryMaxMs: 20,
  });
  const metric = async (name: string) => {
    const text = await registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  return { p, registry, metric };
}

const event = (n: number) => createEvent({ specversion: '1.0', type: 'gw.test', source: '/t', data: { n } });

describe('LifecycleProducer', () => {
  it('sends a full batch at once, one batch at a time, in order', async () => {
    const bus = new HeldBus();
    const { p, metric } = producer(bus, { batchSize: 2 });
    for (let n = 0; n < 5; n++) p.emit(event(n));
    await waitFor(() => bus.waiting.length === 2, { what: 'the first batch in flight' });
    const firstBatch = bus.waiting.map((w) => JSON.parse(w.message.value.toString()).data.n);
    assert.deepEqual(firstBatch, [0, 1]);
    bus.settleAll(true);
    await waitFor(() => bus.waiting.length === 2, { what: 'the second batch' });
    assert.deepEqual(
      bus.waiting.map((w) => JSON.parse(w.message.value.toString()).data.n),
      [2, 3],
    );
    bus.settleAll(true);
    // The fifth waits for its batch to fill or the flush interval (a minute here).
    await waitFor(() => p.buffered === 1, { what: 'the second batch taken' });
    assert.equal(bus.waiting.length, 0);
    const closing = p.close(Date.now() + 10_000);
    await waitFor(() => bus.waiting.length === 1, { what: 'the close sends the fifth' });
    bus.settleAll(true);
    await closing;
    assert.equal(await metric('gw_lifecycle_events_produced_total'), 5);
    assert.equal(await metric('gw_lifecycle_events_dropped_total{reason="shutdown"}'), 0);
  });

  it('flushes what is buffered at close, and drops and counts what the bus has not taken by the deadline', async () => {
    const bus = new HeldBus();
    const { p, metric } = producer(bus, { batchSize: 10 });
    for (let n = 0; n < 3; n++) p.emit(event(n));
    const closing = p.close(Date.now() + 300);
    await waitFor(() => bus.waiting.length === 3, { what: 'the close sends the batch' });
    bus.settleAll(false);
    // Refused, then not answered at all: retried, then given up at the deadline, not waited for.
    await closing;
    assert.equal(await metric('gw_lifecycle_events_dropped_total{reason="shutdown"}'), 3);
    assert.equal(await metric('gw_lifecycle_events_buffered'), 0);
    p.emit(event(9));
    assert.equal(
      await metric('gw_lifecycle_events_dropped_total{reason="shutdown"}'),
      4,
      'emits after close',
    );
  });
});
