/**
 * S1, RIG's scenarios on a cluster (RIG's docs/performance.md: 1M Kafka messages of 1 kB; 10k–40k
 * clients): `events` records of `bytes` each are produced straight to the fan-out topic, in the
 * publisher's format (a structured CloudEvent with the `ce_type`/`ce_source`/`ce_id` routing
 * headers and the publish stamp), while K replicas hold the clients. Most records are of a type no
 * client subscribes to (RIG's run 1: consumed and dropped); every `relevantEvery`-th one, and the
 * first and the last, is of one of the flowing types and owed to the clients subscribed to it (RIG's
 * runs 2–3, scaled to what the client processes of one two-core box can count). Measured: the
 * production, each replica's time to have read every record (its `gw_fanout_events_total`), the
 * same for a bare kafkajs consume loop beside them (bare-consumer.ts: the ceiling of the client
 * library), the time until every owed pair arrived, CPU per record, and every pair counted.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { publishedAtHeaders } from '@gatehouse/bus';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { dependencyAddress } from '@gatehouse/testkit';
import { Kafka, type Producer as KafkaProducer, logLevel } from 'kafkajs';
import { loadAverage } from '../harness/box.ts';
import { startFleetOn } from './clients.ts';
import {
  type Counted,
  type CpuWindow,
  checkCapacity,
  countedOf,
  diff,
  boxBusySeconds,
  type LatencyFigures,
  latencyOf,
  meterOf,
  settledTally,
  untilConnected,
} from './measure.ts';
import { clientSpec, eventType } from './plan.ts';
import { brokerPids, type Cluster, startCluster } from './topology.ts';

export interface RigOptions {
  /** Client counts, one cluster run each (RIG: 10k and 40k). */
  clientCounts: number[];
  replicas: number;
  events: number;
  bytes: number;
  relevantEvery: number;
  types: number;
  subscriptions: number;
  connectRate: number;
  perClientProcess: number;
  addresses: number;
  connectTimeout: number;
  /** Most seconds from the first record until every replica read all and every pair arrived. */
  timeout: number;
  longpollTimeout?: string | undefined;
  log: (line: string) => void;
}

export interface RigRow {
  clients: number;
  replicas: number;
  /** Relevant events (owed to their subscribers) among `events`. */
  relevant: number;
  owed: number;
  /** Seconds from the first record produced: the last one acknowledged by Kafka. */
  produceSeconds: number;
  /** Seconds from the first record produced until each replica had read all (NaN: not within the timeout). */
  replicaSeconds: number[];
  bareSeconds: number;
  /** Until every owed (client, event) pair had arrived. */
  clientsSeconds: number;
  /** CPU over the run (production start until the clients had everything). */
  cpu: CpuWindow;
  bareCpuSeconds: number;
  counted: Counted;
  latency: LatencyFigures | undefined;
  stoppedAt: string | undefined;
}

export interface RigResult {
  options: Omit<RigOptions, 'log'>;
  loadAtStart: number;
  loadAtEnd: number;
  rows: RigRow[];
}

export async function runRig(o: RigOptions): Promise<RigResult> {
  const { log, ...options } = o;
  const result: RigResult = { options, loadAtStart: loadAverage(), loadAtEnd: Number.NaN, rows: [] };
  for (const clients of o.clientCounts) {
    result.rows.push(await rigRow(o, clients));
    log(rigLine(result.rows.at(-1)!));
  }
  result.loadAtEnd = loadAverage();
  return result;
}

function rigLine(r: RigRow): string {
  if (r.stoppedAt !== undefined) return `  S1 ${r.clients} clients: stopped at ${r.stoppedAt}`;
  return `  S1 ${r.clients} clients: produced in ${r.produceSeconds.toFixed(1)} s; replicas read all in ${r.replicaSeconds.map((s) => s.toFixed(1)).join(', ')} s (bare loop ${r.bareSeconds.toFixed(1)} s); clients had all in ${r.clientsSeconds.toFixed(1)} s; lost ${r.counted.lost}, duplicated ${r.counted.duplicated}`;
}

/** Which records are owed to someone: the first, the last, and every `every`-th. */
function relevantIndexes(events: number, every: number): Set<number> {
  const out = new Set<number>([0, events - 1]);
  for (let i = every; i < events - 1; i += every) out.add(i);
  return out;
}

