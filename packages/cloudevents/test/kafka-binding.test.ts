import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CloudEvent,
  InvalidCloudEventError,
  type KafkaEventMessage,
  type KafkaRecord,
  kafkaMessageKey,
  kafkaMode,
  parseKafkaEvent,
  toBinaryKafka,
  toStructuredKafka,
  UnsupportedCloudEventError,
} from '../src/index.ts';

const event1: CloudEvent = {
  specversion: '1.0',
  type: 'order.created',
  id: 'o-1',
  source: '/shop',
  time: '2024-05-01T12:00:00Z',
  datacontenttype: 'application/json',
  gw: { correlation: 'c-1', target_partition: 'user-7' },
  data: { total: 12.5 },
};
const event02: CloudEvent = {
  specversion: '0.2',
  type: 'greeting',
  id: 'e-1',
  source: 'tutorial',
  data: 'hi',
};

/** What a consumer gets from kafkajs: key and header values as Buffers. */
function asConsumed(message: KafkaEventMessage): KafkaRecord {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(message.headers)) headers[name] = Buffer.from(value);
  return { key: message.key === undefined ? null : Buffer.from(message.key), value: message.value, headers };
}

describe('Kafka binding: reading', () => {
  it('reads structured mode from application/cloudevents+json', () => {
    const record = {
      value: JSON.stringify(event1),
      headers: { 'content-type': Buffer.from('application/cloudevents+json') },
    };
    assert.equal(kafkaMode(record.headers), 'structured');
    assert.deepEqual(parseKafkaEvent(record), event1);
  });

  it('reads a JSON event without CloudEvents headers as structured mode', () => {
    assert.deepEqual(parseKafkaEvent({ value: JSON.stringify(event02) }), event02);
    const withJsonType = { value: JSON.stringify(event02), headers: { 'content-type': 'application/json' } };
    assert.equal(kafkaMode(withJsonType.headers), 'structured');
    assert.deepEqual(parseKafkaEvent(withJsonType), event02);
  });

  it('reads binary mode from ce_ headers, with content-type as the data content type', () => {
    const record: KafkaRecord = {
      value: Buffer.from('{"name":"alice"}'),
      headers: {
        'content-type': 'application/json',
        ce_specversion: '0.2',
        ce_type: 'greeting',
        ce_id: 'e-1',
        ce_source: 'tutorial',
        ce_gw: '{"correlation":"c-9"}',
      },
    };
    assert.equal(kafkaMode(record.headers), 'binary');
    assert.deepEqual(parseKafkaEvent(record), {
      specversion: '0.2',
      type: 'greeting',
      id: 'e-1',
      source: 'tutorial',
      gw: { correlation: 'c-9' },
      contenttype: 'application/json',
      data: { name: 'alice' },
    });
  });

  it('treats any other content type as binary data of that type', () => {
    const record: KafkaRecord = {
      value: Buffer.from([1, 2, 3]),
      headers: {
        'content-type': 'application/x-weird',
        ce_specversion: '1.0',
        ce_type: 't',
        ce_id: '1',
        ce_source: 's',
      },
    };
    assert.deepEqual(parseKafkaEvent(record), {
      specversion: '1.0',
      type: 't',
      id: '1',
      source: 's',
      datacontenttype: 'application/x-weird',
      data_base64: 'AQID',
    });
  });

  it('reads header names in any case and the last value of a repeated header', () => {
    const event = parseKafkaEvent({
      value: Buffer.from('x'),
      headers: {
        'Content-Type': 'text/plain',
        CE_SpecVersion: '1.0',
        ce_type: ['first', 'second'],
        ce_id: '1',
        ce_source: 's',
      },
    });
    assert.equal(event.type, 'second');
    assert.equal(event.data, 'x');
  });

  it('asks for ce_specversion when a binary message lacks it', () => {
    assert.throws(
      () =>
        parseKafkaEvent({ value: Buffer.from('x'), headers: { 'content-type': 'text/plain', ce_type: 't' } }),
      (err: unknown) =>
        err instanceof InvalidCloudEventError &&
        err.problems[0]!.attribute === 'specversion' &&
        /ce_specversion header \(binary mode\)/.test(err.message),
    );
  });

  it('reports every problem of an invalid event', () => {
    assert.throws(
      () => parseKafkaEvent({ value: Buffer.from('{"specversion":"1.0","id":5,"Bad":1}') }),
      (err: unknown) =>
        err instanceof InvalidCloudEventError &&
        err.problems.map((p) => `${p.attribute} ${p.rule}`).join(',') ===
          'id type,type required,source required,Bad name',
    );
    assert.throws(() => parseKafkaEvent({ value: null }), /the body is not valid JSON/);
  });

  it('answers other event formats and batches as unsupported', () => {
    const xml = {
      value: Buffer.from('<e/>'),
      headers: { 'content-type': 'application/cloudevents+xml; charset=utf-8' },
    };
    assert.throws(
      () => parseKafkaEvent(xml),
      (err: unknown) =>
        err instanceof UnsupportedCloudEventError &&
        err.reason === 'event-format' &&
        /'xml'/.test(err.message),
    );
    const batch = {
      value: Buffer.from('[]'),
      headers: { 'content-type': 'application/cloudevents-batch+json' },
    };
    assert.throws(
      () => parseKafkaEvent(batch),
      (err: unknown) => err instanceof UnsupportedCloudEventError && err.reason === 'batch-mode',
    );
  });
});

