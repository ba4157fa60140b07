/**
 * The flow adapter bench's last row, Kafka → flow → SSE client: the whole gateway in one process
 * (embedded/src/main.ts, memory fan-out bus) on `cpu`, its REST engine binding `topic` to a flow of
 * one task, `gatehouse.event.publish`, whose event carries the record's `sentAt`; one SSE client of
 * its public edge, in this process, notes when each event's bytes arrive. Records go out at `rate`
 * per second for `seconds`; p50/p99 of arrival minus `sentAt` (one clock, one box).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Producer } from 'kafkajs';
import { openRawConnection } from './clients/raw-connection.ts';
import { percentile, spawnPinned } from './harness/index.ts';

const eventType = 'bench.flow.sse';

export interface SseRowOptions {
  root: string;
  brokers: string[];
  producer: Producer;
  topic: string;
  /** The public edge's port; the internal API's is the next, the REST engine's the one after. */
  port: number;
  cpu: number;
  rate: number;
  seconds: number;
}

function appFolder(topic: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'flow-adapter-sse-bench-'));
  mkdirSync(join(dir, 'flows'));
  const files: Record<string, string> = {
    'application.yml': 'rest.automation: true\n',
    'rest.yaml': 'rest: []\n',
    'flows.yaml': `location: "classpath:/flows/"\nflows:\n  - "to-sse.yml"\n`,
    'flows/to-sse.yml': `flow: { id: "to-sse", description: "a record to the SSE clients", ttl: 10s }
first.task: "publish"
tasks:
  - name: "publish"
    input: ["text(1.0) -> event.specversion", "f:uuid() -> event.id", "text(${eventType}) -> event.type",
            "text(/bench) -> event.source", "input.body -> event.data"]
    process: "gatehouse.event.publish"
    output: []
    description: "to the browsers"
    execution: end
`,
    'kafka-flow-adapter.yaml': `consumer:\n  - topic: '${topic}'\n    flow: 'to-sse'\n    serializer: 'json'\n`,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Waits for the gateway's `/ready` (the flow adapter's consumer in its group included). */
async function untilReady(apiPort: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${apiPort}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(200);
  }
  throw new Error('the gateway was not ready within 60 s');
}

/** p50/p99 in ms of Kafka producer send → SSE client, and how many records were measured. */
export async function kafkaToSseLatency(
  o: SseRowOptions,
): Promise<{ p50: number; p99: number; count: number }> {
  const app = appFolder(o.topic);
  const gateway = await spawnPinned({
    name: 'embedded gateway',
    script: join(o.root, 'embedded/src/main.ts'),
    port: o.port,
    cpu: o.cpu,
    env: {
      INBOUND_PORT: String(o.port),
      API_PORT: String(o.port + 1),
      REST_SERVER_PORT: String(o.port + 2),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      REST_CONFIG_FOLDER: app,
      YAML_KAFKA_FLOW_ADAPTER: 'classpath:/kafka-flow-adapter.yaml',
      KAFKA_BROKERS: o.brokers.join(','),
    },
  });
  const latencies: number[] = [];
  let opened = false;
  const subscriptions = encodeURIComponent(JSON.stringify([{ eventType }]));
  const client = openRawConnection(
    0,
    { transport: 'sse', port: o.port, path: `/_gw/v1/connection/sse?subscriptions=${subscriptions}` },
    {
      onOpen: () => {
        opened = true;
      },
      onClose: () => undefined,
      onStamp: (sentAt, arrivedAt) => latencies.push(arrivedAt - sentAt),
    },
  );
  try {
    await untilReady(o.port + 1);
    while (!opened) await sleep(50);
    const perTick = Math.max(1, Math.round(o.rate / 100));
    const until = Date.now() + o.seconds * 1000;
    let sent = 0;
    while (Date.now() < until) {
      const tick = Date.now();
      const messages = Array.from({ length: perTick }, (_, k) => ({
        key: String(sent + k),
        value: JSON.stringify({ n: sent + k, sentAt: performance.timeOrigin + performance.now() }),
      }));
      await o.producer.send({ topic: o.topic, messages });
      sent += perTick;
      await sleep(Math.max(0, 10 - (Date.now() - tick)));
    }
    const deadline = Date.now() + 60_000;
    while (latencies.length < sent && Date.now() < deadline) await sleep(200);
    if (latencies.length < sent)
      throw new Error(`only ${latencies.length} of ${sent} events reached the SSE client`);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), count: latencies.length };
  } finally {
    client.destroy();
    await gateway.stop();
    rmSync(app, { recursive: true, force: true });
  }
}
