import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '@gatehouse/store';
import { createConnectionRateLimit } from '../src/connection-rate-limit.ts';

const limits = (maxPerMinute: number, maxReconnectsPerMinute = 1000) => ({
  maxPerMinute,
  maxReconnectsPerMinute,
});

describe('connection rate limit', () => {
  it('allows up to the limit per minute across every caller sharing the store', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 1000;
    const replicaA = createConnectionRateLimit(store, limits(5), () => now);
    const replicaB = createConnectionRateLimit(store, limits(5), () => now);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await replicaA('new'), await replicaB('new'));
    assert.deepEqual(results, ['new', 'new', 'new', 'new', 'new', undefined, undefined, undefined]);
    now += 60_000 + 59_000; // two windows later: only 1/60 of the last window still counts
    assert.equal(await replicaA('new'), 'new');
  });

  it('weights the previous minute so a window boundary allows no double burst', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 2000 + 59_000;
    const limit = createConnectionRateLimit(store, limits(10), () => now);
    for (let i = 0; i < 10; i++) assert.equal(await limit('new'), 'new');
    now += 2000; // just into the next window: the last one still weighs ~95 %
    assert.equal(await limit('new'), undefined);
  });

  it('counts reconnects against their own budget, so a full new-connection budget does not refuse them', async () => {
    const store = new MemoryStore();
    const now = 60_000 * 3000;
    const limit = createConnectionRateLimit(store, limits(3, 5), () => now);
    for (let i = 0; i < 3; i++) assert.equal(await limit('new'), 'new');
    assert.equal(await limit('new'), undefined, 'the new-connection budget is spent');
    for (let i = 0; i < 5; i++) assert.equal(await limit('reconnect'), 'reconnect');
    assert.equal(
      await limit('reconnect'),
      undefined,
      'beyond its budget a reconnect counts as new: none left',
    );
  });

  it('admits a reconnect beyond its budget as a new connection while that budget has room', async () => {
    const store = new MemoryStore();
    const now = 60_000 * 4000;
    const limit = createConnectionRateLimit(store, limits(2, 1), () => now);
    assert.equal(await limit('reconnect'), 'reconnect');
    assert.equal(await limit('reconnect'), 'new');
    assert.equal(await limit('reconnect'), 'new');
    assert.equal(
      await limit('reconnect'),
      undefined,
      'claiming to reconnect never gets more than both budgets',
    );
    assert.equal(await limit('new'), undefined);
  });
});
