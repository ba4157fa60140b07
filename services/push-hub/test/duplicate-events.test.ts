/**
 * A source message the publishers take in twice (at least once) reaches the fan-out stream twice,
 * with the same CloudEvent source and id. The hub delivers it once: live, when the ring holds the
 * first one, and in a broker replay, when the replay had the first one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { createRegistry } from '@gatehouse/service-kit';
import { waitFor } from '@gatehouse/testkit';
import { EventRing, type RingEvent } from '../src/delivery/event-ring.ts';
import { Hub } from '../src/delivery/hub.ts';
import { HubMetrics } from '../src/metrics/hub-metrics.ts';
import { readStreamEvent } from '../src/delivery/stream-event.ts';
import { StreamReplay } from '../src/delivery/stream-replay.ts';
import { RecordingConnection } from './recording-connection.ts';

const json = (id: string, source = 'orders') =>
  JSON.stringify({ specversion: '1.0', id, source, type: 'tick', data: {} });
const ringEvent = (position: string, id: string, source?: string) =>
  readStreamEvent(position, json(id, source)) as RingEvent;

function hubOn(bus: MemoryBus, ringCapacity: number) {
  const ring = new EventRing(ringCapacity);
  const registry = createRegistry();
  const metrics = new HubMetrics(registry);
  const replay = new StreamReplay({
    bus,
    topic: 'events',
    ring,
    liveAfter: () => undefined,
    maxReaders: 1,
    metrics,
    onError: (err) => assert.fail(err),
  });
  return { hub: new Hub({ extractors: new Map(), ring, replay, metrics }), registry };
}

describe('duplicate events', () => {
  it('the ring knows the events it holds by source and id, and forgets evicted ones', () => {
    const ring = new EventRing(3);
    ring.push(ringEvent('1', 'a'));
    assert.equal(ring.holdsSameEvent(ringEvent('9', 'a')), true, 'same source and id, other position');
    assert.equal(ring.holdsSameEvent(ringEvent('9', 'a', 'elsewhere')), false, 'another source');
    assert.equal(ring.holdsSameEvent(ringEvent('9', 'b')), false);
    for (const [p, id] of [
      ['2', 'b'],
      ['3', 'c'],
      ['4', 'd'],
    ] as const)
      ring.push(ringEvent(p, id));
    assert.equal(ring.holdsSameEvent(ringEvent('9', 'a')), false, 'evicted');
    assert.equal(ring.holdsSameEvent(ringEvent('9', 'd')), true);
  });

  it('a live duplicate within the ring reaches no connection', async () => {
    const bus = new MemoryBus();
    const { hub, registry } = hubOn(bus, 10);
    const conn = new RecordingConnection();
    hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't' });
    hub.dispatch('1', json('a'));
    hub.dispatch('2', json('b'));
    assert.equal(hub.dispatch('3', json('a')), undefined, 'the second a is dropped');
    hub.dispatch('4', json('a', 'another-source'));
    assert.deepEqual(conn.ids(), ['a', 'b', 'a']);
    assert.equal(hub.ring.has('3'), false, 'a resume never finds the duplicate either');
    assert.match(await registry.metrics(), /gw_events_dropped_total\{[^}]*reason="duplicate"[^}]*\} 1/);
  });

  it('a broker replay sends a duplicate it replayed the first one of to nobody', async () => {
    const bus = new MemoryBus();
    const positions: string[] = [];
    const ids = Array.from({ length: 40 }, (_, n) => `e${n}`);
    ids[25] = 'e15'; // taken in twice: the second copy ten events later
    for (const id of ids) positions.push(await bus.publish('events', { value: json(id) }));
    const { hub } = hubOn(bus, 5);
    for (const [n, id] of ids.entries()) hub.dispatch(positions[n]!, json(id));
    const conn = new RecordingConnection();
    // Position 5 is far older than the ring's 5 events: the replay comes from the bus.
    hub.add(conn, [{ eventType: 'tick', oneOf: [] }], { token: 't', resumeFrom: positions[5] });
    await waitFor(() => conn.ids().length >= 33, { what: `the events after 5 (have ${conn.ids()})` });
    const expected = ids.slice(6).filter((_, i) => i + 6 !== 25);
    assert.deepEqual(conn.ids(), expected);
  });
});
