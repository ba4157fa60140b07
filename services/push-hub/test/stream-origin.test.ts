/**
 * A connection made while the fan-out stream has never held an event (the cluster bench's fault 3,
 * bench/results/2026-11-29-vm-cluster-2.md): it starts at the stream's origin, the position before
 * its first record, so however many events come before its first poll (more than the ring holds),
 * the broker replays them all from there. Before, it started without a position, and a first poll
 * after the ring had turned over got `gw.resync_required` instead of the events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Bus, MemoryBus } from '@gatehouse/bus';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { MemoryStore } from '@gatehouse/store';
import { dependencyAddress, LongPollClient, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const ringSize = 5;
const published = 20;

/** Owed events from a poll's answers until every one came (or a resync said they never will). */
async function pollAll(client: LongPollClient): Promise<{ numbers: number[]; resyncs: number }> {
  const numbers: number[] = [];
  let resyncs = 0;
  for (let i = 0; i < 10 && numbers.length < published && resyncs === 0; i++) {
    for (const e of await client.poll()) {
      if (e['type'] === 'gw.resync_required') resyncs++;
      if (e['type'] === 'wanted') numbers.push((e['data'] as { n: number }).n);
    }
  }
  return { numbers, resyncs };
}

const all = Array.from({ length: published }, (_, i) => i);

function originSuite(
  name: string,
  fanout: () => Promise<{ bus: Bus; topic: string; close(): Promise<void> }>,
) {
  describe(`a long poll made on a ${name} fan-out stream that never held an event`, () => {
    let f: HubFixture;
    let stream: Awaited<ReturnType<typeof fanout>>;
    before(async () => {
      stream = await fanout();
      f = await startHubFixture(
        {
          EVENT_BUFFER_SIZE: String(ringSize),
          FANOUT_TOPIC: stream.topic,
          LONGPOLL_TIMEOUT: '2s',
          EVENT_BUFFER_WARMUP: 'false',
        },
        { bus: new MemoryBus(), store: new MemoryStore() },
        { fanoutBus: stream.bus },
      );
    });
    after(async () => {
      await f?.stop();
      await stream?.close();
    });

    it('gets every event published before its first poll, more than the ring holds, and no resync', async () => {
      const client = new LongPollClient(f.url);
      assert.equal((await client.get(`?subscriptions=${subs([{ eventType: 'wanted' }])}`)).body, 'ok');
      // A watcher that is live: once it has the last event, the hub has read them all.
      const watcher = await openSse(
        `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'wanted' }])}`,
      );
      try {
        for (const n of all) {
          const event = {
            specversion: '1.0',
            id: `${stream.topic}-${n}`,
            source: 'origin',
            type: 'wanted',
            data: { n },
          };
          await stream.bus.publish(stream.topic, {
            value: JSON.stringify(event),
            headers: streamEventHeaders(event),
          });
        }
        await waitFor(() => watcher.frames.filter((fr) => fr.event === 'wanted').length === published, {
          what: 'the hub reading every event',
          timeoutMs: 30_000,
        });
      } finally {
        watcher.close();
      }
      const { numbers, resyncs } = await pollAll(client);
      assert.equal(resyncs, 0, 'no resync');
      assert.deepEqual(numbers, all);
    });
  });
}

originSuite('memory bus', async () => {
  const bus = new MemoryBus();
  return { bus, topic: 'gw.events', close: () => bus.close() };
});

originSuite('Kafka', async () => {
  const topic = uniqueName('stream-origin');
  const bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: topic });
  await bus.ensureTopic(topic, 1);
  return {
    bus,
    topic,
    close: async () => {
      await bus.deleteTopic?.(topic);
      await bus.close();
    },
  };
});
