/**
 * The gateway on a Redis Cluster (three masters, tools/deps.sh redis-cluster), as processes:
 * two hub replicas, a publisher and the blacklist service with REDIS_CLUSTER=true, the store, the
 * fan-out stream and the control channel all on the cluster. Events reach SSE and long-poll
 * clients on both replicas; a subscription change made through the other replica applies (control
 * channel, store record); a blacklisted session is killed on both replicas and its token refused,
 * and let in again once the entry expired. The run's keys and stream are found on the cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt } from '@gatehouse/auth';
import {
  dependencyAddress,
  gatewayEnv,
  LongPollClient,
  openSse,
  type ServiceProcess,
  type SseConnection,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { Cluster } from 'ioredis';

const jwtSecret = 'e2e-cluster-secret-long-enough-for-hs256';
const greetings = encodeURIComponent(JSON.stringify([{ eventType: 'greeting', oneOf: [] }]));
const token = (sid: string) =>
  signJwt(
    { jti: sid, username: 'u', exp: Math.floor(Date.now() / 1000) + 3600 },
    { alg: 'HS256', key: jwtSecret },
  );

describe('the gateway on a Redis Cluster', () => {
  const processes: ServiceProcess[] = [];
  const open: SseConnection[] = [];
  let hubs: ServiceProcess[];
  let publisher: ServiceProcess;
  let blacklist: ServiceProcess;
  const run = uniqueName('cluster');

  before(async () => {
    const shared = {
      ...gatewayEnv({ run, jwtSecret, fanout: 'redis' }),
      REDIS_URL: dependencyAddress.redisClusterUrl,
      REDIS_CLUSTER: 'true',
      KAFKA_SOURCE_TOPICS: '',
      NATS_SOURCE_TOPICS: '',
      LONGPOLL_TIMEOUT: '2s',
    };
    const hub = (r: string) =>
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: `hub-${r}`,
        publicPort: true,
        env: { ...shared, REPLICA_ID: `${run}-${r}` },
      });
    // One after another: each takes free ports that a start running alongside could take too.
    processes.push(await hub('a'));
    processes.push(await hub('b'));
    processes.push(
      await spawnService({ entry: 'services/publisher/src/main.ts', publicPort: true, env: shared }),
    );
    processes.push(await spawnService({ entry: 'services/blacklist/src/main.ts', env: shared }));
    [hubs, publisher, blacklist] = [processes.slice(0, 2), processes[2]!, processes[3]!];
  });

  after(async () => {
    for (const c of open) c.close();
    await Promise.all(processes.map((p) => p.stop()));
  });

  const sse = async (hub: ServiceProcess, query: string) => {
    const conn = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?${query}`);
    assert.equal(conn.status, 200, conn.errorBody);
    open.push(conn);
    await waitFor(() => conn.events('gw.subscriptions_set').length === 1, { what: 'the welcome events' });
    return conn;
  };
  const publish = async (n: number) => {
    const res = await fetch(`${publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({ specversion: '1.0', id: `g${n}`, source: 'e2e', type: 'greeting', data: { n } }),
    });
    assert.equal(res.status, 202, await res.text());
  };

  it('delivers events over SSE and long-poll on both replicas, and applies a change made through the other', async () => {
    const onA = await sse(hubs[0]!, `subscriptions=${greetings}`);
    const onB = await sse(hubs[1]!, `subscriptions=${greetings}`);
    const poll = new LongPollClient(hubs[1]!.publicUrl!);
    assert.equal((await poll.get(`?subscriptions=${greetings}`)).status, 200);
    const plain = await sse(hubs[0]!, '');
    for (let n = 0; n < 20; n++) await publish(n);
    const numbers = (c: SseConnection) => c.events('greeting').map((e) => (e['data'] as { n: number }).n);
    const all = Array.from({ length: 20 }, (_, n) => n);
    await waitFor(() => numbers(onA).length === 20 && numbers(onB).length === 20, {
      what: `20 events on both replicas (have ${numbers(onA).length}, ${numbers(onB).length})`,
    });
    assert.deepEqual(numbers(onA), all);
    assert.deepEqual(numbers(onB), all);
    const polled: number[] = [];
    await waitFor(
      async () => {
        const events = await poll.poll();
        polled.push(
          ...events.filter((e) => e['type'] === 'greeting').map((e) => (e['data'] as { n: number }).n),
        );
        return polled.length >= 20;
      },
      { timeoutMs: 15_000, what: `20 events by long-poll (have ${polled.length})` },
    );
    assert.deepEqual(polled, all);

    // The connection without subscriptions, subscribed through the replica that does not hold it.
    const connectionToken = (plain.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const put = await fetch(`${hubs[1]!.publicUrl}/_gw/v1/connection/sse/${connectionToken}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ eventType: 'greeting', oneOf: [] }] }),
    });
    assert.equal(put.status, 204, await put.text());
    await publish(20);
    await waitFor(() => numbers(plain).includes(20), { what: 'the event after the change' });

    const nodes = dependencyAddress.redisClusterUrl.replace('redis://', '').split(',');
    const cluster = new Cluster(nodes.map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) })));
    try {
      await new Promise((resolve) => cluster.once('ready', resolve));
      const found: string[] = [];
      for (const node of cluster.nodes('master')) found.push(...(await node.keys(`${run}*`)));
      // The fan-out stream's key carries STORE_KEY_PREFIX (`<run>:`) as every other key does.
      assert.ok(found.includes(`${run}:${run}-gw-events`), `the fan-out stream is on the cluster (${found})`);
      assert.deepEqual(
        found.filter((k) => !k.startsWith(`${run}:`)),
        [],
        'every key is under the prefix',
      );
    } finally {
      cluster.disconnect();
    }
  });

  it('kills a blacklisted session on both replicas, then lets it in once the entry expired', async () => {
    const sid = uniqueName('victim');
    const jwt = token(sid);
    const victims = [await sse(hubs[0]!, `jwt=${jwt}`), await sse(hubs[1]!, `jwt=${jwt}`)];
    const bystander = await sse(hubs[0]!, `jwt=${token('bystander')}`);
    const res = await fetch(`${blacklist.apiUrl}/v3/session-blacklist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: sid, validityInSeconds: 2 }),
    });
    assert.equal(res.status, 201, await res.text());
    for (const v of victims)
      await waitFor(() => v.events('gw.session_killed').length === 1, {
        timeoutMs: 2000,
        what: 'gw.session_killed on each replica',
      });
    const refused = await openSse(`${hubs[1]!.publicUrl}/_gw/v1/connection/sse?jwt=${jwt}`);
    assert.equal(refused.status, 400);
    assert.equal(refused.errorBody, 'invalid JWT');
    assert.equal(bystander.events('gw.session_killed').length, 0);
    await waitFor(
      async () => {
        const again = await openSse(`${hubs[0]!.publicUrl}/_gw/v1/connection/sse?jwt=${jwt}`);
        again.close();
        return again.status === 200;
      },
      { timeoutMs: 10_000, intervalMs: 250, what: 'the token let in after the entry expired' },
    );
  });
});
