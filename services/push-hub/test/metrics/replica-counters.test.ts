/** The console's running totals of a replica (replica-counters.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CounterTally, DELIVERY_BUCKETS } from '../../src/metrics/replica-counters.ts';

describe('replica counters', () => {
  it('counts events, deliveries, connects, refusals by status, kills and closes', () => {
    const tally = new CounterTally();
    tally.eventIn(3);
    tally.eventIn(0);
    tally.connected();
    tally.refused(429);
    tally.refused(429);
    tally.refused(400);
    tally.sessionKilled(2);
    tally.slowConsumerClosed();
    const c = tally.snapshot();
    assert.equal(c.eventsIn, 2);
    assert.equal(c.deliveries, 3);
    assert.equal(c.connects, 1);
    assert.deepEqual(c.refused, { '429': 2, '400': 1 });
    assert.equal(c.sessionKills, 2);
    assert.equal(c.slowConsumerDisconnects, 1);
  });

  it('puts each latency in its bucket, above the last bound in the extra one', () => {
    const tally = new CounterTally();
    for (const s of [0, 0.005, 0.006, 0.3, 1000]) tally.delivered(s);
    const { bounds, counts, sum } = tally.snapshot().delivery;
    assert.deepEqual(bounds, DELIVERY_BUCKETS);
    assert.equal(counts.length, bounds.length + 1);
    assert.equal(counts[0], 2);
    assert.equal(counts[1], 1);
    assert.equal(counts[bounds.indexOf(0.5)], 1);
    assert.equal(counts.at(-1), 1);
    assert.ok(Math.abs(sum - 1000.311) < 1e-9);
  });

  it('snapshots a copy that later counts do not change', () => {
    const tally = new CounterTally();
    const before = tally.snapshot();
    tally.refused(403);
    tally.delivered(0.001);
    assert.deepEqual(before.refused, {});
    assert.equal(before.delivery.counts[0], 0);
  });
});
