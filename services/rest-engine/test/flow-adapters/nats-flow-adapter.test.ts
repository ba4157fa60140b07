/**
 * The NATS flow adapter against the project's NATS server: a core NATS binding (queue group,
 * at-most-once) and two JetStream bindings on a stream of this test (durable consumer, acked after
 * the flow; one dead-letters after its retries).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { dependencyAddress, waitFor } from '@gatehouse/testkit';
import { type RunningEngine, startEngine } from '../engine-fixture.ts';
import { adapterFile, fixtureApp, seen } from './kafka-fixture.ts';

const id = randomUUID().slice(0, 8);
const stream = `FA_${id}`;
const s = {
  core: `fa.${id}.core`,
  busy: `fa.${id}.busy`,
  ok: `fa.${id}.js.ok`,
  failing: `fa.${id}.js.failing`,
  dlq: `fa.${id}.js.dlq`,
};
let nc: NatsConnection;
let engine: RunningEngine;
const seenOn = (subject: string) =>
  seen().filter((x) => (x['metadata'] as { subject?: string })?.subject === subject);

before(async () => {
  nc = await connect({ servers: dependencyAddress.natsUrl });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`fa.${id}.js.>`] });
  const file = adapterFile(
    'nats-flow-adapter.yaml',
    `consumer:
  - subject: '${s.core}'
    flow: 'adapter-record-a'
    serializer: 'json'
  - subject: '${s.busy}'
    max-in-flight: 1
    flow: 'adapter-slow'
  - subject: '${s.ok}'
    stream: '${stream}'
    queue: 'ok-${id}'
    flow: 'adapter-record-b'
  - subject: '${s.failing}'
    stream: '${stream}'
    queue: 'failing-${id}'
    flow: 'adapter-fail'
    dlq-subject: '${s.dlq}'
`,
  );
  process.env['PAUSE_MS'] = '300';
  engine = await startEngine({
    REST_CONFIG_FOLDER: fixtureApp,
    YAML_NATS_FLOW_ADAPTER: file,
    NATS_SERVERS: dependencyAddress.natsUrl,
    KAFKA_FLOW_MAX_RETRIES: '1',
    KAFKA_FLOW_RETRY_BACKOFF_MS: '20',
  });
});

after(async () => {
  await engine?.stop();
  await jetstreamManager(nc)
    .then((jsm) => jsm.streams.delete(stream))
    .catch(() => undefined);
  await nc?.close();
});

describe('NATS flow adapter', () => {
  it('hands a core NATS message to its flow with its subject and headers', async () => {
    const h = headers();
    h.set('X-Tag', 'core');
    h.set('cid', 'nats-cid');
    nc.publish(s.core, JSON.stringify({ n: 2 }), { headers: h });
    const [got] = await waitFor(() => (seenOn(s.core).length > 0 ? seenOn(s.core) : undefined), {
      timeoutMs: 10_000,
      what: 'the core message',
    });
    assert.deepEqual(got!['body'], { n: 2 });
    assert.equal((got!['record_header'] as Record<string, string>)['x-tag'], 'core');
    assert.equal((got!['event_headers'] as Record<string, string>)['my_correlation_id'], 'nats-cid');
  });

  it('drops core NATS messages beyond max-in-flight and counts them (at-most-once)', async () => {
    for (let i = 0; i < 5; i++) nc.publish(s.busy, `m${i}`);
    await nc.flush();
    await waitFor(() => seenOn(s.busy).length === 1, {
      timeoutMs: 10_000,
      what: 'the one message in flight',
    });
    const metrics = await engine.registry.metrics();
    assert.match(
      metrics,
      new RegExp(
        `gw_flow_adapter_records_total\\{binding="nats:${s.busy.replaceAll('.', '\\.')}",outcome="dropped"\\} 4`,
      ),
    );
    assert.equal(Buffer.from(seenOn(s.busy)[0]!['body'] as Uint8Array).toString(), 'm0');
    nc.publish(s.busy, 'later');
    await waitFor(() => seenOn(s.busy).length === 2, {
      timeoutMs: 10_000,
      what: 'a message once the slot is free',
    });
  });

  it('acks a JetStream message once its flow finished', async () => {
    const ack = await jetstream(nc).publish(s.ok, 'stored');
    const [got] = await waitFor(() => (seenOn(s.ok).length > 0 ? seenOn(s.ok) : undefined), {
      timeoutMs: 10_000,
      what: 'the stream message',
    });
    const metadata = got!['metadata'] as Record<string, unknown>;
    assert.equal(metadata['stream'], stream);
    assert.equal(metadata['sequence'], ack.seq);
    assert.equal(got!['flow'], 'b');
    const jsm = await jetstreamManager(nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(stream, `ok-${id}`);
        return info.ack_floor.stream_seq === ack.seq && info.num_ack_pending === 0;
      },
      { timeoutMs: 10_000, what: 'the ack' },
    );
  });

  it('dead-letters a JetStream message after its retries, with where it came from and why', async () => {
    const letters = nc.subscribe(s.dlq, { max: 1 });
    await nc.flush();
    await jetstream(nc).publish(s.failing, 'doomed');
    const letter = await waitFor(
      async () => {
        for await (const m of letters) return m;
        return undefined;
      },
      { timeoutMs: 15_000, what: 'the dead letter' },
    );
    assert.equal(letter.string(), 'doomed');
    assert.equal(letter.headers?.get('dlq.origin.subject'), s.failing);
    assert.match(letter.headers?.get('dlq.error') ?? '', /adapter\.fail always fails/);
    assert.equal(seenOn(s.failing).length, 2, 'one run and one retry');
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => (await jsm.consumers.info(stream, `failing-${id}`)).num_ack_pending === 0, {
      timeoutMs: 10_000,
      what: 'the dead-lettered message acked',
    });
  });
});
