/**
 * The NATS flow adapter against the project's NATS server: a core NATS binding (queue group,
 * at-most-once) and two JetStream bindings on a stream of this test (durable consumer, acked after
 * the flow; one dead-letters after its retries).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
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
  big: `fa.${id}.js.big`,
  bigDlq: `fa.${id}.big-dlq`,
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
  - subject: '${s.big}'
    stream: '${stream}'
    queue: 'big-${id}'
    flow: 'adapter-record-b'
    dlq-subject: '${s.bigDlq}'
`,
  );
  process.env['PAUSE_MS'] = '300';
  engine = await startEngine({
    REST_CONFIG_FOLDER: fixtureApp,
    YAML_NATS_FLOW_ADAPTER: file,
    NATS_SERVERS: dependencyAddress.natsUrl,
    KAFKA_FLOW_MAX_RETRIES: '1',
    KAFKA_FLOW_RETRY_BACKOFF_MS: '20',
    FLOW_ADAPTER_MAX_RECORD_BYTES: '4096',
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

  it('dead-letters a message larger than max-record-bytes in bytes, every value of a repeated header counted', async () => {
    const letters = nc.subscribe(s.bigDlq, { max: 2 });
    await nc.flush();
    // 1,400 characters, 4,200 bytes: the bound counts what the broker carried, in bytes.
    const multibyte = headers();
    multibyte.set('note', 'あ'.repeat(1400));
    // A repeated header: every value was carried, not only the last one the flow sees.
    const repeated = headers();
    repeated.append('note', 'y'.repeat(2500));
    repeated.append('note', 'z'.repeat(2500));
    const js = jetstream(nc);
    await js.publish(s.big, '{}', { headers: multibyte });
    await js.publish(s.big, '{}', { headers: repeated });
    await js.publish(s.big, 'small');
    const got: string[] = [];
    void (async () => {
      for await (const m of letters) got.push(m.headers?.get('dlq.error') ?? '');
    })();
    await waitFor(() => got.length === 2, { timeoutMs: 15_000, what: 'two dead letters' });
    assert.deepEqual(
      got.map(
        (e) => e.match(/record of (\d+) bytes is larger than flow\.adapter\.max-record-bytes \(4096\)/)?.[1],
      ),
      ['4206', '5010'],
    );
    const ran = await waitFor(() => (seenOn(s.big).length > 0 ? seenOn(s.big) : undefined), {
      timeoutMs: 10_000,
      what: 'the small message',
    });
    assert.deepEqual(
      ran.map((x) => Buffer.from(x['body'] as Uint8Array).toString()),
      ['small'],
      'only the small message ran its flow',
    );
  });

  it('dead-letters a JetStream message after its retries, with where it came from and why', async () => {
    const letters = nc.subscribe(s.dlq, { max: 1 });
    await nc.flush();
    await jetstream(nc).publish(s.failing, 'doomed');
    // Read beside the wait: an iterator awaited inside it would outlast its timeout.
    const got: Msg[] = [];
    void (async () => {
      for await (const m of letters) got.push(m);
    })();
    const [letter] = await waitFor(() => (got.length > 0 ? got : undefined), {
      timeoutMs: 15_000,
      what: 'the dead letter',
    });
    assert.equal(letter!.string(), 'doomed');
    assert.equal(letter!.headers?.get('dlq.origin.subject'), s.failing);
    assert.match(letter!.headers?.get('dlq.error') ?? '', /adapter\.fail always fails/);
    assert.equal(seenOn(s.failing).length, 2, 'one run and one retry');
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => (await jsm.consumers.info(stream, `failing-${id}`)).num_ack_pending === 0, {
      timeoutMs: 10_000,
      what: 'the dead-lettered message acked',
    });
  });
});
