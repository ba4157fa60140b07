/** The per-address token bucket: refill over the minute, IPv6 by /64, a bounded number of addresses. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressBudget } from '../../src/limits/address-budget.ts';

describe('AddressBudget', () => {
  it('refills evenly over the minute and says when an attempt is back', () => {
    let now = 0;
    const budget = new AddressBudget({ perMinute: 60, now: () => now });
    for (let i = 0; i < 60; i++) assert.equal(budget.take('192.0.2.1').ok, true);
    const refused = budget.take('192.0.2.1');
    assert.deepEqual(refused, { ok: false, retryAfterSeconds: 1 });
    now += 1000;
    assert.equal(budget.take('192.0.2.1').ok, true, 'one attempt back after a second');
    assert.equal(budget.take('192.0.2.1').ok, false);
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as IPv4', () => {
    const budget = new AddressBudget({ perMinute: 2, now: () => 0 });
    assert.equal(budget.take('2001:db8:1:2::1').ok, true);
    assert.equal(budget.take('2001:db8:1:2:ffff::9').ok, true);
    assert.equal(budget.take('2001:0db8:0001:0002:0:0:0:77').ok, false, 'the same /64');
    assert.equal(budget.take('2001:db8:1:3::1').ok, true, 'another /64');
    assert.equal(budget.take('::ffff:192.0.2.7').ok, true);
    assert.equal(budget.take('192.0.2.7').ok, true);
    assert.equal(budget.take('192.0.2.7').ok, false);
  });

  it('holds a bounded number of addresses, forgetting the least recently used', () => {
    const budget = new AddressBudget({ perMinute: 5, maxAddresses: 1000, now: () => 0 });
    for (let i = 0; i < 50_000; i++) budget.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    assert.ok(budget.size <= 1000, `${budget.size} addresses held`);
  });
});
