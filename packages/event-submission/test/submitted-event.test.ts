/**
 * readSubmittedEvent and assertSubmissionAllowed: the rules of `POST /_gw/v1/events` for producers
 * without an HTTP request (a flow), each refusal with the endpoint's status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertSubmissionAllowed, EventRefusedError, readSubmittedEvent } from '../src/index.ts';

const limits = { maxEventBytes: 1024, maxEventKeys: 16, maxJsonDepth: 8 };
const event = { specversion: '1.0', id: '1', type: 'order.shipped', source: '/shop', data: { n: 1 } };
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

function refusal(fn: () => unknown): EventRefusedError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof EventRefusedError, String(err));
    return err;
  }
  assert.fail('not refused');
}

describe('readSubmittedEvent', () => {
  it('reads a valid event', () => {
    assert.deepEqual(readSubmittedEvent(bytes(event), limits).data, { n: 1 });
  });

  it('refuses as the events endpoint does: 400 invalid, reserved or too deep, 413 too large or too wide', () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ ...event, type: undefined }, 400, /type/],
      [{ ...event, specversion: '9.9' }, 400, /specversion/],
      [{ ...event, type: 'gw.presence.join' }, 400, /gw/],
      [{ ...event, source: 'nats/orders' }, 400, /reserved/],
      [{ ...event, data: { a: { b: { c: { d: { e: { f: { g: { h: {} } } } } } } } } }, 400, /MAX_JSON_DEPTH/],
      [{ ...event, data: 'x'.repeat(1100) }, 413, /MAX_EVENT_BYTES/],
      [
        { ...event, data: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])) },
        413,
        /MAX_EVENT_KEYS/,
      ],
    ];
    for (const [value, status, message] of cases) {
      const err = refusal(() => readSubmittedEvent(bytes(value), limits));
      assert.equal(err.status, status, JSON.stringify(value).slice(0, 80));
      assert.match(err.message, message);
    }
  });
});

describe('assertSubmissionAllowed', () => {
  it('hands the check the authorization and the event; a denial is 403', async () => {
    const seen: Array<[string | undefined, string]> = [];
    const check = async (authorization: string | undefined, e: { id: string }) => {
      seen.push([authorization, e.id]);
      return authorization === 'Bearer ok';
    };
    const parsed = readSubmittedEvent(bytes(event), limits);
    await assertSubmissionAllowed(check, 'Bearer ok', parsed);
    const err = await assertSubmissionAllowed(check, undefined, parsed).catch((e: unknown) => e);
    assert.ok(err instanceof EventRefusedError);
    assert.equal(err.status, 403);
    assert.deepEqual(seen, [
      ['Bearer ok', '1'],
      [undefined, '1'],
    ]);
  });
});
