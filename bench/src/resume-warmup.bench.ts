/**
 * Resume after a replica restart, with and without filling the event buffer at start
 * (EVENT_BUFFER_WARMUP): the measurement behind its default. Per broker (Kafka, Redis, NATS), on a
 * fan-out stream that already holds 10k events of ~450 bytes:
 * - W1: start-up of a hub process until /ready, and the warm-up within it; its RSS once ready;
 * - W2: `--clients` SSE clients (default 500) of a killed replica resume on its replacement from
 *   200 events back: time until each has them all (p50, p99) and until all have, and the broker
 *   subscriptions the replacement opened for replays.
 * Modes alternate per round (warm-up on, off, on, …) on fresh topics.
 *
 * Needs the servers of `make deps-up` (KAFKA_BROKERS or KAFKA_PORT, REDIS_URL or REDIS_PORT, NATS_URL
 * or NATS_PORT). Run: `node bench/src/resume-warmup.bench.ts [kafka redis nats]
 * [--clients 500] [--rounds 2]`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { readFileSync } from 'node:fs';
import { type Bus, KafkaBus, NatsBus, RedisBus } from '@gatehouse/bus/all';
import {
  gatewayEnv,
  dependencyAddress,
  openSse,
  type ServiceProcess,
  type SseConnection,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { median, percentile } from './harness/index.ts';

type Kind = 'kafka' | 'redis' | 'nats';
const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const kinds = (['kafka', 'redis', 'nats'] as const).filter(
  (k) => !args.some((a) => ['kafka', 'redis', 'nats'].includes(a)) || args.includes(k),
);
const clients = flag('clients', 500);
const rounds = flag('rounds', 2);
const history = 10_000;
const missed = 200;
const padding = 'x'.repeat(300);

/** `keyPrefix`: the hubs' STORE_KEY_PREFIX, which their Redis fan-out stream's key starts with. */
async function busFor(kind: Kind, keyPrefix: string): Promise<Bus> {
  if (kind === 'redis') return RedisBus.connect({ url: dependencyAddress.redisUrl, keyPrefix });
  if (kind === 'nats') return NatsBus.connect({ servers: dependencyAddress.natsUrl });
  return new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'bench-resume' });
}

async function publish(bus: Bus, topic: string, count: number): Promise<void> {
  const window = 100;
  let n = 0;
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (n < count) {
        const event = { specversion: '1.0', id: `e${n++}`, source: 'bench', type: 'tick', data: { padding } };
        await bus.publish(topic, { value: JSON.stringify(event) });
      }
    }),
  );
}

function env(kind: Kind, run: string, warmUp: boolean): Record<string, string> {
  return {
    ...gatewayEnv({ run, fanout: kind, jwtSecret: 'bench-resume-secret-long-enough-for-hs256' }),
    MAX_CONNECTIONS_PER_MINUTE: '1000000',
    // Every benchmark client connects from this machine.
    MAX_CONNECTIONS_PER_IP_PER_MINUTE: '1000000',
    MAX_CONNECTIONS_PER_ADDRESS: '1000000',
    MAX_CONNECTIONS: '1000000',
    EVENT_BUFFER_SIZE: String(history),
    EVENT_BUFFER_WARMUP: String(warmUp),
    LOG_LEVEL: 'info',
  };
}

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function metrics(hub: ServiceProcess): Promise<string> {
  return (await fetch(`${hub.apiUrl}/metrics`)).text();
}
/** A counter's value; `labels` is a fragment its label set must contain (series carry service="push-hub"). */
const counter = (text: string, name: string, labels = '') =>
  Number(new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);

interface RoundResult {
  readyMs: number;
  warmUpMs: number;
  rssMiB: number;
  p50: number;
  p99: number;
  allMs: number;
  brokerReads: number;
  fromRing: number;
  fromBroker: number;
}

