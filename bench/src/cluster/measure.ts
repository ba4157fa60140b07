/**
 * What every scenario of the cluster bench measures the same way: CPU of every process of the run
 * (schedstat) and of the whole box (/proc/stat) over a window, latency figures from the merged
 * histograms, the counted (client, event) pairs, and the waits (all clients open, the tally settled).
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadAverage } from '../harness/box.ts';
import type { ClientFleet, MergedTally } from './clients.ts';
import type { LatencyHistogram } from './histogram.ts';
import type { StatusReport } from './messages.ts';
import { type brokerPids, type Cluster, connectionsPerProcessLimit, cpuOf } from './topology.ts';

export interface LatencyFigures {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface CpuWindow {
  seconds: number;
  /** CPU seconds the whole box spent (/proc/stat: every process, this run's and others'). */
  boxBusy: number;
  /** CPU seconds by process name (hub-0 …, publisher, kafka, redis, clients, orchestrator). */
  cpu: Record<string, number>;
  /** Events accepted and first copies delivered in the window. */
  events: number;
  deliveries: number;
}

export interface Counted {
  owed: number;
  lost: number;
  duplicated: number;
  unwanted: number;
  resyncs: number;
  unacceptedDeliveries: number;
  beyondRange: number;
  bystanderDeliveries: number;
  byTransport: MergedTally['byTransport'];
  lostExamples: string[];
}

export interface Meter {
  snapshot(): Record<string, number>;
}

export function meterOf(cluster: Cluster, fleet: ClientFleet, brokers: ReturnType<typeof brokerPids>): Meter {
  return {
    snapshot() {
      const cpu: Record<string, number> = {};
      for (const r of cluster.replicas) cpu[r.name] = cpuOf(r.service.pid);
      cpu['publisher'] = cpuOf(cluster.publisher.pid);
      cpu['kafka'] = cpuOf(brokers.kafka);
      cpu['redis'] = cpuOf(brokers.redis);
      cpu['clients'] = fleet.cpuSeconds();
      const me = process.cpuUsage();
      cpu['orchestrator'] = (me.user + me.system) / 1e6;
      return cpu;
    },
  };
}

/** Busy CPU seconds of the whole box so far (/proc/stat: all but idle and iowait; USER_HZ 100). */
export function boxBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return (user + nice + system + irq + softirq + steal) / 100;
}

export function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(b).map((k) => [k, Math.max(0, b[k]! - (a[k] ?? 0))]));
}

export function figures(h: LatencyHistogram): LatencyFigures {
  return { count: h.count, p50: h.percentile(50), p99: h.percentile(99), max: h.max };
}

export function latencyOf(tally: MergedTally): Record<string, Record<string, LatencyFigures>> {
  const out: Record<string, Record<string, LatencyFigures>> = {};
  for (const [phase, byKey] of tally.latency) {
    out[phase] = {};
    for (const [key, h] of byKey) out[phase][key] = figures(h);
  }
  return out;
}

export function countedOf(t: MergedTally): Counted {
  return {
    owed: t.owed,
    lost: t.lost,
    duplicated: t.duplicated,
    unwanted: t.unwanted,
    resyncs: t.resyncs,
    unacceptedDeliveries: t.unacceptedDeliveries,
    beyondRange: t.beyondRange,
    bystanderDeliveries: t.bystanderDeliveries,
    byTransport: t.byTransport,
    lostExamples: t.lostExamples,
  };
}

/** Waits until every client is open; undefined when they are, else where it stopped. */
export async function untilConnected(
  fleet: ClientFleet,
  total: number,
  timeoutS: number,
  log: (line: string) => void,
): Promise<{ status: StatusReport; stoppedAt: string | undefined }> {
  const deadline = Date.now() + timeoutS * 1000;
  let lastLog = 0;
  for (;;) {
    const status = await fleet.status();
    if (status.open >= total) return { status, stoppedAt: undefined };
    if (Date.now() > deadline)
      return {
        status,
        stoppedAt: `${status.open} of ${total} connected after ${timeoutS} s (refusals ${JSON.stringify(status.refusals)}, load ${loadAverage().toFixed(1)})`,
      };
    if (Date.now() - lastLog > 5000) {
      lastLog = Date.now();
      log(`  connecting: ${status.open} of ${total} open, load ${loadAverage().toFixed(1)}`);
    }
    await sleep(500);
  }
}

/** Tallies until nothing is missing (late copies still arriving) or `timeoutMs` passed. */
export async function settledTally(
  fleet: ClientFleet,
  producer: { acceptedTypes(): number[] },
  timeoutMs: number,
): Promise<MergedTally> {
  const deadline = Date.now() + timeoutMs;
  let tally = await fleet.tally(producer.acceptedTypes());
  while (tally.lost > 0 && Date.now() < deadline) {
    await sleep(2000);
    tally = await fleet.tally(producer.acceptedTypes());
  }
  // Late copies (a duplicate arrives after the last original).
  await sleep(1000);
  return fleet.tally(producer.acceptedTypes());
}

export async function window(
  meter: Meter,
  fleet: ClientFleet,
  producer: { events: { length: number } },
  seconds: number,
): Promise<CpuWindow> {
  const cpu0 = meter.snapshot();
  const b0 = boxBusySeconds();
  const d0 = (await fleet.status()).deliveries;
  const e0 = producer.events.length;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const cpu1 = meter.snapshot();
  const b1 = boxBusySeconds();
  const d1 = (await fleet.status()).deliveries;
  return {
    seconds: (performance.now() - t0) / 1000,
    boxBusy: b1 - b0,
    cpu: diff(cpu0, cpu1),
    events: producer.events.length - e0,
    deliveries: d1 - d0,
  };
}

export function checkCapacity(o: { connections: number; perClientProcess: number }, holders: number): number {
  const limit = connectionsPerProcessLimit();
  const perReplica = Math.ceil(o.connections / holders);
  if (perReplica > limit)
    throw new Error(
      `${o.connections} connections over ${holders} replicas is ${perReplica} per replica, above the ${limit} one process may hold here (open files); use more replicas`,
    );
  if (o.perClientProcess > limit)
    throw new Error(`--per-client-process ${o.perClientProcess} is above ${limit}`);
  return limit;
}
