/**
 * The REST engine's Kafka flow adapter (issue 38): records per second through a three-task flow
 * (no.op → no.op → a function that notes the record), and Kafka → flow latency p50/p99 (producer
 * send to the flow's last task, wall clock, same box) at a steady rate.
 *
 * Set-up: one engine process (services/rest-engine/src/main.ts) pinned to cpu0, its
 * kafka-flow-adapter.yaml binding a fresh 3-partition topic of the local Kafka to the flow
 * (at-least-once: commit after each record's flow; `--auto-commit` measures auto-commit instead).
 * This process, pinned to cpu1, produces.
 * - Throughput: `--records` (20,000) records of ~200 bytes written first, then the engine's
 *   binding started on them (a new group reads from the start): records / (last done − first done).
 * - Latency: `--rate` (200) records/s for `--seconds` (10), every 10 ms a few together; p50/p99 of
 *   what the last task saw.
 * - Kafka → flow → SSE client: the whole gateway in one process on cpu0 (flow-adapter-sse.ts), a
 *   flow publishing each record with gatehouse.event.publish, an SSE client here; the same rate and
 *   seconds, p50/p99 of producer send → the event's bytes at the client.
 * Bounded: about a minute and a half.
 *
 * Run: `node bench/src/flow-adapter.bench.ts [--records 20000] [--rate 200] [--seconds 10] [--auto-commit]`
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { dependencyAddress } from '@gatehouse/testkit';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaToSseLatency } from './flow-adapter-sse.ts';
import { boxLine, percentile, pinProcess, spawnPinned } from './harness/index.ts';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    'auto-commit': { type: 'boolean', default: false },
  },
});
const root = fileURLToPath(new URL('../../', import.meta.url));
const port = 24061;
const topic = `bench-flow-adapter-${randomUUID().slice(0, 8)}`;
const sseTopic = `${topic}-sse`;

function appFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flow-adapter-bench-'));
  mkdirSync(join(dir, 'flows'));
  const files: Record<string, string> = {
    'application.yml': 'rest.automation: true\n',
    'rest.yaml': `rest:\n  - service: bench.adapter.stats\n    methods: [GET]\n    url: /stats\n    timeout: 10s\n`,
    'flows.yaml': `location: "classpath:/flows/"\nflows:\n  - "three-tasks.yml"\n`,
    'flows/three-tasks.yml': `flow:
  id: "three-tasks"
  description: "two no-ops and a mark"
  ttl: 10s
first.task: "first"
tasks:
  - name: "first"
    input: ["input.body -> *"]
    process: "no.op"
    output: ["result -> model.record"]
    description: "take the record"
    execution: sequential
    next: ["second"]
  - name: "second"
    input: ["model.record -> *"]
    process: "no.op"
    output: ["result -> model.again"]
    description: "pass it on"
    execution: sequential
    next: ["bench.adapter.mark"]
  - input: ["input.header.bench-sent-at -> sent", "model.again -> record"]
    process: "bench.adapter.mark"
    output: []
    description: "note the latency"
    execution: end
`,
    'kafka-flow-adapter.yaml': `consumer:\n  - topic: '${topic}'\n    flow: 'three-tasks'\n    serializer: 'json'\n    auto-commit: ${args['auto-commit']}\n`,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

interface Stats {
  count: number;
  latenciesMs: number[];
}

async function stats(): Promise<Stats> {
  const answer = await fetch(`http://127.0.0.1:${port}/stats`);
  return (await answer.json()) as Stats;
}

const record = (i: number) => ({
  key: String(i),
  value: JSON.stringify({ id: i, kind: 'bench', padding: 'x'.repeat(150) }),
  headers: { 'bench-sent-at': String(Date.now()) },
});

async function main(): Promise<void> {
  console.log(`Flow adapter benchmark — ${boxLine()}`);
  pinProcess(process.pid, 1);
  const total = Number(args.records);
  const kafka = new Kafka({
    brokers: dependencyAddress.kafkaBrokers,
    clientId: 'flow-adapter-bench',
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await Promise.all([admin.connect(), producer.connect()]);
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  for (let i = 0; i < total; i += 1000)
    await producer.send({
      topic,
      messages: Array.from({ length: Math.min(1000, total - i) }, (_, k) => record(i + k)),
    });

  const app = appFolder();
  const started = performance.now();
  const engine = await spawnPinned({
    name: 'rest-engine',
    script: join(root, 'services/rest-engine/src/main.ts'),
    port,
    cpu: 0,
    env: {
      REST_SERVER_PORT: String(port),
      REST_SERVER_HOST: '127.0.0.1',
      API_PORT: String(port + 1),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      REST_CONFIG_FOLDER: app,
      FUNCTIONS_PATH: join(root, 'bench/src/baselines/flow-adapter-functions'),
      YAML_KAFKA_FLOW_ADAPTER: 'classpath:/kafka-flow-adapter.yaml',
      KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    },
  });
  try {
    try {
      let done = 0;
      let first = 0;
      while (done < total) {
        await sleep(100);
        const got = (await stats()).count;
        if (got > 0 && first === 0) first = performance.now() - 100;
        done += got;
        if (performance.now() - started > 120_000)
          throw new Error(`only ${done} of ${total} records in 2 minutes`);
      }
      const seconds = (performance.now() - first) / 1000;
      console.log(
        `throughput (${args['auto-commit'] ? 'auto-commit' : 'at-least-once'}): ${total} records in ${seconds.toFixed(1)} s = ${Math.round(total / seconds)} records/s through the three-task flow`,
      );

      const rate = Number(args.rate);
      const perTick = Math.max(1, Math.round(rate / 100));
      const until = Date.now() + Number(args.seconds) * 1000;
      let sent = 0;
      while (Date.now() < until) {
        const tick = Date.now();
        await producer.send({
          topic,
          messages: Array.from({ length: perTick }, (_, k) => record(total + sent + k)),
        });
        sent += perTick;
        await sleep(Math.max(0, 10 - (Date.now() - tick)));
      }
      const latencies: number[] = [];
      while (latencies.length < sent) {
        await sleep(200);
        latencies.push(...(await stats()).latenciesMs);
      }
      console.log(
        `latency at ${rate} records/s (${sent} records): Kafka → flow's last task p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
      );
    } finally {
      await engine.stop();
    }
    await admin.createTopics({ topics: [{ topic: sseTopic, numPartitions: 3 }], waitForLeaders: true });
    const row = await kafkaToSseLatency({
      root,
      brokers: dependencyAddress.kafkaBrokers,
      producer,
      topic: sseTopic,
      port: port + 10,
      cpu: 0,
      rate: Number(args.rate),
      seconds: Number(args.seconds),
    });
    console.log(
      `latency at ${args.rate} records/s (${row.count} records): Kafka → flow → SSE client p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms`,
    );
  } finally {
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic, sseTopic] }).catch(() => undefined);
    await admin.disconnect();
    rmSync(app, { recursive: true, force: true });
  }
}

await main();
