import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppException, EventEnvelope, isAppException, isEventEnvelope } from '../src/index.ts';

describe('EventEnvelope', () => {
  it('keeps status, lower-cased headers and body', () => {
    const env = new EventEnvelope().setStatus(201).setHeader('X-Result', 'ok').setBody({ a: 1 });
    assert.equal(env.getStatus(), 201);
    assert.equal(env.getHeader('x-result'), 'ok');
    assert.deepEqual(env.getHeaders(), { 'x-result': 'ok' });
    assert.deepEqual(env.getBody(), { a: 1 });
  });

  it('collects repeated set-cookie values and strips line breaks', () => {
    const env = new EventEnvelope().addHeader('Set-Cookie', 'a=1').addHeader('set-cookie', 'b=2\r\nx: y');
    assert.deepEqual(env.getHeader('set-cookie'), ['a=1', 'b=2x: y']);
  });

  it('refuses a status that is not an HTTP status', () => {
    assert.throws(() => new EventEnvelope().setStatus(42), RangeError);
  });

  it('is recognised across module copies by its mark', () => {
    const foreign = { [Symbol.for('gatehouse.functions.EventEnvelope')]: true };
    assert.ok(isEventEnvelope(new EventEnvelope()));
    assert.ok(isEventEnvelope(foreign));
    assert.ok(!isEventEnvelope({ status: 200 }));
  });
});

describe('AppException', () => {
  it('carries a status and message', () => {
    const err = new AppException(403, 'no access');
    assert.equal(err.status, 403);
    assert.equal(err.message, 'no access');
    assert.ok(isAppException(err));
    assert.ok(!isAppException(new Error('plain')));
    assert.throws(() => new AppException(1000, 'x'), RangeError);
  });
});
