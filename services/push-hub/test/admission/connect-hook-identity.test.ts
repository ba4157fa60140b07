/**
 * CONNECT_CHECK fixes who a connection is at its connect (found by an outside review): a client's
 * own subscription change may not make it someone else, as a PUT with the JWT of a user the hook
 * bans made an anonymous connection that user's (his session, his JWT-inferred subscriptions),
 * without the hook being asked. A change with a JWT of another session is refused (403), as the
 * hook would; renewing the JWT of the same session, or changing without one, still works.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, sleep, waitFor } from '@gatehouse/testkit';
import { Hook, json } from '../connect-hook-server.ts';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

/** A hook that bans bob, by his verified claims. */
function banningBob(): Hook {
  const hook = new Hook();
  hook.answer = (res, call) => {
    const banned = (call.body['claims'] as { username?: string } | undefined)?.username === 'bob';
    json(banned ? 403 : 200, {})(res, call);
  };
  return hook;
}

async function tokenOf(sse: Awaited<ReturnType<typeof openSse>>): Promise<string> {
  await waitFor(() => sse.events('gw.connection.create').length === 1);
  const created = sse.events('gw.connection.create')[0]!;
  return ((created['data'] ?? created) as { connection_token: string }).connection_token;
}

describe('CONNECT_CHECK: a connection is who its connect said', () => {
  const hook = banningBob();
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ CONNECT_CHECK: await hook.listen() });
  });
  after(async () => {
    await f?.stop();
    hook.close();
  });

  it('a user the hook bans cannot become his session by PUTting his JWT onto an anonymous connection', async () => {
    const bobJwt = await f.jwt({ username: 'bob', jti: 'bob-session' });
    // The hook refuses bob at connect, as it should.
    const refused = await openSse(`${f.url}/_gw/v1/connection/sse`, { authorization: `Bearer ${bobJwt}` });
    assert.equal(refused.status, 403);
    refused.close();

    // Anonymous connect (the hook allows guests), then the client's own PUT with bob's JWT.
    const sse = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'tick' }])}`,
    );
    assert.equal(sse.status, 200);
    const token = await tokenOf(sse);
    const put = await fetch(`${f.url}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bobJwt}` },
      body: JSON.stringify({ subscriptions: [] }),
    });
    // bob's JWT-inferred subscription (greeting {name: bob}) is now on the connection, no hook asked.
    await f.publish('greeting', { name: 'bob', text: 'for bob only' });
    await sleep(300);
    const got = sse.events('greeting');
    sse.close();
    assert.deepEqual(
      { put: put.status, greetingsDelivered: got.length },
      { put: 403, greetingsDelivered: 0 },
      `banned bob got his events: PUT ${put.status}, ${got.length} greeting(s); hook calls: ${hook.calls.length}`,
    );
  });

  it('lets a change without a JWT, or with a renewed JWT of the same session, go on', async () => {
    const jwt = await f.jwt({ username: 'alice', jti: 'alice-session' });
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`, { authorization: `Bearer ${jwt}` });
    assert.equal(sse.status, 200);
    const token = await tokenOf(sse);
    const put = (headers: Record<string, string>) =>
      fetch(`${f.url}/_gw/v1/connection/sse/${token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ subscriptions: [{ eventType: 'tick' }] }),
      });
    assert.equal((await put({})).status, 204);
    const renewed = await f.jwt({
      username: 'alice',
      jti: 'alice-session',
      iat: Math.floor(Date.now() / 1000) + 1,
    });
    assert.equal((await put({ authorization: `Bearer ${renewed}` })).status, 204);
    const other = await f.jwt({ username: 'alice', jti: 'another-session' });
    assert.equal((await put({ authorization: `Bearer ${other}` })).status, 403);
    sse.close();
  });
});
