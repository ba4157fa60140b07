/**
 * What acknowledged delivery (ack sessions, issue 37) costs against plain delivery, side by side in
 * one run on one hub process.
 *
 * Set-up: one push-hub process (this checkout's services/push-hub/src/main.ts) on a Kafka fan-out
 * topic, with Redis as its store (where the ack positions live) and control channel, ACK_TIMEOUT at
 * its default. `--clients` `@gatehouse/client` clients in this process over WebSocket, subscribed to
 * the phase's event type: plain, or each with an ack session of its own (`ack: { session }`, auto:
 * an event is handled once its listener returned; the client posts the cumulative position
 * batched, within a second). Phases take turns, plain then ack, `--rounds` times: the phase's clients
 * connect, then `--events` events are published to Kafka at `--rate` per second (each carries its
 * publish time), and the phase ends once every client handled every event plus a settle of 500 ms
 * (the last acks), before the clients close. A first round (plain, ack) warms up and is not counted.
 *
 * Per phase: hub CPU per delivered event (the hub process's CPU time from the first publish to the
 * end of the phase, /proc schedstat, ÷ events × clients), the same of this process (the clients
 * and the publisher: what acknowledging costs a client), ack requests per second (growth of the
 * hub's gw_ack_requests_total ÷ the phase's time; by result), end-to-end latency p50 / p99 (publish
 * → the listener, over every client and event). Printed: each phase, the medians per mode and the
 * ratios ack ÷ plain. Connect cost is not in it (an ack connect adds one store read).
 *
 * Run: `node bench/src/ack-overhead.bench.ts [--clients 50] [--events 600] [--rate 100]
 * [--rounds 3]`. Needs Kafka and Redis at their default addresses (KAFKA_BROKERS, REDIS_URL).
 */
import './harness/help.ts';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { KafkaBus } from '@gatehouse/bus/all';
import { type CloudEvent, Gatehouse } from '@gatehouse/client';
import { dependencyAddress, sleep, spawnService, uniqueName, waitFor } from '@gatehouse/testkit';
import { boxLine, cpuNanosOf, loadAverage, median, percentile } from './harness/index.ts';

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const clientCount = flag('--clients', 50);
const eventCount = flag('--events', 600);
const rate = flag('--rate', 100);
const rounds = flag('--rounds', 3);
const settleMs = 500;

type Mode = 'plain' | 'ack';

interface PhaseResult {
  mode: Mode;
  cpuMicrosPerDelivery: number;
  clientCpuMicrosPerDelivery: number;
  ackRequestsPerSecond: number;
  ackResults: Record<string, number>;
  p50: number;
  p99: number;
  seconds: number;
}

const run = uniqueName('ack-bench');
const topic = `${run}-gw-events`;
const jwtSecret = 'ack-overhead-bench-secret-long-enough-for-hs256';
const bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
await bus.ensureTopic(topic, 1);
const hub = await spawnService({
  entry: 'services/push-hub/src/main.ts',
  name: 'push-hub',
  publicPort: true,
  env: {
    FANOUT_BUS: 'kafka',
    FANOUT_TOPIC: topic,
    CONTROL_BUS: 'redis',
    STORE: 'redis',
    STORE_KEY_PREFIX: `${run}:`,
    REDIS_URL: dependencyAddress.redisUrl,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    TOKEN_SECRET: `${run}-token-secret`,
    JWT_SECRET_KEY: jwtSecret,
    // Every client of the bench comes from 127.0.0.1.
    MAX_CONNECTIONS_PER_IP_PER_MINUTE: '1000000',
    MAX_CONNECTIONS_PER_ADDRESS: '1000000',
  },
});

