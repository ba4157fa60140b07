/**
 * What a long-poll connection costs in Redis: its subscriptions are stored once, in its record; a
 * subscription change queues a small notice, not another copy of the list. Measured on real Redis
 * with MEMORY USAGE after 200 maximal PUTs (the queue keeps LONGPOLL_QUEUE_SIZE = 200 entries).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { RedisStore } from '@gatehouse/store';
import { dependencyAddress, LongPollClient, uniqueName } from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';

const maxBytes = 32 * 1024;

/** 128 subscriptions of nearly MAX_SUBSCRIPTIONS_BYTES together, different for each `n`. */
function maximalList(n: number) {
  return Array.from({ length: 128 }, (_, i) => ({ eventType: `${n}-${i}-`.padEnd(220, 'x') }));
}

describe('a long-poll connection in Redis', () => {
  const namespace = `${uniqueName('lp-footprint')}:`;
  let store: RedisStore;
  let redis: Redis;
  let f: HubFixture;
  before(async () => {
    store = await RedisStore.connect({ url: dependencyAddress.redisUrl, namespace });
    redis = new Redis(dependencyAddress.redisUrl);
    f = await startHubFixture(
      { MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: '1000', LONGPOLL_TIMEOUT: '200ms' },
      { bus: new MemoryBus(), store },
    );
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

  /** Bytes Redis holds for the keys under this test's namespace (one connection's). */
  async function redisBytes(): Promise<{ total: number; byKey: Record<string, number> }> {
    const byKey: Record<string, number> = {};
    for (const key of await redis.keys(`${namespace}*`))
      byKey[key.slice(namespace.length)] = Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    return { total: Object.values(byKey).reduce((a, b) => a + b, 0), byKey };
  }

  it('holds one copy of the subscriptions however often they change', async () => {
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
});
