/**
 * `kafka.notification` and `nats.notification` from the outside: an HTTP request to a rest.yaml
 * endpoint runs a flow whose task publishes, and the record is read back from the real Kafka (with
 * its key, headers, and Avro through the real schema registry) and NATS (default addresses, unique
 * topics per run). Input the brokers cannot carry or beyond the bounds is the caller's fault (4xx);
 * a broker the engine cannot reach or has no settings for is our outage (503).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistryClient } from '@gatehouse/avro';
import { KafkaBus, type Message, NatsBus, type Subscription } from '@gatehouse/bus/all';
import { dependencyAddress, uniqueName, waitFor } from '@gatehouse/testkit';
import { type RunningEngine, startEngine } from '../engine-fixture.ts';
import { publishingApp } from './publishing-app.ts';

const run = uniqueName('flow-notify');
const topic = `${run}-orders`;
const subject = `${run}.orders`;
const avroSubject = `${run}-orders-value`;
const order = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
};

let engine: RunningEngine;
let bare: RunningEngine;
let kafka: KafkaBus;
let nats: NatsBus;
let registry: SchemaRegistryClient;
const subscriptions: Subscription[] = [];
const kafkaSeen: Message[] = [];
const natsSeen: Message[] = [];

before(async () => {
  const app = publishingApp();
  registry = new SchemaRegistryClient({
    url: dependencyAddress.schemaRegistryUrl,
    cacheTtlMs: 0,
    timeoutMs: 5000,
  });
  await registry.register(avroSubject, order);
  kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
  await kafka.ensureTopic(topic);
  subscriptions.push(await kafka.subscribe(topic, (m) => void kafkaSeen.push(m)));
  nats = await NatsBus.connect({ servers: dependencyAddress.natsUrl, name: run });
  subscriptions.push(await nats.subscribe(subject, (m) => void natsSeen.push(m)));
  engine = await startEngine({
    REST_CONFIG_FOLDER: app,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    KAFKA_CLIENT_ID: run,
    NATS_SERVERS: dependencyAddress.natsUrl,
    KAFKA_SCHEMA_REGISTRY_HOST: dependencyAddress.schemaRegistryUrl,
    FLOW_NOTIFICATION_MAX_BYTES: '2048',
    FLOW_NOTIFICATION_MAX_HEADERS: '3',
    FLOW_NOTIFICATION_TOPICS: `${topic},${subject}`,
  });
  // No Kafka, no registry, and a NATS server nobody listens on.
  bare = await startEngine({
    REST_CONFIG_FOLDER: app,
    NATS_SERVERS: 'nats://127.0.0.1:1',
    FLOW_NOTIFICATION_TOPICS: '*',
  });
});
after(async () => {
  await engine?.stop();
  await bare?.stop();
  for (const s of subscriptions) await s.close();
  await kafka?.close();
  await nats?.close();
});

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function answer(
  res: Response,
): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    retryAfter: res.headers.get('retry-after'),
  };
}

describe('kafka.notification', () => {
  it('publishes the record with its key and headers (one mapped from the request) and answers its position', async () => {
    const res = await post(
      engine.base,
      'kafka',
      { topic, key: 'order-7', headers: { 'x-tenant': 'acme', n: 3 }, body: { item: 'tea', qty: 2 } },
      { 'x-request-note': 'from the caller' },
    );
    const { status, body } = await answer(res);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body['topic'], topic);
    assert.match(String(body['position']), /\d/);
    const record = await waitFor(() => kafkaSeen.find((m) => m.key === 'order-7'), { timeoutMs: 20_000 });
    assert.deepEqual(JSON.parse(record.value.toString()), { item: 'tea', qty: 2 });
    assert.equal(record.headers['x-tenant'], 'acme');
    assert.equal(record.headers['n'], '3');
    assert.equal(record.headers['x-request-note'], 'from the caller');
    assert.equal(record.headers['content-type'], 'application/json');
    assert.equal(record.position, body['position']);
  });

  it('writes the body Avro-encoded under the schema subject, readable through the registry', async () => {
    const res = await post(engine.base, 'kafka', {
      topic,
      key: 'avro-1',
      schema: avroSubject,
      body: { item: 'cake', qty: 5 },
    });
    assert.equal(res.status, 200, await res.text());
    const record = await waitFor(() => kafkaSeen.find((m) => m.key === 'avro-1'), { timeoutMs: 20_000 });
    assert.equal(record.headers['content-type'], 'avro/binary');
    assert.equal(record.value[0], 0, 'the wire format: magic byte, schema id, Avro');
    assert.deepEqual({ ...((await registry.decode(record.value)) as object) }, { item: 'cake', qty: 5 });
  });

  it('refuses a body that does not fit the schema (400)', async () => {
    const { status, body } = await answer(
      await post(engine.base, 'kafka', { topic, key: 'avro-bad', schema: avroSubject, body: { item: 'x' } }),
    );
    assert.equal(status, 400);
    assert.match(String(body['message']), /Avro schema of subject/);
  });

  it('refuses a topic Kafka cannot have, and input beyond the bounds', async () => {
    for (const [input, want] of [
      [{ topic: 'no spaces/allowed', body: 'x' }, 400],
      [{ topic: '', body: 'x' }, 400],
      [{ topic, body: 'x'.repeat(2049) }, 413],
      [{ topic, body: 'x'.repeat(1500), headers: { a: 'y'.repeat(600) } }, 413],
      [{ topic, body: 'x', headers: { a: '1', b: '2', c: '3', d: '4' } }, 413],
      [{ topic, body: 'x', headers: { 'bad name': '1' } }, 400],
      [{ topic, body: 'x', headers: { ok: 'line\r\nbreak' } }, 400],
      [{ topic, body: 'x', headers: 'not a map' }, 400],
    ] as const) {
      const { status, body } = await answer(await post(engine.base, 'kafka', input));
      assert.equal(status, want, `${JSON.stringify(input).slice(0, 80)}: ${JSON.stringify(body)}`);
    }
  });

  it('answers 503 where Kafka or the schema registry is not configured', async () => {
    const plain = await answer(await post(bare.base, 'kafka', { topic, body: 'x' }));
    assert.equal(plain.status, 503);
    assert.equal(plain.retryAfter, '1', 'our outage says when to retry');
    assert.match(String(plain.body['message']), /KAFKA_BROKERS/);
    const avro = await answer(await post(bare.base, 'kafka', { topic, schema: avroSubject, body: {} }));
    assert.equal(avro.status, 503);
    assert.match(String(avro.body['message']), /KAFKA_SCHEMA_REGISTRY_HOST/);
  });
});

describe('nats.notification', () => {
  it('publishes on the subject with its headers', async () => {
    const { status, body } = await answer(
      await post(engine.base, 'nats', { subject, headers: { 'x-tenant': 'acme' }, body: 'plain text' }),
    );
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body['topic'], subject);
    const message = await waitFor(() => natsSeen[0], { timeoutMs: 20_000 });
    assert.equal(message.value.toString(), 'plain text');
    assert.equal(message.headers['x-tenant'], 'acme');
  });

  it('refuses wildcard subjects', async () => {
    for (const s of [`${run}.*`, `${run}.>`, `${run}..x`, 'with space'])
      assert.equal((await post(engine.base, 'nats', { subject: s, body: 'x' })).status, 400, s);
  });

  it('answers 503 while the NATS server cannot be reached, without its address, and the engine stays up', async () => {
    const { status, body, retryAfter } = await answer(await post(bare.base, 'nats', { subject, body: 'x' }));
    assert.equal(status, 503, JSON.stringify(body));
    assert.equal(retryAfter, '1', 'our outage says when to retry');
    assert.doesNotMatch(String(body['message']), /127\.0\.0\.1/, 'no address in the answer');
    assert.equal((await fetch(`${bare.base}/health`)).status, 200);
  });
});

describe('metrics', () => {
  it('counts each publish by function and status, without a label per topic', async () => {
    const text = await engine.registry.metrics();
    assert.match(text, /gw_rest_flow_published_total\{function="kafka\.notification",status="200"\} [1-9]/);
    assert.match(text, /gw_rest_flow_published_total\{function="kafka\.notification",status="413"\} [1-9]/);
    assert.match(text, /gw_rest_flow_published_total\{function="nats\.notification",status="200"\} 1/);
    assert.doesNotMatch(text, new RegExp(run));
  });
});
