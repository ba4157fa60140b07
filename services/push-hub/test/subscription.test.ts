import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, parseSubscriptions, uniqueSubscriptions } from '../src/subscription.ts';

describe('subscription', () => {
  it('parses a JSON list with the documented aliases', () => {
    const subs = parseSubscriptions(
      '[{"eventType":"a"},{"event_type":"b","one_of":[{"x":1}]},{"eventType":"c","constraints":[{"y":"z"}]}]',
    );
    assert.deepEqual(subs, [
      { eventType: 'a', oneOf: [] },
      { eventType: 'b', oneOf: [{ x: 1 }] },
      { eventType: 'c', oneOf: [{ y: 'z' }] },
    ]);
  });

  it('names the problem of an invalid list', () => {
    assert.throws(() => parseSubscriptions('[{'), /failed to decode subscription list/);
    assert.throws(() => parseSubscriptions('{"eventType":"a"}'), /must be a JSON list/);
    assert.throws(
      () => parseSubscriptions('[{"oneOf":[]}]'),
      /subscription 0: eventType must be a non-empty string/,
    );
    assert.throws(() => parseSubscriptions('[{"eventType":""}]'), /non-empty string/);
    assert.throws(
      () => parseSubscriptions('[{"eventType":"a","oneOf":{"x":1}}]'),
      /oneOf must be a list of objects/,
    );
    assert.throws(
      () => parseSubscriptions('[{"eventType":"a","oneOf":[1]}]'),
      /oneOf\[0\] must be an object/,
    );
    assert.throws(() => parseSubscriptions('[{"eventType":"a","oneOf":[{"":1}]}]'), /empty field name/);
  });

  it('drops duplicates regardless of key order', () => {
    const subs = uniqueSubscriptions([
      { eventType: 'a', oneOf: [{ x: 1, y: 2 }] },
      { eventType: 'a', oneOf: [{ y: 2, x: 1 }] },
      { eventType: 'a', oneOf: [] },
    ]);
    assert.equal(subs.length, 2);
  });

  it('canonical JSON keeps JSON types apart', () => {
    assert.notEqual(canonicalJson(30), canonicalJson('30'));
    assert.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
  });
});
