/**
 * Avro CloudEvents against the schema registry tools/deps.sh runs: the binary-mode message the
 * proxy writes, reading it (and a structured Avro CloudEvent from another producer) back as JSON,
 * data that does not fit, and the registry cut off (unavailable; a known subject keeps its id).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseKafkaEvent } from '@gatehouse/cloudevents';
import { unavailabilityOf } from '@gatehouse/service-kit';
import { CuttableProxy, dependencyAddress, uniqueName } from '@gatehouse/testkit';
import {
  AvroDataMismatchError,
  avroToJsonMessage,
  isAvroMessage,
  SchemaNotFoundError,
  SchemaRegistryClient,
  toAvroKafka,
} from '../src/index.ts';

const registryUrl = new URL(dependencyAddress.schemaRegistryUrl);
const order = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
    { name: 'receipt', type: 'bytes', default: '' },
  ],
};
const event = {
  specversion: '1.0',
  id: 'e1',
  type: 'order',
  source: '/shop',
  data: { item: 'tea', qty: 2 },
} as const;

describe('Avro CloudEvents on Kafka', () => {
  const subject = `${uniqueName('avro-unit')}-value`;
  let cut: CuttableProxy;
  let registry: SchemaRegistryClient;
  let id: number;

  before(async () => {
    cut = await CuttableProxy.start({ host: registryUrl.hostname, port: Number(registryUrl.port) });
    registry = new SchemaRegistryClient({
      url: `http://127.0.0.1:${cut.port}${registryUrl.pathname}`,
      cacheTtlMs: 0,
      timeoutMs: 2000,
    });
    id = await registry.register(subject, order);
  });
  after(() => cut?.close());

  it('writes binary mode with the data in the wire format, and reads it back as the JSON event', async () => {
    const message = await toAvroKafka(
      { ...event, data: { ...event.data, receipt: 'ignored' } as never },
      subject,
      registry,
    ).catch((err: unknown) => err);
    assert.ok(message instanceof AvroDataMismatchError, 'a string is no Avro bytes value');
    const written = await toAvroKafka(event, subject, registry);
    assert.equal(written.headers['content-type'], 'avro/binary');
    assert.equal(written.headers['ce_id'], 'e1');
    assert.equal(written.value[0], 0);
    assert.equal(written.value.readUInt32BE(1), id);
    assert.ok(isAvroMessage(written));
    const read = await avroToJsonMessage(written, registry);
    assert.equal(read.headers['content-type'], 'application/json');
    assert.deepEqual(parseKafkaEvent(read), {
      ...event,
      datacontenttype: 'application/json',
      data: { item: 'tea', qty: 2, receipt: '' },
    });
  });

  it('reads a structured Avro CloudEvent of another producer (no content-type), bytes as base64', async () => {
    const whole = `${subject}-whole`;
    const wholeId = await registry.register(whole, {
      type: 'record',
      name: 'Event',
      fields: ['specversion', 'id', 'type', 'source']
        .map((name) => ({ name, type: 'string' }))
        .concat({
          name: 'data',
          type: { type: 'record', name: 'Data', fields: [{ name: 'blob', type: 'bytes' }] } as never,
        }),
    });
    const avroBytes = Buffer.concat([
      Buffer.from([0, 0, 0, 0, 0]),
      // specversion, id, type, source as Avro strings, then data.blob as Avro bytes
      ...['1.0', 'e2', 'order', '/other', '\u0001\u0002'].map((s) => avroString(s)),
    ]);
    avroBytes.writeUInt32BE(wholeId, 1);
    const read = await avroToJsonMessage({ value: avroBytes, headers: {} }, registry);
    assert.deepEqual(JSON.parse(read.value.toString()), {
      specversion: '1.0',
      id: 'e2',
      type: 'order',
      source: '/other',
      data: { blob: Buffer.from([1, 2]).toString('base64') },
    });
  });

  it('leaves JSON and non-Avro content types alone', async () => {
    const json = { value: Buffer.from('{"a":1}'), headers: {} };
    assert.equal(await avroToJsonMessage(json, registry), json);
    const octets = {
      value: Buffer.from([0, 0, 0, 0, 1, 9]),
      headers: { 'content-type': 'application/octet-stream' },
    };
    assert.equal(isAvroMessage(octets), false);
  });

  it('names the fields of data that does not fit, and a subject the registry does not know', async () => {
    await assert.rejects(toAvroKafka({ ...event, data: { item: 7 } }, subject, registry), (err: Error) => {
      assert.ok(err instanceof AvroDataMismatchError);
      assert.deepEqual(err.paths, ['/item', '/qty']);
      return true;
    });
    await assert.rejects(toAvroKafka(event, `${subject}-none`, registry), SchemaNotFoundError);
  });

  it('is unavailable while the registry is cut off, but keeps writing a subject whose id it knows', async () => {
    const cached = new SchemaRegistryClient({
      url: `http://127.0.0.1:${cut.port}${registryUrl.pathname}`,
      cacheTtlMs: 1000,
      timeoutMs: 2000,
    });
    await toAvroKafka(event, subject, cached);
    cut.cut();
    try {
      await new Promise((r) => setTimeout(r, 1100));
      const still = await toAvroKafka(event, subject, cached);
      assert.equal(still.value.readUInt32BE(1), id);
      const fresh = new SchemaRegistryClient({
        url: `http://127.0.0.1:${cut.port}${registryUrl.pathname}`,
        cacheTtlMs: 1000,
        timeoutMs: 2000,
      });
      const refused = await toAvroKafka(event, subject, fresh).catch((err: unknown) => err);
      assert.equal(unavailabilityOf(refused)?.dependency, 'schema registry');
      const unknownId = Buffer.from([0, 0, 0, 0x7f, 0xff, 2]);
      assert.equal(
        unavailabilityOf(await fresh.decode(unknownId).catch((err: unknown) => err))?.dependency,
        'schema registry',
      );
    } finally {
      cut.restore();
    }
  });
});

/** An Avro string (or bytes): zig-zag varint length, then the UTF-8 bytes. */
function avroString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from([bytes.length * 2]), bytes]);
}
