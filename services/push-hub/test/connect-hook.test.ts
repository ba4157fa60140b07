/**
 * CONNECT_CHECK through the hub's own port, with a real HTTP server as the hook: what it is told
 * about a connect, its refusals (403 on every transport), what its answer gives the connection
 * (user, subscriptions, welcome data, an end), and its outage (down, slow, 5xx, garbage, too
 * large, invalid subscriptions): 503 with Retry-After, a circuit breaker that stops calling it for
 * a cool-down after consecutive failures.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { connectionIds } from './connection-clients.ts';
import { type Answer, Hook, json } from './connect-hook-server.ts';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const greetings = [{ eventType: 'greeting' }];
const idOf = connectionIds('a-token-secret-for-tests');

describe('CONNECT_CHECK', () => {
  const hook = new Hook();
  let f: HubFixture;
  before(async () => {
    const url = await hook.listen();
    f = await startHubFixture({
      CONNECT_CHECK: url,
      CONNECT_CHECK_TIMEOUT: '300ms',
      CONNECT_CHECK_HEADERS: 'x-tenant, user-agent',
      CONNECT_CHECK_MAX_RESPONSE_BYTES: '2048',
      CONNECT_CHECK_MAX_DATA_BYTES: '1024',
      // High enough that the outage tests below do not open it; the breaker has its own hub.
      CONNECT_CHECK_BREAKER_FAILURES: '1000',
      MAX_SUBSCRIPTIONS_PER_CONNECTION: '4',
    });
  });
  after(async () => {
    await f?.stop();
    hook.close();
  });
  beforeEach(() => {
    hook.calls.length = 0;
    hook.answer = json(200, {});
  });

  it('tells the hook the transport, the requested subscriptions, the verified claims, the address and the allowed headers only', async () => {
    const jwt = f.jwt({ username: 'alice', jti: 'hook-session' });
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs(greetings)}`, {
      authorization: `Bearer ${jwt}`,
      'x-tenant': 'acme',
      'x-secret': 'not for the hook',
    });
    assert.equal(sse.status, 200, sse.errorBody);
    sse.close();
    assert.equal(hook.calls.length, 1);
    const { body, headers } = hook.calls[0]!;
    assert.equal(body['transport'], 'sse');
    // What the client asked for: its JWT's (the extractor reads `username`) and its list.
    assert.deepEqual(body['subscriptions'], [
      { eventType: 'greeting', oneOf: [{ name: 'alice' }] },
      { eventType: 'greeting', oneOf: [] },
    ]);
    assert.equal((body['claims'] as Record<string, unknown>)['username'], 'alice');
    assert.equal((body['claims'] as Record<string, unknown>)['jti'], 'hook-session');
    assert.equal(body['user'], 'alice', "the JWT's user (JWT_USER_FIELD)");
    assert.equal(body['clientAddress'], '127.0.0.1');
    assert.equal((body['headers'] as Record<string, string>)['x-tenant'], 'acme');
    assert.equal((body['headers'] as Record<string, string>)['x-secret'], undefined);
    assert.equal((body['headers'] as Record<string, string>)['authorization'], undefined);
    assert.equal(headers.authorization, undefined, 'the JWT is not passed on');
    assert.equal(JSON.stringify(body).includes(jwt), false);
  });

  it('refuses with 403 on SSE, WebSocket, socket.io and long-polling when the hook says 403; its body stays with us', async () => {
    hook.answer = (res) => res.writeHead(403).end('user 42 is banned for spamming');
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(sse.status, 403);
    assert.equal(sse.errorBody, 'Connection denied.');
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws`);
    assert.deepEqual(await ws.closed, { code: 4403, reason: 'Connection denied.' });
    const lp = await fetch(`${f.url}/_gw/v1/connection/longpolling`);
    assert.equal(lp.status, 403);
    assert.equal(await lp.text(), 'Connection denied.');
    const sio = io(f.url, { path: '/_gw/v1/socket.io/', transports: ['websocket'], reconnection: false });
    const sioError = await new Promise<Error & { data?: unknown }>((r) => sio.on('connect_error', r));
    sio.close();
    assert.equal(sioError.message, 'Connection denied.');
    assert.deepEqual(sioError.data, { status: 403, reason: 'denied' });
    assert.deepEqual(
      hook.calls.map((c) => c.body['transport']),
      ['sse', 'ws', 'longpolling', 'socketio'],
    );
    assert.equal(await f.metric('gw_connect_hook_calls_total', 'outcome="refused"'), 4);
  });

  it("applies the hook's user, subscriptions and data: the welcome carries the data, an event of its subscription arrives, the connections API names the user", async () => {
    const timed = await f.metric('gw_connect_hook_duration_seconds_count');
    hook.answer = json(200, {
      user: 'hook-user',
      subscriptions: [{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }],
      data: { plan: 'gold', rooms: [1, 2] },
    });
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(sse.status, 200, sse.errorBody);
    after(() => sse.close());
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    const welcome = sse.events('gw.connection.create')[0]!['data'] as Record<string, unknown>;
    assert.deepEqual(welcome['data'], { plan: 'gold', rooms: [1, 2] });
    assert.deepEqual(sse.events('gw.subscriptions_set')[0]!['data'], [
      { eventType: 'greeting', oneOf: [{ name: 'bob' }] },
    ]);
    await f.publish('greeting', { name: 'carol' });
    await f.publish('greeting', { name: 'bob' });
    await waitFor(() => sse.events('greeting').length === 1, { what: 'the greeting to bob' });
    assert.deepEqual(sse.events('greeting')[0]!['data'], { name: 'bob' });

    const id = idOf(welcome['connection_token'] as string);
    const res = await fetch(`${f.apiUrl}/v3/connections/${id}`);
    const { connection } = (await res.json()) as { connection: { user?: string } };
    assert.equal(connection.user, 'hook-user');
    assert.equal(await f.metric('gw_connect_hook_duration_seconds_count'), timed + hook.calls.length);
  });

  it('adds its subscriptions to the long-poll connection, with the data in the welcome', async () => {
    hook.answer = json(200, { user: 'lp-user', subscriptions: greetings, data: 'hello' });
    const created = await fetch(`${f.url}/_gw/v1/connection/longpolling`);
    assert.equal(created.status, 200, await created.clone().text());
    const token = created.headers.get('gatehouse-connection-token')!;
    const poll = async () =>
      (await (
        await fetch(`${f.url}/_gw/v1/connection/longpolling?pollToken=${encodeURIComponent(token)}`)
      ).json()) as { events: Array<Record<string, unknown>> };
    const first = await poll();
    const welcome = first.events.find((e) => e['type'] === 'gw.connection.create')!;
    assert.equal((welcome['data'] as Record<string, unknown>)['data'], 'hello');
    await f.publish('greeting', { name: 'lp' });
    const next = await poll();
    assert.deepEqual(
      next.events.filter((e) => e['type'] === 'greeting').map((e) => e['data']),
      [{ name: 'lp' }],
    );
  });

  it("keeps the hook's subscriptions through the client's own change of its list (SSE and long-polling)", async () => {
    hook.answer = json(200, { subscriptions: [{ eventType: 'hooked' }] });
    const put = (transport: string, token: string) =>
      fetch(`${f.url}/_gw/v1/connection/${transport}/${encodeURIComponent(token)}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'other' }] }),
      });
    const types = (list: unknown) => (list as Array<{ eventType: string }>).map((s) => s.eventType).sort();

    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs(greetings)}`);
    after(() => sse.close());
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    assert.equal((await put('sse', token)).status, 204);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 2, { what: 'the change' });
    assert.deepEqual(types(sse.events('gw.subscriptions_set')[1]!['data']), ['hooked', 'other']);

    const created = await fetch(`${f.url}/_gw/v1/connection/longpolling`);
    const lpToken = created.headers.get('gatehouse-connection-token')!;
    assert.equal((await put('longpolling', lpToken)).status, 204);
    await f.publish('hooked', { n: 1 });
    await waitFor(() => sse.events('hooked').length === 1, { what: 'the hooked event over SSE' });
    const poll = await fetch(
      `${f.url}/_gw/v1/connection/longpolling?pollToken=${encodeURIComponent(lpToken)}`,
    );
    const events = ((await poll.json()) as { events: Array<Record<string, unknown>> }).events;
    const changes = events.filter((e) => e['type'] === 'gw.subscriptions_set');
    assert.deepEqual(types(changes.at(-1)!['data']), ['hooked', 'other']);
  });

  it('ends the connection at expireAt as at the end of a JWT: gw.session_expired, WebSocket 4401', async () => {
    hook.answer = json(200, { expireAt: Math.floor(Date.now() / 1000) + 2 });
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws`);
    after(() => {
      sse.close();
      ws.ws.terminate();
    });
    assert.equal(sse.status, 200, sse.errorBody);
    await sse.ended;
    assert.equal(sse.frames.at(-1)!.event, 'gw.session_expired');
    assert.deepEqual(await ws.closed, { code: 4401, reason: 'Session expired.' });
  });

  it('keeps that end when a subscription change brings a fresh JWT (which moves a JWT end to its own expiry)', async () => {
    hook.answer = json(200, { expireAt: Math.floor(Date.now() / 1000) + 2 });
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'eve' })}`);
    after(() => sse.close());
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const fresh = f.jwt({ username: 'eve', exp: Math.floor(Date.now() / 1000) + 3600 });
    const put = await fetch(`${f.url}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${fresh}` },
      body: JSON.stringify({ subscriptions: greetings }),
    });
    assert.equal(put.status, 204);
    await sse.ended;
    assert.equal(sse.frames.at(-1)!.event, 'gw.session_expired');
  });

  it('answers 503 with Retry-After, never 4xx, when the hook is slow, answers 500, garbage, too much, or subscriptions we cannot apply', async () => {
    const outages: Array<[string, Answer]> = [
      ['slow', (res) => setTimeout(() => json(200, {})(res, undefined as never), 1500).unref()],
      ['500', (res) => res.writeHead(500).end('boom')],
      ['404', (res) => res.writeHead(404).end()],
      ['not JSON', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>')],
      ['not an object', json(200, [1, 2])],
      ['too large', json(200, { data: 'x'.repeat(4096) })],
      ['data too large', json(200, { data: 'x'.repeat(1500) })],
      ['bad subscriptions', json(200, { subscriptions: [{ nope: 1 }] })],
      ['not a list', json(200, { subscriptions: 'not a list' })],
      [
        'too many subscriptions',
        json(200, { subscriptions: ['a', 'b', 'c', 'd', 'e'].map((t) => ({ eventType: t })) }),
      ],
      ['bad user', json(200, { user: 42 })],
      ['user with a line break (a forged log line)', json(200, { user: 'eve\r\nadmin' })],
      ['user too long', json(200, { user: 'u'.repeat(257) })],
      ['bad expireAt', json(200, { expireAt: 'tomorrow' })],
    ];
    for (const [what, answer] of outages) {
      hook.answer = answer;
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
      assert.equal(sse.status, 503, `${what}: ${sse.errorBody}`);
      assert.match(sse.headers.get('retry-after') ?? '', /^\d+$/, what);
      assert.equal(sse.errorBody, 'The connect check is unavailable for the moment; retry later.', what);
    }
    const lp = await fetch(`${f.url}/_gw/v1/connection/longpolling`);
    assert.equal(lp.status, 503);
    assert.ok(lp.headers.get('retry-after'));
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws`);
    assert.equal((await ws.closed).code, 4503);
    assert.ok((await f.metric('gw_connect_hook_calls_total', 'outcome="timeout"')) >= 1);
    assert.ok((await f.metric('gw_connect_hook_calls_total', 'outcome="bad_answer"')) >= 1);
    assert.ok((await f.metric('gw_connect_hook_calls_total', 'outcome="bad_status"')) >= 1);
  });
});

describe('CONNECT_CHECK when the hook is down, and its circuit breaker', () => {
  const hook = new Hook();
  let f: HubFixture;
  let hookUrl: string;
  before(async () => {
    hookUrl = await hook.listen();
    f = await startHubFixture({
      CONNECT_CHECK: hookUrl,
      CONNECT_CHECK_TIMEOUT: '300ms',
      CONNECT_CHECK_BREAKER_FAILURES: '3',
      CONNECT_CHECK_BREAKER_COOLDOWN: '1s',
    });
  });
  after(async () => {
    await f?.stop();
    hook.close();
  });

  it('opens after 3 failures in a row (the hook is not called), tries it once after the cool-down, and closes on a success', async () => {
    hook.answer = (res) => res.writeHead(502).end();
    for (let i = 0; i < 3; i++) {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
      assert.equal(sse.status, 503);
    }
    assert.equal(hook.calls.length, 3);
    hook.answer = json(200, {});
    const fast = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(fast.status, 503, 'the breaker is open');
    assert.equal(fast.headers.get('retry-after'), '1');
    assert.equal(hook.calls.length, 3, 'the hook was not called');
    assert.equal(await f.metric('gw_connect_hook_calls_total', 'outcome="breaker_open"'), 1);

    // After the cool-down one connect tries it: a failure opens the breaker again at once.
    await sleep(1100);
    hook.answer = (res) => res.writeHead(502).end();
    assert.equal((await openSse(`${f.url}/_gw/v1/connection/sse`)).status, 503);
    assert.equal(hook.calls.length, 4, 'the trial call');
    assert.equal((await openSse(`${f.url}/_gw/v1/connection/sse`)).status, 503);
    assert.equal(hook.calls.length, 4, 'open again: no call');

    hook.answer = json(200, {});
    await sleep(1100);
    const again = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(again.status, 200, again.errorBody);
    again.close();
    assert.equal(hook.calls.length, 5);
    const closed = await openSse(`${f.url}/_gw/v1/connection/sse`);
    closed.close();
    assert.equal(closed.status, 200, 'closed: every connect calls it');
    assert.equal(hook.calls.length, 6);
  });

  it('answers 503 with Retry-After when nothing listens at the hook', async () => {
    // The test before closed the breaker again (its last call was answered).
    hook.close();
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(sse.status, 503, sse.errorBody);
    assert.ok(sse.headers.get('retry-after'));
    assert.ok((await f.metric('gw_connect_hook_calls_total', 'outcome="unreachable"')) >= 1);
  });
});

describe('CONNECT_CHECK_MAX_IN_FLIGHT', () => {
  const hook = new Hook();
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ CONNECT_CHECK: await hook.listen(), CONNECT_CHECK_MAX_IN_FLIGHT: '1' });
  });
  after(async () => {
    await f?.stop();
    hook.close();
  });

  it('refuses a connect 503 without a call while that many calls are under way', async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    hook.answer = (res) => void held.then(() => json(200, {})(res, undefined as never));
    const first = openSse(`${f.url}/_gw/v1/connection/sse`);
    await waitFor(() => hook.calls.length === 1, { what: 'the first call' });
    const second = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(second.status, 503, second.errorBody);
    assert.ok(second.headers.get('retry-after'));
    assert.equal(hook.calls.length, 1, 'no second call');
    release();
    const admitted = await first;
    assert.equal(admitted.status, 200, admitted.errorBody);
    admitted.close();
    assert.equal(await f.metric('gw_connect_hook_calls_total', 'outcome="overloaded"'), 1);
    const third = await openSse(`${f.url}/_gw/v1/connection/sse`);
    assert.equal(third.status, 200, 'a place again once the call is over');
    third.close();
  });
});

describe('CONNECT_CHECK unset', () => {
  it('admits connects as before, with no data in the welcome', async () => {
    const f = await startHubFixture();
    try {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs(greetings)}`);
      assert.equal(sse.status, 200);
      await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
      assert.equal(
        (sse.events('gw.connection.create')[0]!['data'] as Record<string, unknown>)['data'],
        undefined,
      );
      sse.close();
    } finally {
      await f.stop();
    }
  });
});
