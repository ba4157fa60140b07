/**
 * The hub's hand-over from a broker replay to live delivery when this replica is behind the client:
 * the client saw positions (on a replica ahead) that this replica's live consumer has not
 * dispatched yet. The test drives the live consumer by hand (`hub.dispatch`) to hold it back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { createRegistry } from '@gatehouse/service-kit';
import { sleep, waitFor } from '@gatehouse/testkit';
import { EventRing } from '../../src/delivery/event-ring.ts';
import { Hub } from '../../src/delivery/hub.ts';
import { HubMetrics } from '../../src/metrics/hub-metrics.ts';
import { StreamReplay } from '../../src/delivery/stream-replay.ts';
import { RecordingConnection } from '../recording-connection.ts';

const json = (n: number) =>
  JSON.stringify({ specversion: '1.0', id: `e${n}`, source: 't', type: 'tick', data: { n } });

async function laggingHub(published: number, dispatched: number, aheadGraceMs = 5000) {
  const bus = new MemoryBus();
  const positions: string[] = [];
  for (let n = 0; n < published; n++) positions.push(await bus.publish('events', { value: json(n) }));
  const ring = new EventRing(20);
  const metrics = new HubMetrics(createRegistry());
  const replay = new StreamReplay({
    bus,
    topic: 'events',
    ring,
    liveAfter: () => undefined,
    maxReaders: 1,
    metrics,
    onError: (err) => assert.fail(err),
  });
  const hub = new Hub({ extractors: new Map(), ring, replay, metrics, aheadGraceMs });
  // The live consumer, held back: it has dispatched only the first `dispatched` events.
  for (let n = 0; n < dispatched; n++) hub.dispatch(positions[n]!, json(n));
  return { bus, hub, positions };
}

describe('hub resume on a replica behind the client', () => {
  it('replays up to the client position, then drops live events it already had', async () => {
    const { hub, positions } = await laggingHub(100, 60);
    const conn = new RecordingConnection();
    hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: positions[80] });
    await waitFor(() => conn.sent.some((e) => e.type === 'gw.subscriptions_set'));
    await sleep(100); // the replay is handed over: position 80 is past this replica's newest (59)
    for (let n = 60; n < 100; n++) hub.dispatch(positions[n]!, json(n)); // the live consumer catches up
    await waitFor(() => conn.numbers().length === 19, {
      what: `the events after 80 (have ${conn.numbers()})`,
    });
    assert.deepEqual(
      conn.numbers(),
      Array.from({ length: 19 }, (_, i) => 81 + i),
    );
    assert.equal(conn.sent.filter((e) => e.type === 'gw.resync_required').length, 0);
  });

  it('tells a client to resync when its position never comes', async () => {
    const { hub, positions } = await laggingHub(100, 60, 200);
    const early = new RecordingConnection();
    const ahead = new RecordingConnection();
    // The reader starts at the older position; the other joins it unchecked.
    hub.add(early, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: positions[10] });
    hub.add(ahead, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: '5000' });
    await waitFor(() => ahead.sent.some((e) => e.type === 'gw.resync_required'), {
      timeoutMs: 2000,
      what: 'the resync after the grace',
    });
    assert.equal(early.sent.filter((e) => e.type === 'gw.resync_required').length, 0);
    assert.deepEqual(
      early.numbers(),
      Array.from({ length: 49 }, (_, i) => 11 + i),
      'the one behind got its events up to this replica’s newest',
    );
    hub.dispatch(positions[60]!, json(60));
    assert.deepEqual(ahead.numbers(), [60], 'after the resync, live events');
  });
});
