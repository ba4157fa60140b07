/**
 * The cluster bench's scenarios (cluster-scale.bench.ts): S2, N connections held by K replicas
 * under a steady event rate, then one replica SIGKILLed; S4, the same connections and events over
 * 1, 2, 4 … replicas plus one bystander replica whose clients want none of the flowing types.
 * Both count every (client, event) pair (client-process.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadAverage } from '../harness/box.ts';
import { percentile } from '../harness/stats.ts';
import { startFleetOn } from './clients.ts';
import {
  boxBusySeconds,
  type Counted,
  type CpuWindow,
  checkCapacity,
  countedOf,
  diff,
  type LatencyFigures,
  latencyOf,
  meterOf,
  settledTally,
  untilConnected,
  window,
} from './measure.ts';
import { Producer } from './producer.ts';
import { brokerPids, rssOf, startCluster } from './topology.ts';

export type { Counted, CpuWindow, LatencyFigures } from './measure.ts';

export interface ClusterOptions {
  connections: number;
  replicas: number;
  /** Events per second. */
  rate: number;
  /** Event types published, and how many of them each client subscribes to. */
  types: number;
  subscriptions: number;
  /** Length of the measured steady window, s. */
  seconds: number;
  /** Connects per second, all client processes together. */
  connectRate: number;
  /** Most connections one client process holds. */
  perClientProcess: number;
  /** Source addresses 127.0.0.2 … (at most 200). */
  addresses: number;
  /** How long all clients get to connect, and the killed replica's clients to come back, s. */
  connectTimeout: number;
  recoveryTimeout: number;
  /** LONGPOLL_TIMEOUT of the replicas (undefined: the service's default, 5s). */
  longpollTimeout?: string | undefined;
  log: (line: string) => void;
}

export interface S2Result {
  options: Omit<ClusterOptions, 'log'>;
  loadAtStart: number;
  loadAtEnd: number;
  /** Where the run stopped before its end, and why (undefined: it ran to the end). */
  stoppedAt: string | undefined;
  connectSeconds: number;
  refusals: Record<number, number>;
  /** Per replica: connections held, RSS idle and loaded (bytes). */
  memory: Array<{ name: string; connections: number; idleRss: number; loadedRss: number }>;
  clientRss: number;
  steady: CpuWindow | undefined;
  latency: Record<string, Record<string, LatencyFigures>>;
  kill:
    | {
        replica: string;
        watched: number;
        back: number;
        backP50: number;
        backP99: number;
        backMax: number;
        byTransport: Record<string, { watched: number; back: number }>;
        cpu: CpuWindow;
      }
    | undefined;
  counted: Counted | undefined;
  producerFailures: Record<string, number>;
}

function maxEventsFor(o: ClusterOptions, extraSeconds: number): number {
  return Math.ceil(o.rate * (o.seconds + extraSeconds)) + 100;
}

