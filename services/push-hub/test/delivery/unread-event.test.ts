import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventRing, eventIdentity, eventBytes } from '../../src/delivery/event-ring.ts';
import { readStreamEvent } from '../../src/delivery/stream-event.ts';
import { UnreadEvent } from '../../src/delivery/unread-event.ts';

const event = { specversion: '1.0', id: 'e-1', source: '/orders', type: 'order.created', data: { n: 1 } };
const headers = { type: 'order.created', source: '/orders', id: 'e-1' };
const unread = (body: unknown, h = headers) =>
  new UnreadEvent('5', Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), h);

describe('an event kept unread', () => {
  it('knows its type and identity without reading the body', () => {
    const e = unread(event);
    assert.equal(e.type, 'order.created');
    assert.equal(eventIdentity(e), '/orders\u0000e-1');
    const ring = new EventRing(4);
    ring.push(e);
    assert.ok(ring.holdsSameEvent(readStreamEvent('9', JSON.stringify(event)) as never));
    assert.equal(e.read, false, 'the ring took it unread');
  });

  it('reads the body once, when asked, as a dispatched event is read', () => {
    const text = JSON.stringify(event, null, 1);
    const e = unread(text);
    const size = eventBytes(e);
    assert.deepEqual(e.event, event);
    assert.equal(e.read, true);
    assert.equal(e.json, (readStreamEvent('5', text) as { json: string }).json);
    assert.ok(!e.json.includes('\n'));
    assert.equal(e.event, e.event, 'parsed once');
    assert.equal(eventBytes(e), size, 'its size in the ring stays what it was pushed with');
  });

  it("is nobody's when the body is not the event its headers named", () => {
    for (const body of [
      'not json',
      { ...event, type: undefined },
      { ...event, type: 'gw.session_killed' },
      { ...event, source: 'gatehouse' },
      { ...event, type: 'order.deleted' },
      { ...event, source: '/other' },
      { ...event, id: 'e-2' },
    ]) {
      const e = unread(body);
      assert.equal(e.event['type'], undefined, JSON.stringify(body));
      assert.equal(e.type, 'order.created');
    }
  });

  it('counts its bytes, at least its text, in the ring', () => {
    const e = unread({ ...event, data: 'ü'.repeat(100) });
    assert.ok(e.textLength >= e.json.length);
    const ring = new EventRing(2, eventBytes(e) * 2);
    ring.push(e);
    ring.push(unread({ ...event, id: 'e-2' }, { ...headers, id: 'e-2' }));
    ring.push(unread({ ...event, id: 'e-3' }, { ...headers, id: 'e-3' }));
    assert.equal(ring.size, 2);
    assert.equal(ring.holdsSameEvent(e), false, 'evicted with its identity');
  });
});
