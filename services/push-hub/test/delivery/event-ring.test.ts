import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MiB, mib, settledMemory } from '@gatehouse/testkit';
import { EventRing } from '../../src/delivery/event-ring.ts';

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

describe('event ring under large events', () => {
  const big = (position: string, size: number) => {
    const data = 'x'.repeat(size);
    const event = { specversion: '1.0', id: position, source: 'test', type: 't', data };
    return { position, type: 't', event, json: JSON.stringify(event) };
  };

  it('holds memory flat through 10k events of 64 KiB: the oldest go when the bytes are spent', async () => {
    const maxBytes = 8 * MiB;
    const ring = new EventRing(10_000, maxBytes);
    const before = await settledMemory();
    for (let i = 0; i < 10_000; i++) ring.push(big(String(i).padStart(6, '0'), 64 * 1024));
    const after = await settledMemory();
    const grown = after.heap - before.heap;
    console.log(
      `ring of 10k events of 64 KiB: ${ring.size} held, ${mib(ring.bytes)} estimated, heap +${mib(grown)}`,
    );
    assert.ok(ring.bytes <= maxBytes);
    assert.ok(grown < maxBytes + MiB, `heap grew by ${mib(grown)}`);
    assert.equal(ring.head, '009999');
    assert.equal(ring.oldest, String(10_000 - ring.size).padStart(6, '0'));
    assert.equal(ring.fromStart(), undefined);
    assert.equal(ring.has('000000'), false);
    assert.deepEqual(
      ring.after('009997')!.map((e) => e.position),
      ['009998', '009999'],
    );
  });

  it('keeps the newest event even when it alone is over the budget', () => {
    const ring = new EventRing(10, 64 * 1024);
    ring.push(big('a', 10));
    ring.push(big('b', 100 * 1024));
    assert.equal(ring.size, 1);
    assert.equal(ring.head, 'b');
    assert.equal(ring.oldest, 'b');
    ring.push(big('c', 10));
    assert.deepEqual(ring.fromStart(), undefined);
    assert.equal(ring.oldest, 'c');
  });
});
