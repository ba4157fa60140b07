/**
 * A caller of a flow endpoint whose flow maps request data into `kafka.notification` /
 * `nats.notification` (the publishing app: topic, key, headers, body and schema all from the
 * request), attacking the input the functions read: control characters and other alphabets in a
 * NATS subject, keys of the wrong kind or beyond the bound, bodies nested past MAX_JSON_DEPTH or cut
 * short, Avro subjects spelled as paths and bodies that do not fit the schema, JetStream's own
 * `Nats-*` headers (names are lower-cased, and JetStream reads only its exact spelling), and a
 * schema registry or Kafka out of reach. Each gets its 4xx (or our 503 with Retry-After), and the engine stays up without an
 * error logged. Real Kafka, NATS and schema registry; unique names.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistryClient } from '@gatehouse/avro';
import { dependencyAddress, uniqueName } from '@gatehouse/testkit';
import { type RunningEngine, startEngine } from '../engine-fixture.ts';
import { publishingApp } from './publishing-app.ts';

const run = uniqueName('flow-attack');
const topic = `${run}-orders`;
const avroSubject = `${run}-orders-value`;
const errorLevel = 50;

let engine: RunningEngine;
let registryDown: RunningEngine;
let kafkaDown: RunningEngine;

before(async () => {
  const app = publishingApp();
  const registry = new SchemaRegistryClient({
    url: dependencyAddress.schemaRegistryUrl,
    cacheTtlMs: 0,
    timeoutMs: 5000,
  });
  await registry.register(avroSubject, {
    type: 'record',
    name: 'Order',
    fields: [
      { name: 'item', type: 'string' },
      { name: 'qty', type: 'int' },
    ],
  });
  const env = {
    REST_CONFIG_FOLDER: app,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    KAFKA_CLIENT_ID: run,
    NATS_SERVERS: dependencyAddress.natsUrl,
    FLOW_NOTIFICATION_TOPICS: `${run}-*,${run}.*`,
    FLOW_NOTIFICATION_MAX_BYTES: '2048',
  };
  engine = await startEngine({ ...env, KAFKA_SCHEMA_REGISTRY_HOST: dependencyAddress.schemaRegistryUrl });
  registryDown = await startEngine({ ...env, KAFKA_SCHEMA_REGISTRY_HOST: 'http://127.0.0.1:1' });
  kafkaDown = await startEngine({ ...env, KAFKA_BROKERS: '127.0.0.1:1' });
});
after(async () => {
  await engine?.stop();
  await registryDown?.stop();
  await kafkaDown?.stop();
});

async function post(
  on: RunningEngine,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const res = await fetch(`${on.base}/api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}

async function assertUnharmed(on: RunningEngine): Promise<void> {
  assert.equal((await fetch(`${on.base}/health`)).status, 200);
  const errors = on.logs.filter((l) => Number(l['level']) >= errorLevel).map((l) => l['msg']);
  assert.deepEqual(errors, [], 'nothing logged as an error');
}

describe('nats.notification subjects', () => {
  it('refuses control characters, other alphabets, empty tokens and overlong subjects (400)', async () => {
    for (const subject of [
      `${run}.a\u0001b`,
      `${run}.a\u007fb`,
      `${run}.a\tb`,
      `${run}.a\nb`,
      `${run}.a\u0000b`,
      `${run}.bär`,
      `${run}.a\u2028b`,
      `${run}.`,
      `.${run}`,
      `${run}.${'x'.repeat(256)}`,
      ['a', 'b'],
      { toString: 'x' },
    ]) {
      const { status, text } = await post(engine, 'nats', { subject, body: 'x' });
      assert.equal(status, 400, `${JSON.stringify(subject).slice(0, 40)}: ${text}`);
    }
    await assertUnharmed(engine);
  });
});

describe('nats.notification headers', () => {
  it("gives a caller's Nats-* headers no say over JetStream: no duplicate drop, expectation or roll-up", async () => {
    const subject = `${run}.jetstream`;
    const positions: string[] = [];
    for (const headers of [
      { 'Nats-Msg-Id': 'same' },
      { 'Nats-Msg-Id': 'same' },
      { 'Nats-Expected-Stream': 'another' },
      { 'Nats-Expected-Last-Sequence': '0' },
      { 'Nats-Rollup': 'all' },
    ]) {
      const { status, text } = await post(engine, 'nats', { subject, headers, body: 'x' });
      assert.equal(status, 200, `${JSON.stringify(headers)}: ${text}`);
      // Without the stream's epoch (`1.1a2b3c4d`): one stream, so one epoch.
      positions.push(String((JSON.parse(text) as { position: unknown }).position).split('.')[0]!);
    }
    assert.deepEqual(positions, ['1', '2', '3', '4', '5'], 'each stored as a message of its own');
    await assertUnharmed(engine);
  });
});

describe('kafka.notification keys and bodies', () => {
  it('refuses keys that are not text or beyond the bound, and bodies nested past MAX_JSON_DEPTH', async () => {
    for (const [input, want] of [
      [{ topic, key: { a: 1 }, body: 'x' }, 400],
      [{ topic, key: ['a'], body: 'x' }, 400],
      [{ topic, key: 'k'.repeat(2100), body: 'x' }, 413],
      [{ topic, key: 'é'.repeat(1100), body: 'x' }, 413],
      [{ topic, body: 'é'.repeat(1100) }, 413],
      [{ topic, headers: { ['h'.repeat(300)]: 'x' }, body: 'x' }, 400],
      [{ topic, headers: { 'x-a': { nested: true } }, body: 'x' }, 400],
    ] as const) {
      const { status, text } = await post(engine, 'kafka', input);
      assert.equal(status, want, `${JSON.stringify(input).slice(0, 60)}: ${text}`);
    }
    const deep = `{"topic":"${topic}","body":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    assert.equal((await post(engine, 'kafka', deep)).status, 400);
    await assertUnharmed(engine);
  });

  it('survives a body cut short: the connection closed mid-body leaves the engine up', async () => {
    const { hostname, port } = new URL(engine.base);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `POST /api/kafka HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"topic":"${topic}","body":"`,
        );
        socket.end();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.resume();
    });
    await assertUnharmed(engine);
  });
});

describe('kafka.notification with Avro', () => {
  it('refuses a body that does not fit the schema, and a subject the registry does not have, spelled as a path or not (400)', async () => {
    for (const [schema, body] of [
      [avroSubject, { item: 'tea', qty: '2' }],
      [avroSubject, { item: 'tea', qty: 2 ** 40 }],
      [avroSubject, 'plain text'],
      [avroSubject, [1, 2]],
      [`${run}-nobody`, { item: 'tea', qty: 2 }],
      ['../../config', { item: 'tea', qty: 2 }],
      [`${avroSubject}/versions/1`, { item: 'tea', qty: 2 }],
      ['%2e%2e', { item: 'tea', qty: 2 }],
    ] as const) {
      const { status, text } = await post(engine, 'kafka', { topic, key: 'k', schema, body });
      assert.equal(status, 400, `${schema} ${JSON.stringify(body)}: ${text}`);
    }
    await assertUnharmed(engine);
  });

  it('answers 503 with Retry-After while the schema registry is out of reach, naming no address', async () => {
    const { status, text, retryAfter } = await post(registryDown, 'kafka', {
      topic,
      schema: avroSubject,
      body: { item: 'tea', qty: 2 },
    });
    assert.equal(status, 503, text);
    assert.equal(retryAfter, '1');
    assert.doesNotMatch(text, /127\.0\.0\.1/);
    assert.equal((await fetch(`${registryDown.base}/health`)).status, 200);
  });
});

describe('kafka.notification while Kafka is out of reach', () => {
  it('answers 503 with Retry-After, naming no address, and the engine stays up', async () => {
    const { status, text, retryAfter } = await post(kafkaDown, 'kafka', { topic, body: 'x' });
    assert.equal(status, 503, text);
    assert.equal(retryAfter, '1');
    assert.doesNotMatch(text, /127\.0\.0\.1/);
    assert.equal((await fetch(`${kafkaDown.base}/health`)).status, 200);
  });
});
