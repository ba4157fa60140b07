import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RedisClient } from '@gatehouse/store';
import { closeConnection, openRedisConnection, whenReady } from '@gatehouse/store/redis';
import { dependency, redisDeployments, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { type Message, PositionUnavailableError, RedisBus } from '../src/all.ts';
import { busContract } from './bus-contract.ts';

for (const { name, url, cluster, dependency: server } of redisDeployments) {
  /** A plain client on the same deployment, for what the test does behind the bus's back. */
  const rawClient = async (): Promise<RedisClient> => {
    const client = openRedisConnection({ url, cluster }, 'bus-test');
    await whenReady(client, 10_000);
    return client;
  };

  /** XTRIM MINID keeps the entries at or after the id just past `position`. */
  const trimThrough = async (topic: string, position: string): Promise<void> => {
    const redis = await rawClient();
    try {
      const [ms, seq] = position.split('.')[0]!.split('-');
      await redis.xtrim(topic, 'MINID', `${ms}-${BigInt(seq!) + 1n}`);
    } finally {
      await closeConnection(redis);
    }
  };

  busContract({
    name,
    createBus: () => RedisBus.connect({ url, cluster }),
    newTopic: async () => uniqueName('bus-test'),
    stopServer: () => dependency('down', server),
    startServer: () => dependency('up', server),
    expireThrough: trimThrough,
    beyond: (position) => `${BigInt(position.split('-')[0]!) + 3_600_000n}-0.${position.split('.')[1]}`,
    reportsLiveAfter: true,
    // Behind the bus's back, as an operator's DEL or a Redis restarted without persistence loses it.
    deleteTopic: async (topic) => {
      const redis = await rawClient();
      try {
        await redis.del(topic);
      } finally {
        await closeConnection(redis);
      }
    },
    followsRecreation: true,
  });

  describe(`${name} bus`, () => {
    let bus: RedisBus;
    let redis: RedisClient;

    before(async () => {
      bus = await RedisBus.connect({ url, cluster, claimIdleMs: 400, retention: 50 });
      redis = await rawClient();
    });
    after(async () => {
      await bus.close();
      await closeConnection(redis);
    });

    it('carries binary values unchanged', async () => {
      const topic = uniqueName('binary');
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m));
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await bus.publish(topic, { value: bytes, headers: { 'content-type': 'application/octet-stream' } });
      await waitFor(() => got.length === 1, { what: 'the binary message' });
      assert.deepEqual(got[0]!.value, bytes);
      assert.equal(got[0]!.key, undefined);
      assert.deepEqual(got[0]!.headers, { 'content-type': 'application/octet-stream' });
      await sub.close();
    });

    it('takes over what a dead group member left pending', async () => {
      const topic = uniqueName('claim');
      const group = uniqueName('group');
      const probe = await bus.subscribe(topic, () => {}, { group });
      await probe.close();
      for (let i = 0; i < 5; i++) await bus.publish(topic, { value: `m${i}` });
      // A replica reads three entries and dies before acknowledging them.
      await redis.xreadgroup('GROUP', group, 'dead-replica', 'COUNT', 3, 'STREAMS', topic, '>');
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { group });
      await waitFor(() => got.length === 5, { what: `5 messages (have ${got.length})` });
      await sleep(1000);
      assert.deepEqual(got.map((m) => m.value.toString()).sort(), ['m0', 'm1', 'm2', 'm3', 'm4']);
      const [info] = (await redis.xinfo('GROUPS', topic)) as unknown[][];
      assert.equal(info![info!.indexOf('pending') + 1], 0, 'everything acknowledged');
      await sub.close();
    });

    it('sets a group up again when its stream was deleted', async () => {
      const topic = uniqueName('deleted');
      const got: Message[] = [];
      const errors: Error[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), {
        group: uniqueName('group'),
        onError: (err) => void errors.push(err),
      });
      await bus.publish(topic, { value: 'before' });
      await waitFor(() => got.length === 1, { what: 'the first message' });
      await redis.del(topic);
      await sleep(500);
      await bus.publish(topic, { value: 'after' });
      await waitFor(() => got.length === 2, {
        what: `the message after the delete (errors: ${errors.join('; ')})`,
      });
      assert.equal(got[1]!.value.toString(), 'after');
      await sub.close();
    });

    it('forgets a group member that closes with nothing pending', async () => {
      const topic = uniqueName('consumers');
      const group = uniqueName('group');
      const sub = await bus.subscribe(topic, () => {}, { group });
      await bus.publish(topic, { value: 'x' });
      const consumers = async () => (await redis.xinfo('CONSUMERS', topic, group)) as unknown[];
      await waitFor(async () => (await consumers()).length === 1, {
        what: 'the member to be listed',
      });
      await sub.close();
      assert.deepEqual(await consumers(), []);
    });

    it('closes a subscription without waiting for its blocking read', async () => {
      // Reads that block for 20 s (the group's too: its claim round is every 30 s), far above a
      // close's time: a close that waits for them is told apart on a loaded machine.
      const blocking = await RedisBus.connect({ url, cluster, blockMs: 20_000, claimIdleMs: 60_000 });
      try {
        const topic = uniqueName('close');
        const broadcast = await blocking.subscribe(topic, () => {});
        const grouped = await blocking.subscribe(topic, () => {}, { group: uniqueName('group') });
        await sleep(100);
        const started = Date.now();
        await Promise.all([broadcast.close(), grouped.close()]);
        assert.ok(Date.now() - started < 5000, `closed in ${Date.now() - started} ms`);
      } finally {
        await blocking.close();
      }
    });

    it('trims a stream to about its retention', async () => {
      const topic = uniqueName('retention');
      for (let i = 0; i < 1000; i++) await bus.publish(topic, { value: String(i) });
      const length = await redis.xlen(topic);
      assert.ok(length >= 50 && length < 300, `about 50 entries kept, have ${length}`);
    });

    it('rejects a position that is not a stream id', async () => {
      await assert.rejects(
        bus.subscribe(uniqueName('from'), () => {}, { from: '42; DROP' }),
        PositionUnavailableError,
      );
    });

    it('holds every position of a stream nothing was trimmed from, and refuses them once its entries are gone', async () => {
      const topic = uniqueName('untrimmed');
      const first = await bus.publish(topic, { value: 'one' });
      await bus.publish(topic, { value: 'two' });
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: '0-0' });
      await waitFor(() => got.length === 2, { what: 'both entries from the beginning' });
      await sub.close();
      await redis.xtrim(topic, 'MAXLEN', 0);
      await assert.rejects(
        bus.subscribe(topic, () => {}, { from: first }),
        /expired/,
      );
    });

    it('gives a stream made without an epoch one, and takes no hand-made group name for one', async () => {
      const plain = uniqueName('plain');
      await redis.xadd(plain, '*', 'v', 'by an older Gatehouse');
      const first = await bus.publish(plain, { value: 'now' });
      assert.match(first, /^\d+-\d+\.[0-9a-f]{8}$/, 'an epoch made at the first look');
      assert.equal(bus.positionEpoch(await bus.publish(plain, { value: 'again' })), bus.positionEpoch(first));
      const forged = uniqueName('forged');
      await redis.xgroup('CREATE', forged, 'gatehouse-epoch-<script>', '$', 'MKSTREAM');
      const position = await bus.publish(forged, { value: 'x' });
      assert.match(position, /^\d+-\d+$/, 'no epoch rather than a name that is none');
      await redis.del(plain);
      await redis.del(forged);
    });

    it('keeps the epoch of a stream trimmed to empty: the key, its last id and its epoch stay', async () => {
      const topic = uniqueName('emptied');
      const first = await bus.publish(topic, { value: 'one' });
      await redis.xtrim(topic, 'MAXLEN', 0);
      const next = await bus.publish(topic, { value: 'two' });
      assert.equal(bus.positionEpoch(next), bus.positionEpoch(first), 'the same incarnation');
      await assert.rejects(
        bus.subscribe(topic, () => {}, { from: first }),
        (err: unknown) => err instanceof PositionUnavailableError && err.reason === 'expired',
      );
    });

    it('rejects publish at once while redis is unreachable', async () => {
      // Command and ping time-outs of 10 s, far above a rejection's time: a command parked until
      // its time-out is told apart on a loaded machine.
      const offline = new RedisBus({
        url: 'redis://127.0.0.1:1',
        cluster,
        pingTimeoutMs: 10_000,
        redis: { commandTimeout: 10_000 },
      });
      try {
        const started = Date.now();
        await assert.rejects(offline.publish('t', { value: 'x' }));
        await assert.rejects(offline.ping());
        assert.ok(Date.now() - started < 5000, `rejected in ${Date.now() - started} ms`);
        await assert.rejects(
          RedisBus.connect({ url: 'redis://127.0.0.1:1', cluster, connectTimeoutMs: 300 }),
        );
      } finally {
        await offline.close();
      }
    });
  });
}
