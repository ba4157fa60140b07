/**
 * Avro through the schema registry tools/deps.sh runs, as processes on the real brokers: a proxy
 * endpoint with a `schema` writes the request event to Kafka in binary mode with Avro data (the
 * Confluent wire format), a publisher consumes that topic as a source, decodes it by schema id, and
 * an SSE client on a hub gets the JSON CloudEvent. The schema evolves (a backward-compatible
 * version is used from then on, an incompatible one is refused by the registry); data that does not
 * fit is answered 400; while the registry is cut off, the proxy answers 503 with Retry-After and
 * writes nothing, and the publisher holds the message until the registry is back (nothing lost).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistryClient } from '@gatehouse/avro';
import { KafkaBus, type Message, type Subscription } from '@gatehouse/bus/all';
import {
  CuttableProxy,
  dependencyAddress,
  exitAfterFileWhenHung,
  gatewayEnv,
  openSse,
  type ServiceProcess,
  type SseConnection,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { startHub, startPublisher } from '../src/service-processes.ts';

after(() => exitAfterFileWhenHung());

const run = uniqueName('e2e-avro');
const topic = `${run}-orders`;
const orders = `${topic}-value`;
const payments = `${run}-payments-value`;
const registryUrl = new URL(dependencyAddress.schemaRegistryUrl);
const orderV1 = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
};
const orderV2 = {
  ...orderV1,
  fields: [...orderV1.fields, { name: 'note', type: ['null', 'string'], default: null }],
};
const orderV3 = {
  ...orderV2,
  fields: [...orderV2.fields, { name: 'gift', type: 'boolean', default: false }],
};
const payment = { type: 'record', name: 'Payment', fields: [{ name: 'amount', type: 'long' }] };

describe('Avro events through the schema registry', () => {
  const registry = new SchemaRegistryClient({ url: registryUrl.href, cacheTtlMs: 0, timeoutMs: 5000 });
  const target = { host: registryUrl.hostname, port: Number(registryUrl.port) };
  let proxyRegistry: CuttableProxy;
  let publisherRegistry: CuttableProxy;
  let proxy: ServiceProcess;
  let publisher: ServiceProcess;
  let hub: ServiceProcess;
  let sse: SseConnection;
  let tap: Subscription;
  const written: Message[] = [];
  const viaCut = (p: CuttableProxy) => `http://127.0.0.1:${p.port}${registryUrl.pathname}`;

  before(async () => {
    await registry.register(orders, orderV1);
    await registry.register(payments, payment);
    [proxyRegistry, publisherRegistry] = await Promise.all([
      CuttableProxy.start(target),
      CuttableProxy.start(target),
    ]);
    const kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'e2e-avro' });
    await kafka.ensureTopic(topic, 1);
    tap = await kafka.subscribe(topic, (m) => void written.push(m), { last: 1000 });
    const shared = {
      ...gatewayEnv({ run, jwtSecret: 'e2e-avro-secret-long-enough-for-hs256' }),
      NATS_SERVERS: '',
    };
    const endpoint = (id: string, path: string, schema: string) => ({
      id,
      method: 'POST',
      path_regex: path,
      target: 'kafka',
      topic,
      schema,
    });
    [proxy, publisher, hub] = await Promise.all([
      spawnService({
        entry: 'services/proxy/src/main.ts',
        name: 'proxy',
        publicPort: true,
        readyTimeoutMs: 60_000,
        env: {
          ...shared,
          KAFKA_SCHEMA_REGISTRY_HOST: viaCut(proxyRegistry),
          KAFKA_SCHEMA_REGISTRY_CACHE_TTL: '1s',
          PROXY_CONFIG_FILE: JSON.stringify([
            {
              id: 'shop',
              name: 'shop',
              version_data: {
                default: {
                  endpoints: [
                    endpoint('orders', '/orders', orders),
                    endpoint('payments', '/payments', payments),
                  ],
                },
              },
            },
          ]),
        },
      }),
      startPublisher('publisher', {
        ...shared,
        KAFKA_SOURCE_TOPICS: topic,
        KAFKATOFILTER_KAFKA_GROUP_ID: `${run}-kafka-to-filter`,
        KAFKA_SCHEMA_REGISTRY_HOST: viaCut(publisherRegistry),
      }),
      startHub('hub', shared),
    ]);
    const subscriptions = encodeURIComponent(
      JSON.stringify([{ eventType: 'order' }, { eventType: 'payment' }]),
    );
    sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscriptions}`);
    await waitFor(() => sse.frames.length >= 2);
  });

  after(async () => {
    sse?.close();
    await tap?.close();
    await Promise.all([proxy?.stop(), publisher?.stop(), hub?.stop()]);
    await Promise.all([proxyRegistry?.close(), publisherRegistry?.close()]);
  });

  const post = (path: string, id: string, type: string, data: unknown) =>
    fetch(`${proxy.publicUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ specversion: '1.0', id, type, source: '/shop', data }),
    });
  const received = (id: string) => sse.events().find((e) => e['id'] === id);

  it('writes the data as Avro in the wire format with ce_ headers, and the hub gets the JSON event', async () => {
    const res = await post('/orders', 'o-1', 'order', { item: 'tea', qty: 2 });
    assert.equal(res.status, 202, await res.text());
    await waitFor(() => received('o-1') !== undefined, { timeoutMs: 20_000 });
    assert.deepEqual(received('o-1')!['data'], { item: 'tea', qty: 2 });
    const message = written.find((m) => m.headers['ce_id'] === 'o-1')!;
    assert.equal(message.headers['content-type'], 'avro/binary');
    assert.equal(message.headers['ce_type'], 'order');
    assert.equal(message.value[0], 0, 'magic byte');
    assert.equal(message.value.readUInt32BE(1), await latestId(orders));
  });

  it('uses a backward-compatible new version; the registry refuses an incompatible one', async () => {
    const v2 = await registry.register(orders, orderV2);
    await assert.rejects(
      registry.register(orders, { ...orderV1, fields: [{ name: 'item', type: 'int' }] }),
      /incompatible/i,
    );
    await sleep(1100); // the proxy's KAFKA_SCHEMA_REGISTRY_CACHE_TTL
    const res = await post('/orders', 'o-2', 'order', { item: 'cake', qty: 1, note: 'birthday' });
    assert.equal(res.status, 202, await res.text());
    await waitFor(() => received('o-2') !== undefined, { timeoutMs: 20_000 });
    assert.deepEqual(received('o-2')!['data'], { item: 'cake', qty: 1, note: 'birthday' });
    assert.equal(written.find((m) => m.headers['ce_id'] === 'o-2')!.value.readUInt32BE(1), v2);
  });

  it('answers 400 naming the field when the data does not fit the schema, and writes nothing', async () => {
    const res = await post('/orders', 'o-bad', 'order', { item: 'tea', qty: 'two' });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /does not match the Avro schema of subject .*-orders-value \(at \/qty\)/);
    await sleep(500);
    assert.equal(written.filter((m) => m.headers['ce_id'] === 'o-bad').length, 0);
  });

  it('answers 503 with Retry-After while the registry is cut off, writing nothing; the retry goes through', async () => {
    proxyRegistry.cut();
    const refused = await post('/payments', 'p-1', 'payment', { amount: 5 });
    assert.equal(refused.status, 503, await refused.text());
    assert.equal(refused.headers.get('retry-after'), '1');
    proxyRegistry.restore();
    const retried = await post('/payments', 'p-1', 'payment', { amount: 5 });
    assert.equal(retried.status, 202, await retried.text());
    await waitFor(() => received('p-1') !== undefined, { timeoutMs: 20_000 });
    assert.deepEqual(received('p-1')!['data'], { amount: 5 });
    assert.equal(written.filter((m) => m.headers['ce_id'] === 'p-1').length, 1, 'written once');
  });

  it('holds a message whose schema the publisher cannot fetch until the registry is back', async () => {
    await registry.register(orders, orderV3);
    await sleep(1100);
    publisherRegistry.cut();
    const res = await post('/orders', 'o-3', 'order', { item: 'jam', qty: 3, note: null, gift: true });
    assert.equal(res.status, 202, await res.text());
    await sleep(3000);
    assert.equal(received('o-3'), undefined, 'not delivered while the registry is cut off');
    publisherRegistry.restore();
    await waitFor(() => received('o-3') !== undefined, { timeoutMs: 30_000 });
    assert.deepEqual(received('o-3')!['data'], { item: 'jam', qty: 3, note: null, gift: true });
    const metrics = await (await fetch(`${publisher.apiUrl}/metrics`)).text();
    assert.doesNotMatch(metrics, /gw_consumed_events_failed_total\{[^}]*\} [1-9]/, 'nothing dropped');
    assert.equal(sse.events().filter((e) => e['type'] === 'order').length, 3, 'each order once');
  });

  async function latestId(subject: string): Promise<number> {
    const res = await fetch(`${dependencyAddress.schemaRegistryUrl}/subjects/${subject}/versions/latest`);
    return ((await res.json()) as { id: number }).id;
  }
});
