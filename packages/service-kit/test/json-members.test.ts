import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exceedsJsonMembers } from '../src/json-members.ts';

/** The exact count: the smallest bound it does not exceed. */
function members(text: string): number {
  const bytes = Buffer.from(text);
  let n = 0;
  while (exceedsJsonMembers(bytes, n)) n++;
  return n;
}

/** Keys and array items of a parsed value, the reference the scan must agree with. */
function reference(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + 1 + reference(v), 0);
  if (typeof value === 'object' && value !== null)
    return Object.values(value).reduce((n: number, v) => n + 1 + reference(v), 0);
  return 0;
}

describe('exceedsJsonMembers', () => {
  it('counts object keys and array items across every level, as a walk of the parsed value does', () => {
    for (const text of [
      '{}',
      '[]',
      '1',
      '"a:b,c"',
      '{"a":1}',
      '{"a":[1,2]}',
      '[[1, 2], 3, {"b": null}, "x,y:z", true, [], {}]',
      '{"a\\":b": "c\\\\", "d": [ -1.5e3 , false ]}',
      ' { "nested" : { "deeper" : [ [ [ ] ] ] } } ',
    ])
      assert.equal(members(text), reference(JSON.parse(text)), text);
  });

  it('stops at the bound: a million keys past it are not read', () => {
    const wide = `{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    assert.equal(exceedsJsonMembers(Buffer.from(wide), 10_000), true);
    assert.equal(exceedsJsonMembers(Buffer.from(wide), 200_000), false);
  });
});