/** S2: hold, steady rate, kill one replica, count. */
export async function runS2(o: ClusterOptions): Promise<S2Result> {
  const { log, ...options } = o;
  // After the kill K−1 replicas hold everyone.
  const limit = checkCapacity(o, Math.max(1, o.replicas - 1));
  const loadAtStart = loadAverage();
  log(
    `S2: ${o.connections} connections, ${o.replicas} replicas, ${o.rate} events/s, load ${loadAtStart.toFixed(1)}`,
  );
  const cluster = await startCluster(
    o.replicas,
    limit,
    o.longpollTimeout ? { LONGPOLL_TIMEOUT: o.longpollTimeout } : {},
  );
  const brokers = brokerPids();
  log(`  cluster up (${cluster.run}); kafka pid ${brokers.kafka}, redis pid ${brokers.redis}`);
  await sleep(2000);
  const idleRss = cluster.replicas.map((r) => rssOf(r.service.pid));
  // Warm-up 3 s + steady + up to the recovery timeout + 10 s after it.
  const maxEvents = maxEventsFor(o, 3 + o.recoveryTimeout + 15);
  const processes = Math.ceil(o.connections / o.perClientProcess);
  const fleet = await startFleetOn(cluster, { ...o, clients: o.connections, maxEvents });
  const producer = new Producer(cluster.publisherUrl, o.rate, o.types, cluster.run, maxEvents);
  const result: S2Result = {
    options,
    loadAtStart,
    loadAtEnd: Number.NaN,
    stoppedAt: undefined,
    connectSeconds: Number.NaN,
    refusals: {},
    memory: [],
    clientRss: 0,
    steady: undefined,
    latency: {},
    kill: undefined,
    counted: undefined,
    producerFailures: {},
  };
  try {
    const meter = meterOf(cluster, fleet, brokers);
    const t0 = performance.now();
    const connected = await untilConnected(fleet, o.connections, o.connectTimeout, log);
    result.connectSeconds = (performance.now() - t0) / 1000;
    result.refusals = connected.status.refusals;
    if (connected.stoppedAt) {
      result.stoppedAt = `connect: ${connected.stoppedAt}`;
      return result;
    }
    log(
      `  ${o.connections} open in ${result.connectSeconds.toFixed(1)} s over ${processes} client processes`,
    );
    await sleep(3000);
    const held = (await fleet.status()).openByPort;
    result.memory = cluster.replicas.map((r, i) => ({
      name: r.name,
      connections: held[r.port] ?? 0,
      idleRss: idleRss[i]!,
      loadedRss: rssOf(r.service.pid),
    }));
    result.clientRss = fleet.pids().reduce((a, p) => a + rssOf(p), 0);

    await fleet.phase('warm-up');
    producer.start();
    await sleep(3000);
    await fleet.phase('steady');
    result.steady = await window(meter, fleet, producer, o.seconds);
    log(
      `  steady: ${result.steady.events} events, ${result.steady.deliveries} deliveries in ${result.steady.seconds.toFixed(1)} s, load ${loadAverage().toFixed(1)}`,
    );

    if (o.replicas >= 2) {
      await fleet.phase('recovery');
      const victim = cluster.replicas[0]!;
      const cpu0 = meter.snapshot();
      const b0 = boxBusySeconds();
      const d0 = (await fleet.status()).deliveries;
      const e0 = producer.events.length;
      const k0 = performance.now();
      await fleet.remove(victim.port);
      const killedAt = Date.now();
      await cluster.kill(victim);
      log(`  ${victim.name} killed (SIGKILL); waiting for its clients`);
      const deadline = Date.now() + o.recoveryTimeout * 1000;
      let recovery = await fleet.recovery(killedAt);
      let lastLog = Date.now();
      while (recovery.backMs.length < recovery.watched && Date.now() < deadline) {
        await sleep(250);
        recovery = await fleet.recovery(killedAt);
        if (Date.now() - lastLog > 5000) {
          lastLog = Date.now();
          log(
            `  back: ${recovery.backMs.length} of ${recovery.watched} (${JSON.stringify(recovery.byTransport)}), load ${loadAverage().toFixed(1)}`,
          );
        }
      }
      const cpu1 = meter.snapshot();
      const d1 = (await fleet.status()).deliveries;
      const back = recovery.backMs;
      result.kill = {
        replica: victim.name,
        watched: recovery.watched,
        back: back.length,
        backP50: percentile(back, 50),
        backP99: percentile(back, 99),
        backMax: back.length ? Math.max(...back) : Number.NaN,
        byTransport: recovery.byTransport,
        cpu: {
          seconds: (performance.now() - k0) / 1000,
          boxBusy: boxBusySeconds() - b0,
          cpu: diff(cpu0, cpu1),
          events: producer.events.length - e0,
          deliveries: d1 - d0,
        },
      };
      log(`  back: ${back.length} of ${recovery.watched}, the last ${result.kill.backMax} ms after the kill`);
      if (back.length < recovery.watched)
        result.stoppedAt = `recovery: ${back.length} of ${recovery.watched} back after ${o.recoveryTimeout} s`;
      await fleet.phase('after');
      await sleep(5000);
    }
    await producer.stop();
    // Up to a minute for late deliveries: a resumed client may still be catching up on a busy box.
    const tally = await settledTally(fleet, producer, 60_000);
    result.counted = countedOf(tally);
    result.latency = latencyOf(tally);
    result.producerFailures = Object.fromEntries(producer.failures);
    return result;
  } finally {
    await producer.stop(0);
    result.loadAtEnd = loadAverage();
    await fleet.stop();
    await cluster.stop();
  }
}

