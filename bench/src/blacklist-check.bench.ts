/**
 * The session blacklist check on Redis (performance-anchors.md §6.3 S1, S3):
 * - S1: `BlacklistCheck.isBlacklisted` (through RedisStore: one PTTL per check, no negative cache,
 *   the default) against a raw ioredis `EXISTS` loop on a client with the store's connection
 *   settings. Latency at a fixed offered rate of 5k checks/s (open loop: each check is due at its
 *   scheduled time and timed from it, so a stall is not hidden by coordinated omission; p99 goal
 *   ≤ 1 ms) and closed-loop throughput with 64 checks in flight (goal ≥ 0.8× raw). Every checked
 *   session is not blacklisted, so each check costs a round trip (the worst case); a second
 *   throughput row mixes in 10 % blacklisted sessions, which the check answers from its cache.
 * - S3: SessionBlacklist.add on one store connection until another connection (a second replica)
 *   hears the change: the path a kill takes to every hub (p99 goal ≤ 10 ms).
 *
 * Method (§6.1): the two sides alternate (raw, ours, raw, ours …) for 5 rounds in one process,
 * pinned to cpu1 when taskset exists; medians and the ratio of medians are printed. Bounded: about
 * 45 s. Needs Redis (`make deps-up`; REDIS_URL or REDIS_PORT,
 * default redis://127.0.0.1:6379). Run: `node bench/src/blacklist-check.bench.ts`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import { BlacklistCheck, blacklistKey, blacklistPrefix } from '@gatehouse/auth';
import { SessionBlacklist } from '@gatehouse/blacklist';
import { RedisStore } from '@gatehouse/store/redis';
import { Redis } from 'ioredis';
import { boxLine, formatRate, formatRatio, interleave, median, percentile } from './harness/index.ts';

const redisUrl = process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`;
const rounds = 5;
const throughputMs = 1000;
const latencyMs = 2000;
const offeredRate = 5000;
const inFlight = 64;
const sessions = 10_000;
const propagationSamples = 300;

type Check = (sessionId: string) => Promise<unknown>;

interface Latency {
  p50: number;
  p99: number;
  max: number;
}

/**
 * Checks per second with `inFlight` checks outstanding, for `ms`; pushes the CPU time this process
 * spent per check (µs) to `cpu`, a steadier measure than the rate on a busy box.
 */
async function throughput(check: Check, ids: string[], ms: number, cpu: number[] = []): Promise<number> {
  let done = 0;
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const deadline = start + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      await check(ids[next]!);
      next = next + 1 === ids.length ? 0 : next + 1;
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const spent = process.cpuUsage(cpuBefore);
  cpu.push((spent.user + spent.system) / done);
  return done / ((performance.now() - start) / 1000);
}

/** Latency (ms) of checks issued at `rate` per second for `ms`, each timed from when it was due. */
async function openLoopLatency(check: Check, ids: string[], rate: number, ms: number): Promise<Latency> {
  const histogram = createHistogram();
  const total = Math.floor((rate * ms) / 1000);
  const start = performance.now();
  let issued = 0;
  let settled = 0;
  await new Promise<void>((resolve, reject) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      for (; issued < due; issued++) {
        const scheduledAt = start + (issued * 1000) / rate;
        check(ids[issued % ids.length]!).then(() => {
          histogram.record(Math.max(1, Math.round((performance.now() - scheduledAt) * 1e6)));
          if (++settled === total) resolve();
        }, reject);
      }
      // setImmediate, not a timer: a 1 ms timer tick would itself add up to 1 ms to every check.
      if (issued < total) setImmediate(tick);
    };
    tick();
  });
  return {
    p50: histogram.percentile(50) / 1e6,
    p99: histogram.percentile(99) / 1e6,
    max: histogram.max / 1e6,
  };
}

/** Time (ms) from SessionBlacklist.add on one connection until another one hears the write. */
async function propagation(writer: RedisStore, listener: RedisStore): Promise<number[]> {
  const waiting = new Map<string, () => void>();
  const unwatch = await listener.watch(blacklistPrefix, (change) => {
    if (change.kind === 'set') waiting.get(change.key)?.();
  });
  const blacklist = new SessionBlacklist(writer);
  const samples: number[] = [];
  try {
    for (let i = 0; i < propagationSamples; i++) {
      const sessionId = `propagated-${i}`;
      const heard = new Promise<void>((resolve) => waiting.set(blacklistKey(sessionId), resolve));
      const start = performance.now();
      await blacklist.add(sessionId, 60);
      await heard;
      samples.push(performance.now() - start);
      waiting.delete(blacklistKey(sessionId));
    }
  } finally {
    await unwatch();
  }
  return samples;
}

function pinToCpu1(): string {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    return 'bench pinned to cpu1';
  } catch {
    return 'not pinned (no taskset)';
  }
}

