/**
 * The control channel on real Redis (single server and cluster): requests reach live replicas only,
 * nothing a request names makes a key, and replicas that start and stop (or die) leave no keys.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLogger } from '@gatehouse/service-kit';
import type { RedisClient } from '@gatehouse/store';
import {
  closeConnection,
  openRedisConnection,
  RedisStore,
  scanKeys,
  whenReady,
} from '@gatehouse/store/redis';
import { redisDeployments, uniqueName, waitFor } from '@gatehouse/testkit';
import { RedisBus, ReplicaChannel } from '../src/all.ts';

const logger = createLogger({ name: 'replica-channel-test', level: 'silent' });

for (const { name, url, cluster } of redisDeployments) {
  describe(`${name} replica channel`, () => {
    /** Each test's keys are its own. */
    let keyPrefix: string;
    let redis: RedisClient;

    /** One replica's own connections, as a process has them. */
    async function replica(
      id: string,
      registryTtlSeconds = 15,
      maxLength?: number,
      handle: (body: unknown) => unknown = (body) => ({ echo: body, by: id }),
    ) {
      const bus = await RedisBus.connect({ url, cluster, keyPrefix });
      const store = await RedisStore.connect({ url, cluster, namespace: keyPrefix });
      const channel = new ReplicaChannel({
        bus,
        replica: id,
        logger,
        store,
        registryTtlSeconds,
        ...(maxLength === undefined ? {} : { maxLength }),
      });
      await channel.start(handle);
      return {
        channel,
        async stop() {
          await channel.close();
          await bus.close();
          await store.close();
        },
        /** Dies without leaving: its connections go, nothing is cleaned up. */
        async crash() {
          await bus.close();
          await store.close();
          await channel.close(); // Only stops its timer: the store and bus are gone.
        },
      };
    }
    const keys = () => scanKeys(redis, `${keyPrefix}*`);

    before(async () => {
      redis = openRedisConnection({ url, cluster }, 'replica-channel-test');
      await whenReady(redis, 10_000);
    });
    beforeEach(() => {
      keyPrefix = `${uniqueName('control')}:`;
    });
    after(() => closeConnection(redis));

    it('carries a request to a live replica and its reply back', async () => {
      const a = await replica('a');
      const b = await replica('b');
      try {
        assert.deepEqual(await a.channel.request('b', 'hi', 2000), { echo: 'hi', by: 'b' });
      } finally {
        await a.stop();
        await b.stop();
      }
      assert.deepEqual(await keys(), []);
    });

    it('gathers the answers of every live replica, its own included, and names those silent past the time-out', async () => {
      const a = await replica('a');
      const b = await replica('b');
      // Answers long after the time-out (not never: closing waits for the handler).
      const silent = await replica('silent', 15, undefined, () => new Promise((r) => setTimeout(r, 2000)));
      try {
        const started = Date.now();
        const { answers, missing } = await a.channel.gather('hi', 800);
        const took = Date.now() - started;
        assert.deepEqual(
          [...answers].sort(([x], [y]) => x.localeCompare(y)),
          [
            ['a', { echo: 'hi', by: 'a' }],
            ['b', { echo: 'hi', by: 'b' }],
          ],
        );
        assert.deepEqual(missing, ['silent']);
        // Not before the 800 ms time-out; the upper bound, with room for a loaded machine, catches a
        // gather that hangs (waiting for the silent one instead would also leave nothing missing).
        assert.ok(took >= 700 && took < 5000, `answered at the time-out (${took} ms)`);
        const quick = await b.channel.gather('again', 800, (r) => r !== 'silent');
        assert.deepEqual([...quick.answers.keys()].sort(), ['a', 'b']);
        assert.deepEqual(quick.missing, []);
      } finally {
        await a.stop();
        await b.stop();
        await silent.stop();
      }
    });

    it('answers a request for an unknown replica at once, and makes no key for it', async () => {
      const a = await replica('a');
      try {
        const started = Date.now();
        // A 10 s time-out, far above an answer's time: a wait for it is told apart on a loaded machine.
        assert.equal(await a.channel.request('ghost', 'hi', 10_000), undefined);
        assert.ok(Date.now() - started < 5000, `answered without waiting (${Date.now() - started} ms)`);
        const found = await keys();
        assert.deepEqual(
          found.filter((k) => k.includes('ghost')),
          [],
        );
        assert.equal(found.length, 3, `a's stream, live key and the streams list: ${found}`);
      } finally {
        await a.stop();
      }
    });

    it('answers at once for a replica that died, before its stream is reaped', async () => {
      const a = await replica('a');
      await (await replica('dies', 1)).crash();
      try {
        await waitFor(async () => (await redis.exists(`${keyPrefix}replicas:gw.control.live:dies`)) === 0, {
          what: 'the registry entry to expire',
        });
        const started = Date.now();
        assert.equal(await a.channel.request('dies', 'hi', 10_000), undefined);
        assert.ok(Date.now() - started < 5000, `answered without waiting (${Date.now() - started} ms)`);
        assert.equal(await redis.xlen(`${keyPrefix}gw.control.dies`), 0, 'nothing sent to it');
      } finally {
        await a.stop();
        // No live replica stayed long enough to reap it.
        await redis.del(`${keyPrefix}gw.control.dies`);
        await redis.del(`${keyPrefix}replicas:gw.control.streams`);
      }
    });

    it("keeps a replica's stream short", async () => {
      const a = await replica('a');
      const b = await replica('b', 15, 10);
      try {
        // Ten at a time, which a's reader keeps up with: none is trimmed away before it is read.
        for (let batch = 0; batch < 30; batch++)
          await Promise.all(Array.from({ length: 10 }, (_, i) => b.channel.request('a', i, 2000)));
        // MAXLEN ~ trims whole macro nodes (stream-node-max-entries, 100 by default).
        const length = await redis.xlen(`${keyPrefix}gw.control.a`);
        assert.ok(length <= 110, `about 10 requests kept, found ${length}`);
      } finally {
        await a.stop();
        await b.stop();
      }
    });

    it('does not make again the stream of a replica that is leaving', async () => {
      const a = await replica('a');
      const b = await replica('b');
      try {
        // b is still registered, but its stream is already gone (it is half-way through close()).
        await redis.del(`${keyPrefix}gw.control.b`);
        assert.equal(await a.channel.request('b', 'hi', 2000), undefined);
        assert.equal(await redis.exists(`${keyPrefix}gw.control.b`), 0);
      } finally {
        await a.stop();
        await b.stop();
      }
    });

    it('leaves no key behind after replicas start and stop', async () => {
      const stays = await replica('stays');
      try {
        for (let i = 0; i < 20; i++) {
          const r = await replica(`rollout-${i}`);
          assert.deepEqual(await stays.channel.request(`rollout-${i}`, i, 2000), {
            echo: i,
            by: `rollout-${i}`,
          });
          await r.stop();
        }
        const found = await keys();
        assert.equal(found.length, 3, `only the staying replica's keys: ${found}`);
      } finally {
        await stays.stop();
      }
      assert.deepEqual(await keys(), []);
    });

    it("deletes a dead replica's stream once its registry entry expired", async () => {
      const live = await replica('live', 1);
      try {
        for (let i = 0; i < 5; i++) await (await replica(`dead-${i}`, 1)).crash();
        assert.ok((await keys()).length > 3, 'the dead left streams');
        const found = await waitFor(
          async () => {
            const k = await keys();
            return k.length === 3 ? k : undefined;
          },
          { timeoutMs: 8000, intervalMs: 200, what: 'the keys of the dead replicas to go' },
        );
        assert.deepEqual(
          found.filter((k) => k.includes('dead')),
          [],
        );
      } finally {
        await live.stop();
      }
      assert.deepEqual(await keys(), []);
    });
  });
}
