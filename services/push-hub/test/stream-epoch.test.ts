/**
 * Stream positions carry the epoch of the fan-out topic (Kafka: its topic id), so a client never
 * resumes silently across a hole: after the topic was deleted and created anew, a position of the
 * old topic names an offset the new one has too, and before epochs a replica replayed the new
 * topic's events after it as if they followed. Now the client is told `gw.resync_required` with
 * `reason: "epoch-changed"` on SSE, WebSocket and long-polling, by a replica that started after the
 * topic was made anew (two replicas: the client's position comes from the other). A position the
 * broker's retention has passed gets `reason: "retention-gap"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { MemoryStore } from '@gatehouse/store';
import {
  dependencyAddress,
  LongPollClient,
  openSse,
  openWs,
  type SseConnection,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { Kafka, logLevel } from 'kafkajs';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const topic = uniqueName('stream-epoch');
const wanted = subs([{ eventType: 'e' }]);
const env = {
  EVENT_BUFFER_SIZE: '4',
  FANOUT_TOPIC: topic,
  LONGPOLL_TIMEOUT: '2s',
  EVENT_BUFFER_WARMUP: 'false',
};
const resyncOf = (events: Array<Record<string, unknown>>) =>
  events.find((e) => e['type'] === 'gw.resync_required')?.['data'] as { reason: string } | undefined;
const numbers = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e['type'] === 'e').map((e) => (e['data'] as { n: number }).n);

describe('a fan-out topic deleted and created anew, with two replicas', () => {
  const shared = { bus: new MemoryBus(), store: new MemoryStore() };
  const buses: KafkaBus[] = [];
  const sse: SseConnection[] = [];
  let first: HubFixture;
  let second: HubFixture | undefined;
  let producer: KafkaBus;
  let n = 0;

  const kafka = () => {
    // The first replica reads across the change: it asks for the topic's id often.
    const bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: topic, epochCheckMs: 200 });
    buses.push(bus);
    return bus;
  };
  const publish = async (count: number) => {
    const positions: string[] = [];
    for (let i = 0; i < count; i++) {
      const event = { specversion: '1.0', id: `${topic}-${n}`, source: 'epoch', type: 'e', data: { n: n++ } };
      positions.push(
        await producer.publish(topic, { value: JSON.stringify(event), headers: streamEventHeaders(event) }),
      );
    }
    return positions;
  };
  const watch = async (f: HubFixture) => {
    const s = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`);
    sse.push(s);
    return s;
  };
  const seen = (s: SseConnection) => s.events('e').map((e) => (e['data'] as { n: number }).n);

  before(async () => {
    producer = kafka();
    await producer.ensureTopic(topic, 1);
    // A ring that holds both topics' events: what the first replica read of the new topic before it
    // knew the new epoch, and reads again from its start, is dropped by its CloudEvent id.
    first = await startHubFixture({ ...env, EVENT_BUFFER_SIZE: '100', REPLICA_ID: 'replica-1' }, shared, {
      fanoutBus: kafka(),
    });
  });
  after(async () => {
    for (const s of sse) s.close();
    await second?.stop();
    await first?.stop();
    await producer?.deleteTopic(topic);
    for (const bus of buses) await bus.close();
  });

  let firstOfOld: string;
  let lastOfOld: string;
  let recreated: string[];

  it('gives positions with the topic epoch, and another epoch once the topic is made anew', async () => {
    const watcher = await watch(first);
    const old = await publish(3);
    await waitFor(() => seen(watcher).length === 3, { what: 'the first replica reading the old topic' });
    lastOfOld = watcher.frames.filter((fr) => fr.event === 'e').at(-1)!.id!;
    firstOfOld = old[0]!;
    assert.equal(lastOfOld, old[2]);

    await producer.deleteTopic(topic);
    await producer.ensureTopic(topic, 1);
    // More than the old position's offset: without epochs, the broker replays from offset 3.
    recreated = await publish(8);
    second = await startHubFixture({ ...env, REPLICA_ID: 'replica-2' }, shared, { fanoutBus: kafka() });
    const live = await watch(second);
    await publish(1);
    await waitFor(() => seen(live).length === 1, { what: 'the second replica reading the new topic' });
    assert.match(lastOfOld, /^0-2\.[0-9a-f]{8}$/, 'partition, offset and epoch');
    assert.match(recreated[2]!, /^0-2\.[0-9a-f]{8}$/);
    assert.notEqual(recreated[2], lastOfOld, 'the same offset in another epoch');
  });

  it('tells an SSE client resuming from the old topic to resync, epoch-changed, and replays nothing', async () => {
    const resumed = await openSse(`${second!.url}/_gw/v1/connection/sse?subscriptions=${wanted}`, {
      'last-event-id': lastOfOld,
    });
    sse.push(resumed);
    await waitFor(() => resumed.events('gw.resync_required').length === 1, { what: 'the resync' });
    assert.equal(
      (resumed.events('gw.resync_required')[0]!['data'] as { reason: string }).reason,
      'epoch-changed',
    );
    await publish(1);
    await waitFor(() => seen(resumed).length === 1, { what: 'live events after the resync' });
    assert.deepEqual(
      seen(resumed),
      [n - 1],
      'the live event only: none of the new topic replayed as if it followed',
    );
  });

  it('tells a WebSocket client the same', async () => {
    const ws = openWs(
      `${second!.wsUrl}/_gw/v1/connection/ws?positions=true&subscriptions=${wanted}&lastEventId=${lastOfOld}`,
    );
    try {
      await waitFor(() => resyncOf(ws.events) !== undefined, { what: 'the resync' });
      assert.equal(resyncOf(ws.events)!.reason, 'epoch-changed');
      assert.deepEqual(numbers(ws.events), []);
    } finally {
      ws.ws.close();
    }
  });

  it('tells a long poll resuming from the old topic the same', async () => {
    const client = new LongPollClient(second!.url);
    const made = await client.get(`?subscriptions=${wanted}&lastEventId=${encodeURIComponent(lastOfOld)}`);
    assert.equal(made.body, 'ok');
    const events = [...(await client.poll())];
    assert.equal(resyncOf(events)?.reason, 'epoch-changed');
    assert.deepEqual(numbers(events), []);
  });

  it('has the first replica read the topic made anew from its start, in its new epoch', async () => {
    // Its consumer got no error (its offset lay within the new topic): it learns of the new topic
    // from the topic id it asks for, then reads it from its start. What it had read of the new topic
    // before comes again, and is dropped by its CloudEvent id while the ring holds it: every event once.
    const watcher = sse[0]!;
    const all = Array.from({ length: n }, (_, i) => i);
    await waitFor(() => all.every((i) => seen(watcher).includes(i)), {
      what: 'every event of both topics at a client of the first replica',
      timeoutMs: 30_000,
    });
    assert.equal(seen(watcher).length, new Set(seen(watcher)).size, 'none twice');
    await publish(1);
    await waitFor(() => seen(watcher).includes(n - 1), { what: 'one more event' });
    const newest = watcher.frames.filter((fr) => fr.event === 'e').at(-1)!.id!;
    assert.equal(newest.split('.')[1], recreated[0]!.split('.')[1], 'in the new epoch');
  });

  it('tells the first replica too, which read across the change', async () => {
    // Its subscription rejoined the new topic (or it is told by the broker when it replays).
    const resumed = await openSse(`${first.url}/_gw/v1/connection/sse?subscriptions=${wanted}`, {
      'last-event-id': firstOfOld,
    });
    sse.push(resumed);
    await waitFor(() => resumed.events('gw.resync_required').length === 1, {
      what: 'the resync',
      timeoutMs: 20_000,
    });
    assert.equal(
      (resumed.events('gw.resync_required')[0]!['data'] as { reason: string }).reason,
      'epoch-changed',
    );
  });

  it('tells a client whose position the retention passed: retention-gap', async () => {
    const admin = new Kafka({ brokers: dependencyAddress.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '5' }] });
    } finally {
      await admin.disconnect();
    }
    // Offset 1 of the new topic: older than the ring (4 events), and the broker now starts at 5.
    const resumed = await openSse(`${second!.url}/_gw/v1/connection/sse?subscriptions=${wanted}`, {
      'last-event-id': recreated[1]!,
    });
    sse.push(resumed);
    await waitFor(() => resumed.events('gw.resync_required').length === 1, { what: 'the resync' });
    assert.equal(
      (resumed.events('gw.resync_required')[0]!['data'] as { reason: string }).reason,
      'retention-gap',
    );
  });
});
