/**
 * Bus adapters vs the raw client loop, per broker (Kafka, Redis, NATS): how many messages per
 * second go from publish to a live subscriber, with the same window of 100 unacknowledged
 * publishes on both sides, each acknowledged by the broker. Goal (issue 2): adapter ≥ 0.8× the raw
 * client. Rounds alternate raw and adapter (§6.1); medians and the ratio of medians are printed.
 * Bounded: 5 rounds × 2 sides × 3 brokers × 20k messages.
 *
 * The raw side is what a competent engineer writes with the same client library, so the ratio is
 * the adapter's overhead and nothing else (issue 16):
 * - Kafka: the adapter batches concurrent publishes (one produce request in flight per topic, at
 *   most 500 messages in one); the raw side does the same with kafkajs `sendBatch` (same batch
 *   size, same in-flight limit, acks from all in-sync replicas). Without that the ratio measured
 *   batching, not the adapter (it read 7.43×).
 * - Redis: XADD per message with MAXLEN ~ 100000, as the adapter; ioredis pipelines what is in flight.
 * - NATS: a JetStream publish per message, as the adapter.
 * Both sides connect once (clients, producers, the adapter) and reuse that for every round; each
 * round makes a fresh topic and subscription on both sides, so neither reads old messages.
 *
 * Pinning: this process runs on cpu1 and the broker's processes are pinned to cpu0 for the run
 * (their CPU mask is restored at the end), as the other benchmarks pin the server and the load.
 *
 * Needs the servers of `make deps-up` (ports from KAFKA_PORT, REDIS_PORT, NATS_PORT).
 * Run: `node bench/src/bus-throughput.bench.ts [kafka redis nats] [--json results.json]`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { type Bus, KafkaBus, NatsBus, RedisBus } from '@gatehouse/bus/all';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaBatchingPublisher } from './baselines/kafka-batching-publisher.ts';
import { boxLine, formatRatio, interleave, median, pinProcess } from './harness/index.ts';

/** The adapter's default `publishBatchMaxMessages`. */
const kafkaBatchMaxMessages = 500;

const messages = 20_000;
const window = 100;
const rounds = 5;
const payload = Buffer.from(
  JSON.stringify({ specversion: '1.0', id: 'x', type: 't', source: 's', data: { n: 1 } }),
);
const ports = {
  kafka: Number(process.env['KAFKA_PORT'] ?? 9092),
  redis: Number(process.env['REDIS_PORT'] ?? 6379),
  nats: Number(process.env['NATS_PORT'] ?? 4222),
};
const redisUrl = `redis://127.0.0.1:${ports.redis}`;
const natsServers = `127.0.0.1:${ports.nats}`;
const kafkaBrokers = [`127.0.0.1:${ports.kafka}`];
const serverCpu = 0;
const loadCpu = 1;

/** Publishes `messages` with at most `window` in flight; resolves when the consumer has them all. */
async function pump(publish: () => Promise<unknown>, received: () => number): Promise<number> {
  const start = performance.now();
  let sent = 0;
  const workers = Array.from({ length: window }, async () => {
    while (sent < messages) {
      sent++;
      await publish();
    }
  });
  await Promise.all(workers);
  while (received() < messages) await new Promise((r) => setTimeout(r, 2));
  return messages / ((performance.now() - start) / 1000);
}

