import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LatencyHistogram } from '../src/cluster/histogram.ts';

describe('LatencyHistogram', () => {
  it('reads percentiles to half a millisecond under a minute', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 100; i++) h.add(i);
    assert.equal(h.percentile(50), 50.5);
    assert.equal(h.percentile(99), 99.5);
  });

  it('reads percentiles past a minute (S1 clients catch up for many minutes) to a tenth of a second', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 100; i++) h.add(i * 10_000); // 10 s … 1,000 s
    const p50 = h.percentile(50);
    const p99 = h.percentile(99);
    assert.ok(Math.abs(p50 - 500_000) <= 100, `p50 ${p50}`);
    assert.ok(Math.abs(p99 - 990_000) <= 100, `p99 ${p99}`);
    assert.equal(h.percentile(100), 1_000_000);
  });

  it('keeps the exact maximum past the last bucket, and merges sparse forms', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    a.add(3);
    b.add(5_000_000);
    a.merge(b.sparse());
    assert.equal(a.count, 2);
    assert.equal(a.max, 5_000_000);
    assert.equal(a.percentile(100), 5_000_000);
    assert.equal(a.percentile(50), 3.5); // the upper edge of its half-millisecond bucket
  });
});
