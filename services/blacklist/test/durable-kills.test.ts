/**
 * Kills are durable, as processes on real Redis: a blacklisting written while a hub cannot hear the
 * store's notifications still ends the session's connections on that hub once it is back. Hub A
 * reaches Redis through a proxy the test can cut; hub B and the blacklist service reach it directly.
 * Every kill is a session open on all five transports of both hubs. Three ways to miss a kill:
 *
 * - hub A alone is cut off: the kills are written (through the blacklist service) while it cannot
 *   hear them; B kills at once, A within 1 s of its reconnect;
 * - Redis restarts: the kills are written as soon as it answers again, while the hubs' watches are
 *   still reconnecting (their retry delay), so their notifications reach nobody;
 * - Redis is paused 5 s (SIGSTOP): the blacklisting waits in the blacklist service (retried on
 *   503) and lands when Redis goes on.
 *
 * Printed per way: kills (connections to end), missed (still open 10 s later: must be 0), and the
 * time to each kill from when the hub could know (its reconnect, the write, the resume).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { blacklistKey } from '@gatehouse/auth';
import { RedisStore } from '@gatehouse/store/redis';
import {
  CuttableProxy,
  dependency,
  dependencyAddress,
  pauseDependency,
  type ServiceProcess,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { sessionToken } from './gateway-processes.ts';
import { connect, transports, type WatchedConnection } from './transport-clients.ts';

const redisPort = Number(new URL(dependencyAddress.redisUrl).port || 6379);
const missedAfterMs = 10_000;

interface Watched {
  hub: 'a' | 'b';
  conn: WatchedConnection;
  endedAt: number | undefined;
}

describe('durable kills (processes, real Redis)', () => {
  const keyPrefix = `${uniqueName('durable-kills')}:`;
  const figures: string[] = [];
  let proxy: CuttableProxy;
  let hubA: ServiceProcess;
  let hubB: ServiceProcess;
  let blacklist: ServiceProcess;

  before(async () => {
    proxy = await CuttableProxy.start({ host: '127.0.0.1', port: redisPort });
    const hubEnv = {
      STORE: 'redis',
      STORE_KEY_PREFIX: keyPrefix,
      FANOUT_BUS: 'redis',
      CONTROL_BUS: 'redis',
      FANOUT_TOPIC: `${keyPrefix}gw.events`,
      JWT_SECRET_KEY: 'blacklist-suite-jwt-secret-of-32-bytes-or-more',
      JWT_SESSION_FIELD: '/sid',
      TOKEN_SECRET: 'blacklist-suite-shared-token-secret',
      LONGPOLL_TIMEOUT: '3s',
      LOG_LEVEL: 'info',
    };
    [hubA, hubB, blacklist] = (await Promise.all([
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: 'hub-a',
        publicPort: true,
        env: { ...hubEnv, REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REPLICA_ID: `${keyPrefix}a` },
      }),
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: 'hub-b',
        publicPort: true,
        env: { ...hubEnv, REDIS_URL: dependencyAddress.redisUrl, REPLICA_ID: `${keyPrefix}b` },
      }),
      spawnService({
        entry: 'services/blacklist/src/main.ts',
        env: { STORE: 'redis', STORE_KEY_PREFIX: keyPrefix, REDIS_URL: dependencyAddress.redisUrl },
      }),
    ])) as [ServiceProcess, ServiceProcess, ServiceProcess];
  });
  after(async () => {
    console.log(`durable kills: ${figures.join('; ')}`);
    await Promise.all([hubA, hubB, blacklist].map((s) => s?.stop()));
    await proxy?.close();
  });

  /** Opens each session on every transport of both hubs. */
  async function openSessions(sids: string[]): Promise<Watched[]> {
    const watched: Watched[] = [];
    for (const sid of sids)
      for (const [hub, service] of [
        ['a', hubA],
        ['b', hubB],
      ] as const)
        for (const t of transports) {
          const conn = await connect(t, service.publicUrl!, sessionToken(sid), { retryUnavailable: true });
          const w: Watched = { hub, conn, endedAt: undefined };
          conn.ended.then(
            () => {
              w.endedAt = Date.now();
            },
            () => {},
          );
          watched.push(w);
        }
    return watched;
  }

  /** Blacklists through the blacklist service, trying again while it answers 503. */
  async function blacklistThroughService(sid: string): Promise<void> {
    for (;;) {
      const res = await fetch(`${blacklist.apiUrl}/v3/session-blacklist`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: sid, validityInSeconds: 300 }),
      }).catch(() => undefined);
      if (res?.status === 201) return;
      await res?.text();
      await sleep(250);
    }
  }

  /** Waits until every connection ended or the time is up; returns the missed and the latencies. */
  async function outcome(watched: Watched[], since: (w: Watched) => number) {
    await waitFor(() => watched.every((w) => w.endedAt !== undefined), {
      timeoutMs: missedAfterMs,
      what: 'every kill',
    }).catch(() => {});
    const missed = watched.filter((w) => w.endedAt === undefined);
    const latencies = watched.filter((w) => w.endedAt !== undefined).map((w) => w.endedAt! - since(w));
    if (process.env['DEBUG_KILLS'])
      console.log(
        watched.map(
          (w) => `${w.hub}/${w.conn.transport}: ${w.endedAt === undefined ? 'open' : w.endedAt - since(w)}`,
        ),
      );
    for (const w of watched) w.conn.close();
    return { missed: missed.length, worst: Math.max(...latencies) };
  }

  /** How many sessions hub A's last blacklist rescan found (its log says). */
  const rescanFound = (hub: ServiceProcess) => {
    const lines = hub
      .output()
      .split('\n')
      .filter((l) => l.includes('blacklist looked up again'));
    return lines.length === 0 ? 0 : Number(/"found":(\d+)/.exec(lines.at(-1)!)?.[1] ?? 0);
  };

  it('a hub cut off from Redis kills the sessions blacklisted meanwhile within 1 s of its reconnect', async () => {
    const sids = ['cut-1', 'cut-2'].map((s) => `${keyPrefix}${s}`);
    const watched = await openSessions(sids);
    proxy.cut();
    await sleep(500);
    const writtenAt = Date.now();
    for (const sid of sids) await blacklistThroughService(sid);
    await waitFor(() => watched.filter((w) => w.hub === 'b').every((w) => w.endedAt !== undefined), {
      timeoutMs: 2000,
      what: 'the kills on the hub that heard them',
    });
    await sleep(1000);
    assert.ok(
      watched.filter((w) => w.hub === 'a').every((w) => w.endedAt === undefined),
      'the cut-off hub did not hear the kills',
    );
    const restoredAt = Date.now();
    const acceptedBefore = proxy.acceptedAt.length;
    proxy.restore();
    await waitFor(() => proxy.acceptedAt.length > acceptedBefore, {
      timeoutMs: 5000,
      what: 'hub A to reconnect',
    });
    const reconnectedAt = proxy.acceptedAt[acceptedBefore]!;
    const result = await outcome(watched, (w) => (w.hub === 'a' ? reconnectedAt : writtenAt));
    const streams = watched.filter((w) => w.hub === 'a' && w.conn.transport !== 'longpolling');
    const worstStream = Math.max(...streams.map((w) => w.endedAt! - reconnectedAt));
    figures.push(
      `hub cut off: ${watched.length} kills, missed ${result.missed}, on the cut-off hub ` +
        `${worstStream} ms after its reconnect at worst (streams; long polls retry after Retry-After), ` +
        `reconnect ${reconnectedAt - restoredAt} ms after the cut ended, found by the rescan ${rescanFound(hubA)}`,
    );
    assert.equal(result.missed, 0, 'kills missed');
    assert.ok(worstStream <= 3000, `killed ${worstStream} ms after the reconnect`);
  });

  it('kills written while Redis restarts and the hubs reconnect reach both hubs', async () => {
    const sids = ['restart-1', 'restart-2'].map((s) => `${keyPrefix}${s}`);
    const watched = await openSessions(sids);
    const rescansBefore = [rescanFound(hubA), rescanFound(hubB)];
    await dependency('down', 'redis');
    // Long enough for the hubs' reconnect delays to grow, so the write below often beats them.
    await sleep(3000);
    await dependency('up', 'redis');
    // Written at once, while the hubs' watches wait out their reconnect delay.
    const store = await RedisStore.connect({ url: dependencyAddress.redisUrl, namespace: keyPrefix });
    const writtenAt = Date.now();
    await Promise.all(sids.map((sid) => store.set(blacklistKey(sid), '1', { ttlSeconds: 300 })));
    await store.close();
    const result = await outcome(watched, () => writtenAt);
    figures.push(
      `Redis restart: ${watched.length} kills, missed ${result.missed}, ${result.worst} ms after the write at worst ` +
        `(found by the rescans: hub A ${rescanFound(hubA)}, hub B ${rescanFound(hubB)}; before ${rescansBefore.join(', ')})`,
    );
    assert.equal(result.missed, 0, 'kills missed');
    await waitFor(async () => (await fetch(`${hubA.apiUrl}/ready`)).status === 200, {
      what: 'hub A ready again',
    });
    await waitFor(async () => (await fetch(`${hubB.apiUrl}/ready`)).status === 200, {
      what: 'hub B ready again',
    });
  });

  it('kills written while Redis is paused 5 s land when it goes on', async () => {
    const sids = ['pause-1', 'pause-2'].map((s) => `${keyPrefix}${s}`);
    const watched = await openSessions(sids);
    pauseDependency('redis', true);
    let resumedAt = 0;
    try {
      const blacklisting = Promise.all(sids.map(blacklistThroughService));
      await sleep(5000);
      assert.ok(
        watched.every((w) => w.endedAt === undefined),
        'nothing could be killed while Redis was paused',
      );
      pauseDependency('redis', false);
      resumedAt = Date.now();
      await blacklisting;
    } finally {
      pauseDependency('redis', false);
    }
    const result = await outcome(watched, () => resumedAt);
    figures.push(
      `Redis paused 5 s: ${watched.length} kills, missed ${result.missed}, ${result.worst} ms after Redis went on at worst`,
    );
    assert.equal(result.missed, 0, 'kills missed');
  });
});
