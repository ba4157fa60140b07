/**
 * One JWT per connect, as the proxy's first-token rule: the first Bearer token of the Authorization
 * header, else the `jwt` query parameter. Only that one is verified (one signature check per
 * request) and gives JWT-inferred subscriptions and the session; the others are not looked at.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, waitFor } from '@gatehouse/testkit';
import { queryOf } from '../../src/admission/connect-request.ts';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

describe('the JWT of a connect', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture();
  });
  after(() => f.stop());

  /** The subscriptions a connect got, or its refusal. */
  async function connect(query: string, headers: Record<string, string> = {}) {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse${query}`, headers);
    if (sse.status !== 200) return { status: sse.status, text: sse.errorBody };
    try {
      await waitFor(() => sse.frames.length >= 2, { what: 'the welcome events' });
      return { status: 200, subscriptions: sse.events('gw.subscriptions_set')[0]!['data'] };
    } finally {
      sse.close();
    }
  }
  const inferred = (name: string) => [{ eventType: 'greeting', oneOf: [{ name }] }];

  it('takes the Authorization Bearer token before the jwt query parameter', async () => {
    const alice = f.jwt({ username: 'alice' });
    const bob = f.jwt({ username: 'bob' });
    assert.deepEqual(await connect(`?jwt=${bob}`, { authorization: `Bearer ${alice}` }), {
      status: 200,
      subscriptions: inferred('alice'),
    });
    assert.deepEqual(await connect(`?jwt=${bob}`), { status: 200, subscriptions: inferred('bob') });
  });

  it('verifies no token but that one', async () => {
    const alice = f.jwt({ username: 'alice' });
    const forged = `${alice.slice(0, -4)}AAAA`; // its signature altered
    assert.deepEqual(await connect(`?jwt=${forged}`, { authorization: `Bearer ${alice}` }), {
      status: 200,
      subscriptions: inferred('alice'),
    });
    assert.deepEqual(await connect('', { authorization: `Bearer ${alice}, Bearer ${forged}` }), {
      status: 200,
      subscriptions: inferred('alice'),
    });
    const refused = await connect(`?jwt=${alice}`, { authorization: `Bearer ${forged}` });
    assert.equal(refused.status, 400);
    assert.match(String(refused.text), /^invalid authorization header: invalid JWT$/);
  });

  it('takes the session of that token', async (t) => {
    const alice = f.jwt({ username: 'alice', jti: 'first-token-session' });
    const bob = f.jwt({ username: 'bob', jti: 'ignored-token-session' });
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${bob}`, {
      authorization: `Bearer ${alice}`,
    });
    t.after(() => sse.close());
    await waitFor(() => sse.frames.length >= 2, { what: 'the welcome events' });
    await f.blacklist('ignored-token-session');
    await f.publish('greeting', { name: 'alice' });
    await waitFor(() => sse.events('greeting').length === 1, { what: 'an event after the other kill' });
    await f.blacklist('first-token-session');
    await waitFor(() => sse.events('gw.session_killed').length === 1, { what: 'the kill of its session' });
  });
});

describe('the query of a connect', () => {
  // queryOf reads the query without parsing the whole URL (the connect path's cost); it must read
  // every parameter exactly as `new URL(target, base).searchParams` would.
  const targets = [
    '/_gw/v1/connection/sse',
    '/_gw/v1/connection/sse?',
    '/_gw/v1/connection/sse?subscriptions=%5B%7B%22eventType%22%3A%22a%22%7D%5D&jwt=x.y.z',
    '/_gw/v1/connection/sse?subscriptions=[{"eventType":"a b"}]&lastEventId=1-0',
    '/_gw/v1/connection/sse?jwt=a+b&jwt=c&empty=&flag',
    '/_gw/v1/connection/sse?name=zo%C3%AB%20%F0%9F%99%82&raw=zoë&bad=%E0%A4%A&pct=%',
    '/_gw/v1/connection/sse?a=1#fragment?b=2',
    '/_gw/v1/connection/sse?a=1?b=2&c=%26',
  ];
  for (const target of targets) {
    it(`reads ${JSON.stringify(target)} as the URL parser does`, () => {
      const expected = [...new URL(target, 'http://local').searchParams];
      assert.deepEqual([...queryOf(target)], expected);
    });
  }
});
