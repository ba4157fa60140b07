/**
 * A client coming back after a long absence on a busy stream, on the real broker: 100,000 events
 * (60 MB) on a Kafka fan-out stream, ten times what the hub's buffer holds, are replayed to an SSE
 * client resuming from the first one, and to a WebSocket client at the same time; the replay hands
 * over to the buffer's 10,000 events, then to live delivery. Each gets every event
 * once, in order, then live events; the time, bytes and event rate are printed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  dependencyAddress,
  exitAfterFileWhenHung,
  gatewayEnv,
  openSse,
  openWs,
  type ServiceProcess,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startHub } from '../src/service-processes.ts';

// kafkajs can leave a reconnect timer behind.
after(() => exitAfterFileWhenHung());

const EVENTS = 100_000;
const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: 'catch.up' }]));

describe('catch-up of a 100k-event backlog from Kafka', () => {
  const run = uniqueName('catchup');
  const topic = `${run}-gw-events`;
  let producer: Producer;
  let hub: ServiceProcess;
  let positions: string[];

  before(async () => {
    const kafka = new Kafka({
      brokers: dependencyAddress.kafkaBrokers,
      clientId: run,
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    producer = kafka.producer();
    await producer.connect();
    // The hub's buffer keeps its default 10,000 events: the replay ends with a 6 MiB hand-over.
    hub = await startHub('hub', gatewayEnv({ run, jwtSecret: `${run}-jwt-secret-long-enough` }));
    positions = await produce(producer, topic, 0, EVENTS);
  });
  after(async () => {
    await producer?.disconnect();
    await hub?.stop();
  });

  it('replays every event to SSE and WebSocket clients reading at full speed, then goes live', async () => {
    const started = Date.now();
    const sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscriptions}`, {
      'last-event-id': positions[0]!,
    });
    const ws = openWs(
      `${hub.publicUrl!.replace('http', 'ws')}/_gw/v1/connection/ws?subscriptions=${subscriptions}&lastEventId=${positions[0]}`,
    );
    after(() => {
      sse.close();
      ws.ws.close();
    });
    const sseNumbers = () =>
      sse.frames.filter((f) => f.event === 'catch.up').map((f) => JSON.parse(f.data).data.n as number);
    const wsNumbers = () =>
      ws.events.filter((e) => e.type === 'catch.up').map((e) => (e.data as { n: number }).n);
    await waitFor(() => sseNumbers().length >= EVENTS - 1 && wsNumbers().length >= EVENTS - 1, {
      what: `the backlog (SSE ${sseNumbers().length}, WebSocket ${wsNumbers().length} of ${EVENTS - 1})`,
      timeoutMs: 240_000,
    });
    const ms = Date.now() - started;
    const bytes = sse.frames.reduce((n, f) => n + f.data.length, 0);
    console.log(
      `catch-up from Kafka: ${EVENTS - 1} events (${(bytes / 2 ** 20).toFixed(1)} MiB of data lines) to SSE and WebSocket in ${ms} ms, ` +
        `${Math.round(((EVENTS - 1) / ms) * 1000)} events/s each`,
    );
    const expected = Array.from({ length: EVENTS - 1 }, (_, i) => i + 1);
    assert.deepEqual(sseNumbers(), expected, 'SSE: every event once, in order');
    assert.deepEqual(wsNumbers(), expected, 'WebSocket: every event once, in order');
    // Live events come after the backlog.
    await produce(producer, topic, EVENTS, 10);
    await waitFor(() => sseNumbers().length === EVENTS + 9 && wsNumbers().length === EVENTS + 9, {
      what: 'the live events after the backlog',
      timeoutMs: 30_000,
    });
    assert.deepEqual(
      sseNumbers().slice(-10),
      Array.from({ length: 10 }, (_, i) => EVENTS + i),
    );
  });
});

/** Writes events `from`…`from + count - 1` to the fan-out topic in batches; resolves with their positions. */
async function produce(producer: Producer, topic: string, from: number, count: number): Promise<string[]> {
  const positions: string[] = [];
  for (let start = from; start < from + count; start += 1000) {
    const n = Math.min(1000, from + count - start);
    const messages = Array.from({ length: n }, (_, i) => ({
      value: JSON.stringify({
        specversion: '1.0',
        id: `${topic}-${start + i}`,
        source: 'catch-up-test',
        type: 'catch.up',
        data: { n: start + i, pad: 'x'.repeat(500) },
      }),
    }));
    const [meta] = await producer.send({ topic, messages, acks: -1 });
    const base = BigInt(meta!.baseOffset!);
    for (let i = 0; i < n; i++) positions.push(`${meta!.partition}-${base + BigInt(i)}`);
  }
  return positions;
}
