import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '@gatehouse/bus';
import { InvalidCloudEventError } from '@gatehouse/cloudevents';
import { sourceMessageToEvent } from '../src/source-message.ts';

const message = (value: string, headers: Record<string, string> = {}): Message => ({
  topic: 'orders',
  key: undefined,
  value: Buffer.from(value),
  headers,
  position: '0-1',
});

describe('source message to CloudEvent', () => {
  it('takes a structured CloudEvent as it is', () => {
    const e = sourceMessageToEvent(
      message('{"specversion":"1.0","id":"1","type":"t","source":"s","data":2}'),
      'nats',
      undefined,
    );
    assert.equal(e.type, 't');
    assert.equal(e.data, 2);
  });

  it('reads Kafka binary mode from ce_ headers', () => {
    const e = sourceMessageToEvent(
      message('{"n":1}', {
        ce_specversion: '1.0',
        ce_id: 'k',
        ce_type: 'kt',
        ce_source: 'ks',
        'content-type': 'application/json',
      }),
      'kafka',
      undefined,
    );
    assert.equal(e.type, 'kt');
    assert.deepEqual(e.data, { n: 1 });
  });

  it('wraps a message that is not a CloudEvent, typed by the topic or the configured type', () => {
    const wrapped = sourceMessageToEvent(message('{"plain":true}'), 'nats', undefined);
    assert.equal(wrapped.type, 'orders');
    assert.deepEqual(wrapped.data, { plain: true });
    assert.equal(wrapped.source, 'nats/orders');
    assert.equal(wrapped.id, '0-1', 'the id is the position: a redelivery is the same event');
    assert.equal(sourceMessageToEvent(message('{"plain":true}'), 'nats', undefined).id, wrapped.id);
    const text = sourceMessageToEvent(message('not json at all'), 'kafka', 'legacy.message');
    assert.equal(text.type, 'legacy.message');
    assert.ok(text.data !== undefined || (text as Record<string, unknown>)['data_base64'] !== undefined);
  });

  it('rejects a message that claims to be a CloudEvent but is invalid', () => {
    assert.throws(
      () => sourceMessageToEvent(message('{"specversion":"1.0","type":"t"}'), 'kafka', undefined),
      InvalidCloudEventError,
    );
  });
});
