/**
 * The hub's own events are written out as text field by field (gateway-events.ts): the text must be
 * exactly what JSON.stringify makes of the CloudEvent object, whatever the data holds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  connectionClosed,
  connectionCreated,
  isoNow,
  type OutgoingEvent,
  sessionExpired,
  sessionKilled,
  subscriptionsChanged,
  subscriptionsSet,
} from '../../src/connections/gateway-events.ts';

const awkward = 'quote " backslash \\ line\nbreak zoë 🙂 \u2028 </script>';

const made: Array<[string, OutgoingEvent]> = [
  ['gw.connection.create', connectionCreated(awkward)],
  ['gw.subscriptions_set', subscriptionsSet([{ eventType: awkward, oneOf: [{ name: awkward }] }] as never)],
  ['gw.subscriptions_set', subscriptionsChanged()],
  ['gw.session_killed', sessionKilled(awkward)],
  ['gw.session_expired', sessionExpired(Date.UTC(2026, 0, 1))],
  ['gw.connection_closed', connectionClosed(awkward, true)],
];

describe('gateway events', () => {
  for (const [type, e] of made) {
    it(`${type}: the JSON of a CloudEvent 0.2 object, fields in order, data intact`, () => {
      const parsed = JSON.parse(e.json) as Record<string, unknown>;
      assert.equal(e.type, type);
      assert.equal(e.json, JSON.stringify(parsed));
      assert.deepEqual(Object.keys(parsed), [
        'specversion',
        'id',
        'type',
        'source',
        'time',
        ...('data' in parsed ? ['data'] : []),
      ]);
      assert.equal(parsed['specversion'], '0.2');
      assert.equal(parsed['type'], type);
      assert.equal(parsed['source'], 'gatehouse');
      assert.match(String(parsed['id']), /^[0-9a-f-]{36}$/);
      assert.equal(new Date(String(parsed['time'])).toISOString(), parsed['time']);
    });
  }

  it('write the time as toISOString does, made once per millisecond', () => {
    const t = Date.UTC(2026, 10, 29, 16, 5, 7, 123);
    assert.equal(isoNow(t), '2026-11-29T16:05:07.123Z');
    assert.equal(isoNow(t), isoNow(t));
    assert.equal(isoNow(t + 1), '2026-11-29T16:05:07.124Z');
    const before = Date.now();
    const time = Date.parse(JSON.parse(connectionCreated('t').json).time);
    assert.ok(time >= before && time <= Date.now(), 'an event made now has the time now');
  });

  it('write every millisecond of a second, and the next second, as toISOString does', () => {
    const second = Date.UTC(2026, 10, 29, 23, 59, 59);
    for (const t of [second, second + 7, second + 42, second + 999, second + 1000, second + 1001, second - 1])
      assert.equal(isoNow(t), new Date(t).toISOString());
  });

  it('keeps data that needs escaping as it was given', () => {
    assert.deepEqual(JSON.parse(connectionCreated(awkward).json).data, { connection_token: awkward });
    assert.equal(JSON.parse(subscriptionsChanged().json).data, undefined);
  });
});
