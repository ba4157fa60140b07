/**
 * The connect hook on two push-hub processes over real Redis, started from their settings as in
 * production: what the hook gives a connection holds cluster-wide (the connections API of the other
 * replica names its user and subscriptions; a long-poll connection made on one replica and polled
 * on the other has the hook's data and subscriptions), each replica refuses and answers the hook's
 * outage alike, and the hub's log says why the hook failed (an answer it could not apply), which
 * the client is never shown.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { openSse, type ServiceProcess, uniqueName, waitFor } from '@gatehouse/testkit';
import { connectionIds } from './connection-clients.ts';
import { startRedisHubPair } from './connections-api/redis-hub-pair.ts';

const run = uniqueName('connect-hook');
const tokenSecret = `${run}-token-secret`;
const jwtSecret = 'connect-hook-jwt-secret-long-enough';
const apiToken = 'connect-hook-internal-token';
const auth = { authorization: `Bearer ${apiToken}` };
const hooked = `${run}.hooked`;

describe('CONNECT_CHECK on two hub replicas over Redis', () => {
  const hubs: ServiceProcess[] = [];
  let a: ServiceProcess;
  let b: ServiceProcess;
  let hook: Server;
  let answer: (res: ServerResponse) => void = (res) => res.writeHead(200).end('{}');
  before(async () => {
    hook = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    }).listen(0, '127.0.0.1');
    await new Promise((r) => hook.once('listening', r));
    [a, b] = await startRedisHubPair(
      run,
      {
        JWT_SECRET_KEY: jwtSecret,
        TOKEN_SECRET: tokenSecret,
        INTERNAL_API_TOKEN: apiToken,
        LONGPOLL_TIMEOUT: '1s',
        SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
        CONNECT_CHECK: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/connect`,
        CONNECT_CHECK_TIMEOUT: '1s',
      },
      hubs,
    );
  });
  after(async () => {
    for (const h of hubs) await h.stop();
    hook.closeAllConnections();
    hook.close();
  });
  const grant = (body: unknown) => {
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const entry = async (hub: ServiceProcess, id: string) => {
    const res = await fetch(`${hub.apiUrl}/v3/connections/${id}`, { headers: auth });
    assert.equal(res.status, 200, await res.clone().text());
    return (
      (await res.json()) as { connection: { user?: string; subscriptions: Array<{ eventType: string }> } }
    ).connection;
  };

  it("holds what the hook gave cluster-wide: the other replica's API, a long poll on the other replica", async () => {
    grant({ user: 'hooked-user', subscriptions: [{ eventType: hooked }], data: { tier: 2 } });
    const jwt = signJwt(withExpiry({ username: 'carol' }), { alg: 'HS256', key: jwtSecret });
    const sse = await openSse(`${a.publicUrl}/_gw/v1/connection/sse?jwt=${jwt}`);
    after(() => sse.close());
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
    const welcome = sse.events('gw.connection.create')[0]!['data'] as Record<string, unknown>;
    assert.deepEqual(welcome['data'], { tier: 2 });
    const onB = await entry(b, connectionIds(tokenSecret)(welcome['connection_token'] as string));
    assert.equal(onB.user, 'hooked-user');
    assert.deepEqual(
      onB.subscriptions.map((s) => s.eventType),
      [hooked],
    );

    const created = await fetch(`${a.publicUrl}/_gw/v1/connection/longpolling`);
    assert.equal(created.status, 200, await created.clone().text());
    const token = created.headers.get('gatehouse-connection-token')!;
    const poll = await fetch(
      `${b.publicUrl}/_gw/v1/connection/longpolling?pollToken=${encodeURIComponent(token)}`,
    );
    const events = ((await poll.json()) as { events: Array<Record<string, unknown>> }).events;
    const lpWelcome = events.find((e) => e['type'] === 'gw.connection.create')!;
    assert.deepEqual((lpWelcome['data'] as Record<string, unknown>)['data'], { tier: 2 });
    const lpEntry = await entry(b, connectionIds(tokenSecret)(token));
    assert.equal(lpEntry.user, 'hooked-user');
    assert.deepEqual(
      lpEntry.subscriptions.map((s) => s.eventType),
      [hooked],
    );
  });

  it('refuses alike on both replicas, answers an unusable hook 503 with Retry-After, and logs why', async () => {
    answer = (res) => res.writeHead(403).end('no');
    for (const hub of [a, b]) {
      const refused = await fetch(`${hub.publicUrl}/_gw/v1/connection/longpolling`);
      assert.equal(refused.status, 403);
      assert.equal(await refused.text(), 'Connection denied.');
    }
    grant({ subscriptions: [{ event: 'no type' }] });
    for (const hub of [a, b]) {
      const sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse`);
      assert.equal(sse.status, 503, sse.errorBody);
      assert.ok(sse.headers.get('retry-after'));
      assert.doesNotMatch(sse.errorBody ?? '', /eventType/, 'the client is not told the hook’s fault');
      await waitFor(() => hub.output().includes('eventType must be a non-empty string'), {
        what: `${hub.name}'s log of the hook's answer`,
      });
      assert.match(hub.output(), /connect hook failed/);
    }
  });
});
