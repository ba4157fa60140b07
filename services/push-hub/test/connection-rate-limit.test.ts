import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '@gatehouse/store';
import { createConnectionRateLimit } from '../src/connection-rate-limit.ts';

describe('connection rate limit', () => {
  it('allows up to the limit per minute across every caller sharing the store', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 1000;
    const replicaA = createConnectionRateLimit(store, 5, () => now);
    const replicaB = createConnectionRateLimit(store, 5, () => now);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await replicaA(), await replicaB());
    assert.deepEqual(results, [true, true, true, true, true, false, false, false]);
    now += 60_000 + 59_000; // two windows later: only 1/60 of the last window still counts
    assert.equal(await replicaA(), true);
  });

  it('weights the previous minute so a window boundary allows no double burst', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 2000 + 59_000;
    const limit = createConnectionRateLimit(store, 10, () => now);
    for (let i = 0; i < 10; i++) assert.equal(await limit(), true);
    now += 2000; // just into the next window: the last one still weighs ~95 %
    assert.equal(await limit(), false);
  });
});
