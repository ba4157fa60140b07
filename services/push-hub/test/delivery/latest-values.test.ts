/**
 * The latest values, the same suite on the memory store and on real Redis (the store a deployment
 * shares between replicas): the newest event of a type and of each extractor field's value is
 * what is read back, oldest first and each once; a key two replicas write ends at the newest;
 * an event over LATEST_MAX_EVENT_BYTES is not kept; new keys past LATEST_MAX_KEYS are not kept and
 * counted; keys expire after LATEST_TTL (the TTL is set); a type not configured costs nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Store, MemoryStore } from '@gatehouse/store';
import { RedisStore } from '@gatehouse/store/redis';
import { dependencyAddress, uniqueName, waitFor } from '@gatehouse/testkit';
import type { RingEvent } from '../../src/delivery/event-ring.ts';
import { LatestValues } from '../../src/delivery/index.ts';
import { loadExtractorConfig, SubscriptionIndex } from '../../src/subscriptions/index.ts';

const extractors = loadExtractorConfig(
  JSON.stringify({ order: { id: { stable_field_index: 0, event: { json_pointer: '/data/id' } } } }),
);
const index = new SubscriptionIndex<string>(extractors);

function event(position: number, type: string, data: Record<string, unknown>, pad = 0): RingEvent {
  const e = { specversion: '1.0', id: `e-${position}`, source: 't', type, data, pad: 'x'.repeat(pad) };
  return { position: String(position), type, event: e, json: JSON.stringify(e) };
}

function latestOn(store: Store, maxKeys = 1000) {
  let overflowed = 0;
  const values = new LatestValues(
    { types: new Set(['order', 'status']), maxEventBytes: 2048, maxKeys, ttlSeconds: 60 },
    {
      store,
      extractors,
      compare: (a, b) => Number(a) - Number(b),
      onError: (err) => assert.fail(err as Error),
      overflowed: () => overflowed++,
    },
  );
  return { values, overflowed: () => overflowed };
}

const read = async (
  values: LatestValues,
  subs: Array<{ eventType: string; oneOf: Array<Record<string, unknown>> }>,
) =>
  (await values.of(subs, (e) => index.matcherFor(subs)(e.event as { type: string }))).map((v) => v.position);

const stores: Array<[string, () => Promise<Store>]> = [
  ['memory', async () => new MemoryStore()],
  [
    'redis',
    () => RedisStore.connect({ url: dependencyAddress.redisUrl, namespace: `${uniqueName('latest')}:` }),
  ],
];

for (const [kind, make] of stores) {
  describe(`latest values on the ${kind} store`, () => {
    let store: Store;
    before(async () => {
      store = await make();
    });
    after(() => store?.close());

    it('reads back the newest of a type and of each field value, oldest first, each once', async () => {
      const a = latestOn(store);
      a.values.keep(event(1, 'order', { id: 7 }));
      a.values.keep(event(2, 'order', { id: 8 }));
      a.values.keep(event(3, 'order', { id: 7 }));
      a.values.keep(event(4, 'status', {}));
      a.values.keep(event(5, 'other', {}));
      const subs = [
        { eventType: 'order', oneOf: [{ id: 7 }, { id: 8 }, { id: 9 }] },
        { eventType: 'status', oneOf: [] },
        { eventType: 'other', oneOf: [] },
      ];
      await waitFor(async () => (await read(a.values, subs)).length === 3);
      assert.deepEqual(await read(a.values, subs), ['2', '3', '4']);
      assert.deepEqual(await read(a.values, [{ eventType: 'order', oneOf: [] }]), ['3']);
      assert.ok((await store.ttl((await store.keys('gw:latest:'))[0]!))! > 0, 'keys expire');
    });

    it('ends at the newest when a replica behind writes an older value last', async () => {
      const ahead = latestOn(store);
      const behind = latestOn(store);
      ahead.values.keep(event(10, 'order', { id: 70 }));
      ahead.values.keep(event(11, 'order', { id: 70 }));
      behind.values.keep(event(10, 'order', { id: 70 }));
      behind.values.keep(event(11, 'order', { id: 70 }));
      const subs = [{ eventType: 'order', oneOf: [{ id: 70 }] }];
      await waitFor(async () => (await read(ahead.values, subs))[0] === '11');
    });

    it('measures the byte bound in bytes, not characters', async () => {
      const values = latestOn(store).values;
      // 1,000 characters of three UTF-8 bytes each: under 2,048 characters, over 2,048 bytes.
      const wide = event(30, 'order', { id: 300 });
      wide.json = JSON.stringify({ ...wide.event, pad: '€'.repeat(1000) });
      values.keep(wide);
      values.keep(event(31, 'order', { id: 301 }));
      const subs = [{ eventType: 'order', oneOf: [{ id: 300 }, { id: 301 }] }];
      await waitFor(async () => (await read(values, subs)).length === 1);
      assert.deepEqual(await read(values, subs), ['31'], 'the 3,000-byte event is not kept');
    });

    it('keeps no event over the byte bound and no new key past the key bound', async () => {
      const small = latestOn(store, 2);
      small.values.keep(event(20, 'order', { id: 200 }, 4096));
      small.values.keep(event(21, 'order', { id: 201 }));
      small.values.keep(event(22, 'order', { id: 202 }));
      const subs = [{ eventType: 'order', oneOf: [{ id: 200 }, { id: 201 }, { id: 202 }] }];
      await waitFor(async () => (await read(small.values, subs)).length === 1);
      assert.deepEqual(await read(small.values, subs), ['21'], 'the type key and id 201 took the two keys');
      assert.equal(small.overflowed(), 1, 'id 202: its type key was written before');
    });
  });
}
