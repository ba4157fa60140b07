import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '@gatehouse/store';
import { createConnectionRateLimit } from '../../src/limits/connection-rate-limit.ts';

const limits = (maxPerMinute: number, maxReconnectsPerMinute = 1000) => ({
  maxPerMinute,
  maxReconnectsPerMinute,
});

/** The kind a connect was admitted as, or undefined when it was refused. */
const kindOf = (admission: { kind: string } | undefined) => admission?.kind;

describe('connection rate limit', () => {
  it('allows up to the limit per minute across every caller sharing the store', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 1000;
    const replicaA = createConnectionRateLimit(store, limits(5), () => now);
    const replicaB = createConnectionRateLimit(store, limits(5), () => now);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(kindOf(await replicaA('new')), kindOf(await replicaB('new')));
    assert.deepEqual(results, ['new', 'new', 'new', 'new', 'new', undefined, undefined, undefined]);
    now += 60_000 + 59_000; // two windows later: only 1/60 of the last window still counts
    assert.equal(kindOf(await replicaA('new')), 'new');
  });

  it('weights the previous minute so a window boundary allows no double burst', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 2000 + 59_000;
    const limit = createConnectionRateLimit(store, limits(10), () => now);
    for (let i = 0; i < 10; i++) assert.equal(kindOf(await limit('new')), 'new');
    now += 2000; // just into the next window: the last one still weighs ~95 %
    assert.equal(kindOf(await limit('new')), undefined);
  });

  it('counts reconnects against their own budget, so a full new-connection budget does not refuse them', async () => {
    const store = new MemoryStore();
    const now = 60_000 * 3000;
    const limit = createConnectionRateLimit(store, limits(3, 5), () => now);
    for (let i = 0; i < 3; i++) assert.equal(kindOf(await limit('new')), 'new');
    assert.equal(kindOf(await limit('new')), undefined, 'the new-connection budget is spent');
    for (let i = 0; i < 5; i++) assert.equal(kindOf(await limit('reconnect')), 'reconnect');
    assert.equal(
      kindOf(await limit('reconnect')),
      undefined,
      'beyond its budget a reconnect counts as new: none left',
    );
  });

  it('admits a reconnect beyond its budget as a new connection while that budget has room', async () => {
    const store = new MemoryStore();
    const now = 60_000 * 4000;
    const limit = createConnectionRateLimit(store, limits(2, 1), () => now);
    assert.equal(kindOf(await limit('reconnect')), 'reconnect');
    assert.equal(kindOf(await limit('reconnect')), 'new');
    assert.equal(kindOf(await limit('reconnect')), 'new');
    assert.equal(
      kindOf(await limit('reconnect')),
      undefined,
      'claiming to reconnect never gets more than both budgets',
    );
    assert.equal(kindOf(await limit('new')), undefined);
  });

  it('counts admitted connections, not attempts: refused ones do not spend the next window', async () => {
    const store = new MemoryStore();
    let now = 60_000 * 5000;
    const limit = createConnectionRateLimit(store, limits(2, 2), () => now);
    for (let i = 0; i < 2; i++) assert.equal(kindOf(await limit('new')), 'new');
    for (let i = 0; i < 2; i++) assert.equal(kindOf(await limit('reconnect')), 'reconnect');
    // A storm of refused attempts (new ones, and reconnects beyond their budget).
    for (let i = 0; i < 50; i++) assert.equal(kindOf(await limit('new')), undefined);
    for (let i = 0; i < 50; i++) assert.equal(kindOf(await limit('reconnect')), undefined);
    now += 60_000 + 30_000; // half of the last window still weighs: 2 × 0.5 = 1 of 2
    assert.equal(kindOf(await limit('new')), 'new', 'only the two admitted weigh on the next window');
    assert.equal(kindOf(await limit('reconnect')), 'reconnect');
  });

  it('gives an admission back when the connect is refused later (a bad JWT, a denied check)', async () => {
    const store = new MemoryStore();
    const now = 60_000 * 6000;
    const limit = createConnectionRateLimit(store, limits(2), () => now);
    for (let i = 0; i < 10; i++) await (await limit('new'))!.refund();
    assert.equal(kindOf(await limit('new')), 'new');
    assert.equal(kindOf(await limit('new')), 'new');
    assert.equal(kindOf(await limit('new')), undefined);
  });
});
