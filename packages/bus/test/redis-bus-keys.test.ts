/**
 * The Redis bus's keys: every stream under the key prefix (STORE_KEY_PREFIX), a publish that may not
 * make a stream, topics made and deleted on purpose, and a per-publish length bound.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RedisClient } from '@gatehouse/store';
import { closeConnection, openRedisConnection, scanKeys, whenReady } from '@gatehouse/store/redis';
import { redisDeployments, uniqueName, waitFor } from '@gatehouse/testkit';
import { type Message, RedisBus, TopicMissingError } from '../src/all.ts';

for (const { name, url, cluster } of redisDeployments) {
  describe(`${name} bus keys`, () => {
    const keyPrefix = `${uniqueName('bus-keys')}:`;
    let bus: RedisBus;
    let redis: RedisClient;

    before(async () => {
      bus = await RedisBus.connect({ url, cluster, keyPrefix });
      redis = openRedisConnection({ url, cluster }, 'bus-keys-test');
      await whenReady(redis, 10_000);
    });
    after(async () => {
      await bus.close();
      await closeConnection(redis);
    });

    it('keeps every stream under the key prefix; messages name the topic without it', async () => {
      const topic = uniqueName('prefixed');
      const broadcast: Message[] = [];
      const grouped: Message[] = [];
      const before = new Set(await scanKeys(redis, '*'));
      const subs = [
        await bus.subscribe(topic, (m) => void broadcast.push(m)),
        await bus.subscribe(topic, (m) => void grouped.push(m), { group: 'g' }),
      ];
      const first = await bus.publish(topic, { value: 'one' });
      await bus.publish(topic, { value: 'two' });
      await waitFor(() => broadcast.length === 2 && grouped.length === 2, { what: 'both messages twice' });
      const replayed: Message[] = [];
      const tail: Message[] = [];
      subs.push(await bus.subscribe(topic, (m) => void replayed.push(m), { from: first }));
      subs.push(await bus.subscribe(topic, (m) => void tail.push(m), { last: 1 }));
      await waitFor(() => replayed.length === 1 && tail.length === 1, { what: 'replay and tail' });
      assert.deepEqual(
        [...broadcast, ...grouped, ...replayed, ...tail].map((m) => m.topic),
        Array(6).fill(topic),
      );
      for (const sub of subs) await sub.close();
      const added = (await scanKeys(redis, '*')).filter((k) => !before.has(k));
      assert.deepEqual(added, [keyPrefix + topic]);
    });

    it('refuses a publish that would make a stream, and makes none', async () => {
      const topic = uniqueName('missing');
      await assert.rejects(
        bus.publish(topic, { value: 'x' }, { onlyIfTopicExists: true }),
        (err: unknown) => err instanceof TopicMissingError && err.topic === topic,
      );
      assert.equal(await redis.exists(keyPrefix + topic), 0);
    });

    it('makes a topic empty, keeps an existing one, and deletes it', async () => {
      const topic = uniqueName('made');
      await bus.createTopic(topic);
      assert.equal(await redis.exists(keyPrefix + topic), 1);
      await bus.publish(topic, { value: 'a' }, { onlyIfTopicExists: true });
      await bus.publish(topic, { value: 'b' }, { onlyIfTopicExists: true });
      await bus.createTopic(topic);
      assert.equal(await redis.xlen(keyPrefix + topic), 2, 'createTopic kept the entries');
      const groups = (await redis.xinfo('GROUPS', keyPrefix + topic)) as unknown[][];
      assert.deepEqual(
        groups.map((g) => String(g[1]).replace(/[0-9a-f]{8}$/, '<epoch>')),
        ['gatehouse-epoch-<epoch>'],
        'no group left behind by createTopic but the one that names the epoch',
      );
      await bus.deleteTopic(topic);
      await bus.deleteTopic(topic);
      assert.equal(await redis.exists(keyPrefix + topic), 0);
    });

    it('keeps about maxLength entries of a topic published with it', async () => {
      const topic = uniqueName('bounded');
      for (let batch = 0; batch < 10; batch++)
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => bus.publish(topic, { value: `m${i}` }, { maxLength: 10 })),
        );
      // MAXLEN ~ trims whole macro nodes (stream-node-max-entries, 100 by default).
      const length = await redis.xlen(keyPrefix + topic);
      assert.ok(length >= 10 && length <= 110, `about 10 entries kept, found ${length}`);
      await bus.deleteTopic(topic);
    });
  });
}
