/**
 * Bus adapters vs the raw client loop, per broker (Kafka, Redis, NATS): how many messages per
 * second go from publish to a live subscriber, with the same window of 100 unacknowledged
 * publishes on both sides, one publish call per message, each acknowledged by the broker.
 * Goal (issue 2): adapter ≥ 0.8× the raw client. Rounds alternate raw and adapter (§6.1); medians
 * and the ratio of medians are printed. Bounded: 5 rounds × 2 sides × 3 brokers × 20k messages.
 *
 * Needs the servers of `make deps-up`. Run: `node bench/src/bus-throughput.bench.ts [kafka redis nats]`.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { type Bus, KafkaBus, NatsBus, RedisBus } from '@gatehouse/bus';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { boxLine, formatRatio, interleave } from './harness/index.ts';

const messages = 20_000;
const window = 100;
const rounds = 5;
const payload = Buffer.from(
  JSON.stringify({ specversion: '1.0', id: 'x', type: 't', source: 's', data: { n: 1 } }),
);

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

async function adapterRound(bus: Bus): Promise<number> {
  const topic = unique('bench-bus');
  let got = 0;
  const sub = await bus.subscribe(topic, () => void got++);
  const rate = await pump(
    () => bus.publish(topic, { value: payload }),
    () => got,
  );
  await sub.close();
  return rate;
}

const raw = {
  async redis(): Promise<number> {
    const pub = new Redis('redis://127.0.0.1:6379');
    const sub = new Redis('redis://127.0.0.1:6379');
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
    pub.disconnect();
    sub.disconnect();
    return rate;
  },

  async nats(): Promise<number> {
    const nc = await natsConnect({ servers: '127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    const subject = unique('bench-raw');
    await jsm.streams.add({ name: subject, subjects: [subject] });
    const js = jetstream(nc);
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
    await nc.close();
    return rate;
  },

  async kafka(): Promise<number> {
    const kafka = new Kafka({
      brokers: ['127.0.0.1:9092'],
      clientId: 'bench-raw',
      logLevel: logLevel.NOTHING,
    });
    const topic = unique('bench-raw');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    const consumer = kafka.consumer({ groupId: unique('bench-raw-group'), maxWaitTimeInMs: 50 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let got = 0;
    const joined = new Promise<void>((r) => consumer.on(consumer.events.GROUP_JOIN, () => r()));
    await consumer.run({ eachMessage: async () => void got++ });
    await joined;
    const rate = await pump(
      () => producer.send({ topic, acks: -1, messages: [{ value: payload }] }),
      () => got,
    );
    await consumer.disconnect();
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] });
    await admin.disconnect();
    return rate;
  },
};

const adapters = {
  redis: () => RedisBus.connect({ url: 'redis://127.0.0.1:6379' }),
  nats: () => NatsBus.connect({ servers: '127.0.0.1:4222' }),
  kafka: async () => new KafkaBus({ brokers: ['127.0.0.1:9092'], clientId: 'bench-bus' }),
};

const brokers = (process.argv.slice(2).length ? process.argv.slice(2) : ['redis', 'nats', 'kafka']) as Array<
  keyof typeof raw
>;
console.log(`Bus throughput — ${boxLine()}`);
console.log(
  `${messages} messages × ${rounds} rounds per side, window ${window}, payload ${payload.length} B\n`,
);
const summary: string[] = [];
for (const broker of brokers) {
  const bus = await adapters[broker]();
  const result = await interleave(
    rounds,
    { baseline: () => raw[broker](), candidate: () => adapterRound(bus) },
    (i, a, b) => console.log(`  ${broker} round ${i}: raw ${a.toFixed(0)}/s, adapter ${b.toFixed(0)}/s`),
  );
  await bus.close();
  summary.push(
    `${broker.padEnd(6)} raw ${result.baselineMedian.toFixed(0).padStart(6)}/s  adapter ${result.candidateMedian
      .toFixed(0)
      .padStart(
        6,
      )}/s  ratio ${formatRatio(result.ratio)} (goal ≥ 0.80×) → ${result.ratio >= 0.8 ? 'meets' : 'MISSES'}`,
  );
}
console.log(`\n${summary.join('\n')}`);
process.exit(0);
