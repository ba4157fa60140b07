/**
 * Avro on Kinesis endpoints (`schema` on `target: kinesis`), through a proxy process against the
 * Kinesis emulator and the schema registry of tools/deps.sh, as test-e2e/test/avro-events.test.ts
 * checks Kafka: the data is encoded under the subject's latest schema in the Confluent wire format
 * and the registry is asked before anything is written. A record has no headers, so the event is
 * written in structured mode with that data as its binary data (`data_base64`, 0.2: base64 `data`)
 * and the content type `avro/binary`; every other attribute stays as it was. Data that does not fit
 * is answered 400 naming the field, a registry cut off 503 with Retry-After, and neither writes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistryClient } from '@gatehouse/avro';
import { KinesisBus, type Message, type Subscription } from '@gatehouse/bus/all';
import { CuttableProxy, dependencyAddress, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { type ProxyProcess, startProxy } from '../proxy-process.ts';

const run = uniqueName('proxy-avro-ki');
const stream = `${run}-orders`;
const orders = `${run}-orders-value`;
const payments = `${run}-payments-value`;
const registryUrl = new URL(dependencyAddress.schemaRegistryUrl);
const order = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
};
const payment = { type: 'record', name: 'Payment', fields: [{ name: 'amount', type: 'long' }] };

type Json = Record<string, unknown>;

describe('Avro CloudEvents on Kinesis endpoints (schema on target: kinesis)', () => {
  const registry = new SchemaRegistryClient({ url: registryUrl.href, cacheTtlMs: 0, timeoutMs: 5000 });
  let cut: CuttableProxy;
  let kinesis: KinesisBus;
  let tap: Subscription;
  let proxy: ProxyProcess;
  const written: Message[] = [];

  before(async () => {
    await registry.register(orders, order);
    await registry.register(payments, payment);
    cut = await CuttableProxy.start({ host: registryUrl.hostname, port: Number(registryUrl.port) });
    // The proxy's region (KINESIS_AWS_REGION's default): the emulator keeps streams per region.
    kinesis = new KinesisBus({
      endpoint: dependencyAddress.kinesisEndpoint,
      region: 'eu-west-1',
      createStreams: true,
      pollIntervalMs: 100,
    });
    tap = await kinesis.subscribe(stream, (m) => void written.push(m));
    const endpoint = (id: string, schema: string) => ({
      id,
      method: 'POST',
      path_regex: `/${id}`,
      target: 'kinesis',
      topic: stream,
      schema,
    });
    proxy = await startProxy(
      {
        STORE: 'memory',
        CONTROL_BUS: 'memory',
        KINESIS_ENDPOINT: dependencyAddress.kinesisEndpoint,
        PROXY_KINESIS_ENABLED: 'true',
        KAFKA_SCHEMA_REGISTRY_HOST: `http://127.0.0.1:${cut.port}${registryUrl.pathname}`,
        PROXY_CONFIG_FILE: JSON.stringify([
          {
            id: 'shop',
            name: 'shop',
            version_data: {
              default: { endpoints: [endpoint('orders', orders), endpoint('payments', payments)] },
            },
          },
        ]),
      },
      60_000,
    );
  });

  after(async () => {
    await proxy?.stop();
    await tap?.close();
    await kinesis?.close();
    await cut?.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${proxy.publicUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const recordsOf = (id: string) =>
    written.map((m) => JSON.parse(m.value.toString()) as Json).filter((e) => e['id'] === id);
  const record = (id: string) =>
    waitFor(() => recordsOf(id)[0], { timeoutMs: 15_000, what: `the Kinesis record of ${id}` });
  /** The wire format's schema id and the data it decodes to. */
  const decoded = async (base64: unknown) => {
    assert.equal(typeof base64, 'string');
    const wire = Buffer.from(base64 as string, 'base64');
    assert.equal(wire[0], 0, 'the wire format: magic byte 0, then the schema id');
    return { id: wire.readUInt32BE(1), data: await registry.decode(wire) };
  };
  const latestId = async (subject: string) => {
    const res = await fetch(`${dependencyAddress.schemaRegistryUrl}/subjects/${subject}/versions/latest`);
    return ((await res.json()) as { id: number }).id;
  };

  it('writes a 1.0 event with its data Avro-encoded as data_base64, the attributes as sent', async () => {
    const id = uniqueName('o');
    const data = { item: 'tea', qty: 2 };
    const res = await post('/orders', {
      specversion: '1.0',
      id,
      type: 'order',
      source: '/shop',
      subject: 'cart-7',
      gw: { target_partition: 'customer-7' },
      data,
    });
    assert.equal(res.status, 202, await res.text());
    const event = await record(id);
    assert.equal(event['specversion'], '1.0');
    assert.equal(event['type'], 'order');
    assert.equal(event['source'], '/shop');
    assert.equal(event['subject'], 'cart-7');
    assert.equal(event['datacontenttype'], 'avro/binary');
    assert.equal(event['data'], undefined, 'no JSON data beside the binary data');
    const avro = await decoded(event['data_base64']);
    assert.equal(avro.id, await latestId(orders));
    // avsc decodes into a record class of the schema's: compared as a plain object.
    assert.deepEqual({ ...(avro.data as Json) }, data);
    const message = written.find((m) => (JSON.parse(m.value.toString()) as Json)['id'] === id)!;
    assert.equal(message.key, 'customer-7', 'the partition key is still gw.target_partition');
  });

  it('writes a body that is no CloudEvent as the 0.2 event wrapping it, its data base64 Avro', async () => {
    const data = { item: `cake-${uniqueName('w')}`, qty: 1 };
    const res = await post('/orders', data);
    assert.equal(res.status, 202, await res.text());
    const event = await waitFor(
      async () => {
        for (const e of written.map((m) => JSON.parse(m.value.toString()) as Json)) {
          if (e['specversion'] !== '0.2' || typeof e['data'] !== 'string') continue;
          const avro = await decoded(e['data']);
          if ((avro.data as Json)['item'] === data.item) return { e, avro };
        }
        return undefined;
      },
      { timeoutMs: 15_000, what: 'the wrapped record' },
    );
    assert.equal(event.e['contenttype'], 'avro/binary');
    assert.equal(event.avro.id, await latestId(orders));
    assert.deepEqual({ ...(event.avro.data as Json) }, data);
  });

  it('answers 400 naming the field when the data does not fit the schema, and writes nothing', async () => {
    const id = uniqueName('o-bad');
    const res = await post('/orders', {
      specversion: '1.0',
      id,
      type: 'order',
      source: '/shop',
      data: { item: 'tea', qty: 'two' },
    });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /does not match the Avro schema of subject .*-orders-value \(at \/qty\)/);
    const control = uniqueName('o-after');
    const ok = await post('/orders', {
      specversion: '1.0',
      id: control,
      type: 'order',
      source: '/shop',
      data: { item: 'jam', qty: 3 },
    });
    assert.equal(ok.status, 202, await ok.text());
    await record(control);
    assert.deepEqual(recordsOf(id), [], 'the refused event was not written');
  });

  it('answers 503 with Retry-After while the registry is cut off, writing nothing; the retry goes through', async () => {
    const id = uniqueName('p');
    const body = { specversion: '1.0', id, type: 'payment', source: '/shop', data: { amount: 5 } };
    cut.cut();
    const refused = await post('/payments', body);
    assert.equal(refused.status, 503, await refused.text());
    assert.equal(refused.headers.get('retry-after'), '1');
    cut.restore();
    const retried = await post('/payments', body);
    assert.equal(retried.status, 202, await retried.text());
    const event = await record(id);
    const avro = await decoded(event['data_base64']);
    assert.equal(avro.id, await latestId(payments));
    assert.equal(Number((avro.data as Json)['amount']), 5);
    await sleep(500);
    assert.equal(recordsOf(id).length, 1, 'written once');
  });
});
