import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  canonicalJson,
  parseSubscriptions,
  uniqueSubscriptions,
} from '../../src/subscriptions/subscription.ts';

describe('subscription', () => {
  it('parses a JSON list with the documented aliases', () => {
    const subs = parseSubscriptions(
      '[{"eventType":"a"},{"event_type":"b","one_of":[{"x":1}]},{"eventType":"c","constraints":[{"y":"z"}]}]',
      32,
    );
    assert.deepEqual(subs, [
      { eventType: 'a', oneOf: [] },
      { eventType: 'b', oneOf: [{ x: 1 }] },
      { eventType: 'c', oneOf: [{ y: 'z' }] },
    ]);
  });

  it('names the problem of an invalid list', () => {
    assert.throws(() => parseSubscriptions('[{', 32), /failed to decode subscription list/);
    assert.throws(() => parseSubscriptions('{"eventType":"a"}', 32), /must be a JSON list/);
    assert.throws(
      () => parseSubscriptions('[{"oneOf":[]}]', 32),
      /subscription 0: eventType must be a non-empty string/,
    );
    assert.throws(() => parseSubscriptions('[{"eventType":""}]', 32), /non-empty string/);
    assert.throws(
      () => parseSubscriptions('[{"eventType":"a","oneOf":{"x":1}}]', 32),
      /oneOf must be a list of objects/,
    );
    assert.throws(
      () => parseSubscriptions('[{"eventType":"a","oneOf":[1]}]', 32),
      /oneOf\[0\] must be an object/,
    );
    assert.throws(() => parseSubscriptions('[{"eventType":"a","oneOf":[{"":1}]}]', 32), /empty field name/);
  });

  it('refuses a list nested deeper than the bound, as text or decoded, naming it', () => {
    // list → subscription → oneOf → constraint → value: five levels with one array in the value.
    const list = (value: unknown) => [{ eventType: 'a', oneOf: [{ x: value }] }];
    assert.equal(parseSubscriptions(JSON.stringify(list([1])), 5).length, 1);
    assert.throws(
      () => parseSubscriptions(JSON.stringify(list([[1]])), 5),
      /the subscription list nests objects and arrays deeper than MAX_JSON_DEPTH \(5\) levels/,
    );
    assert.throws(() => parseSubscriptions(list([[1]]), 5), /MAX_JSON_DEPTH \(5\)/);
  });

  it('drops duplicates regardless of key order', () => {
    const subs = uniqueSubscriptions([
      { eventType: 'a', oneOf: [{ x: 1, y: 2 }] },
      { eventType: 'a', oneOf: [{ y: 2, x: 1 }] },
      { eventType: 'a', oneOf: [] },
    ]);
    assert.equal(subs.length, 2);
  });

  it('keeps a list of one subscription as it is, also one too deep to compare', () => {
    const one = [{ eventType: 'a', oneOf: [{ x: 1 }] }];
    assert.equal(uniqueSubscriptions(one), one);
    let deep: unknown = 1;
    for (let i = 0; i < 2000; i++) deep = [deep];
    assert.equal(uniqueSubscriptions([{ eventType: 'a', oneOf: [{ x: deep }] }]).length, 1);
  });

  it('canonical JSON keeps JSON types apart', () => {
    assert.notEqual(canonicalJson(30), canonicalJson('30'));
    assert.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
  });

  it('canonical JSON of a value nested deeper than its bound is undefined, however deep', () => {
    assert.equal(canonicalJson({ a: [[1]] }, 3), '{"a":[[1]]}');
    assert.equal(canonicalJson({ a: [[1]] }, 2), undefined);
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    assert.equal(canonicalJson(deep), undefined, 'the default bound (MAX_JSON_DEPTH at most) stops it');
  });
});
