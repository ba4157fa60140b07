import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readStreamEventHeaders, streamEventHeaders } from '../src/index.ts';

const event = { specversion: '1.0' as const, id: 'e-1', source: '/orders', type: 'order.created' };

describe('stream event headers', () => {
  it('copies the type, source and id, and reads them back', () => {
    const headers = streamEventHeaders(event);
    assert.deepEqual(headers, { ce_type: 'order.created', ce_source: '/orders', ce_id: 'e-1' });
    assert.deepEqual(readStreamEventHeaders({ ...headers, 'gw-published-at': '1' }), {
      type: 'order.created',
      source: '/orders',
      id: 'e-1',
    });
  });

  it('keeps text beyond ASCII as it is', () => {
    const headers = streamEventHeaders({ ...event, type: 'bestellung.größe' });
    assert.equal(readStreamEventHeaders(headers)?.type, 'bestellung.größe');
  });

  it('copies none when one attribute could not travel as a header', () => {
    for (const bad of [{ type: 'a\nb' }, { source: 'x\r' }, { id: 'tab\there' }, { id: '\u007f' }])
      assert.deepEqual(streamEventHeaders({ ...event, ...bad }), {}, JSON.stringify(bad));
    assert.deepEqual(streamEventHeaders({ ...event, id: 7 } as never), {});
  });

  it('reads nothing unless the record carries all three', () => {
    const all = streamEventHeaders(event);
    assert.equal(readStreamEventHeaders({}), undefined);
    for (const name of Object.keys(all)) {
      const { [name]: _left, ...rest } = all;
      assert.equal(readStreamEventHeaders(rest), undefined, `without ${name}`);
    }
  });
});