async function rigRow(o: RigOptions, clients: number): Promise<RigRow> {
  const limit = checkCapacity({ connections: clients, perClientProcess: o.perClientProcess }, o.replicas);
  o.log(`S1: ${o.events} records of ${o.bytes} B to Kafka, ${clients} clients on ${o.replicas} replicas`);
  const cluster = await startCluster(
    o.replicas,
    limit,
    o.longpollTimeout ? { LONGPOLL_TIMEOUT: o.longpollTimeout } : {},
  );
  const brokers = brokerPids();
  const relevant = relevantIndexes(o.events, o.relevantEvery);
  const mix = { types: o.types, subscriptions: o.subscriptions, replicas: o.replicas };
  // A stream with a past, as a deployment's is: the clients connect after an event nobody wants, so
  // each connection starts at a position. On a topic that never held an event a long-polling
  // connection starts without one, and its first poll after the ring turned over is told to resync
  // (bench/results/2026-11-29-vm-cluster-2.md, fault 3): that edge is the first minutes of a new
  // deployment, not this scenario.
  await produceOpening(cluster);
  await untilRead(cluster, 1);
  const fleet = await startFleetOn(cluster, { ...o, clients, maxEvents: relevant.size });
  const accepted = Array.from({ length: relevant.size }, (_, j) => j % o.types);
  let owed = 0;
  for (let i = 0; i < clients; i++) {
    const types = clientSpec(i, mix).types;
    for (const t of accepted) if (types.includes(t)) owed++;
  }
  const bare = fork(fileURLToPath(new URL('./bare-consumer.ts', import.meta.url)), [
    cluster.fanoutTopic,
    String(o.events + 1),
  ]);
  const row: RigRow = {
    clients,
    replicas: o.replicas,
    relevant: relevant.size,
    owed,
    produceSeconds: Number.NaN,
    replicaSeconds: cluster.replicas.map(() => Number.NaN),
    bareSeconds: Number.NaN,
    clientsSeconds: Number.NaN,
    cpu: { seconds: 0, boxBusy: 0, cpu: {}, events: o.events, deliveries: 0 },
    bareCpuSeconds: Number.NaN,
    counted: undefined as unknown as Counted,
    latency: undefined,
    stoppedAt: undefined,
  };
  try {
    const connected = await untilConnected(fleet, clients, o.connectTimeout, o.log);
    if (connected.stoppedAt) {
      row.stoppedAt = `connect: ${connected.stoppedAt}`;
      return row;
    }
    const bareDone = messageOf(bare, 'done');
    await messageOf(bare, 'ready');
    await sleep(3000);
    await fleet.phase('s1');
    const meter = meterOf(cluster, fleet, brokers);
    const cpu0 = meter.snapshot();
    const b0 = boxBusySeconds();
    const t0 = Date.now();
    const produced = produce(cluster, o, relevant).then(
      () => (row.produceSeconds = (Date.now() - t0) / 1000),
    );
    void bareDone.then((m) => {
      row.bareSeconds = (m['at'] as number) / 1000 - t0 / 1000;
      row.bareCpuSeconds = m['cpuSeconds'] as number;
    });
    const deadline = t0 + o.timeout * 1000;
    let lastLog = 0;
    // Once every replica has read everything, a minute without a new pair ends the wait: what is
    // missing then is counted below, not waited for until the timeout.
    let lastProgress = { deliveries: -1, at: Date.now() };
    while (Date.now() < deadline) {
      await sleep(500);
      const counts = await Promise.all(cluster.replicas.map((r) => recordsRead(r.service.apiUrl)));
      counts.forEach((n, i) => {
        if (n >= o.events + 1 && Number.isNaN(row.replicaSeconds[i]!))
          row.replicaSeconds[i] = (Date.now() - t0) / 1000;
      });
      const status = await fleet.status();
      if (status.deliveries >= owed && Number.isNaN(row.clientsSeconds))
        row.clientsSeconds = (Date.now() - t0) / 1000;
      if (status.deliveries !== lastProgress.deliveries)
        lastProgress = { deliveries: status.deliveries, at: Date.now() };
      const allRead = row.replicaSeconds.every((v) => !Number.isNaN(v)) && !Number.isNaN(row.produceSeconds);
      if (allRead && Date.now() - lastProgress.at > 60_000) {
        o.log(
          `  no pair arrived for 60 s after every replica read everything: ${status.deliveries} of ${owed}`,
        );
        break;
      }
      const done =
        row.replicaSeconds.every((s) => !Number.isNaN(s)) &&
        !Number.isNaN(row.clientsSeconds) &&
        !Number.isNaN(row.produceSeconds) &&
        !Number.isNaN(row.bareSeconds);
      if (done) break;
      if (Date.now() - lastLog > 5000) {
        lastLog = Date.now();
        o.log(
          `  read ${counts.join(', ')} of ${o.events}; ${status.deliveries} of ${owed} pairs; load ${loadAverage().toFixed(1)}`,
        );
      }
    }
    await produced;
    const cpu1 = meter.snapshot();
    row.cpu = {
      seconds: (Date.now() - t0) / 1000,
      boxBusy: boxBusySeconds() - b0,
      cpu: diff(cpu0, cpu1),
      events: o.events,
      deliveries: (await fleet.status()).deliveries,
    };
    if (row.replicaSeconds.some((s) => Number.isNaN(s)) || Number.isNaN(row.clientsSeconds))
      row.stoppedAt = 'not every replica read every record, or not every pair arrived, within the timeout';
    const tally = await settledTally(fleet, { acceptedTypes: () => accepted }, 30_000);
    row.counted = countedOf(tally);
    row.latency = latencyOf(tally)['s1']?.['all'];
    return row;
  } finally {
    bare.kill('SIGKILL');
    await fleet.stop();
    await cluster.stop();
  }
}

