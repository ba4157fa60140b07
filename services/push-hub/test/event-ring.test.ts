import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventRing } from '../src/event-ring.ts';

const ev = (position: string) => ({ position, type: 't', event: { type: 't' }, json: '{}' });

describe('event ring', () => {
  it('returns the events after a held position, oldest first', () => {
    const ring = new EventRing(5);
    assert.equal(ring.head, undefined);
    for (const p of ['a', 'b', 'c']) ring.push(ev(p));
    assert.equal(ring.head, 'c');
    assert.deepEqual(
      ring.after('a')!.map((e) => e.position),
      ['b', 'c'],
    );
    assert.deepEqual(ring.after('c'), []);
    assert.equal(ring.after('zz'), undefined);
    assert.deepEqual(
      ring.fromStart()!.map((e) => e.position),
      ['a', 'b', 'c'],
    );
  });

  it('forgets the oldest positions when full', () => {
    const ring = new EventRing(3);
    for (const p of ['1', '2', '3', '4', '5']) ring.push(ev(p));
    assert.equal(ring.has('2'), false);
    assert.equal(ring.after('2'), undefined);
    assert.deepEqual(
      ring.after('3')!.map((e) => e.position),
      ['4', '5'],
    );
    assert.equal(ring.fromStart(), undefined);
  });

  it('tells its oldest position and size, and the events after a position it does not hold', () => {
    const ring = new EventRing(4);
    assert.equal(ring.oldest, undefined);
    assert.equal(ring.size, 0);
    for (const p of ['10', '20', '30', '40', '50', '60']) ring.push(ev(p));
    assert.equal(ring.oldest, '30');
    assert.equal(ring.head, '60');
    assert.equal(ring.size, 4);
    const byNumber = (a: string, b: string) => Number(a) - Number(b);
    assert.deepEqual(
      ring.since('35', byNumber).map((e) => e.position),
      ['40', '50', '60'],
      'a position between two held ones',
    );
    assert.deepEqual(ring.since('99', byNumber), [], 'beyond the newest');
    assert.deepEqual(
      ring.since('5', byNumber).map((e) => e.position),
      ['30', '40', '50', '60'],
      'older than the oldest: everything held',
    );
  });
});
