import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExpiringCache } from '../src/index.ts';

describe('expiring cache', () => {
  it('returns a value until its expiry time', () => {
    const cache = new ExpiringCache<string, number>(10);
    cache.set('a', 1, 1_000, 0);
    assert.equal(cache.get('a', 999), 1);
    assert.equal(cache.get('a', 1_000), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped when read');
  });

  it('ignores entries that are already expired and stores nothing with capacity 0', () => {
    const cache = new ExpiringCache<string, number>(10);
    cache.set('old', 1, 5, 5);
    assert.equal(cache.size, 0);
    const off = new ExpiringCache<string, number>(0);
    off.set('a', 1, Number.POSITIVE_INFINITY, 0);
    assert.equal(off.get('a', 0), undefined);
  });

  it('overwrites an entry without evicting another', () => {
    const cache = new ExpiringCache<string, number>(2);
    cache.set('a', 1, 100, 0);
    cache.set('b', 2, 100, 0);
    cache.set('a', 3, 100, 0);
    assert.equal(cache.get('a', 0), 3);
    assert.equal(cache.get('b', 0), 2);
  });

  it('evicts expired entries first, then entries not read since they were last passed over', () => {
    const cache = new ExpiringCache<string, number>(3);
    cache.set('a', 1, 100, 0);
    cache.set('b', 2, 10, 0);
    cache.set('c', 3, 100, 0);
    cache.get('a', 0);
    cache.set('d', 4, 100, 50); // b has expired by now
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((k) => cache.get(k, 50)),
      [1, undefined, 3, 4],
    );
    cache.set('e', 5, 100, 50); // all three were read just now: a gets its second chance, then is evicted
    assert.equal(cache.size, 3);
    assert.equal(cache.get('e', 50), 5);
  });

  it('never grows beyond its capacity', () => {
    const cache = new ExpiringCache<number, number>(100);
    for (let i = 0; i < 1_000; i++) {
      cache.set(i, i, Number.POSITIVE_INFINITY, 0);
      if (i % 3 === 0) cache.get(i, 0);
      assert.ok(cache.size <= 100);
    }
  });
});
