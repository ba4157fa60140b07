import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dependency, dependencyAddress, eventually, sleep, uniqueName } from '@gatehouse/testkit';
import { type Change, RedisStore } from '../src/index.ts';
import { storeContract } from './store-contract.ts';

const url = dependencyAddress.redisUrl;

storeContract({
  name: 'redis',
  createStore: () => RedisStore.connect({ url, namespace: `${uniqueName('store-test')}:` }),
  openPeer: (store) => RedisStore.connect({ url, namespace: (store as RedisStore).namespace }),
  restartServer: () => dependency('restart', 'redis'),
});

describe('redis store', () => {
  it('keeps the keys and changes of different namespaces apart', async () => {
    const a = await RedisStore.connect({ url, namespace: `${uniqueName('ns-a')}:` });
    const b = await RedisStore.connect({ url, namespace: `${uniqueName('ns-b')}:` });
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
    const store = new RedisStore({ url: 'redis://127.0.0.1:1' });
    try {
      const started = Date.now();
      await assert.rejects(store.get('k'));
      await assert.rejects(store.set('k', 'v'));
      await assert.rejects(store.ping());
      assert.ok(Date.now() - started < 500, `rejected within 500 ms (took ${Date.now() - started} ms)`);
      await assert.rejects(RedisStore.connect({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 300 }));
    } finally {
      await store.close();
    }
  });

  it('tells a command the server refused (not an outage) from an unreachable server', async () => {
    const store = await RedisStore.connect({ url, namespace: `${uniqueName('refused')}:` });
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
    const store = await RedisStore.connect({ url, namespace: `${uniqueName('outage')}:` });
    try {
      await store.set('k', 'v');
      await dependency('down', 'redis');
      try {
        const started = Date.now();
        const outage = { name: 'StoreUnavailableError', unavailable: true, dependency: 'store' };
        await assert.rejects(store.get('k'), outage);
        await assert.rejects(store.increment('n'), outage);
        await assert.rejects(store.ping(), outage);
        assert.ok(Date.now() - started < 1500, `rejected promptly (took ${Date.now() - started} ms)`);
      } finally {
        await dependency('up', 'redis');
      }
      assert.equal(await eventually(() => store.get('k'), { what: 'a read after the outage' }), 'v');
    } finally {
      await store.close();
    }
  });
});
