/**
 * StreamReplay on its own, over a memory bus whose replay subscriptions take a while to start (as a
 * Kafka consumer group join does) and hand over their messages one per millisecond or so: resumes
 * arriving meanwhile share the reader, at most `maxReaders` run at once, and every target gets
 * exactly the events after its position.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MemoryBus,
  type MessageHandler,
  type PositionUnavailableError,
  type SubscribeOptions,
  type Subscription,
} from '@gatehouse/bus';
import { sleep, waitFor } from '@gatehouse/testkit';
import { EventRing, type RingEvent } from '../../src/delivery/event-ring.ts';
import { readStreamEvent } from '../../src/delivery/stream-event.ts';
import { type ReplayTarget, StreamReplay } from '../../src/delivery/stream-replay.ts';

class SlowReplayBus extends MemoryBus {
  replays = 0;
  open = 0;
  mostOpen = 0;
  override async subscribe(topic: string, handler: MessageHandler, options: SubscribeOptions = {}) {
    if (options.from === undefined) return super.subscribe(topic, handler, options);
    this.replays++;
    await sleep(50);
    const slow = async (m: Parameters<MessageHandler>[0]) => {
      await sleep(1);
      await handler(m);
    };
    const sub = await super.subscribe(topic, slow, options);
    this.mostOpen = Math.max(this.mostOpen, ++this.open);
    return {
      close: async () => {
        this.open--;
        await sub.close();
      },
    } satisfies Subscription;
  }
}

interface Outcome {
  events: string[];
  handedOver?: { at: string; rest: string[]; beyondRing: boolean };
  unavailable?: PositionUnavailableError;
}

function target(from: string): ReplayTarget & { outcome: Outcome } {
  const outcome: Outcome = { events: [] };
  return {
    from,
    wanted: true,
    outcome,
    event: (e) => void outcome.events.push(e.position),
    caughtUp: (at, rest, beyondRing) => {
      outcome.handedOver = { at, rest: rest.map((e) => e.position), beyondRing };
    },
    unavailable: (err) => {
      outcome.unavailable = err;
    },
    failed: (err) => assert.fail(err),
  };
}

async function setUp(ringCapacity: number, published: number, maxReaders: number, bus = new SlowReplayBus()) {
  const ring = new EventRing(ringCapacity);
  const positions: string[] = [];
  for (let i = 0; i < published; i++)
    positions.push(await bus.publish('events', { value: JSON.stringify({ type: 't', n: i }) }));
  // The live subscription, as the hub has it: every event in the ring.
  for (const p of positions) ring.push(readStreamEvent(p, '{"type":"t"}') as RingEvent);
  const live = await bus.subscribe('events', (m) =>
    ring.push(readStreamEvent(m.position, '{"type":"t"}') as RingEvent),
  );
  const metrics = { readers: [] as number[], replayed: 0 };
  const replay = new StreamReplay({
    bus,
    topic: 'events',
    ring,
    liveAfter: () => live.liveAfter,
    maxReaders,
    metrics: {
      readersChanged: (n) => void metrics.readers.push(n),
      replayed: (n) => {
        metrics.replayed += n;
      },
    },
    onError: (err) => assert.fail(err),
  });
  return { bus, ring, positions, replay, metrics, live };
}

describe('stream replay', () => {
  it('never serves a resume of another epoch in a round of this one: the broker tells it so', async () => {
    const { bus, positions, replay } = await setUp(10, 100, 4);
    // Offset 50 of an earlier topic (another bus: another epoch) lies after offset 20 of this one,
    // but says nothing about it.
    const earlier = await new MemoryBus().publish('events', { value: 'of another incarnation' });
    const stale = target(`${positions[50]!.split('.')[0]}.${earlier.split('.')[1]}`);
    const current = target(positions[20]!);
    replay.request(current);
    replay.request(stale);
    await waitFor(() => current.outcome.handedOver !== undefined && stale.outcome.unavailable !== undefined, {
      what: 'the hand-over and the refusal',
    });
    assert.equal(stale.outcome.unavailable!.reason, 'epoch');
    assert.deepEqual(stale.outcome.events, [], 'nothing of this topic as if it followed');
    assert.deepEqual([...current.outcome.events, ...current.outcome.handedOver!.rest], positions.slice(21));
    await waitFor(() => bus.open === 0, { what: 'the reader to close' });
  });

  it('serves resumes arriving while a reader starts with that reader, each from its own position', async () => {
    const { bus, positions, replay } = await setUp(10, 100, 4);
    const targets = [20, 35, 50, 21, 70].map((i) => target(positions[i]!));
    for (const t of targets) replay.request(t);
    await waitFor(() => targets.every((t) => t.outcome.handedOver), { what: 'every hand-over' });
    assert.equal(bus.replays, 1, 'one broker subscription for all of them');
    for (const t of targets) {
      const after = positions.indexOf(t.from) + 1;
      const { events, handedOver } = t.outcome;
      // Replayed up to the ring (positions 90 …), which hands over the rest: together, all after `from`.
      assert.deepEqual([...events, ...handedOver!.rest], positions.slice(after), `from ${t.from}`);
      assert.equal(handedOver!.beyondRing, false);
    }
    await waitFor(() => bus.open === 0, { what: 'the reader to close' });
  });

  it('opens at most maxReaders subscriptions; a resume further back than a running reader waits for the next', async () => {
    const { bus, positions, replay, metrics } = await setUp(10, 400, 1);
    const early = target(positions[300]!);
    replay.request(early);
    await sleep(70); // the reader runs, past position 300
    const behind = [target(positions[5]!), target(positions[6]!)];
    for (const t of behind) replay.request(t);
    await waitFor(() => [early, ...behind].every((t) => t.outcome.handedOver), { what: 'every hand-over' });
    assert.equal(bus.mostOpen, 1, 'never two readers at once');
    assert.equal(bus.replays, 2, 'the two further back shared the second reader');
    for (const t of [early, ...behind]) {
      const after = positions.indexOf(t.from) + 1;
      assert.deepEqual([...t.outcome.events, ...t.outcome.handedOver!.rest], positions.slice(after));
    }
    await waitFor(() => metrics.readers.at(-1) === 0, { what: 'the readers gauge back at 0' });
    assert.equal(
      metrics.replayed,
      early.outcome.events.length + behind[0]!.outcome.events.length + behind[1]!.outcome.events.length,
    );
  });

  it('tells the targets at an expired position so, and serves the later ones', async () => {
    const { bus, positions, replay } = await setUp(10, 100, 2);
    bus.trim('events', positions[40]!);
    const expired = target(positions[10]!);
    const alsoExpired = target(positions[12]!);
    const held = target(positions[60]!);
    for (const t of [expired, alsoExpired, held]) replay.request(t);
    await waitFor(() => held.outcome.handedOver !== undefined, { what: 'the held one handed over' });
    assert.equal(expired.outcome.unavailable?.reason, 'expired');
    assert.equal(alsoExpired.outcome.unavailable?.reason, 'expired');
    assert.deepEqual([...held.outcome.events, ...held.outcome.handedOver!.rest], positions.slice(61));
  });

  it('tells a target at a position the bus cannot parse so at once, and opens no reader for it', async () => {
    const { bus, positions, replay } = await setUp(10, 100, 2);
    const malformed = target('not-a-position');
    const held = target(positions[60]!);
    for (const t of [malformed, held]) replay.request(t);
    assert.equal(malformed.outcome.unavailable?.reason, 'unknown', 'told before any reader starts');
    await waitFor(() => held.outcome.handedOver !== undefined, { what: 'the well-formed one handed over' });
    assert.equal(bus.replays, 1, 'one reader, for the well-formed position');
    assert.deepEqual(malformed.outcome.events, []);
  });

  it('hands over at once where the ring already covers the position, beyond the newest event included', async () => {
    const { positions, replay, live } = await setUp(200, 100, 1);
    const last = target(positions.at(-1)!);
    replay.request(last);
    await waitFor(() => last.outcome.handedOver !== undefined);
    assert.deepEqual(last.outcome.handedOver, { at: positions.at(-1), rest: [], beyondRing: false });
    assert.equal(live.liveAfter, positions.at(-1));
  });
});
