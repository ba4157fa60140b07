// test-lane: alone (the surviving replica needs most of a core: beside another file's load it falls behind its 5,000 clients and the socket.io ones, with their 20 s connect timeout, never get in)
/**
 * The fault suite's storm row: a replica holding thousands of clients dies, and they all come back
 * at once. Real processes on the real brokers: two hub replicas, a publisher, Kafka fan-out, Redis
 * store. STORM_CLIENTS clients (default 5,000: SSE, WebSocket, long-polling and socket.io, a
 * quarter each, half of them with a JWT) connect through a balancer that knows only hub A until A dies,
 * from 50 loopback addresses (as many client addresses as a real crowd has: the per-address
 * budget keeps its default). A producer posts events at STORM_RATE/s (default 10) in 5 groups.
 * Then A is killed (SIGKILL) and the balancer sends everyone to B: every client comes back on B,
 * resuming from its last position, with the hub's default reconnect and per-address limits.
 *
 * Figures printed: lost and duplicated (client, event) pairs, time back to receiving per client
 * (p50, p99, max: from the kill to its first frame from B), and the refusals the clients saw by
 * status (429s among them). Asserted: every client back, 0 lost, 0 duplicated, no resync. The goal
 * p99 <= 5 s at 5,000 is printed, not asserted (speed is measured, not a test's pass condition).
 *
 * Why alone: once everyone is back, B spends about 0.8 of a core on them (1,250 long-polling clients
 * poll twice a second at this rate; 10,000 stream writes a second). Beside a second file's load at
 * the same priority B got a quarter of a core: its accept queue stayed full (4,096) for 100 s, so
 * the socket.io clients' handshakes waited past their 20 s connect timeout again and again while the
 * other transports, which wait as long as it takes, came back. Measured with two busy loops: at
 * nice 0 the socket.io quarter never came back (2 of 1,250 after 240 s); at nice 10 all 5,000 were
 * back in 64 s. The CI's deployment stages are no two busy loops: a cluster and its pods, some 40
 * runnable threads at nice 10, outweigh them, and beside them B got about a third of a core and the
 * socket.io quarter of 5,000 never came back (0 of 1,250, 9,694 connect timeouts). So `make test`
 * runs STORM_CLIENTS=2000, which that share of a core carries (beside two busy loops at nice 0
 * and the rest of a CI run: all back in 89 s, 0 lost, 0 duplicated); run the 5,000 on a quiet machine.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { signJwt } from '@gatehouse/auth';
import { KafkaBus } from '@gatehouse/bus/all';
import { scanKeys } from '@gatehouse/store/redis';
import {
  dependencyAddress,
  exitAfterFileWhenHung,
  freePort,
  gatewayEnv,
  ResumingLongPollClient,
  ResumingSocketIoClient,
  ResumingSseClient,
  ResumingWsClient,
  type ServiceProcess,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import { CarefulProducer } from '../src/careful-producer.ts';
import { ReplicaBalancer } from '../src/replica-balancer.ts';
import { percentile } from '../src/percentile.ts';

after(() => exitAfterFileWhenHung());

const clientCount = Number(process.env['STORM_CLIENTS'] ?? 5000);
const rate = Number(process.env['STORM_RATE'] ?? 10);
const groups = 5;
const addresses = 50;
const run = uniqueName('storm');
const jwtSecret = 'storm-secret-long-enough-for-hs256-signing';
const allTransports = ['sse', 'ws', 'longpolling', 'socketio'] as const;
/** STORM_TRANSPORTS narrows the mix (comma-separated), e.g. to see one transport's storm alone. */
const transports = (process.env['STORM_TRANSPORTS']?.split(',') ?? allTransports).filter(
  (t): t is (typeof allTransports)[number] => (allTransports as readonly string[]).includes(t),
);

type Client = ResumingSseClient | ResumingWsClient | ResumingLongPollClient | ResumingSocketIoClient;

/** CPU time a process has used (user + system, from /proc; clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Removes the run's keys: thousands of long-poll records would otherwise expire an hour later, all
 * at once, in the middle of another test's wait for an expiry notification.
 */
async function removeKeys(prefix: string): Promise<void> {
  const redis = new Redis(dependencyAddress.redisUrl);
  try {
    const keys = await scanKeys(redis, `${prefix}*`);
    for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
  } finally {
    redis.disconnect();
  }
}

/** Per transport: clients open, back after the kill, and the refusals they saw. */
function progress(clients: Client[]): string {
  return transports
    .map((t, k) => {
      const mine = clients.filter((_, i) => i % transports.length === k);
      const refusals = mine.flatMap((c) => c.record.refusals);
      const back = mine.filter((c) => c.record.frameAfterWatch !== undefined).length;
      return `${t}: open ${mine.filter((c) => c.record.open).length}, back ${back} of ${mine.length}, refusals [${refusals.slice(0, 10)}] (${refusals.length})`;
    })
    .join('; ');
}

