import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { openSse, sleep, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';
import { LongPollClient } from '@gatehouse/testkit';

async function put(url: string, token: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/_gw/v1/connection/sse/${token}/subscriptions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

describe('PUT subscriptions', () => {
  let a: HubFixture;
  let b: HubFixture;
  before(async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    a = await startHubFixture({ REPLICA_ID: 'replica-a', CONTROL_REQUEST_TIMEOUT: '300ms' }, shared);
    b = await startHubFixture({ REPLICA_ID: 'replica-b', CONTROL_REQUEST_TIMEOUT: '300ms' }, shared);
  });
  after(async () => {
    await a.stop();
    await b.stop();
  });

  async function sseOn(f: HubFixture, query = '') {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse${query}`);
    await waitFor(() => sse.frames.length >= 2);
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    return { sse, token };
  }

  it('replaces the subscriptions of a connection held by another replica', async () => {
    const { sse, token } = await sseOn(a);
    const jwt = b.jwt({ username: 'carol' });
    const r = await put(
      b.url,
      token,
      { subscriptions: [{ eventType: 'news' }] },
      { authorization: `Bearer ${jwt}` },
    );
    assert.equal(r.status, 204, r.text);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 2);
    assert.deepEqual(sse.events('gw.subscriptions_set')[1]!['data'], [
      { eventType: 'greeting', oneOf: [{ name: 'carol' }] },
      { eventType: 'news', oneOf: [] },
    ]);
    await a.publish('news', { headline: 'x' });
    await waitFor(() => sse.events('news').length === 1);
    sse.close();
  });

  it('takes the first Bearer token only: later ones are neither verified nor used', async (t) => {
    const { sse, token } = await sseOn(a);
    t.after(() => sse.close());
    const erin = a.jwt({ username: 'erin' });
    const frank = a.jwt({ username: 'frank' });
    const forged = `${frank.slice(0, -4)}AAAA`; // its signature altered
    const putWith = (...jwts: string[]) =>
      put(a.url, token, { subscriptions: [] }, { authorization: jwts.map((j) => `Bearer ${j}`).join(', ') });
    const withForged = await putWith(erin, forged);
    assert.equal(withForged.status, 204, withForged.text);
    assert.equal((await putWith(erin, frank)).status, 204);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 3);
    for (const set of sse.events('gw.subscriptions_set').slice(1))
      assert.deepEqual(set['data'], [{ eventType: 'greeting', oneOf: [{ name: 'erin' }] }]);
    assert.match(
      (await putWith(forged, erin)).text,
      /^cannot accept subscription request: invalid authorization header: invalid JWT$/,
    );
  });

  it('drops the JWT-inferred subscriptions when the PUT carries no token', async () => {
    const { sse, token } = await sseOn(a, `?jwt=${a.jwt({ username: 'dave' })}`);
    assert.equal((await put(a.url, token, { subscriptions: [] })).status, 204);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 2);
    assert.deepEqual(sse.events('gw.subscriptions_set')[1]!['data'], []);
    sse.close();
  });

  it('updates a long-poll connection from any replica', async () => {
    const lp = new LongPollClient(a.url);
    await lp.get();
    const token = ((await lp.poll())[0]!['data'] as { connection_token: string }).connection_token;
    const r = await put(b.url, token, { subscriptions: [{ eventType: 'lp-news' }] });
    assert.equal(r.status, 204, r.text);
    const lpOnB = new LongPollClient(b.url);
    lpOnB.cookies = lp.cookies;
    const events = await lpOnB.poll();
    assert.deepEqual(
      events.map((e) => e['type']),
      ['gw.subscriptions_set'],
    );
    const waiting = lpOnB.poll();
    await sleep(50);
    await a.publish('lp-news', { n: 1 });
    assert.deepEqual(
      (await waiting).map((e) => e['data']),
      [{ n: 1 }],
    );
  });

  it('answers 410 for a connection that is gone', async () => {
    const { sse, token } = await sseOn(b);
    sse.close();
    await waitFor(() => b.hub.size === 0);
    const r = await put(a.url, token, { subscriptions: [] });
    assert.equal(r.status, 410);
    assert.equal(r.text, 'Connection no longer exists.');
  });

  it('rejects bad requests with the reason', async () => {
    const { sse, token } = await sseOn(a);
    const forged = `${token.slice(0, -2)}xx`;
    assert.deepEqual(await put(a.url, forged, { subscriptions: [] }), {
      status: 400,
      text: 'Invalid connection token.',
    });
    // A malformed percent escape in the token (found by embedded/test/public-edge-fuzz.test.ts) was a
    // 500; the host now refuses the target before the hub reads it (canonical-path.ts).
    assert.deepEqual(await put(a.url, '%fa%58', { subscriptions: [] }), {
      status: 400,
      text: 'Bad request: the path holds percent-encoded bytes that are not UTF-8',
    });
    assert.equal((await put(a.url, token, '{oops')).status, 400);
    assert.match(
      (await put(a.url, token, { subs: [] })).text,
      /Expected field "subscriptions" is not present/,
    );
    // RIG's texts, which clients match on; the detail after the colon is ours.
    assert.match(
      (await put(a.url, token, { subscriptions: [{ eventType: 1 }] })).text,
      /^cannot accept subscription request: could not parse given subscriptions: subscription 0: eventType/,
    );
    assert.match(
      (await put(a.url, token, { subscriptions: 'greeting' })).text,
      /^cannot accept subscription request: could not parse given subscriptions: failed to decode subscription list: /,
    );
    assert.match(
      (await put(a.url, token, { subscriptions: [] }, { authorization: 'Bearer broken' })).text,
      /^cannot accept subscription request: invalid authorization header: invalid JWT$/,
    );
    assert.match(
      (await put(a.url, token, { subscriptions: [] }, { authorization: 'Bearer' })).text,
      /^cannot accept subscription request: invalid authorization header: Bearer credential without a token/,
    );
    assert.equal((await put(a.url, token, { subscriptions: [] }, { accept: 'text/html' })).status, 406);
    sse.close();
  });
});