async function round(kind: Kind, warmUp: boolean): Promise<RoundResult> {
  const run = uniqueName(`bench-resume-${kind}`);
  const settings = env(kind, run, warmUp);
  const topic = settings['FANOUT_TOPIC']!;
  const bus = await busFor(kind, settings['STORE_KEY_PREFIX']!);
  const opened: SseConnection[] = [];
  const processes: ServiceProcess[] = [];
  try {
    await publish(bus, topic, history);
    const first = await spawnService({
      entry: 'services/push-hub/src/main.ts',
      name: 'hub-first',
      publicPort: true,
      env: { ...settings, REPLICA_ID: `${run}-1` },
      readyTimeoutMs: 120_000,
    });
    processes.push(first);
    const url = `${first.publicUrl}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent('[{"eventType":"tick"}]')}`;
    const before = await Promise.all(Array.from({ length: clients }, () => openSse(url)));
    opened.push(...before);
    await publish(bus, topic, 1);
    await waitFor(() => before.every((c) => c.events('tick').length === 1), { timeoutMs: 60_000 });
    const lastIds = before.map((c) => c.frames.at(-1)!.id!);
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    for (const c of before) c.close();
    await publish(bus, topic, missed);

    const { API_PORT: _, ...address } = first.env;
    const started = performance.now();
    const second = await spawnService({
      entry: 'services/push-hub/src/main.ts',
      name: 'hub-second',
      publicPort: true,
      env: { ...address, REPLICA_ID: `${run}-2` },
      readyTimeoutMs: 120_000,
    });
    const readyMs = performance.now() - started;
    processes.push(second);
    const warmUpMs = Number(/"ms":(\d+)[^\n]*event buffer warmed up/.exec(second.output())?.[1] ?? 0);
    const rss = rssMiB(second.pid);

    const resumeStart = performance.now();
    const done: number[] = [];
    await Promise.all(
      lastIds.map(async (id) => {
        const c = await openSse(url.replace(first.publicUrl!, second.publicUrl!), { 'last-event-id': id });
        opened.push(c);
        while (c.events('tick').length < missed) await sleep(5);
        done.push(performance.now() - resumeStart);
      }),
    );
    const text = await metrics(second);
    return {
      readyMs,
      warmUpMs,
      rssMiB: rss,
      p50: percentile(done, 50),
      p99: percentile(done, 99),
      allMs: Math.max(...done),
      brokerReads: counter(text, 'gw_replay_readers_opened_total'),
      fromRing: counter(text, 'gw_resumes_total', 'source="ring"'),
      fromBroker: counter(text, 'gw_resumes_total', 'source="broker"'),
    };
  } finally {
    for (const c of opened) c.close();
    await Promise.all(processes.map((p) => p.stop()));
    await bus.close();
  }
}

const results: Array<Record<string, string | number>> = [];
for (const kind of kinds) {
  const byMode: Record<string, RoundResult[]> = { on: [], off: [] };
  for (let r = 0; r < rounds * 2; r++) {
    const warmUp = r % 2 === 0;
    byMode[warmUp ? 'on' : 'off']!.push(await round(kind, warmUp));
  }
  for (const mode of ['on', 'off']) {
    const list = byMode[mode]!;
    const med = (f: (x: RoundResult) => number) => Math.round(median(list.map(f)));
    results.push({
      broker: kind,
      warmup: mode,
      'W1 ready ms': med((x) => x.readyMs),
      'W1 warm-up ms': med((x) => x.warmUpMs),
      'W1 RSS MiB': med((x) => x.rssMiB),
      'W2 p50 ms': med((x) => x.p50),
      'W2 p99 ms': med((x) => x.p99),
      'W2 all ms': med((x) => x.allMs),
      'W2 from ring': med((x) => x.fromRing),
      'W2 from broker': med((x) => x.fromBroker),
      'W2 broker reads': med((x) => x.brokerReads),
    });
  }
}
console.log(
  `resume after a restart: ${clients} SSE clients, ${missed} events behind, ${history} in the stream (medians of ${rounds})`,
);
console.table(results);
