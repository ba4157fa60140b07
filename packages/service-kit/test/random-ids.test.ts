import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomIds, randomUuids } from '../src/random-ids.ts';

test('ids are distinct across several refills of the pool and have the asked length', () => {
  const next = randomIds(12, 'base64url');
  const ids = Array.from({ length: 256 * 4 + 7 }, () => next());
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{16}$/);
});

test('shape sets the fixed bits of every id, the rest stays random', () => {
  const next = randomIds(16, 'hex', (pool, at) => {
    pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x40;
  });
  const ids = Array.from({ length: 600 }, () => next());
  for (const id of ids) assert.equal(id[12], '4', id);
  assert.ok(new Set(ids.map((id) => id[13])).size > 8, 'the digit after the version varies');
});

test('two makers draw from pools of their own', () => {
  const a = randomIds(8, 'hex');
  const b = randomIds(8, 'hex');
  assert.notEqual(a(), b());
});

test('randomUuids makes distinct version-4 UUIDs across refills, written as randomUUID writes them', () => {
  const next = randomUuids();
  const ids = Array.from({ length: 256 * 3 + 5 }, () => next());
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids)
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(new Set(ids.map((id) => id[0])).size > 8, 'the digits vary');
});