const ms = (n: number) => `${n.toFixed(3)} ms`;

/** Other work on the box skews latency most: the report says how busy it was. */
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

async function main(): Promise<void> {
  const pinning = pinToCpu1();
  const namespace = `gw-bench-${randomUUID().slice(0, 8)}:`;
  const store = await RedisStore.connect({ url: redisUrl, namespace });
  const peer = await RedisStore.connect({ url: redisUrl, namespace });
  // The store's connection settings (packages/store/src/redis-connection.ts), on a raw client.
  const raw = new Redis(redisUrl, {
    commandTimeout: 5000,
    connectionName: 'bench-raw-exists',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  await new Promise((resolve) => raw.once('ready', resolve));
  const check = new BlacklistCheck(store);
  await check.start();
  const version = (await raw.info('server')).match(/redis_version:(\S+)/)?.[1] ?? '?';
  console.log(`Blacklist check — ${boxLine({ redis: version })}; ${pinning}; ${load()}`);

  try {
    const clean = Array.from({ length: sessions }, (_, i) => `session-${i}`);
    const mixed = clean.map((id, i) => (i % 10 === 0 ? `banned-${i}` : id));
    for (const id of mixed.filter((s) => s.startsWith('banned-')))
      await store.set(blacklistKey(id), '1', { ttlSeconds: 600 });
    const ours: Check = (id) => check.isBlacklisted(id);
    const exists: Check = (id) => raw.exists(namespace + blacklistKey(id));

    await throughput(exists, clean, 500);
    await throughput(ours, clean, 500);
    console.log(
      `\nS1 throughput, ${inFlight} checks in flight, ${rounds} rounds of ${throughputMs} ms per side`,
    );
    const cpu = { exists: [] as number[], ours: [] as number[] };
    const all = await interleave(
      rounds,
      {
        baseline: () => throughput(exists, clean, throughputMs, cpu.exists),
        candidate: () => throughput(ours, clean, throughputMs, cpu.ours),
      },
      (i, a, b) => console.log(`  round ${i}: EXISTS ${formatRate(a)}, isBlacklisted ${formatRate(b)}`),
    );
    const some = await interleave(rounds, {
      baseline: () => throughput(exists, mixed, throughputMs),
      candidate: () => throughput(ours, mixed, throughputMs),
    });

    console.log(
      `\nS1 latency at ${offeredRate} checks/s (open loop), ${rounds} rounds of ${latencyMs} ms per side`,
    );
    const latency = { exists: [] as Latency[], ours: [] as Latency[] };
    for (let i = 0; i < rounds; i++) {
      const a = await openLoopLatency(exists, clean, offeredRate, latencyMs);
      const b = await openLoopLatency(ours, clean, offeredRate, latencyMs);
      latency.exists.push(a);
      latency.ours.push(b);
      console.log(`  round ${i + 1}: EXISTS p99 ${ms(a.p99)}, isBlacklisted p99 ${ms(b.p99)}`);
    }

    const times = await propagation(store, peer);

    const pick = (runs: Latency[], key: keyof Latency) => median(runs.map((r) => r[key]));
    console.log(`\nsummary (medians of the rounds; ${load()})`);
    console.log(
      `  S1 throughput, none blacklisted:  EXISTS ${formatRate(all.baselineMedian)}, isBlacklisted ${formatRate(all.candidateMedian)}, ratio ${formatRatio(all.ratio)} (goal ≥ 0.80×)`,
    );
    console.log(
      `  S1 client CPU per check:          EXISTS ${median(cpu.exists).toFixed(1)} µs, isBlacklisted ${median(cpu.ours).toFixed(1)} µs, ratio ${formatRatio(median(cpu.ours) / median(cpu.exists))}`,
    );
    console.log(
      `  S1 throughput, 10 % blacklisted:  EXISTS ${formatRate(some.baselineMedian)}, isBlacklisted ${formatRate(some.candidateMedian)}, ratio ${formatRatio(some.ratio)}`,
    );
    for (const [name, runs] of [
      ['EXISTS', latency.exists],
      ['isBlacklisted', latency.ours],
    ] as const)
      console.log(
        `  S1 latency at 5k/s, ${name.padEnd(13)} p50 ${ms(pick(runs, 'p50'))}, p99 ${ms(pick(runs, 'p99'))}, max ${ms(pick(runs, 'max'))}`,
      );
    console.log(`  S1 isBlacklisted p99 goal ≤ 1 ms: ${pick(latency.ours, 'p99') <= 1 ? 'met' : 'NOT met'}`);
    console.log(
      `  S3 add → heard on another connection (${propagationSamples} adds): p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))}, max ${ms(Math.max(...times))} (goal p99 ≤ 10 ms)`,
    );
  } finally {
    await check.close();
    for (const key of await store.keys('')) await store.delete(key);
    await store.close();
    await peer.close();
    raw.disconnect();
  }
}

await main();