export interface S4Row {
  replicas: number;
  /** Connections per replica (the bystander's apart). */
  held: number[];
  /** The connections open, no events: every replica's own rate (timers, GC, polls timing out). */
  quiet: CpuWindow;
  /** Events of a type nobody subscribes to, at `unwantedRate`. */
  unwanted: CpuWindow;
  steady: CpuWindow;
  counted: Counted;
  latency: Record<string, LatencyFigures>;
}

export interface S4Result {
  options: Omit<ClusterOptions, 'log' | 'replicas'>;
  bystanders: number;
  unwantedRate: number;
  loadAtStart: number;
  loadAtEnd: number;
  rows: S4Row[];
  stoppedAt: string | undefined;
}

/** S4: the same connections and events over each replica count, plus one bystander replica. */
export async function runS4(
  o: Omit<ClusterOptions, 'replicas'>,
  replicaCounts: number[],
  bystanders: number,
  unwantedRate: number,
): Promise<S4Result> {
  const { log, ...options } = o;
  const result: S4Result = {
    options,
    bystanders,
    unwantedRate,
    loadAtStart: loadAverage(),
    loadAtEnd: Number.NaN,
    rows: [],
    stoppedAt: undefined,
  };
  for (const k of replicaCounts) {
    const limit = checkCapacity(o, k);
    log(
      `S4: ${o.connections} connections over ${k} replicas + a bystander with ${bystanders}, ${o.rate} events/s`,
    );
    const cluster = await startCluster(
      k + 1,
      limit,
      o.longpollTimeout ? { LONGPOLL_TIMEOUT: o.longpollTimeout } : {},
    );
    const brokers = brokerPids();
    const maxEvents = maxEventsFor({ ...o, replicas: k }, 10);
    const fleet = await startFleetOn(cluster, {
      ...o,
      clients: o.connections,
      bystanders,
      replicas: k,
      maxEvents,
    });
    const producer = new Producer(cluster.publisherUrl, o.rate, o.types, cluster.run, maxEvents);
    try {
      const meter = meterOf(cluster, fleet, brokers);
      const connected = await untilConnected(fleet, o.connections + bystanders, o.connectTimeout, log);
      if (connected.stoppedAt) {
        result.stoppedAt = `${k} replicas, connect: ${connected.stoppedAt}`;
        break;
      }
      await sleep(3000);
      const held = (await fleet.status()).openByPort;
      const quiet = await window(meter, fleet, producer, o.seconds);
      // Events nobody wants, at their own rate: what reading and dropping them costs each replica.
      const nobody = new Producer(
        cluster.publisherUrl,
        unwantedRate,
        1,
        `${cluster.run}-nobody`,
        Math.ceil(unwantedRate * (o.seconds + 10)),
        () => 'cl.nobody',
      );
      nobody.start();
      await sleep(2000);
      const unwanted = await window(meter, fleet, nobody, o.seconds);
      await nobody.stop();
      await sleep(2000);
      await fleet.phase('warm-up');
      producer.start();
      await sleep(3000);
      await fleet.phase('steady');
      const steady = await window(meter, fleet, producer, o.seconds);
      await producer.stop();
      const tally = await settledTally(fleet, producer, 20_000);
      const row: S4Row = {
        replicas: k,
        held: cluster.replicas.map((r) => held[r.port] ?? 0),
        quiet,
        unwanted,
        steady,
        counted: countedOf(tally),
        latency: latencyOf(tally)['steady'] ?? {},
      };
      result.rows.push(row);
      log(
        `  ${k} replicas: ${steady.events} events, ${steady.deliveries} deliveries; lost ${row.counted.lost}, duplicated ${row.counted.duplicated}`,
      );
    } finally {
      await producer.stop(0);
      await fleet.stop();
      await cluster.stop();
    }
  }
  result.loadAtEnd = loadAverage();
  return result;
}