const unique = (p: string) => `${p}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/** One side of the comparison: connected once, then one measured round per call. */
interface Side {
  round(): Promise<number>;
  close(): Promise<void>;
}

function adapterSide(bus: Bus): Side {
  return {
    async round() {
      const topic = unique('bench-bus');
      let got = 0;
      const sub = await bus.subscribe(topic, () => void got++);
      const rate = await pump(
        () => bus.publish(topic, { value: payload }),
        () => got,
      );
      await sub.close();
      return rate;
    },
    close: () => bus.close(),
  };
}

const raw: Record<Broker, () => Promise<Side>> = {
  async redis() {
    const pub = new Redis(redisUrl);
    const sub = new Redis(redisUrl);
    return {
      async round() {
        const stream = unique('bench-raw');
        let got = 0;
        let last = '0-0';
        let stop = false;
        const reader = (async () => {
          while (!stop) {
            const res = (await sub.xreadBuffer('COUNT', 100, 'BLOCK', 200, 'STREAMS', stream, last)) as Array<
              [Buffer, Array<[Buffer, Buffer[]]>]
            > | null;
            for (const [, entries] of res ?? []) {
              for (const [id] of entries) {
                last = id.toString();
                got++;
              }
            }
          }
        })();
        const rate = await pump(
          () => pub.xadd(stream, 'MAXLEN', '~', '100000', '*', 'v', payload),
          () => got,
        );
        stop = true;
        await reader;
        await pub.del(stream);
        return rate;
      },
      async close() {
        pub.disconnect();
        sub.disconnect();
      },
    };
  },

  async nats() {
    const nc = await natsConnect({ servers: natsServers });
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    return {
      async round() {
        const subject = unique('bench-raw');
        await jsm.streams.add({ name: subject, subjects: [subject] });
        const consumer = await js.consumers.get(subject);
        const messagesIter = await consumer.consume();
        let got = 0;
        const reader = (async () => {
          for await (const _ of messagesIter) got++;
        })();
        const rate = await pump(
          () => js.publish(subject, payload),
          () => got,
        );
        await messagesIter.close();
        await reader;
        await jsm.streams.delete(subject);
        return rate;
      },
      close: () => nc.close(),
    };
  },

  async kafka() {
    const kafka = new Kafka({ brokers: kafkaBrokers, clientId: 'bench-raw', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer();
    await producer.connect();
    const publish = kafkaBatchingPublisher(producer, kafkaBatchMaxMessages);
    return {
      async round() {
        const topic = unique('bench-raw');
        await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
        // The adapter's consumer settings (kafka-bus.ts), so that only the code around them differs.
        const consumer = kafka.consumer({
          groupId: unique('bench-raw-group'),
          sessionTimeout: 10_000,
          heartbeatInterval: 1_000,
          maxWaitTimeInMs: 1_000,
        });
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        let got = 0;
        // Live as the adapter's subscribe is when it resolves: in the group and fetching (a fetch
        // that starts after the publishes would count the consumer's start-up against the raw side).
        const joined = new Promise<void>((r) => consumer.on(consumer.events.GROUP_JOIN, () => r()));
        const fetching = new Promise<void>((r) => consumer.on(consumer.events.FETCH_START, () => r()));
        // No offset commits, as the adapter's broadcast subscription (each subscriber reads all).
        await consumer.run({ autoCommit: false, eachMessage: async () => void got++ });
        await Promise.all([joined, fetching]);
        const rate = await pump(
          () => publish(topic, { value: payload }),
          () => got,
        );
        await consumer.disconnect();
        await admin.deleteTopics({ topics: [topic] });
        return rate;
      },
      async close() {
        await producer.disconnect();
        await admin.disconnect();
      },
    };
  },
};

const adapters: Record<Broker, () => Promise<Bus>> = {
  redis: () => RedisBus.connect({ url: redisUrl }),
  nats: () => NatsBus.connect({ servers: natsServers }),
  kafka: async () => new KafkaBus({ brokers: kafkaBrokers, clientId: 'bench-bus' }),
};

type Broker = 'kafka' | 'redis' | 'nats';

/** The broker's process as tools/deps.sh started it (its PID file), or undefined. */
function brokerPid(broker: Broker): number | undefined {
  const file = fileURLToPath(new URL(`../../.cache/deps/${broker}/pid`, import.meta.url));
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Pins the broker to the server CPU for `body`, then gives it every CPU again. */
async function withPinnedBroker<T>(broker: Broker, body: () => Promise<T>): Promise<T> {
  const pid = brokerPid(broker);
  if (pid === undefined) {
    console.log(`  (${broker}: no PID file under .cache/deps: the broker runs unpinned)`);
    return body();
  }
  pinProcess(pid, serverCpu);
  try {
    return await body();
  } finally {
    pinProcess(pid, '0-1');
  }
}

const { values: flags, positionals } = parseArgs({
  options: { json: { type: 'string' } },
  allowPositionals: true,
});
const brokers = (positionals.length ? positionals : ['redis', 'nats', 'kafka']) as Broker[];
pinProcess(process.pid, loadCpu);
console.log(`Bus throughput — ${boxLine()}`);
console.log(
  `${messages} messages × ${rounds} rounds per side, window ${window}, Kafka batches ≤ ${kafkaBatchMaxMessages} messages with one request in flight per topic on both sides, payload ${payload.length} B; broker on cpu${serverCpu}, this process on cpu${loadCpu}\n`,
);
const summary: string[] = [];
const jsonRows: Array<{
  broker: Broker;
  raw: number[];
  adapter: number[];
  rawMedian: number;
  adapterMedian: number;
  ratio: number;
}> = [];
for (const broker of brokers) {
  await withPinnedBroker(broker, async () => {
    const baseline = await raw[broker]();
    const candidate = adapterSide(await adapters[broker]());
    const result = await interleave(
      rounds,
      { baseline: () => baseline.round(), candidate: () => candidate.round() },
      (i, a, b) => console.log(`  ${broker} round ${i}: raw ${a.toFixed(0)}/s, adapter ${b.toFixed(0)}/s`),
    );
    await Promise.all([baseline.close(), candidate.close()]);
    jsonRows.push({
      broker,
      raw: result.baseline,
      adapter: result.candidate,
      rawMedian: result.baselineMedian,
      adapterMedian: result.candidateMedian,
      ratio: result.ratio,
    });
    const spreadOf = (v: number[]) => `[${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}]`;
    summary.push(
      `${broker.padEnd(6)} raw ${median(result.baseline).toFixed(0).padStart(6)}/s ${spreadOf(result.baseline)}  adapter ${median(result.candidate).toFixed(0).padStart(6)}/s ${spreadOf(result.candidate)}  ratio ${formatRatio(result.ratio)} (goal ≥ 0.80×) → ${result.ratio >= 0.8 ? 'meets' : 'MISSES'}`,
    );
  });
}
console.log(`\n${summary.join('\n')}`);
if (flags.json)
  writeFileSync(
    flags.json,
    JSON.stringify({ bench: 'bus-throughput', box: boxLine(), rows: jsonRows }, null, 1),
  );
process.exit(0);
