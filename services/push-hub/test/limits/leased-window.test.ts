/**
 * The connection rate limit takes its places from the shared store in blocks (leased-window.ts): a
 * burst of connects costs a store round trip per block, not two per connect, and the limit still
 * holds across replicas, to the connect where it is small and to within a block where it is large.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { MemoryStore, type Store } from '@gatehouse/store';
import { createLeasedWindow, leaseBlockOf, type LeasedWindow } from '../../src/limits/leased-window.ts';

/** A store that counts its round trips. */
function countingStore(): { store: Store; trips: () => number } {
  const inner = new MemoryStore();
  let trips = 0;
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        trips++;
        return value.apply(target, args);
      };
    },
  });
  return { store, trips: () => trips };
}

const minute = 60_000;
const windows: LeasedWindow[] = [];
function leased(store: Store, now: () => number, idleReturnMs?: number): LeasedWindow {
  const w = createLeasedWindow(store, now, idleReturnMs === undefined ? {} : { idleReturnMs });
  windows.push(w);
  return w;
}
afterEach(async () => {
  for (const w of windows.splice(0)) await w.close();
});

async function takeMany(w: LeasedWindow, max: number, n: number, counter = 'connections'): Promise<number> {
  const taken = await Promise.all(Array.from({ length: n }, () => w.take(counter, max)));
  return taken.filter((t) => t.ok).length;
}

describe('leased sliding window', () => {
  it('a burst of 1000 takes costs a store round trip per block, not two per take', async () => {
    const { store, trips } = countingStore();
    const now = minute * 100;
    const w = leased(store, () => now);
    assert.equal(await takeMany(w, 5000, 1000), 1000);
    const block = leaseBlockOf(5000);
    assert.ok(block > 1);
    // Each block: one increment and one read of the previous window.
    assert.ok(trips() <= 2 * Math.ceil(1000 / block) + 2, `${trips()} store round trips`);
  });

  it('small limits are taken one place at a time, so they hold exactly across replicas', async () => {
    assert.equal(leaseBlockOf(5), 1);
    assert.equal(leaseBlockOf(199), 1);
    const store = new MemoryStore();
    const now = minute * 200;
    const a = leased(store, () => now);
    const b = leased(store, () => now);
    const order = [];
    for (let i = 0; i < 4; i++) order.push((await a.take('c', 5)).ok, (await b.take('c', 5)).ok);
    assert.deepEqual(order, [true, true, true, true, true, false, false, false]);
  });

  it('two replicas racing for a large limit admit at most the limit, short of it by at most their unused blocks', async () => {
    const store = new MemoryStore();
    const now = minute * 300;
    const a = leased(store, () => now);
    const b = leased(store, () => now);
    const [fromA, fromB] = await Promise.all([takeMany(a, 5000, 3000), takeMany(b, 5000, 3000)]);
    const admitted = fromA + fromB;
    assert.ok(admitted <= 5000 && admitted >= 5000 - 2 * leaseBlockOf(5000), `${fromA} + ${fromB}`);
    await Promise.all([a.close(), b.close()]);
    assert.equal(
      await store.get('ratelimit:connections:300'),
      String(admitted),
      'the store counts what was admitted',
    );
  });

  it('places a replica holds unused go back to the store once idle, for the other replicas', async () => {
    const store = new MemoryStore();
    const now = minute * 400;
    const a = leased(store, () => now, 30);
    const b = leased(store, () => now, 30);
    assert.equal(await takeMany(a, 5000, 1), 1);
    assert.equal(await store.get('ratelimit:connections:400'), String(leaseBlockOf(5000)));
    await waitFor(async () => (await store.get('ratelimit:connections:400')) === '1');
    assert.equal(await takeMany(b, 5000, 4999), 4999);
    assert.equal(await takeMany(b, 5000, 1), 0, 'the limit is reached');
  });

  it('a place given back is taken again without a store round trip, and counted once', async () => {
    const { store, trips } = countingStore();
    const now = minute * 500;
    const w = leased(store, () => now);
    const first = await w.take('connections', 5000);
    assert.ok(first.ok);
    const before = trips();
    for (let i = 0; i < 10; i++) {
      await first.giveBack();
      const again = await w.take('connections', 5000);
      assert.ok(again.ok);
    }
    assert.equal(trips(), before);
    await w.close();
    assert.equal(await store.get('ratelimit:connections:500'), '1', 'close gives the unused places back');
  });

  it('unused places of a window that ended go back to that window, not to the next', async () => {
    const store = new MemoryStore();
    let now = minute * 600 + 59_000;
    const w = leased(store, () => now);
    assert.ok((await w.take('connections', 5000)).ok);
    now += 2000;
    assert.ok((await w.take('connections', 5000)).ok);
    await waitFor(async () => (await store.get('ratelimit:connections:600')) === '1');
    assert.equal(await store.get('ratelimit:connections:601'), String(leaseBlockOf(5000)));
  });

  it('near the limit a block is cut to what is left, and past it the take is refused with a retry time', async () => {
    const store = new MemoryStore();
    const now = minute * 700;
    await store.increment('ratelimit:connections:700', { by: 4990 });
    const w = leased(store, () => now);
    assert.equal(await takeMany(w, 5000, 20), 10);
    const refused = await w.take('connections', 5000);
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok && refused.retryAfterSeconds >= 1);
    assert.equal(await store.get('ratelimit:connections:700'), '5000');
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(10);
  }
}
