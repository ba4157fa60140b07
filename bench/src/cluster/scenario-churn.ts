/**
 * S3, churn (Centrifugo's million-connection test churned 200k connects and disconnects a minute on
 * 20 pods): N connections held by K replicas with events flowing at `rate`; then steps of rising
 * churn, each `stepSeconds` long, in which random SSE and WebSocket clients close their stream and
 * connect again at once, resuming from their last position (long-polling has no stream to close).
 * Per step: reconnects asked for and done, close → first frame again, hub CPU per reconnect (less
 * the replicas' CPU rate without churn), and publish → client latency of everyone during the step;
 * then every (client, event) pair counted: a churned client loses nothing and gets nothing twice.
 * The highest rate the box sustains is the highest step whose reconnects were all done.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadAverage } from '../harness/box.ts';
import { type ClientFleet, startFleetOn } from './clients.ts';
import {
  type Counted,
  type CpuWindow,
  checkCapacity,
  countedOf,
  figures,
  type LatencyFigures,
  latencyOf,
  meterOf,
  settledTally,
  untilConnected,
  window,
} from './measure.ts';
import { Producer } from './producer.ts';
import type { ClusterOptions } from './scenarios.ts';
import { brokerPids, startCluster } from './topology.ts';

export interface ChurnStep {
  /** Reconnects per second asked for. */
  rate: number;
  requested: number;
  reopened: number;
  cpu: CpuWindow;
  /** Hub CPU per reconnect done, less the replicas' rate without churn, µs. */
  hubCpuPerReconnect: number;
  /** Close → first frame from the new stream. */
  reconnect: LatencyFigures;
  /** Publish → client of every delivery during the step. */
  delivery: LatencyFigures | undefined;
}

export interface ChurnResult {
  options: Omit<ClusterOptions, 'log'>;
  churnRates: number[];
  loadAtStart: number;
  loadAtEnd: number;
  connectSeconds: number;
  stoppedAt: string | undefined;
  /** Events flowing, no churn: the baseline of each step. */
  calm: CpuWindow | undefined;
  calmDelivery: LatencyFigures | undefined;
  steps: ChurnStep[];
  counted: Counted | undefined;
  producerFailures: Record<string, number>;
}

const hubs = (w: CpuWindow) =>
  Object.entries(w.cpu)
    .filter(([k]) => k.startsWith('hub-'))
    .reduce((a, [, v]) => a + v, 0);

export async function runChurn(o: ClusterOptions, churnRates: number[]): Promise<ChurnResult> {
  const { log, ...options } = o;
  const limit = checkCapacity(o, o.replicas);
  const result: ChurnResult = {
    options,
    churnRates,
    loadAtStart: loadAverage(),
    loadAtEnd: Number.NaN,
    connectSeconds: Number.NaN,
    stoppedAt: undefined,
    calm: undefined,
    calmDelivery: undefined,
    steps: [],
    counted: undefined,
    producerFailures: {},
  };
  log(
    `S3: ${o.connections} connections, ${o.replicas} replicas, ${o.rate} events/s, churn ${churnRates.join(', ')}/s`,
  );
  const cluster = await startCluster(
    o.replicas,
    limit,
    o.longpollTimeout ? { LONGPOLL_TIMEOUT: o.longpollTimeout } : {},
  );
  const maxEvents = Math.ceil(o.rate * (o.seconds * (churnRates.length + 1) + 100)) + 100;
  const fleet = await startFleetOn(cluster, { ...o, clients: o.connections, maxEvents });
  const producer = new Producer(cluster.publisherUrl, o.rate, o.types, cluster.run, maxEvents);
  try {
    const meter = meterOf(cluster, fleet, brokerPids());
    const t0 = performance.now();
    const connected = await untilConnected(fleet, o.connections, o.connectTimeout, log);
    result.connectSeconds = (performance.now() - t0) / 1000;
    if (connected.stoppedAt) {
      result.stoppedAt = `connect: ${connected.stoppedAt}`;
      return result;
    }
    await sleep(3000);
    await fleet.phase('warm-up');
    producer.start();
    await sleep(3000);
    await fleet.phase('calm');
    result.calm = await window(meter, fleet, producer, o.seconds);
    const calmRate = hubs(result.calm) / result.calm.seconds;
    for (const rate of churnRates) {
      await fleet.phase(`churn-${rate}`);
      await fleet.churn(rate);
      const cpu = await window(meter, fleet, producer, o.seconds);
      await fleet.churn(0);
      const stats = await settledChurn(fleet, `churn-${rate}`);
      const reopened = stats?.reopened ?? 0;
      const step: ChurnStep = {
        rate,
        requested: stats?.requested ?? 0,
        reopened,
        cpu,
        hubCpuPerReconnect:
          reopened > 0 ? ((hubs(cpu) - calmRate * cpu.seconds) * 1e6) / reopened : Number.NaN,
        reconnect: stats
          ? figures(stats.latency)
          : { count: 0, p50: Number.NaN, p99: Number.NaN, max: Number.NaN },
        delivery: undefined,
      };
      result.steps.push(step);
      log(
        `  churn ${rate}/s: ${step.requested} asked, ${reopened} done in ${cpu.seconds.toFixed(1)} s, reconnect p99 ${step.reconnect.p99.toFixed(0)} ms, ${step.hubCpuPerReconnect.toFixed(0)} µs hub CPU each, load ${loadAverage().toFixed(1)}`,
      );
    }
    await fleet.churn(0);
    await fleet.phase('after');
    await sleep(5000);
    await producer.stop();
    const tally = await settledTally(fleet, producer, 60_000);
    result.counted = countedOf(tally);
    const latency = latencyOf(tally);
    result.calmDelivery = latency['calm']?.['all'];
    for (const step of result.steps) step.delivery = latency[`churn-${step.rate}`]?.['all'];
    result.producerFailures = Object.fromEntries(producer.failures);
    return result;
  } finally {
    await fleet.churn(0).catch(() => undefined);
    await producer.stop(0);
    result.loadAtEnd = loadAverage();
    await fleet.stop();
    await cluster.stop();
  }
}

/** The step's figures once every reconnect it asked for is done (or 30 s passed: those are not). */
async function settledChurn(fleet: ClientFleet, step: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stats = (await fleet.churnStats()).get(step);
    if (!stats || stats.reopened >= stats.requested || Date.now() > deadline) return stats;
    await sleep(250);
  }
}

/** The highest step whose reconnects were (nearly) all asked for and done within it. */
export function sustainedChurn(r: ChurnResult): ChurnStep | undefined {
  return r.steps
    .filter((s) => s.requested >= 0.95 * s.rate * s.cpu.seconds && s.reopened >= 0.95 * s.requested)
    .at(-1);
}