describe('reconnect storm (fault suite row)', () => {
  // Its own bound, above the suite's per-test one: 5,000 clients on a box at load 4 take their time.
  it(`brings ${clientCount} clients of a killed replica back on the other, losing nothing`, {
    timeout: 600_000,
  }, async () => {
    const topic = `${run}-gw-events`;
    const bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    await bus.ensureTopic(topic, 1);
    await bus.close();
    const shared = {
      ...gatewayEnv({ run, jwtSecret }),
      EXTRACTORS: JSON.stringify({
        greeting: { name: { stable_field_index: 0, event: { json_pointer: '/data/name' } } },
      }),
      LONGPOLL_TIMEOUT: '5s',
      // Each address holds clientCount / addresses connections on the survivor once the storm is
      // over (STORM_CLIENTS may be raised); a long-poll session polled on both replicas, or a
      // socket.io client between sessions, holds two for a moment. The caps have tests of their
      // own (connection-caps.test.ts); here they must not shape the storm.
      MAX_CONNECTIONS_PER_ADDRESS: String(2 * Math.ceil(clientCount / addresses)),
    };
    const spawn = async (name: string, entry: string, env: Record<string, string>) =>
      spawnService({
        entry,
        name,
        publicPort: true,
        env: { ...shared, ...env, INBOUND_PORT: String(await freePort()) },
        readyTimeoutMs: 60_000,
      });
    const processes: ServiceProcess[] = [];
    const clients: Client[] = [];
    const balancer = new ReplicaBalancer();
    const publisher = await spawn('publisher', 'services/publisher/src/main.ts', {
      KAFKA_SOURCE_TOPICS: '',
      NATS_SOURCE_TOPICS: '',
    });
    processes.push(publisher);
    const producer = new CarefulProducer({ publishers: [publisher.publicUrl!], rate, groups, idPrefix: run });
    try {
      const [hubA, hubB] = await Promise.all(
        ['a', 'b'].map((r) =>
          spawn(`hub-${r}`, 'services/push-hub/src/main.ts', {
            REPLICA_ID: `${run}-hub-${r}`,
            // The first connects of every client (not the storm) are new connections: sized for them.
            MAX_CONNECTIONS_PER_MINUTE: String(2 * clientCount),
          }),
        ),
      );
      processes.push(hubA!, hubB!);
      balancer.add(hubA!.publicUrl!);

      const jwt = await signJwt(
        { username: 'storm', exp: Math.floor(Date.now() / 1000) + 3600 },
        { alg: 'HS256', key: jwtSecret },
      );
      for (let i = 0; i < clientCount; i++) {
        const subscriptions = JSON.stringify([
          { eventType: 'greeting', oneOf: [{ name: `g${i % groups}` }] },
        ]);
        const withJwt = i % 8 >= 4;
        const options = { localAddress: `127.0.0.${2 + (i % addresses)}` };
        const query = `subscriptions=${encodeURIComponent(subscriptions)}${withJwt ? `&jwt=${jwt}` : ''}`;
        const transport = transports[i % transports.length]!;
        clients.push(
          transport === 'sse'
            ? new ResumingSseClient(balancer.pick, `/_gw/v1/connection/sse?${query}`, options)
            : transport === 'ws'
              ? new ResumingWsClient(balancer.pick, `/_gw/v1/connection/ws?${query}`, options)
              : transport === 'longpolling'
                ? new ResumingLongPollClient(
                    balancer.pick,
                    `/_gw/v1/connection/longpolling?${query}`,
                    options,
                  )
                : new ResumingSocketIoClient(balancer.pick, subscriptions, {
                    ...options,
                    ...(withJwt && { jwt }),
                  }),
        );
      }
      const connectStarted = Date.now();
      for (const [i, c] of clients.entries()) {
        c.start();
        if (i % 250 === 249) await sleep(100);
      }
      await waitFor(() => clients.every((c) => c.record.open), {
        timeoutMs: 180_000,
        intervalMs: 500,
        what: `every client connected (${clients.filter((c) => c.record.open).length} of ${clientCount})`,
      });
      const connectedIn = Date.now() - connectStarted;
      const refusalsBefore = clients.map((c) => c.record.refusals.length);
      producer.start();
      // Every client has a position (a frame) before the first event it is owed.
      await sleep(3000);

      const bCpu0 = cpuMsOf(hubB!.pid);
      const me0 = process.cpuUsage();
      for (const c of clients) c.watch();
      const killedAt = Date.now();
      if (process.env['SIO_DEBUG'])
        console.log('killed at', killedAt % 1_000_000, 'A', hubA!.publicUrl, 'B', hubB!.publicUrl);
      process.kill(hubA!.pid, 'SIGKILL');
      await hubA!.exited;
      // The balancer sends everyone to B from now on (until now every poll went to A).
      balancer.remove(hubA!.publicUrl!);
      balancer.add(hubB!.publicUrl!);
      // Back: a frame from B (long-polling clients between two polls never saw A go).
      await waitFor(() => clients.every((c) => c.record.frameAfterWatch !== undefined && c.record.open), {
        timeoutMs: 240_000,
        intervalMs: 250,
        what: 'every client back',
      }).catch(async (err: Error) => {
        const metrics = (await (await fetch(`${hubB!.apiUrl}/metrics`)).text())
          .split('\n')
          .filter((l) => /^gw_(connections|connections_rejected_total|connects_admitted_total)\{/.test(l));
        throw new Error(
          `${err.message}: ${progress(clients)}; hub B: ${metrics.join(' ')}; ${hubB!.output().slice(-2000)}`,
        );
      });
      const allBackIn = Date.now() - killedAt;
      const clientCpu = process.cpuUsage(me0);
      const cpu = `CPU until all back: hub B ${cpuMsOf(hubB!.pid) - bCpu0} ms, the clients' process ${Math.round((clientCpu.user + clientCpu.system) / 1000)} ms`;
      // What B spends once everyone is back: the steady state the storm had to share B with.
      const steady0 = cpuMsOf(hubB!.pid);
      await sleep(3000);
      const steadyCpu = `hub B CPU after: ${Math.round((cpuMsOf(hubB!.pid) - steady0) / 3)} ms per s`;
      await producer.stop();
      const events = producer.events.filter((e) => e.acceptedAt !== undefined);
      const owed = (i: number) => events.filter((e) => e.group === i % groups);
      const missing = () =>
        clients.reduce((n, c, i) => n + owed(i).filter((e) => !c.record.seen.has(e.n)).length, 0);
      await waitFor(() => missing() === 0, { timeoutMs: 60_000, intervalMs: 500, what: 'every event' }).catch(
        () => {},
      );
      await sleep(1000); // late copies

      const lost = missing();
      let lossReports = 5;
      const lostBy = transports.map((t, k) => {
        const mine = clients.filter((_, i) => i % transports.length === k);
        const gaps = mine.map((c) =>
          owed(clients.indexOf(c))
            .filter((e) => !c.record.seen.has(e.n))
            .map((e) => e.n),
        );
        const first = gaps.find((g) => g.length > 0);
        return `${t} ${gaps.reduce((n, g) => n + g.length, 0)} in ${gaps.filter((g) => g.length > 0).length} clients${first ? ` (e.g. ${first.slice(0, 8).join(',')})` : ''}`;
      });
      // Who lost what, for a failure to be read: the first few clients with gaps and their story.
      for (const [i, c] of clients.entries()) {
        const gaps = owed(i).filter((e) => !c.record.seen.has(e.n));
        if (gaps.length === 0) continue;
        console.log(
          `lost by client ${i} (${transports[i % transports.length]}): events ${gaps.map((e) => `${e.n} (accepted ${(e.acceptedAt ?? 0) - killedAt} ms after the kill)`).join(', ')}; ` +
            `back ${c.record.frameAfterWatch! - killedAt} ms after the kill, reconnects after ${c.record.backAfter.join(', ')} ms, refusals [${c.record.refusals}]`,
        );
        if (--lossReports === 0) break;
      }
      const duplicated = clients.reduce((n, c) => n + c.record.repeats.length, 0);
      const resyncs = clients.reduce((n, c) => n + c.record.resyncs, 0);
      const back = clients.map((c) => c.record.frameAfterWatch! - killedAt);
      const refusals = new Map<number, number>();
      for (const [i, c] of clients.entries())
        for (const status of c.record.refusals.slice(refusalsBefore[i]))
          refusals.set(status, (refusals.get(status) ?? 0) + 1);
      const byTransport = transports.map((t, k) => {
        const mine = back.filter((_, i) => i % transports.length === k);
        return `${t} p99 ${percentile(mine, 99)} ms`;
      });
      console.log(
        `reconnect storm: ${clientCount} clients (${clientCount / transports.length} each of ${transports.join(', ')}; ` +
          `half with a JWT; from ${addresses} addresses) connected to hub A in ${connectedIn} ms; A killed; ` +
          `all back on B in ${allBackIn} ms; back to receiving p50 ${percentile(back, 50)} ms, ` +
          `p99 ${percentile(back, 99)} ms (goal <= 5000), max ${Math.max(...back)} ms (${byTransport.join(', ')}); ` +
          `refusals seen ${JSON.stringify(Object.fromEntries(refusals))} (429s: ${refusals.get(429) ?? 0}); ` +
          `${events.length} events at ${rate}/s: lost ${lost} (${lostBy.join(', ')}), duplicated ${duplicated}, resyncs ${resyncs}; ${cpu}; ${steadyCpu}`,
      );
      assert.equal(lost, 0, 'events lost');
      assert.equal(duplicated, 0, 'events duplicated');
      assert.equal(resyncs, 0, 'clients told to resync');
    } finally {
      await producer.stop(0);
      for (const c of clients) c.stop();
      await Promise.all(processes.map((p) => p.stop()));
      await removeKeys(`${run}:`);
    }
  });
});
