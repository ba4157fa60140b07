/**
 * Connection tokens carry an expiry: CONNECTION_TOKEN_TTL for every connection, and for a long-poll
 * connection no later than its session's JWT. An expired long-poll cookie is a new connection made
 * from the request's own JWT (refused when that one has expired too), resuming from the client's
 * cursor; an expired token no longer changes subscriptions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignedTokenCodec } from '@gatehouse/auth';
import { LongPollClient, openSse, sleep, waitFor } from '@gatehouse/testkit';
import { startHubFixture, subs } from './hub-fixture.ts';

const codec = new SignedTokenCodec('a-token-secret-for-tests', 'connection');
const greetings = [{ eventType: 'greeting' }];

describe('connection token expiry', () => {
  it('ends a long-poll cookie with its session JWT; a fresh JWT resumes from the cursor', async () => {
    const f = await startHubFixture({ JWT_CLOCK_LEEWAY: '0', LONGPOLL_TIMEOUT: '300ms' });
    try {
      const exp = Math.floor(Date.now() / 1000) + 2;
      const c = new LongPollClient(f.url);
      const query = (jwt: string) => `?jwt=${jwt}&subscriptions=${subs(greetings)}`;
      const created = await c.get(query(f.jwt({ jti: 'lp-exp', exp })));
      assert.equal(created.body, 'ok');
      const token = c.cookies.get('connection_token')!;
      assert.equal(codec.decode(token)?.expiresAt, exp * 1000, 'the cookie expires with the JWT');
      await c.poll();
      await f.publish('greeting', { n: 1 });
      assert.deepEqual(
        (await c.poll()).map((e) => e['data']),
        [{ n: 1 }],
      );

      await sleep(exp * 1000 - Date.now() + 50);
      await f.publish('greeting', { n: 2 });
      const refused = await c.get(query(f.jwt({ jti: 'lp-exp', exp })));
      assert.equal(refused.status, 400, 'the cookie no longer works, and the JWT it came with has expired');
      assert.match(refused.text, /invalid JWT/);

      const renewed = await c.get(query(f.jwt({ jti: 'lp-exp-2', exp: exp + 3600 })));
      assert.equal(renewed.body, 'ok', 'a fresh JWT makes a new connection');
      assert.notEqual(c.cookies.get('connection_token'), token);
      const events = await c.poll();
      assert.deepEqual(
        events.filter((e) => e['type'] === 'greeting').map((e) => e['data']),
        [{ n: 2 }],
        'it resumed from the cursor: the event published meanwhile is there',
      );
    } finally {
      await f.stop();
    }
  });

  it('refuses a subscription change with a token past CONNECTION_TOKEN_TTL', async () => {
    const f = await startHubFixture({ CONNECTION_TOKEN_TTL: '1s' });
    try {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs(greetings)}`);
      await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
      const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
        .connection_token;
      const put = () =>
        fetch(`${f.url}/_gw/v1/connection/sse/${token}/subscriptions`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ subscriptions: [{ eventType: 'other' }] }),
        });
      assert.equal((await put()).status, 204);
      await sleep(2100);
      const expired = await put();
      assert.equal(expired.status, 400);
      assert.equal(await expired.text(), 'Invalid connection token.');
      sse.close();
    } finally {
      await f.stop();
    }
  });
});
