import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  InvalidCloudEventError,
  isCloudEvent,
  looksLikeCloudEvent,
  toCloudEvent,
  validateCloudEvent,
  wrapAsCloudEvent,
} from '../src/index.ts';

const valid = { specversion: '1.0', id: '1', type: 't', source: 's' };

describe('isCloudEvent and looksLikeCloudEvent', () => {
  it('tells valid events from everything else', () => {
    assert.equal(isCloudEvent(valid), true);
    assert.equal(isCloudEvent({ ...valid, specversion: '0.2' }), true);
    for (const value of [
      { ...valid, type: '' },
      { ...valid, specversion: '0.1' },
      { id: '1' },
      'text',
      null,
      [valid],
    ]) {
      assert.equal(isCloudEvent(value), false, JSON.stringify(value));
    }
  });

  it('takes an object with a specversion as meant to be a CloudEvent, valid or not', () => {
    assert.equal(looksLikeCloudEvent(valid), true);
    assert.equal(looksLikeCloudEvent({ specversion: 'whatever' }), true);
    assert.equal(looksLikeCloudEvent({ id: '1', type: 't' }), false);
    assert.equal(looksLikeCloudEvent([{ specversion: '1.0' }]), false);
    assert.equal(looksLikeCloudEvent('specversion'), false);
  });
});

describe('wrapAsCloudEvent', () => {
  it('puts a JSON payload into the data of a new 0.2 event', () => {
    const payload = { orderId: 7, items: ['a'] };
    const event = wrapAsCloudEvent(payload, { type: 'order.legacy', source: 'kafka/orders' });
    assert.equal(event.specversion, '0.2');
    assert.equal(event.type, 'order.legacy');
    assert.equal(event.source, 'kafka/orders');
    assert.deepEqual(event.data, payload);
    assert.deepEqual(validateCloudEvent(event), []);
  });

  it('decodes bytes by content type: JSON, text, or base64', () => {
    const json = wrapAsCloudEvent(Buffer.from('{"a":1}'), { type: 't', contentType: 'application/json' });
    assert.deepEqual(json.data, { a: 1 });
    assert.equal(json.contenttype, 'application/json');
    const text = wrapAsCloudEvent(Buffer.from('plain'), {
      type: 't',
      contentType: 'text/plain',
      specversion: '1.0',
    });
    assert.equal(text.data, 'plain');
    assert.equal(text.datacontenttype, 'text/plain');
    const bytes = wrapAsCloudEvent(Buffer.from([255, 0]), { type: 't', specversion: '1.0' });
    assert.equal(bytes['data_base64'], '/wA=');
    assert.equal('data' in bytes, false);
    assert.equal(wrapAsCloudEvent(Buffer.from([255, 0]), { type: 't' }).data, '/wA=');
  });

  it('rejects a wrapper without a type', () => {
    assert.throws(() => wrapAsCloudEvent({}, { type: '' }), InvalidCloudEventError);
  });
});

describe('toCloudEvent', () => {
  it('passes a CloudEvent through, wraps anything else, and rejects a broken CloudEvent', () => {
    assert.deepEqual(toCloudEvent(valid, { type: 'wrapped' }), valid);
    assert.deepEqual(toCloudEvent({ hello: 'world' }, { type: 'wrapped' }).data, { hello: 'world' });
    assert.equal(toCloudEvent('just text', { type: 'wrapped' }).data, 'just text');
    assert.throws(
      () => toCloudEvent({ specversion: '1.0', id: '1' }, { type: 'wrapped' }),
      /invalid CloudEvent: 'type' is required; 'source' is required/,
    );
  });
});
