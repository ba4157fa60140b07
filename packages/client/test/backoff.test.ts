import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Backoff, MAX_HINT_MS } from '../src/backoff.ts';

it('doubles the bound from initialMs up to maxMs, with full jitter below it', () => {
  const highest = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 0.999999);
  assert.deepEqual(
    Array.from({ length: 6 }, () => highest.next()),
    [99, 199, 399, 799, 999, 999],
  );
  const lowest = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 0);
  assert.deepEqual([lowest.next(), lowest.next()], [0, 0], 'full jitter reaches down to 0');
});

it('spreads real delays over the whole range below the bound', () => {
  const backoff = new Backoff({ initialMs: 1000, maxMs: 1000 });
  const delays = Array.from({ length: 2000 }, () => backoff.next());
  assert.ok(Math.min(...delays) < 100 && Math.max(...delays) > 900, 'spread from near 0 to near the bound');
  assert.ok(delays.every((d) => d >= 0 && d < 1000));
});

it('starts again from the first bound after a reset', () => {
  const backoff = new Backoff({ initialMs: 100, maxMs: 10_000 }, () => 0.5);
  for (let i = 0; i < 5; i++) backoff.next();
  backoff.reset();
  assert.equal(backoff.next(), 50);
});

it('asks for at most a second when the server said to come back at once, whatever the bounds', () => {
  const backoff = new Backoff({ initialMs: 60_000, maxMs: 60_000 }, () => 0.999999);
  assert.equal(backoff.soon(), 999);
  assert.equal(new Backoff({ initialMs: 200 }, () => 0.5).soon(), 100);
});

it('takes the delay a server asks for, up to five minutes', () => {
  const backoff = new Backoff({ initialMs: 10, maxMs: 10 });
  assert.equal(backoff.hinted(1500), 1500);
  assert.equal(backoff.hinted(10 ** 12), MAX_HINT_MS);
  assert.equal(backoff.hinted(-5), 0);
});
