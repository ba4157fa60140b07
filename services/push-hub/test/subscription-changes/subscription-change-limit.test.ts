/**
 * MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: PUTs per connection per minute, counted in the shared store so
 * the bound holds whichever replica each PUT reaches; beyond it 429 with Retry-After, nothing applied.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, openSse, sleep, waitFor } from '@gatehouse/testkit';
import {
  createSubscriptionChangeLimit,
  type SubscriptionChangeLimit,
} from '../../src/subscription-changes/subscription-change-limit.ts';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const refusal =
  'Too many subscription changes for this connection: at most 3 per minute (MAX_SUBSCRIPTION_CHANGES_PER_MINUTE).';

async function put(url: string, transport: string, token: string, types: string[]) {
  const res = await fetch(`${url}/_gw/v1/connection/${transport}/${token}/subscriptions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: types.map((eventType) => ({ eventType })) }),
  });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}

describe('subscription changes per connection per minute', () => {
  let a: HubFixture;
  let b: HubFixture;
  before(async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const env = { MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: '3' };
    a = await startHubFixture({ ...env, REPLICA_ID: 'changes-a' }, shared);
    b = await startHubFixture({ ...env, REPLICA_ID: 'changes-b' }, shared);
  });
  after(async () => {
    await a.stop();
    await b.stop();
  });

  async function sseOn(f: HubFixture) {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'a' }])}`);
    await waitFor(() => sse.frames.length >= 2, { what: 'the welcome events' });
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    return { sse, token };
  }

  it('answers 429 with Retry-After beyond the limit, across replicas, and applies nothing', async (t) => {
    const { sse, token } = await sseOn(a);
    t.after(() => sse.close());
    for (const [f, types] of [
      [a, ['b']],
      [b, ['c']],
      [a, ['d']],
    ] as const)
      assert.equal((await put(f.url, 'sse', token, [...types])).status, 204);
    const refused = await put(b.url, 'sse', token, ['e']);
    assert.equal(refused.status, 429);
    assert.equal(refused.text, refusal);
    const wait = Number(refused.retryAfter);
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 120, `Retry-After ${refused.retryAfter}`);
    await a.publish('e', {});
    await a.publish('d', { last: true });
    await waitFor(() => sse.events('d').length === 1, { what: 'an event of the last change applied' });
    assert.equal(sse.events('e').length, 0, 'the refused change was not applied');
    assert.equal(sse.events('gw.subscriptions_set').length, 4, 'the welcome one and three changes');
  });

  it('counts each connection apart', async (t) => {
    const first = await sseOn(a);
    const second = await sseOn(b);
    t.after(() => {
      first.sse.close();
      second.sse.close();
    });
    for (let i = 0; i < 3; i++) assert.equal((await put(a.url, 'sse', first.token, ['b'])).status, 204);
    assert.equal((await put(a.url, 'sse', first.token, ['b'])).status, 429);
    assert.equal((await put(a.url, 'sse', second.token, ['b'])).status, 204);
  });

  it('bounds long-poll connections the same way', async () => {
    const c = new LongPollClient(a.url);
    await c.get();
    const token = ((await c.poll())[0]!['data'] as { connection_token: string }).connection_token;
    for (let i = 0; i < 3; i++) assert.equal((await put(b.url, 'longpolling', token, ['b'])).status, 204);
    const refused = await put(a.url, 'longpolling', token, ['e']);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.retryAfter) >= 1);
    await a.publish('e', {});
    await sleep(50);
    const events = await c.poll();
    assert.deepEqual(
      events.map((e) => e['type']),
      ['gw.subscriptions_set'],
    );
    assert.deepEqual(events[0]!['data'], [{ eventType: 'b', oneOf: [] }]);
  });
});

/** The Retry-After of a refused change, or undefined when it may go ahead. */
const waitOf = (limit: SubscriptionChangeLimit) => async (id: string) => {
  const refusal = await limit(id);
  return refusal && { status: refusal.status, retryAfterSeconds: Number(refusal.headers['retry-after']) };
};

describe('the per-connection window', () => {
  it('says in Retry-After when the next change fits, and admits it then', async () => {
    const store = new MemoryStore();
    const windowStart = 60_000 * 5000;
    let now = windowStart + 30_000;
    const limit = waitOf(createSubscriptionChangeLimit(store, 3, () => now));
    for (let i = 0; i < 3; i++) assert.equal(await limit('conn'), undefined);
    // The window is full: the next one fits once the previous minute (3) weighs 2 or less, 20 s
    // into the next window, 50 s from now.
    assert.deepEqual(await limit('conn'), { status: 429, retryAfterSeconds: 50 });
    now += 49_000;
    assert.deepEqual(await limit('conn'), { status: 429, retryAfterSeconds: 1 });
    now += 1000;
    assert.equal(await limit('conn'), undefined);
  });

  it('waits only for the previous minute to weigh less when this one has room', async () => {
    const store = new MemoryStore();
    const windowStart = 60_000 * 6000;
    let now = windowStart + 50_000;
    const limit = waitOf(createSubscriptionChangeLimit(store, 4, () => now));
    for (let i = 0; i < 4; i++) assert.equal(await limit('conn'), undefined);
    now = windowStart + 60_000 + 15_000; // the previous 4 weigh 3: one more fits
    assert.equal(await limit('conn'), undefined);
    // 4 × (1 - f) + 1 + 1 ≤ 4 from f = 1/2 on, 15 s from now.
    assert.deepEqual(await limit('conn'), { status: 429, retryAfterSeconds: 15 });
  });
});
