/**
 * The pattern index against a brute-force matcher, on random types and patterns (fast-check): every
 * subscriber the index delivers to, asks `has`, `subscribes` and `matcherFor` about, is exactly
 * the set a per-subscription comparison of segments finds, after random sets and removals (so the
 * trie's pruning keeps nothing that matches). And what a token allowing one pattern may ask for
 * (patternCovers) against every type over the alphabet the patterns use.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { patternCovers, typeMatches } from '@gatehouse/cloudevents';
import fc from 'fast-check';
import { parseExtractorConfig } from '../../src/subscriptions/extractor-config.ts';
import { SubscriptionIndex } from '../../src/subscriptions/subscription-index.ts';

/** Written apart from the code under test: segment lists, recursively. */
function bruteMatches(pattern: string[], type: string[]): boolean {
  if (pattern.length === 0) return type.length === 0;
  if (pattern[0] === '>') return pattern.length === 1 && type.length >= 1;
  if (type.length === 0) return false;
  return (pattern[0] === '*' || pattern[0] === type[0]) && bruteMatches(pattern.slice(1), type.slice(1));
}

const literal = fc.constantFrom('a', 'b', 'c', '');
const typeArb = fc.array(literal, { minLength: 1, maxLength: 8 }).map((s) => s.join('.'));
const patternArb = fc
  .tuple(fc.array(fc.oneof(literal, fc.constant('*')), { minLength: 1, maxLength: 5 }), fc.boolean())
  .map(([segments, rest]) => (rest ? [...segments, '>'] : segments).join('.'));
/** A subscription list: patterns mostly, some exact types. */
const listArb = fc.array(fc.oneof(patternArb, patternArb, typeArb), { minLength: 1, maxLength: 4 });

const noExtractors = parseExtractorConfig({});

function brute(lists: Map<string, string[]>, type: string): string[] {
  const out: string[] = [];
  for (const [subscriber, list] of lists)
    if (list.some((p) => bruteMatches(p.split('.'), type.split('.')))) out.push(subscriber);
  return out.sort();
}

describe('type pattern index against a brute-force matcher', () => {
  it('delivers to exactly the subscribers whose patterns or types match, once each, after random changes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.option(listArb, { nil: undefined })), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.array(typeArb, { minLength: 1, maxLength: 10 }),
        (changes, types) => {
          const index = new SubscriptionIndex<string>(noExtractors);
          const lists = new Map<string, string[]>();
          for (const [n, list] of changes) {
            const subscriber = `s${n}`;
            if (list === undefined) {
              index.remove(subscriber);
              lists.delete(subscriber);
            } else {
              const unique = [...new Set(list)];
              index.set(
                subscriber,
                unique.map((eventType) => ({ eventType, oneOf: [] })),
              );
              lists.set(subscriber, unique);
            }
          }
          for (const type of types) {
            const expected = brute(lists, type);
            const got: string[] = [];
            index.match({ type }, (s) => got.push(s));
            assert.deepEqual(got.sort(), expected, `match ${type}`);
            assert.equal(index.has(type), expected.length > 0, `has ${type}`);
            assert.deepEqual([...index.subscribersOf(type)].sort(), expected, `subscribersOf ${type}`);
            for (const [subscriber, list] of lists) {
              const wants = expected.includes(subscriber);
              assert.equal(index.subscribes(subscriber, type), wants, `subscribes ${subscriber} ${type}`);
              assert.equal(index.matches(subscriber, { type }), wants, `matches ${subscriber} ${type}`);
              const matcher = index.matcherFor(list.map((eventType) => ({ eventType, oneOf: [] })));
              assert.equal(matcher({ type }), wants, `matcherFor ${subscriber} ${type}`);
            }
          }
          for (const s of [...lists.keys()]) index.remove(s);
          assert.equal(index.patternCount, 0, 'every pattern gone with its last subscriber');
        },
      ),
      { numRuns: 3000, seed: 37 },
    );
  });

  it('matches as the reference does on single pairs', () => {
    fc.assert(
      fc.property(patternArb, typeArb, (pattern, type) => {
        assert.equal(typeMatches(pattern, type), bruteMatches(pattern.split('.'), type.split('.')));
      }),
      { numRuns: 20_000, seed: 37 },
    );
  });

  it('matches a type far deeper than any pattern by its first segments, as the reference does', () => {
    // What the index and typeMatches split of a type is bounded by the patterns (segmentsUpTo):
    // a type of 200,000 segments must still be told apart from one as long as the pattern.
    const index = new SubscriptionIndex<string>(parseExtractorConfig({}));
    const patterns = ['>', 'a.>', 'a.*', '*.*.>', 'a.b', 'a.*.*'];
    for (const p of patterns) index.set(p, [{ eventType: p, oneOf: [] }]);
    for (const type of [`a${'.b'.repeat(200_000)}`, `a${'.'.repeat(200_000)}`, 'a.b', 'a.b.c', 'a']) {
      const want = patterns.filter((p) => bruteMatches(p.split('.'), type.split('.')));
      const got: string[] = [];
      index.match({ type }, (s) => got.push(s));
      assert.deepEqual(got.sort(), want.sort(), type.slice(0, 12));
      for (const p of patterns)
        assert.equal(typeMatches(p, type), want.includes(p), `${p} ${type.slice(0, 12)}`);
    }
  });

  it('a pattern covers another exactly when it matches every type the other matches', () => {
    // Every type over the patterns' literals and one other, up to one segment longer than both.
    const typesUpTo = (n: number): string[][] => {
      const out: string[][] = [];
      const grow = (prefix: string[]) => {
        if (prefix.length > 0) out.push(prefix);
        if (prefix.length === n) return;
        for (const s of ['a', 'b', '', 'z']) grow([...prefix, s]);
      };
      grow([]);
      return out;
    };
    const all = typesUpTo(6);
    const small = fc
      .tuple(fc.array(fc.constantFrom('a', 'b', '', '*'), { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([segments, rest]) => (rest ? [...segments, '>'] : segments).join('.'));
    fc.assert(
      fc.property(small, small, (outer, inner) => {
        const expected = all.every(
          (t) => !bruteMatches(inner.split('.'), t) || bruteMatches(outer.split('.'), t),
        );
        assert.equal(patternCovers(outer, inner), expected, `${outer} ⊇ ${inner}`);
      }),
      { numRuns: 3000, seed: 37 },
    );
  });
});