describe('Kafka binding: writing', () => {
  it('writes structured mode keyed by gw.target_partition', () => {
    const message = toStructuredKafka(event1);
    assert.equal(message.key, 'user-7');
    assert.deepEqual(message.headers, { 'content-type': 'application/cloudevents+json; charset=utf-8' });
    assert.deepEqual(JSON.parse(message.value.toString()), event1);
  });

  it('writes binary mode with ce_ headers and values as they are', () => {
    const message = toBinaryKafka({ ...event1, subject: 'café "x"' });
    assert.equal(message.key, 'user-7');
    assert.deepEqual(message.headers, {
      ce_specversion: '1.0',
      ce_type: 'order.created',
      ce_id: 'o-1',
      ce_source: '/shop',
      ce_time: '2024-05-01T12:00:00Z',
      ce_gw: '{"correlation":"c-1","target_partition":"user-7"}',
      ce_subject: 'café "x"',
      'content-type': 'application/json',
    });
    assert.equal(message.value.toString(), '{"total":12.5}');
  });

  it('keys by gw.target_partition, then partitionkey, then nothing', () => {
    const both: CloudEvent = { ...event02, gw: { target_partition: 'gw-key' }, partitionkey: 'ce-key' };
    assert.equal(kafkaMessageKey(both), 'gw-key');
    assert.equal(kafkaMessageKey({ ...event02, partitionkey: 'ce-key' }), 'ce-key');
    assert.equal(
      kafkaMessageKey({ ...event02, gw: { target_partition: '' }, partitionkey: 'ce-key' }),
      'ce-key',
    );
    assert.equal(kafkaMessageKey(event02), undefined);
    assert.equal('key' in toStructuredKafka(event02), false);
    assert.equal('key' in toBinaryKafka(event02), false);
  });

  it('round-trips both modes and both versions through consumed-record form', () => {
    const events: CloudEvent[] = [
      event1,
      { ...event02, contenttype: 'text/plain' },
      {
        specversion: '0.2',
        type: 't',
        id: '2',
        source: 's',
        contenttype: 'application/octet-stream',
        data: 'AAEC',
      },
      {
        specversion: '1.0',
        type: 't',
        id: '3',
        source: 's',
        datacontenttype: 'image/png',
        data_base64: 'iVBORw==',
      },
      {
        specversion: '1.0',
        type: 't',
        id: '4',
        source: 's',
        datacontenttype: 'text/plain',
        data: 'ünïcode ✓',
      },
    ];
    for (const event of events) {
      assert.deepEqual(
        parseKafkaEvent(asConsumed(toStructuredKafka(event))),
        event,
        `structured ${event.id}`,
      );
      assert.deepEqual(parseKafkaEvent(asConsumed(toBinaryKafka(event))), event, `binary ${event.id}`);
    }
  });
});
