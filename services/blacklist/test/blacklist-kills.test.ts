/**
 * The blacklist end to end, as separate processes on real Redis: two push-hub replicas and the
 * blacklist service. A blacklisting must end the session's connections on every transport of
 * both replicas within one second, refuse the token afterwards (connects and subscription
 * updates), let it back in when the entry expires, and survive restarts of the blacklist service
 * and of Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dependency, dependencyAddress, openSse, sleep, waitFor } from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import {
  blacklistEntry,
  blacklistSession,
  type GatewayProcesses,
  metricValue,
  sessionToken,
  startGatewayProcesses,
  stopGatewayProcesses,
} from './gateway-processes.ts';
import { connect, transports, tryConnect, type WatchedConnection } from './transport-clients.ts';

const killDeadlineMs = 1000;

describe('session blacklist across hub replicas (separate processes, real Redis)', () => {
  let gw: GatewayProcesses;
  let redis: Redis;
  const hubUrl = (i: number) => gw.hubs[i]!.publicUrl!;

  before(async () => {
    redis = new Redis(dependencyAddress.redisUrl, { lazyConnect: true });
    redis.on('error', () => {}); // while Redis restarts; commands wait for the reconnect
    await redis.connect();
    await ensureAppendOnly(redis);
    gw = await startGatewayProcesses();
  });
  after(async () => {
    await stopGatewayProcesses(gw);
    if (gw) {
      const keys = await redis.keys(`${gw.keyPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
    redis.disconnect();
  });

  /** Opens the session on every transport of both replicas. */
  async function openEverywhere(sid: string): Promise<WatchedConnection[]> {
    const jwt = sessionToken(sid);
    const opened: WatchedConnection[] = [];
    for (const hub of [0, 1]) for (const t of transports) opened.push(await connect(t, hubUrl(hub), jwt));
    return opened;
  }

  /** Blacklists `sid` and asserts every connection ended with the kill within the deadline. */
  /** Returns how long each transport took at worst, for the test's diagnostics. */
  async function assertKilledInTime(sid: string, conns: WatchedConnection[]): Promise<string> {
    const startedAt = performance.now();
    await blacklistSession(gw.blacklist, sid, 120);
    const ends = await Promise.all(
      conns.map((c) =>
        Promise.race([c.ended, sleep(5000).then(() => assert.fail(`${c.transport} connection never ended`))]),
      ),
    );
    const expected: Record<string, string> = {
      sse: 'stream ended',
      ws: 'close 1000 Session killed.',
      'socketio-websocket': 'disconnect: io server disconnect',
      'socketio-polling': 'disconnect: io server disconnect',
      longpolling: 'cookie cleared',
    };
    ends.forEach((end, i) => {
      const { transport } = conns[i]!;
      const where = `${transport} on hub ${i < transports.length ? 'a' : 'b'}`;
      assert.equal(end.how, expected[transport], where);
      assert.equal(end.lastEvent, 'gw.session_killed', `${where} gets gw.session_killed before it ends`);
      const tookMs = end.at - startedAt;
      assert.ok(tookMs <= killDeadlineMs, `${where} ended ${tookMs.toFixed(0)} ms after the blacklisting`);
    });
    const worst = new Map<string, number>();
    ends.forEach((end, i) => {
      const { transport } = conns[i]!;
      worst.set(transport, Math.max(worst.get(transport) ?? 0, end.at - startedAt));
    });
    return [...worst].map(([t, took]) => `${t} ${took.toFixed(0)} ms`).join(', ');
  }

  it('kills the session on every transport of both replicas within one second', async (t) => {
    const victim = await openEverywhere('victim');
    const bystanders = [
      await connect('sse', hubUrl(0), sessionToken('bystander')),
      await connect('ws', hubUrl(1), sessionToken('bystander')),
    ];
    const took = await assertKilledInTime('victim', victim);
    t.diagnostic(`${victim.length} connections ended after the POST, slowest per transport: ${took}`);
    await sleep(200);
    assert.ok(
      bystanders.every((c) => !c.hasEnded()),
      'connections of other sessions stay open',
    );
    for (const c of bystanders) c.close();

    for (const hub of gw.hubs) {
      const kills = await metricValue(hub, 'gw_session_kills_total');
      assert.ok(kills !== undefined && kills >= 4, `${hub.env['REPLICA_ID']} counted ${kills} kills`);
    }
    assert.equal(await metricValue(gw.blacklist, 'gw_blacklist_entries'), 1);
    assert.equal(
      await metricValue(gw.blacklist, 'gw_blacklist_additions_total{version="v3",outcome="added"'),
      1,
    );
  });

  it('refuses new connections and subscription updates with the blacklisted token on both replicas', async () => {
    const jwt = sessionToken('victim');
    for (const hub of [0, 1]) {
      for (const t of transports) {
        const { accepted, answer } = await tryConnect(t, hubUrl(hub), jwt);
        assert.equal(accepted, false, `${t} on hub ${hub} let the blacklisted token in`);
        // The one refusal text of every JWT failure; the reason (blacklisted) is in the hub's log.
        assert.match(answer, /invalid JWT/, `${t} on hub ${hub}`);
      }
    }
    // A connection without a token, updated from the other replica with the blacklisted token.
    const anonymous = await openSse(`${hubUrl(0)}/_gw/v1/connection/sse`);
    await waitFor(() => anonymous.frames.length >= 2);
    const token = (anonymous.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const put = (authorization: string) =>
      fetch(`${hubUrl(1)}/_gw/v1/connection/sse/${token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ subscriptions: [] }),
      });
    const refused = await put(`Bearer ${jwt}`);
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /invalid JWT$/);
    const allowed = await put(`Bearer ${sessionToken('someone-else')}`);
    assert.equal(allowed.status, 204, await allowed.text());
    anonymous.close();
  });

  it('checks the JWT_SESSION_FIELD claim, not jti, when refusing a token', async () => {
    await blacklistSession(gw.blacklist, 'jti-of-innocent', 60);
    const { accepted } = await tryConnect('sse', hubUrl(0), sessionToken('innocent'));
    assert.equal(accepted, true, 'blacklisting the jti value must not refuse a token of another session');
  });

  it('lets the token back in when the entry expires, exactly on time', async () => {
    const jwt = sessionToken('brief');
    const conns = [await connect('sse', hubUrl(0), jwt), await connect('ws', hubUrl(1), jwt)];
    const postedAt = Date.now();
    const entry = await blacklistSession(gw.blacklist, 'brief', 2);
    assert.equal(entry['validityInSeconds'], 2);
    await Promise.all(conns.map((c) => c.ended));
    const pttl = await redis.pttl(`${gw.keyPrefix}blacklist:brief`);
    assert.ok(pttl > 1800 && pttl <= 2000, `PTTL ${pttl}`);
    for (const hub of [0, 1]) assert.equal((await tryConnect('sse', hubUrl(hub), jwt)).accepted, false);

    await sleep(postedAt + 1700 - Date.now());
    assert.ok(await blacklistEntry(gw.blacklist, 'brief'), 'still blacklisted before the 2 s are up');
    await waitFor(async () => (await blacklistEntry(gw.blacklist, 'brief')) === undefined, {
      intervalMs: 10,
      timeoutMs: 3000,
    });
    const lastedMs = Date.now() - postedAt;
    assert.ok(lastedMs >= 1950 && lastedMs < 3500, `the entry lasted ${lastedMs} ms`);
    for (const hub of [0, 1]) {
      for (const t of transports) {
        const { accepted, answer } = await tryConnect(t, hubUrl(hub), jwt);
        assert.equal(accepted, true, `${t} on hub ${hub} after expiry: ${answer}`);
      }
    }
  });

  it('loses no entry when the blacklist service restarts, and the hubs refuse meanwhile', async () => {
    const before = await blacklistSession(gw.blacklist, 'durable', 120);
    await gw.blacklist.stop();
    assert.equal((await tryConnect('ws', hubUrl(1), sessionToken('durable'))).accepted, false);
    gw.blacklist = await gw.blacklist.restart();
    const after = await blacklistEntry(gw.blacklist, 'durable');
    assert.ok(after, 'the entry is still there');
    const drift = Math.abs(Date.parse(String(after['expiresAt'])) - Date.parse(String(before['expiresAt'])));
    assert.ok(drift < 50, `with its expiry unchanged (moved by ${drift} ms)`);
  });

  it('loses no entry when Redis restarts, and kills still reach both replicas afterwards', async (t) => {
    const before = await blacklistSession(gw.blacklist, 'persisted', 300);
    await dependency('restart', 'redis');
    await redis.ping();
    for (const service of [gw.blacklist, ...gw.hubs])
      await waitFor(async () => (await fetch(`${service.apiUrl}/ready`)).status === 200, {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `${service.name} ready again after the Redis restart`,
      });
    const after = await blacklistEntry(gw.blacklist, 'persisted');
    assert.ok(after, 'the entry survived the restart');
    const drift = Math.abs(Date.parse(String(after['expiresAt'])) - Date.parse(String(before['expiresAt'])));
    assert.ok(drift < 1000, `expiry moved by ${drift} ms`);
    for (const hub of [0, 1])
      assert.equal((await tryConnect('sse', hubUrl(hub), sessionToken('persisted'))).accepted, false);

    const late = await openEverywhere('after-restart');
    const took = await assertKilledInTime('after-restart', late);
    t.diagnostic(`after the Redis restart, slowest per transport: ${took}`);
  });
});

/** The durability cases need AOF; tools/deps.sh starts Redis with it, this makes sure. */
async function ensureAppendOnly(redis: Redis): Promise<void> {
  const [, appendonly] = (await redis.config('GET', 'appendonly')) as string[];
  if (appendonly === 'yes') return;
  await redis.config('SET', 'appendonly', 'yes');
  await waitFor(
    async () => /aof_enabled:1[\s\S]*aof_rewrite_in_progress:0/.test(await redis.info('persistence')),
    {
      timeoutMs: 10_000,
      what: 'AOF to be enabled',
    },
  );
}
