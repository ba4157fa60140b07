/**
 * The store never changes a shared Redis's notify-keyspace-events unless allowed to
 * (setKeyspaceEvents, REDIS_SET_KEYSPACE_EVENTS); without the flags its watch needs, readiness
 * (ping) fails saying what to set, and comes back once they are set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { redisDeployments, sleep, uniqueName } from '@gatehouse/testkit';
import type { RedisClient } from '../src/index.ts';
import { closeConnection, masterNodes, openRedisConnection, RedisStore, whenReady } from '../src/redis.ts';

for (const { name, url, cluster } of redisDeployments) {
  describe(`${name} keyspace notifications`, () => {
    let redis: RedisClient;
    let original: string[];
    const flags = () =>
      Promise.all(
        masterNodes(redis).map(
          async (n) => ((await n.config('GET', 'notify-keyspace-events')) as string[])[1] ?? '',
        ),
      );
    const setFlags = (value: string) =>
      Promise.all(masterNodes(redis).map((n) => n.config('SET', 'notify-keyspace-events', value)));
    const connect = (setKeyspaceEvents?: boolean) =>
      RedisStore.connect({
        url,
        cluster,
        namespace: `${uniqueName('notify')}:`,
        ...(setKeyspaceEvents === undefined ? {} : { setKeyspaceEvents }),
      });

    before(async () => {
      redis = openRedisConnection({ url, cluster }, 'keyspace-events-test');
      await whenReady(redis, 10_000);
      original = await flags();
    });
    after(async () => {
      // This test's own server (tools/deps.sh): put back what it started with.
      await Promise.all(
        masterNodes(redis).map((n, i) => n.config('SET', 'notify-keyspace-events', original[i] ?? 'Ex')),
      );
      await closeConnection(redis);
    });

    it('leaves the parameter alone by default, and readiness says what is missing', async () => {
      await setFlags('');
      const store = await connect();
      try {
        await store.watch('', () => {});
        await store.set('k', 'v', { ttlSeconds: 1 });
        await sleep(300);
        assert.deepEqual(new Set(await flags()), new Set(['']), 'notify-keyspace-events unchanged');
        await assert.rejects(store.ping(), /notify-keyspace-events ''.*REDIS_SET_KEYSPACE_EVENTS/);
        assert.deepEqual(new Set(await flags()), new Set(['']), 'ping changed nothing either');
        await setFlags('Ex');
        await store.ping();
      } finally {
        await store.close();
      }
    });

    it('checks nothing while it does not watch', async () => {
      await setFlags('');
      const store = await connect();
      try {
        await store.ping();
        assert.deepEqual(new Set(await flags()), new Set(['']));
      } finally {
        await store.close();
      }
    });

    it('adds only the missing flags when allowed to', async () => {
      await setFlags('K$');
      const store = await connect(true);
      try {
        await store.watch('', () => {});
        for (const value of await flags()) {
          assert.ok(value.includes('E') && value.includes('x'), `E and x added: '${value}'`);
          assert.ok(value.includes('K') && value.includes('$'), `the others kept: '${value}'`);
        }
        await store.ping();
      } finally {
        await store.close();
      }
    });
  });
}
