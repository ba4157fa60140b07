/**
 * What a long-poll connection costs in Redis: its subscriptions are stored once, in its record; a
 * subscription change queues a small notice, not another copy of the list. Measured on real Redis
 * with MEMORY USAGE after 200 maximal PUTs (the queue keeps LONGPOLL_QUEUE_SIZE = 200 entries).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { RedisStore } from '@gatehouse/store/redis';
import { dependencyAddress, LongPollClient, uniqueName } from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

const maxBytes = 32 * 1024;

/** 128 subscriptions of nearly MAX_SUBSCRIPTIONS_BYTES together, different for each `n`. */
function maximalList(n: number) {
  return Array.from({ length: 128 }, (_, i) => ({ eventType: `${n}-${i}-`.padEnd(220, 'x') }));
}

interface RedisHub {
  f: HubFixture;
  store: RedisStore;
  redis: Redis;
  namespace: string;
}

/** A hub on real Redis (its keys under a namespace of their own, removed after) with `env` set. */
function withRedisHub(name: string, env: Record<string, string>, body: (hub: () => RedisHub) => void) {
  const namespace = `${uniqueName(name)}:`;
  let store: RedisStore;
  let redis: Redis;
  let f: HubFixture;
  before(async () => {
    store = await RedisStore.connect({ url: dependencyAddress.redisUrl, namespace });
    redis = new Redis(dependencyAddress.redisUrl);
    f = await startHubFixture(env, { bus: new MemoryBus(), store });
  });
  after(async () => {
    await f?.stop();
    await store?.close();
    if (redis) {
      const keys = await redis.keys(`${namespace}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
  body(() => ({ f, store, redis, namespace }));
}

describe('a long-poll connection in Redis', () => {
  withRedisHub(
    'lp-footprint',
    { MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: '1000', LONGPOLL_TIMEOUT: '200ms' },
    (hub) => {
      /** Bytes Redis holds for the keys under this test's namespace (one connection's). */
      async function redisBytes(): Promise<{ total: number; byKey: Record<string, number> }> {
        const { redis, namespace } = hub();
        const byKey: Record<string, number> = {};
        for (const key of await redis.keys(`${namespace}*`))
          byKey[key.slice(namespace.length)] = Number(
            await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'),
          );
        return { total: Object.values(byKey).reduce((a, b) => a + b, 0), byKey };
      }

      it('holds one copy of the subscriptions however often they change', async () => {
        const { f } = hub();
        const c = new LongPollClient(f.url);
        await c.get();
        const token = ((await c.poll())[0]!['data'] as { connection_token: string }).connection_token;
        for (let n = 0; n < 200; n++) {
          const res = await fetch(`${f.url}/_gw/v1/connection/longpolling/${token}/subscriptions`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ subscriptions: maximalList(n) }),
          });
          assert.equal(res.status, 204, await res.text());
        }
        const { total, byKey } = await redisBytes();
        // The record (one list), 200 queued notices of a few hundred bytes, counters: well under two lists.
        assert.ok(total < 2 * maxBytes + 200 * 512, `${total} bytes in Redis: ${JSON.stringify(byKey)}`);
        const events = await c.poll();
        assert.deepEqual(
          events.map((e) => e['type']),
          ['gw.subscriptions_set'],
          'the changes not fetched yet come as one, with the list in force',
        );
        assert.deepEqual(
          events[0]!['data'],
          maximalList(199).map((s) => ({ ...s, oneOf: [] })),
        );
      });
    },
  );
});

/**
 * A poll keeps its connection alive without writing its TTL each time: the record and queue TTLs
 * are set once per touch period (an eighth of LONGPOLL_SESSION_TTL, at most a minute) per replica,
 * to the TTL plus that period. Watched with MONITOR on real Redis: the PEXPIREs of this test's keys.
 */

describe('a polled long-poll connection', () => {
  describe('with a TTL of a minute (a touch period of 7.5 s)', () => {
    let monitor: Awaited<ReturnType<Redis['monitor']>> | undefined;
    after(() => monitor?.disconnect());
    withRedisHub('lp-touch', { LONGPOLL_TIMEOUT: '100ms', LONGPOLL_SESSION_TTL: '60s' }, (hub) => {
      it('writes its TTL once per touch period, not once per poll', async () => {
        const { f, store, redis, namespace } = hub();
        const c = new LongPollClient(f.url);
        assert.equal((await c.get()).text, '"ok"');
        await c.poll();
        monitor = await redis.monitor();
        const expires: string[] = [];
        monitor.on('monitor', (_time: string, args: string[]) => {
          if (args[0]?.toLowerCase() === 'pexpire' && args[1]?.startsWith(namespace)) expires.push(args[1]);
        });
        // 20 polls (each answers empty after 100 ms) within one period.
        for (let i = 0; i < 20; i++) await c.poll();
        await new Promise((r) => setTimeout(r, 200)); // MONITOR's lines come after the replies
        // The first poll touched the record and the queue; at most one period boundary since.
        assert.ok(expires.length <= 2, `${expires.length} PEXPIREs for 20 polls: ${expires.join(' ')}`);
        const [record] = await store.keys('lp:');
        const ttl = await redis.pttl(`${namespace}${record}`);
        assert.ok(ttl > 60_000, `the record lives on for the TTL and a period (${ttl} ms left)`);
      });
    });
  });

  // 4 s, not less: a poll held up longer than the TTL by a loaded box (a CI run beside) would read
  // as the connection forgotten while polled.
  describe('with a TTL of 4 s (a touch period of 500 ms)', () => {
    withRedisHub('lp-forget', { LONGPOLL_TIMEOUT: '100ms', LONGPOLL_SESSION_TTL: '4s' }, (hub) => {
      it('lives while polled past its TTL, and is forgotten within a period after the last poll', async () => {
        const c = new LongPollClient(hub().f.url);
        assert.equal((await c.get()).text, '"ok"');
        // Polled for longer than the TTL: still the same connection.
        const started = Date.now();
        while (Date.now() - started < 5000) {
          const r = await c.get();
          assert.equal(r.status, 200);
          assert.notEqual(r.text, '"ok"', 'a polled connection was forgotten');
          await new Promise((r) => setTimeout(r, 300));
        }
        // Not polled for the TTL and a period (4.5 s) and some room: a new connection.
        await new Promise((r) => setTimeout(r, 6000));
        assert.equal((await c.get()).text, '"ok"', 'a connection not polled for its TTL lived on');
      });
    });
  });
});
