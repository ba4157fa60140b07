/**
 * The replica's type pattern budget (MAX_TYPE_PATTERNS) and one address's share of it
 * (MAX_TYPE_PATTERNS_PER_ADDRESS): what is held already costs nothing more, an IPv6 /64 is one
 * address, and a share comes back as its holders let go.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PatternBudget } from '../../src/subscriptions/pattern-budget.ts';
import { SubscriptionRequestError } from '../../src/subscriptions/subscription-request.ts';

const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SubscriptionRequestError);
    return { status: err.status, retryAfter: err.headers['retry-after'] };
  }
  return undefined;
};

describe('PatternBudget', () => {
  it('refuses an address past its share with 429, the replica past its whole with 503', () => {
    const budget = new PatternBudget(3, 2);
    budget.add('a.*');
    budget.add('b.*');
    budget.holdFor('203.0.113.1', ['a.*', 'b.*']);
    assert.deepEqual(
      refusal(() => budget.admit(['c.*'], '203.0.113.1')),
      { status: 429, retryAfter: '5' },
    );
    assert.equal(
      refusal(() => budget.admit(['a.*', 'b.*'], '203.0.113.1')),
      undefined,
      'held: nothing more',
    );
    assert.equal(
      refusal(() => budget.admit(['c.*'], '198.51.100.1')),
      undefined,
    );
    budget.add('c.*');
    assert.deepEqual(
      refusal(() => budget.admit(['d.*'], '198.51.100.1')),
      { status: 503, retryAfter: '5' },
    );
  });

  it('counts an IPv6 /64 as one address and gives the share back as its holders let go', () => {
    const budget = new PatternBudget(100, 1);
    budget.holdFor('2001:db8:0:1::a', ['a.*']);
    budget.holdFor('2001:db8:0:1::b', ['a.*']);
    assert.equal(refusal(() => budget.admit(['b.*'], '2001:db8:0:1::c'))?.status, 429);
    assert.equal(
      refusal(() => budget.admit(['b.*'], '2001:db8:0:2::c')),
      undefined,
      'another /64',
    );
    budget.releaseFor('2001:db8:0:1::a', ['a.*']);
    assert.equal(refusal(() => budget.admit(['b.*'], '2001:db8:0:1::c'))?.status, 429, 'one holder left');
    budget.releaseFor('2001:db8:0:1::b', ['a.*']);
    assert.equal(
      refusal(() => budget.admit(['b.*'], '2001:db8:0:1::c')),
      undefined,
    );
  });
});
