// test-lane: alone (it scans the whole keyspace for keys outside its prefix: another file's keys would be counted)
/**
 * Two push-hub processes and a publisher on real Redis (single server and cluster), Redis for the fan-out bus, the
 * control bus and the store: a PUT whose token names a replica that is not there is answered 410
 * and makes no key; every key the hubs write starts with STORE_KEY_PREFIX (the whole keyspace is
 * scanned); stopped hubs leave no control stream behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignedTokenCodec } from '@gatehouse/auth';
import type { RedisClient } from '@gatehouse/store';
import { closeConnection, openRedisConnection, scanKeys, whenReady } from '@gatehouse/store/redis';
import {
  LongPollClient,
  openSse,
  redisDeployments,
  type ServiceProcess,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';

const tokenSecret = 'control-streams-token-secret';

for (const { name, url, cluster } of redisDeployments) {
  describe(`control streams of push hubs (${name})`, () => {
    const run = uniqueName('hub-keys');
    const keyPrefix = `${run}:`;
    const env = {
      FANOUT_BUS: 'redis',
      CONTROL_BUS: 'redis',
      STORE: 'redis',
      REDIS_URL: url,
      REDIS_CLUSTER: String(cluster),
      STORE_KEY_PREFIX: keyPrefix,
      JWT_SECRET_KEY: 'control-streams-jwt-secret-long-enough',
      TOKEN_SECRET: tokenSecret,
      // Far above an answer's time, so one that waited for a reply is told apart on a loaded box.
      CONTROL_REQUEST_TIMEOUT: '10s',
      SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
    };
    let redis: RedisClient;
    let keysBefore: Set<string>;
    const hubs: ServiceProcess[] = [];
    const newKeys = async () => (await scanKeys(redis, '*')).filter((k) => !keysBefore.has(k));

    before(async () => {
      redis = openRedisConnection({ url, cluster }, 'control-streams-test');
      await whenReady(redis, 10_000);
      keysBefore = new Set(await scanKeys(redis, '*'));
      for (const id of ['a', 'b']) {
        hubs.push(
          await spawnService({
            entry: 'services/push-hub/src/main.ts',
            name: `hub-${id}`,
            publicPort: true,
            env: { ...env, REPLICA_ID: `${run}-${id}` },
            readyTimeoutMs: 60_000,
          }),
        );
      }
      hubs.push(
        await spawnService({
          entry: 'services/publisher/src/main.ts',
          name: 'publisher',
          publicPort: true,
          env,
          readyTimeoutMs: 60_000,
        }),
      );
    });
    after(async () => {
      for (const hub of hubs) await hub.stop();
      await closeConnection(redis);
    });

    const put = (hub: ServiceProcess, token: string) =>
      fetch(`${hub.publicUrl}/_gw/v1/connection/sse/${token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'news' }] }),
      });

    it('answers 410 at once for a token naming a replica that is not there, and makes no key', async () => {
      const tokens = new SignedTokenCodec(tokenSecret, 'connection');
      const took: number[] = [];
      for (let i = 0; i < 20; i++) {
        const token = tokens.encode({ replica: `ghost-${i}`, id: `c${i}`, expiresAt: Date.now() + 60_000 });
        const started = Date.now();
        const res = await put(hubs[1]!, token);
        assert.equal(res.status, 410, await res.text());
        took.push(Date.now() - started);
      }
      const ghosts = (await scanKeys(redis, '*ghost*')).filter((k) => !keysBefore.has(k));
      assert.deepEqual(ghosts, []);
      assert.ok(
        Math.max(...took) < 5000,
        `answered without waiting for the 10 s reply time-out (${took} ms)`,
      );
    });

    it('writes every key under STORE_KEY_PREFIX', async () => {
      const sse = await openSse(`${hubs[0]!.publicUrl}/_gw/v1/connection/sse`);
      await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
      const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
        .connection_token;
      const res = await put(hubs[1]!, token);
      assert.equal(res.status, 204, await res.text());
      await waitFor(() => sse.events('gw.subscriptions_set').length === 2, { what: 'the change' });
      const event = { specversion: '1.0', id: run, source: 'test', type: 'news', data: {} };
      const posted = await fetch(`${hubs[2]!.publicUrl}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/cloudevents+json' },
        body: JSON.stringify(event),
      });
      assert.equal(posted.status, 202, await posted.text());
      await waitFor(() => sse.events('news').length === 1, { what: 'the event through the fan-out stream' });
      sse.close();
      const lp = new LongPollClient(hubs[1]!.publicUrl!);
      await lp.get();
      await lp.poll();
      const added = await newKeys();
      assert.ok(added.length > 0, 'the hubs wrote keys');
      assert.deepEqual(
        added.filter((k) => !k.startsWith(keyPrefix)),
        [],
      );
      assert.ok(added.includes(`${keyPrefix}gw.control.${run}-a`), `a's control stream: ${added}`);
      assert.ok(added.includes(`${keyPrefix}gw.events`), `the fan-out stream: ${added}`);
    });

    it('leaves no control stream behind once the hubs stopped', async () => {
      for (const hub of hubs.splice(0)) assert.equal((await hub.stop()).code, 0);
      const left = (await newKeys()).filter((k) => k.includes('control') || k.includes('replicas:'));
      assert.deepEqual(left, []);
    });
  });
}