/** One record nobody subscribes to, before the clients connect. */
async function produceOpening(cluster: Cluster): Promise<void> {
  const id = `${cluster.run}-s1-opening`;
  const type = 'cl.s1none';
  const value = `{"specversion":"1.0","id":"${id}","source":"${source}","type":"${type}","data":{}}`;
  await withProducer(cluster, (producer) =>
    producer.send({
      topic: cluster.fanoutTopic,
      acks: 1,
      messages: [fanoutRecord(id, type, value, publishedAtHeaders())],
    }),
  );
}

/** Waits (up to a minute) until every replica has read `n` records. */
async function untilRead(cluster: Cluster, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const counts = await Promise.all(cluster.replicas.map((r) => recordsRead(r.service.apiUrl)));
    if (counts.every((c) => c >= n)) return;
    await sleep(200);
  }
  throw new Error(`the replicas did not read ${n} records within a minute`);
}

/** Records a replica has read from the fan-out stream, skipped or dispatched (its /metrics). */
async function recordsRead(apiUrl: string): Promise<number> {
  try {
    const res = await fetch(`${apiUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    let n = 0;
    for (const m of text.matchAll(/^gw_fanout_events_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
    return n;
  } catch {
    return 0;
  }
}

function messageOf(child: ChildProcess, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (m['type'] !== type) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
  });
}

/** The records, in batches with a few in flight, as a producer of the fan-out stream writes them. */
async function produce(cluster: Cluster, o: RigOptions, relevant: Set<number>): Promise<void> {
  await withProducer(cluster, async (producer) => {
    const inFlight: Promise<unknown>[] = [];
    let j = 0;
    for (let i = 0; i < o.events; i += 500) {
      const sentAt = Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
      const stamp = publishedAtHeaders();
      const messages = [];
      for (let k = i; k < Math.min(o.events, i + 500); k++) {
        const isRelevant = relevant.has(k);
        const type = isRelevant ? eventType(j % o.types) : 'cl.s1none';
        const id = `${cluster.run}-s1-${k}`;
        const data = isRelevant ? `{"n":${j++},"sentAt":${sentAt},"pad":"` : `{"k":${k},"pad":"`;
        const head = `{"specversion":"1.0","id":"${id}","source":"${source}","type":"${type}","data":${data}`;
        const value = `${head}${'x'.repeat(Math.max(0, o.bytes - head.length - 3))}"}}`;
        messages.push(fanoutRecord(id, type, value, stamp));
      }
      inFlight.push(producer.send({ topic: cluster.fanoutTopic, acks: 1, messages }));
      if (inFlight.length >= 4) await inFlight.shift();
    }
    await Promise.all(inFlight);
  });
}

const source = '/cluster-bench';

/** A fan-out record as the publisher writes it: the structured CloudEvent, the stamp and the routing headers. */
function fanoutRecord(id: string, type: string, value: string, stamp: Record<string, string>) {
  return { value, headers: { ...stamp, ...streamEventHeaders({ type, source, id }) } };
}

/** A Kafka producer of the run's fan-out topic for `use`, disconnected after it. */
async function withProducer(
  cluster: Cluster,
  use: (producer: KafkaProducer) => Promise<unknown>,
): Promise<void> {
  const kafka = new Kafka({
    brokers: dependencyAddress.kafkaBrokers,
    clientId: `${cluster.run}-s1`,
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await use(producer);
  } finally {
    await producer.disconnect();
  }
}
