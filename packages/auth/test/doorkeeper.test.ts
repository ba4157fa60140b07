import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Doorkeeper } from '../src/doorkeeper.ts';

describe('doorkeeper', () => {
  it('says a key is new the first time and seen the second', () => {
    const seen = new Doorkeeper(2048);
    assert.equal(seen.sawBefore('token-a'), false);
    assert.equal(seen.sawBefore('token-a'), true);
    assert.equal(seen.sawBefore('token-b'), false);
    assert.equal(seen.sawBefore('token-a'), true);
  });

  it('spreads keys over the whole table: most of 500 keys in 2,048 slots are remembered', () => {
    const seen = new Doorkeeper(2048);
    const keys = Array.from({ length: 500 }, (_, i) => `header.payload-${i}.signature-${i * 7919}`);
    assert.equal(keys.filter((k) => seen.sawBefore(k)).length, 0, 'no new key looks seen');
    // A key is forgotten when a later one takes its slot (and the second pass writes over others):
    // 387 of 500 stay here; using half the slots would leave about 300.
    const remembered = keys.filter((k) => seen.sawBefore(k)).length;
    assert.ok(remembered >= 360, `only ${remembered} of 500 remembered`);
  });

  it('reads only the end of a long key, at a fixed cost', () => {
    const seen = new Doorkeeper(1024);
    const prefix = 'x'.repeat(100_000);
    assert.equal(seen.sawBefore(`${prefix}.sig-1`), false);
    assert.equal(seen.sawBefore(`${prefix}.sig-2`), false);
    assert.equal(seen.sawBefore(`${prefix}.sig-1`), true);
  });
});
