/**
 * The fan-out stream's epoch on the buses other than Kafka (stream-epoch.test.ts): a Redis stream
 * deleted and made anew (as a Redis restarted without persistence loses it), a NATS JetStream
 * stream and a Kinesis stream deleted and created again start their ids (Redis: times; NATS:
 * sequences; Kinesis: shard ids and sequence numbers) over, and a position of the old stream read
 * as one of the new one made the broker replay the new stream's events after it as if they
 * followed. A client resuming from it is told `gw.resync_required` with
 * `reason: "epoch-changed"` by a replica reading the new stream, and is replayed nothing.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Bus } from '@gatehouse/bus';
import { KinesisBus, NatsBus, RedisBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { dependencyAddress, openSse, type SseConnection, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const wanted = subs([{ eventType: 'e' }]);
const seen = (s: SseConnection) => s.events('e').map((e) => (e['data'] as { n: number }).n);

const targets: Array<{ name: string; connect: () => Promise<Bus> }> = [
  { name: 'redis', connect: () => RedisBus.connect({ url: dependencyAddress.redisUrl }) },
  {
    name: 'nats',
    connect: () => NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'stream-epoch-test' }),
  },
  {
    name: 'kinesis',
    connect: async () => new KinesisBus({ endpoint: dependencyAddress.kinesisEndpoint, pollIntervalMs: 50 }),
  },
];

for (const target of targets) {
  describe(`a ${target.name} fan-out stream deleted and made anew`, () => {
    const topic = uniqueName('stream-epoch');
    const buses: Bus[] = [];
    let hub: HubFixture | undefined;
    let sse: SseConnection | undefined;
    let n = 0;

    const bus = async () => {
      const made = await target.connect();
      buses.push(made);
      return made;
    };
    const publish = async (producer: Bus, count: number) => {
      const positions: string[] = [];
      for (let i = 0; i < count; i++) {
        const event = {
          specversion: '1.0',
          id: `${topic}-${n}`,
          source: 'epoch',
          type: 'e',
          data: { n: n++ },
        };
        // A bus without headers (Kinesis) carries the event as its body alone, as the publisher does.
        const headers = producer.capabilities.headers ? streamEventHeaders(event) : undefined;
        positions.push(await producer.publish(topic, { value: JSON.stringify(event), headers }));
      }
      return positions;
    };

    after(async () => {
      sse?.close();
      await hub?.stop();
      await buses[0]?.deleteTopic?.(topic).catch(() => {});
      for (const b of buses) await b.close();
    });

    it('tells a client resuming from the old stream to resync, epoch-changed, and replays nothing', async () => {
      const producer = await bus();
      const old = await publish(producer, 3);
      await producer.deleteTopic!(topic);
      // More than the old stream had: its last position's place is one the new stream has passed.
      const now = await publish(producer, 6);
      assert.notEqual(producer.positionEpoch!(now[0]!), producer.positionEpoch!(old[2]!), 'another epoch');
      hub = await startHubFixture(
        { FANOUT_TOPIC: topic, EVENT_BUFFER_SIZE: '4', EVENT_BUFFER_WARMUP: 'false' },
        undefined,
        { fanoutBus: await bus() },
      );
      sse = await openSse(`${hub.url}/_gw/v1/connection/sse?subscriptions=${wanted}`, {
        'last-event-id': old[2]!,
      });
      await waitFor(() => sse!.events('gw.resync_required').length === 1, { what: 'the resync' });
      const data = sse.events('gw.resync_required')[0]!['data'] as Record<string, unknown>;
      assert.equal(data['reason'], 'epoch-changed');
      await publish(producer, 1);
      await waitFor(() => seen(sse!).length === 1, { what: 'the live event after the resync' });
      assert.deepEqual(seen(sse), [n - 1], 'none of the new stream replayed as if it followed');
    });
  });
}
