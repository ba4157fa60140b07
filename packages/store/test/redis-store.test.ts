import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dependency, eventually, redisDeployments, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import type { Change } from '../src/index.ts';
import { closeConnection, clusterSlot, nodeForKey, openRedisConnection, RedisStore } from '../src/redis.ts';
import { storeContract } from './store-contract.ts';

/**
 * Command and ping time-outs of 10 s, far above a rejection's time: a command waiting for its
 * time-out is told apart from one rejected at once on a loaded machine.
 */
const slowTimeouts = { pingTimeoutMs: 10_000, redis: { commandTimeout: 10_000 } };

for (const { name, url, cluster, dependency: server } of redisDeployments) {
  storeContract({
    name,
    createStore: () => RedisStore.connect({ url, cluster, namespace: `${uniqueName('store-test')}:` }),
    openPeer: (store) => RedisStore.connect({ url, cluster, namespace: (store as RedisStore).namespace }),
    restartServer: () => dependency('restart', server),
  });

  describe(`${name} store`, () => {
    it('keeps the keys and changes of different namespaces apart', async () => {
      const a = await RedisStore.connect({ url, cluster, namespace: `${uniqueName('ns-a')}:` });
      const b = await RedisStore.connect({ url, cluster, namespace: `${uniqueName('ns-b')}:` });
      try {
        const changes: Change[] = [];
        await a.watch('', (c) => void changes.push(c));
        await b.set('k', 'from b', { ttlSeconds: 1 });
        await b.delete('k');
        await b.set('k', 'from b', { ttlSeconds: 1 });
        await a.set('k', 'from a');
        assert.equal(await a.get('k'), 'from a');
        assert.equal(await b.get('k'), 'from b');
        assert.deepEqual(await a.keys(''), ['k']);
        await sleep(1500);
        assert.equal(await b.get('k'), undefined);
        assert.deepEqual(changes, [{ key: 'k', kind: 'set' }], "only a's own change");
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('rejects commands at once while redis is unreachable', async () => {
      const store = new RedisStore({ url: 'redis://127.0.0.1:1', cluster, ...slowTimeouts });
      try {
        const started = Date.now();
        await assert.rejects(store.get('k'));
        await assert.rejects(store.set('k', 'v'));
        await assert.rejects(store.ping());
        assert.ok(Date.now() - started < 5000, `rejected at once (took ${Date.now() - started} ms)`);
        await assert.rejects(
          RedisStore.connect({ url: 'redis://127.0.0.1:1', cluster, connectTimeoutMs: 300 }),
        );
      } finally {
        await store.close();
      }
    });

    it('tells a command the server refused (not an outage) from an unreachable server', async () => {
      const store = await RedisStore.connect({ url, cluster, namespace: `${uniqueName('refused')}:` });
      try {
        await store.set('text', 'not a list');
        const refused = await store.append('text', 'x').then(
          () => undefined,
          (err: unknown) => err as Error & { unavailable?: boolean },
        );
        assert.equal(refused?.name, 'StoreError', 'WRONGTYPE is a refusal');
        assert.equal(refused?.unavailable, undefined);
      } finally {
        await store.close();
      }
    });

    it('rejects commands at once while the server is down, then recovers', async () => {
      const store = await RedisStore.connect({
        url,
        cluster,
        namespace: `${uniqueName('outage')}:`,
        ...slowTimeouts,
      });
      try {
        await store.set('k', 'v');
        await dependency('down', server);
        try {
          const started = Date.now();
          const outage = { name: 'StoreUnavailableError', unavailable: true, dependency: 'store' };
          await assert.rejects(store.get('k'), outage);
          await assert.rejects(store.increment('n'), outage);
          await assert.rejects(store.ping(), outage);
          assert.ok(Date.now() - started < 5000, `rejected promptly (took ${Date.now() - started} ms)`);
        } finally {
          await dependency('up', server);
        }
        assert.equal(await eventually(() => store.get('k'), { what: 'a read after the outage' }), 'v');
      } finally {
        await store.close();
      }
    });
  });
}

const clusterDeployment = redisDeployments.find((d) => d.cluster)!;

describe('redis store on a cluster', () => {
  const { url } = clusterDeployment;

  it('lists and hears the expiry of keys held by every master', async () => {
    const namespace = `${uniqueName('spread')}:`;
    const store = await RedisStore.connect({ url, cluster: true, namespace });
    const raw = openRedisConnection({ url, cluster: true }, 'store-test');
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
      await waitFor(() => nodeForKey(raw, 'x'), { what: 'the slot table' });
      const nodes = new Set(keys.map((k) => nodeForKey(raw, namespace + k)!.options.port));
      assert.equal(nodes.size, 3, 'the keys lie on all three masters');
      const expired = new Set<string>();
      await store.watch('', (c) => {
        if (c.kind === 'expire') expired.add(c.key);
      });
      for (const k of keys) await store.set(k, 'v', { ttlSeconds: 1 });
      assert.deepEqual((await store.keys('')).sort(), [...keys].sort());
      await waitFor(() => expired.size === keys.length, {
        timeoutMs: 10_000,
        what: `an expiry of every key (have ${expired.size})`,
      });
    } finally {
      await store.close();
      await closeConnection(raw);
    }
  });

  it('computes hash slots as the cluster does, hash tags included', async () => {
    const raw = openRedisConnection({ url, cluster: true }, 'store-test');
    try {
      await waitFor(() => nodeForKey(raw, 'x'), { what: 'the slot table' });
      const node = nodeForKey(raw, 'x')!;
      for (const key of [
        '',
        'a',
        'gw:blacklist:s1',
        '{user1}.following',
        'foo{}{bar}',
        'foo{{bar}}zap',
        'ü{é}',
        'x'.repeat(300),
      ])
        assert.equal(clusterSlot(key), await node.cluster('KEYSLOT', key), `slot of '${key}'`);
    } finally {
      await closeConnection(raw);
    }
  });
});
