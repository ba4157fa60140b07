import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blacklistCounter } from '../../src/blacklist/blacklist-count.ts';

describe('blacklist count', () => {
  it('counts once per period, shares a count in progress, and counts again after it', async () => {
    let clock = 0;
    let scans = 0;
    let entries = 3;
    const count = blacklistCounter(
      async () => {
        scans++;
        return entries;
      },
      5_000,
      () => clock,
    );
    assert.deepEqual(await Promise.all([count(), count()]), [3, 3]);
    assert.equal(scans, 1);
    entries = 4;
    clock = 4_999;
    assert.equal(await count(), 3, 'reused within the period');
    clock = 5_000;
    assert.equal(await count(), 4);
    assert.equal(scans, 2);
  });

  it('gives null when the store cannot count, and tries again next period', async () => {
    let clock = 0;
    let fail = true;
    const count = blacklistCounter(
      async () => {
        if (fail) throw new Error('store down');
        return 1;
      },
      1_000,
      () => clock,
    );
    assert.equal(await count(), null);
    fail = false;
    clock = 1_000;
    assert.equal(await count(), 1);
  });
});
