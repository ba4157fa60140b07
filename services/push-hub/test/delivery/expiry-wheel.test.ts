/** The expiry wheel: one timer for every connection, items due by the second, moved and removed in O(1). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { ExpiryWheel } from '../../src/delivery/expiry-wheel.ts';

describe('ExpiryWheel', () => {
  it('hands over the items whose second has come, and only those', async () => {
    const expired: string[] = [];
    const wheel = new ExpiryWheel<string>((due) => expired.push(...due));
    const now = Date.now();
    wheel.set('past', now - 5000);
    wheel.set('soon', now + 300);
    wheel.set('moved', now + 300);
    wheel.set('moved', now + 3_600_000);
    wheel.set('removed', now + 300);
    wheel.delete('removed');
    wheel.set('in a year', now + 365 * 24 * 3600 * 1000);
    await waitFor(() => expired.length >= 2, { what: 'the due items', timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 1200));
    assert.deepEqual(expired.sort(), ['past', 'soon']);
    assert.equal(wheel.size, 2, 'the moved one and the one a year away are still held');
    wheel.close();
  });

  it('keeps 100k items in buckets of a second', () => {
    const wheel = new ExpiryWheel<number>(() => {});
    const base = Date.now() + 3_600_000;
    for (let i = 0; i < 100_000; i++) wheel.set(i, base + (i % 600) * 1000);
    assert.equal(wheel.size, 100_000);
    for (let i = 0; i < 100_000; i += 2) wheel.delete(i);
    assert.equal(wheel.size, 50_000);
    wheel.close();
  });
});
