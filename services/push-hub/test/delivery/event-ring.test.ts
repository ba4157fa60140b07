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

  it('finds held positions however far the ring has wrapped between look-ups', () => {
    const ring = new EventRing(3);
    const after = (p: string) => ring.after(p)?.map((e) => e.position);
    for (const p of ['1', '2']) ring.push(ev(p));
    assert.ok(ring.has('1'));
    for (const p of ['3', '4', '5', '6', '7', '8', '9']) {
      ring.push(ev(p));
      if (p === '5') assert.deepEqual(after('4'), ['5']);
    }
    for (const gone of ['1', '4', '6']) assert.equal(ring.has(gone), false, gone);
    assert.deepEqual(after('7'), ['8', '9']);
    assert.equal(ring.seqAfter('8'), ring.end - 1);
    // A stream made anew starts its positions over: a position held twice means its newest event.
    for (const p of ['1', '2', '7']) ring.push(ev(p));
    assert.deepEqual(after('1'), ['2', '7']);
    assert.deepEqual(after('7'), []);
    // A repeated position looked up while its older event is still held keeps its newest one.
    const four = new EventRing(4);
    for (const p of ['7', '8', '9', '7']) four.push(ev(p));
    assert.equal(four.seqAfter('7'), 4);
    four.push(ev('10'));
    assert.deepEqual(
      four.after('7')?.map((e) => e.position),
      ['10'],
    );
    // Looked up after every push: evictions take their positions out of the index as they go.
    for (const p of ['100', '101']) ring.push(ev(p));
    for (let n = 102; n < 200; n++) {
      ring.push(ev(`${n}`));
      assert.ok(ring.has(`${n}`) && ring.has(`${n - 2}`) && !ring.has(`${n - 3}`), `${n}`);
    }
  });

  it('tells a second copy of a held event by source and id, and forgets it once evicted', () => {
    const ce = (position: string, source: string, id: string) => ({
      position,
      type: 't',
      event: { type: 't', source, id },
      json: '{}',
    });
    const ring = new EventRing(1000);
    // Ids repeat across sources, sources across ids: only the pair names an event.
    for (let n = 0; n < 1000; n++)
      assert.ok(ring.pushNew(ce(`${n}`, `/s${n % 50}`, `${Math.floor(n / 50)}`)));
    assert.equal(ring.size, 1000);
    assert.ok(!ring.pushNew(ce('x', '/s7', '7')), 'held: /s7 and 7 came at 357');
    assert.ok(!ring.pushNew(ce('y', '/s49', '19')));
    assert.ok(ring.holdsSameEvent(ce('z', '/s0', '0')));
    assert.ok(!ring.holdsSameEvent(ce('z', '/s0', '20')), 'that id never came from that source');
    assert.ok(!ring.holdsSameEvent(ce('z', '/s', '00')));
    assert.ok(!ring.holdsSameEvent({ position: 'z', type: 't', event: { type: 't' }, json: '{}' }));
    assert.equal(ring.size, 1000, 'nothing pushed for a copy');
    for (let n = 0; n < 1000; n++) ring.push(ce(`new${n}`, '/new', `${n}`));
    assert.ok(ring.pushNew(ce('again', '/s7', '7')), 'evicted: taken as new');
    assert.ok(!ring.pushNew(ce('again2', '/new', '999')));
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
