import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { readEventHeaders, readStreamEvent } from '../../src/delivery/stream-event.ts';

const event = { specversion: '1.0', id: 'e-1', source: '/orders', type: 'order.created', data: { n: 1 } };

describe('reading a fan-out record', () => {
  it('goes by the headers that name the type, source and id', () => {
    assert.deepEqual(readEventHeaders(streamEventHeaders(event)), {
      type: 'order.created',
      source: '/orders',
      id: 'e-1',
    });
  });

  it('leaves a record without them (an older publisher, a bus without headers) to its body', () => {
    assert.equal(readEventHeaders({}), undefined);
    assert.equal(readEventHeaders({ 'gw-published-at': '1700000000000' }), undefined);
    assert.equal(readEventHeaders({ ce_type: 'order.created' }), undefined);
  });

  it("leaves headers naming the gateway's own namespace to the body, which is dropped as reserved", () => {
    for (const own of [{ type: 'gw.session_killed' }, { type: ' GW.x' }, { source: 'gatehouse' }]) {
      const forged = { ...event, ...own };
      assert.equal(readEventHeaders(streamEventHeaders(forged)), undefined, JSON.stringify(own));
      assert.equal(readStreamEvent('0', JSON.stringify(forged)), 'reserved');
    }
  });

  it('reads the body into one line', () => {
    const e = readStreamEvent('7', '{"type":"t",\n"source":"s","id":"1"}');
    assert.ok(typeof e !== 'string');
    assert.equal(e.json, '{"type":"t", "source":"s","id":"1"}');
    assert.equal(e.type, 't');
  });
});
