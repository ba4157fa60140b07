/**
 * The request log on Kafka (REQUEST_LOG=kafka), through proxy processes against real Kafka, Redis
 * and the schema registry of tools/deps.sh: a proxied request is logged as a `gw.proxy.api.call`
 * CloudEvent, as JSON by default, and with KAFKA_LOG_SCHEMA as RIG had it: binary mode with Avro
 * data under that subject's latest schema (the Confluent wire format), which a reader decodes by the
 * schema id. A subject the registry does not know, or a schema a record does not fit, stops
 * start-up naming KAFKA_LOG_SCHEMA; so does the subject without a registry or without the Kafka log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistryClient } from '@gatehouse/avro';
import { KafkaBus, type Message, type Subscription } from '@gatehouse/bus/all';
import { dependencyAddress, uniqueName, waitFor } from '@gatehouse/testkit';
import { type ProxyProcess, startProxy } from '../proxy-process.ts';
import { echo, startBackend, type TestBackend } from '../test-backend.ts';

const run = uniqueName('req-log');
const jsonTopic = `${run}-json-log`;
const avroTopic = `${run}-avro-log`;
const subject = `${run}-log-value`;
const callRecord = {
  type: 'record',
  name: 'ProxyApiCall',
  namespace: 'gatehouse',
  fields: [
    { name: 'api', type: 'string' },
    { name: 'endpoint', type: 'string' },
    { name: 'method', type: 'string' },
    { name: 'request_path', type: 'string' },
    { name: 'remote_ip', type: ['null', 'string'], default: null },
  ],
};
/** A schema no request log record fits: it wants a field the record does not have. */
const otherRecord = { type: 'record', name: 'Other', fields: [{ name: 'count', type: 'int' }] };

describe('the request log on Kafka, as JSON and as Avro (KAFKA_LOG_SCHEMA)', () => {
  const registry = new SchemaRegistryClient({
    url: dependencyAddress.schemaRegistryUrl,
    cacheTtlMs: 0,
    timeoutMs: 5000,
  });
  let backend: TestBackend;
  let kafka: KafkaBus;
  const seen: Record<string, Message[]> = { [jsonTopic]: [], [avroTopic]: [] };
  const subscriptions: Subscription[] = [];
  const proxies: ProxyProcess[] = [];

  const env = (extra: Record<string, string>) => ({
    STORE: 'redis',
    REDIS_URL: dependencyAddress.redisUrl,
    STORE_KEY_PREFIX: `${run}:`,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    KAFKA_SCHEMA_REGISTRY_HOST: dependencyAddress.schemaRegistryUrl,
    REQUEST_LOG: 'kafka',
    PROXY_CONFIG_FILE: JSON.stringify([
      {
        id: 'shop',
        name: 'shop',
        version_data: { default: { endpoints: [{ id: 'orders', method: 'GET', path_regex: '/orders/.*' }] } },
        proxy: { target_url: '127.0.0.1', port: backend.port },
      },
    ]),
    ...extra,
  });

  before(async () => {
    backend = await startBackend();
    backend.handler = echo;
    await registry.register(subject, callRecord);
    await registry.register(`${run}-other-value`, otherRecord);
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    for (const topic of [jsonTopic, avroTopic]) {
      await kafka.ensureTopic(topic, 1);
      subscriptions.push(await kafka.subscribe(topic, (m) => void seen[topic]!.push(m)));
    }
  });
  after(async () => {
    await Promise.all(proxies.map((p) => p.stop()));
    await Promise.all(subscriptions.map((s) => s.close()));
    await kafka?.close();
    await backend?.close();
  });

  it('writes a JSON CloudEvent per proxied request by default', async () => {
    const proxy = await startProxy(env({ KAFKA_LOG_TOPIC: jsonTopic }));
    proxies.push(proxy);
    assert.equal((await fetch(`${proxy.publicUrl}/orders/17`)).status, 200);
    const message = await waitFor(() => seen[jsonTopic]![0], { timeoutMs: 15_000, what: 'the JSON record' });
    const event = JSON.parse(message.value.toString()) as { type: string; data: Record<string, unknown> };
    assert.equal(event.type, 'gw.proxy.api.call');
    assert.deepEqual(event.data, {
      api: 'shop',
      endpoint: 'orders',
      method: 'GET',
      request_path: '/orders/17',
      remote_ip: '127.0.0.1',
    });
  });

  it('writes Avro data under the subject of KAFKA_LOG_SCHEMA, read back by its schema id', async () => {
    const proxy = await startProxy(env({ KAFKA_LOG_TOPIC: avroTopic, KAFKA_LOG_SCHEMA: subject }));
    proxies.push(proxy);
    assert.equal((await fetch(`${proxy.publicUrl}/orders/42?x=1`)).status, 200);
    const message = await waitFor(() => seen[avroTopic]![0], { timeoutMs: 15_000, what: 'the Avro record' });
    assert.equal(message.headers['content-type'], 'avro/binary');
    assert.equal(message.headers['ce_type'], 'gw.proxy.api.call');
    assert.equal(message.value[0], 0, 'the wire format: magic byte 0, then the schema id');
    // avsc decodes into a record class of the schema's: compared as a plain object.
    assert.deepEqual(
      { ...((await registry.decode(message.value)) as object) },
      {
        api: 'shop',
        endpoint: 'orders',
        method: 'GET',
        request_path: '/orders/42',
        remote_ip: '127.0.0.1',
      },
    );
  });

  for (const [what, extra, reason] of [
    ['a subject the registry does not know', { KAFKA_LOG_SCHEMA: `${run}-unknown-value` }, /does not know/],
    ['a schema a record does not fit', { KAFKA_LOG_SCHEMA: `${run}-other-value` }, /does not match/],
    [
      'the subject without a registry',
      { KAFKA_LOG_SCHEMA: subject, KAFKA_SCHEMA_REGISTRY_HOST: '' },
      /needs KAFKA_SCHEMA_REGISTRY_HOST/,
    ],
    [
      'the subject without the Kafka log',
      { KAFKA_LOG_SCHEMA: subject, REQUEST_LOG: 'console' },
      /REQUEST_LOG=kafka/,
    ],
  ] as const) {
    it(`stops at start on ${what}, naming KAFKA_LOG_SCHEMA`, async () => {
      await assert.rejects(startProxy(env({ KAFKA_LOG_TOPIC: avroTopic, ...extra })), (err: Error) => {
        assert.match(err.message, /proxy exited with [12]/, err.message);
        assert.match(err.message, /KAFKA_LOG_SCHEMA/);
        assert.match(err.message, reason);
        return true;
      });
    });
  }
});
