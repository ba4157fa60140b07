/**
 * At-least-once across a crash on a JetStream binding: the REST engine runs as its own process
 * (src/main.ts), a three-task flow reports every record it finished to an HTTP sink, and the process
 * is killed with SIGKILL while messages are in flows. A second engine on the same durable consumer
 * takes over once the ack wait of the dead one's messages ran out: every message reaches the sink
 * (0 lost), and only messages whose flow had finished but whose ack had not reached the server come
 * twice — at most max-in-flight, as docs/flow-adapters.md says.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { dependencyAddress, type ServiceProcess, waitFor } from '@gatehouse/testkit';
import { type CountingSink, startCountingSink, startEngineProcess } from './engine-process.ts';
import { adapterFile } from './kafka-fixture.ts';

const id = randomUUID().slice(0, 8);
const stream = `FA_CRASH_${id}`;
const subject = `fa.${id}.crash`;
const maxInFlight = 4;
const total = 200;
let nc: NatsConnection;
let sink: CountingSink;
const engines: ServiceProcess[] = [];

async function startEngine(file: string): Promise<ServiceProcess> {
  const engine = await startEngineProcess(sink.url, {
    YAML_NATS_FLOW_ADAPTER: file,
    NATS_SERVERS: dependencyAddress.natsUrl,
    // No retries: the ack wait is then the flow's ttl (10 s) plus 5 s, the time a redelivery waits.
    KAFKA_FLOW_MAX_RETRIES: '0',
    PAUSE_MS: '20',
  });
  engines.push(engine);
  return engine;
}

const distinct = () => sink.distinct();
const duplicates = () => sink.duplicates();

before(async () => {
  nc = await connect({ servers: dependencyAddress.natsUrl });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [subject] });
  sink = await startCountingSink();
});

after(async () => {
  for (const e of engines) await e.stop(5000).catch(() => undefined);
  await sink?.close();
  await jetstreamManager(nc)
    .then((jsm) => jsm.streams.delete(stream))
    .catch(() => undefined);
  await nc?.close();
});

describe('NATS JetStream flow adapter across a crash', () => {
  it('loses no message when the engine is killed mid-flow, and repeats at most max-in-flight', async (t) => {
    const file = adapterFile(
      'nats-flow-adapter.yaml',
      `consumer:\n  - subject: '${subject}'\n    stream: '${stream}'\n    queue: 'crash-${id}'\n    max-in-flight: ${maxInFlight}\n    flow: 'adapter-sink'\n    serializer: 'json'\n`,
    );
    const js = jetstream(nc);
    for (let i = 0; i < total; i++) await js.publish(subject, JSON.stringify({ id: String(i) }));

    const first = await startEngine(file);
    await waitFor(() => distinct() >= 40, {
      timeoutMs: 20_000,
      what: '40 messages through the first engine',
    });
    process.kill(first.pid, 'SIGKILL');
    const killed = await first.exited;
    assert.equal(killed.signal, 'SIGKILL');
    const beforeTakeOver = distinct();
    assert.ok(beforeTakeOver < total, 'the kill came while messages were left');

    const second = await startEngine(file);
    await waitFor(() => distinct() === total, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'every message at the sink',
    });
    t.diagnostic(`killed after ${beforeTakeOver} messages; ${duplicates()} came twice`);
    assert.ok(duplicates() <= maxInFlight, `${duplicates()} messages came twice; at most ${maxInFlight} may`);
    const stopped = await second.stop(15_000);
    assert.equal(stopped.code, 0, second.output());
    const info = await (await jetstreamManager(nc)).consumers.info(stream, `crash-${id}`);
    assert.equal(info.num_ack_pending, 0, 'every message acked');
    assert.equal(info.num_pending, 0, 'none left to deliver');
  });
});