/** gw_ack_requests_total of the hub, by result. */
async function ackRequests(): Promise<Record<string, number>> {
  const text = await (await fetch(`${hub.apiUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^gw_ack_requests_total(?:\{[^}]*result="([^"]*)"[^}]*\})? ([\d.e+]+)$/.exec(line);
    if (m) out[m[1] ?? 'all'] = Number(m[2]);
  }
  return out;
}

const difference = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Connects the phase's clients; each listener notes the latency and counts. */
async function connectClients(mode: Mode, phase: number, type: string, latencies: number[]) {
  const handled = new Array<number>(clientCount).fill(0);
  const clients = Array.from({ length: clientCount }, (_, i) => {
    const client = new Gatehouse(hub.publicUrl!, {
      token: signJwt(withExpiry({ sub: `bench-${i}` }), { alg: 'HS256', key: jwtSecret }),
      transports: ['websocket'],
      subscriptions: [{ eventType: type }],
      ...(mode === 'ack' && { ack: { session: `phase-${phase}` } }),
    });
    client.on('event', (event: CloudEvent) => {
      latencies.push(Date.now() - (event.data as { t: number }).t);
      handled[i]!++;
    });
    client.on('error', (err) => console.error(`client ${i}: ${err.message}`));
    return client;
  });
  await waitFor(() => clients.every((c) => c.state.state === 'connected'), {
    timeoutMs: 60_000,
    intervalMs: 50,
    what: `${clientCount} clients connected`,
  });
  return { clients, handled };
}

/** Publishes the phase's events at `rate`, paced by the clock (a late tick publishes what is due). */
async function publishAll(type: string): Promise<void> {
  const start = Date.now();
  for (let n = 0; n < eventCount; n++) {
    const wait = start + (n * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
    const event = {
      specversion: '1.0',
      id: `${type}-${n}`,
      source: 'bench',
      type,
      data: { n, t: Date.now() },
    };
    bus.publish(topic, { value: JSON.stringify(event) }).catch((err) => console.error(`publish: ${err}`));
  }
}

async function phase(mode: Mode, index: number): Promise<PhaseResult> {
  const type = `bench.ack.${index}`;
  const latencies: number[] = [];
  const { clients, handled } = await connectClients(mode, index, type, latencies);
  const acksBefore = await ackRequests();
  const cpuBefore = cpuNanosOf(hub.pid);
  const clientCpuBefore = process.cpuUsage();
  const start = Date.now();
  await publishAll(type);
  await waitFor(() => handled.every((h) => h >= eventCount), {
    timeoutMs: 120_000,
    intervalMs: 20,
    what: `every ${mode} client handled ${eventCount} events`,
  });
  await sleep(settleMs);
  const cpuNanos = cpuNanosOf(hub.pid) - cpuBefore;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const seconds = (Date.now() - start) / 1000;
  const ackResults = difference(await ackRequests(), acksBefore);
  await Promise.all(clients.map((c) => c.close()));
  const result: PhaseResult = {
    mode,
    cpuMicrosPerDelivery: cpuNanos / 1000 / (eventCount * clientCount),
    clientCpuMicrosPerDelivery: (clientCpu.user + clientCpu.system) / (eventCount * clientCount),
    ackRequestsPerSecond: sum(ackResults) / seconds,
    ackResults,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    seconds,
  };
  console.log(
    `phase ${index} ${mode}${index < 2 ? ' (warm-up)' : ''}: ${result.cpuMicrosPerDelivery.toFixed(2)} µs hub CPU per delivery, ` +
      `${result.clientCpuMicrosPerDelivery.toFixed(2)} µs client-process CPU per delivery, ` +
      `${result.ackRequestsPerSecond.toFixed(1)} ack requests/s ${JSON.stringify(ackResults)}, ` +
      `latency p50 ${result.p50} ms p99 ${result.p99} ms, ${seconds.toFixed(1)} s, load ${loadAverage().toFixed(1)}`,
  );
  return result;
}

try {
  console.log(boxLine());
  console.log(
    `\n${clientCount} WebSocket clients, ${eventCount} events at ${rate}/s per phase, ${rounds} rounds (plain, ack)\n`,
  );
  // A first round not counted: the hub's and the client's code paths compiled, the Kafka consumer warm.
  await phase('plain', 0);
  await phase('ack', 1);
  const results: PhaseResult[] = [];
  for (let r = 0; r < rounds; r++) {
    results.push(await phase('plain', 2 * r + 2));
    results.push(await phase('ack', 2 * r + 3));
  }
  const of = (mode: Mode, pick: (p: PhaseResult) => number) =>
    median(results.filter((p) => p.mode === mode).map(pick));
  const rows: Array<[string, (p: PhaseResult) => number, number]> = [
    ['hub CPU per delivered event (µs)', (p) => p.cpuMicrosPerDelivery, 2],
    ['client process CPU per delivered event (µs)', (p) => p.clientCpuMicrosPerDelivery, 2],
    ['ack requests per second', (p) => p.ackRequestsPerSecond, 1],
    ['end-to-end latency p50 (ms)', (p) => p.p50, 0],
    ['end-to-end latency p99 (ms)', (p) => p.p99, 0],
  ];
  console.log('\n| median of the phases | plain | ack | ack ÷ plain |');
  console.log('|---|---|---|---|');
  for (const [label, pick, digits] of rows) {
    const plain = of('plain', pick);
    const ack = of('ack', pick);
    const ratio = plain === 0 ? '–' : `${(ack / plain).toFixed(2)}×`;
    console.log(`| ${label} | ${plain.toFixed(digits)} | ${ack.toFixed(digits)} | ${ratio} |`);
  }
  // What one ack request costs the hub: the CPU the ack phases took beyond plain delivery's, per request.
  const extraMicros =
    (of('ack', (p) => p.cpuMicrosPerDelivery) - of('plain', (p) => p.cpuMicrosPerDelivery)) *
    eventCount *
    clientCount;
  const acksPerPhase = of('ack', (p) => sum(p.ackResults));
  console.log(
    `\nhub CPU per ack request (the ack phases' extra CPU ÷ their requests): ${(extraMicros / acksPerPhase).toFixed(0)} µs`,
  );
} finally {
  await hub.stop();
  await bus.close();
}
