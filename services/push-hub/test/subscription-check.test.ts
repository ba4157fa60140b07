/**
 * SUBSCRIPTION_CHECK through the public surface, as RIG applies it: only when the client names
 * subscriptions. A connect without any (SSE, WebSocket, with or without a JWT) is let in; a later
 * PUT is checked (403, or 204 with a valid Bearer JWT under jwt_validation); JWT-inferred
 * subscriptions filter as before. An external check gets the subscriptions as the client gave them.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LongPollClient, openSse, openWs, type SseConnection, sleep, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

async function put(url: string, token: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/_gw/v1/connection/sse/${token}/subscriptions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

async function welcomed(sse: SseConnection): Promise<string> {
  assert.equal(sse.status, 200, sse.errorBody);
  await waitFor(() => sse.frames.length >= 2, { what: 'the welcome events' });
  return (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string }).connection_token;
}

/** The WebSocket got its welcome events and is still open (a refusal closes it with 4403). */
async function wsAdmitted(url: string): Promise<void> {
  const c = openWs(url);
  const closed = c.closed.then((how) => `closed ${how.code} ${how.reason}`);
  const outcome = await Promise.race([
    waitFor(() => c.events.length >= 2, { what: 'the WebSocket welcome events' }).then(() => 'open'),
    closed,
  ]);
  assert.equal(outcome, 'open');
  assert.deepEqual(
    c.events.map((e) => e['type']),
    ['gw.connection.create', 'gw.subscriptions_set'],
  );
  c.ws.close();
}

describe('SUBSCRIPTION_CHECK=jwt_validation', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ SUBSCRIPTION_CHECK: 'jwt_validation' });
  });
  after(() => f.stop());

  it('lets in a connect without subscriptions, with or without a JWT', async () => {
    const jwt = f.jwt({ username: 'x' });
    for (const [query, headers] of [
      ['', {}],
      [`?jwt=${jwt}`, {}],
      ['', { authorization: `Bearer ${jwt}` }],
    ] as const) {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse${query}`, headers);
      await welcomed(sse);
      sse.close();
    }
    await wsAdmitted(`${f.wsUrl}/_gw/v1/connection/ws`);
    await wsAdmitted(`${f.wsUrl}/_gw/v1/connection/ws?jwt=${jwt}`);
    assert.equal((await new LongPollClient(f.url).get()).status, 200);
  });

  it('checks a connect that names subscriptions', async () => {
    const query = `subscriptions=${subs([{ eventType: 'greeting' }])}`;
    const denied = await openSse(`${f.url}/_gw/v1/connection/sse?${query}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.errorBody, 'Subscription denied.');
    const ws = await openWs(`${f.wsUrl}/_gw/v1/connection/ws?${query}`).closed;
    assert.equal(ws.code, 4403);
    // Unlike RIG, a long-polling connect is checked too (README, Subscription check).
    assert.equal((await new LongPollClient(f.url).get(`?${query}`)).status, 403);
    const ok = await openSse(`${f.url}/_gw/v1/connection/sse?${query}&jwt=${f.jwt({ username: 'x' })}`);
    await welcomed(ok);
    ok.close();
  });

  it('checks the PUT: 403 without a token, 204 with a valid Bearer JWT', async () => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    const token = await welcomed(sse);
    const body = JSON.stringify({ subscriptions: [{ eventType: 'news' }] });
    assert.deepEqual(await put(f.url, token, body), { status: 403, text: 'Subscription denied.' });
    const forged = `${f.jwt({ username: 'x' }).slice(0, -4)}AAAA`;
    assert.equal((await put(f.url, token, body, { authorization: `Bearer ${forged}` })).status, 400);
    const jwt = f.jwt({ username: 'x' });
    const ok = await put(f.url, token, body, { authorization: `Bearer ${jwt}` });
    assert.equal(ok.status, 204, ok.text);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 2);
    await f.publish('news', { n: 1 });
    await waitFor(() => sse.events('news').length === 1);
    sse.close();
  });

  it('filters with the subscriptions inferred from the JWT, as before', async () => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'alice' })}`);
    await welcomed(sse);
    assert.deepEqual(sse.events('gw.subscriptions_set')[0]!['data'], [
      { eventType: 'greeting', oneOf: [{ name: 'alice' }] },
    ]);
    await f.publish('greeting', { name: 'bob' });
    await f.publish('greeting', { name: 'alice' });
    await waitFor(() => sse.events('greeting').length === 1);
    await sleep(100);
    assert.deepEqual(
      sse.events('greeting').map((e) => e['data']),
      [{ name: 'alice' }],
    );
    sse.close();
  });
});

describe('SUBSCRIPTION_CHECK=<url>', () => {
  let f: HubFixture;
  let checker: Server;
  const seen: Array<{ auth: string | undefined; body: string }> = [];
  before(async () => {
    // Allows what does not mention "secret", denies the rest.
    checker = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body });
        res.writeHead(body.includes('secret') ? 403 : 200).end();
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => checker.once('listening', r));
    f = await startHubFixture({
      SUBSCRIPTION_CHECK: `http://127.0.0.1:${(checker.address() as AddressInfo).port}/check`,
    });
  });
  after(async () => {
    await f.stop();
    checker.close();
  });

  it('is not asked about a connect without subscriptions', async () => {
    seen.length = 0;
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'x' })}`);
    await welcomed(sse);
    sse.close();
    await wsAdmitted(`${f.wsUrl}/_gw/v1/connection/ws`);
    assert.deepEqual(seen, []);
  });

  it('gets the connect subscriptions as the client gave them, and the token', async () => {
    seen.length = 0;
    const jwt = f.jwt({ username: 'x' });
    const given = '[{"eventType":"open"},{"event_type":"greeting","one_of":[{"name":"x"}]}]';
    const ok = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${jwt}&subscriptions=${encodeURIComponent(given)}`,
    );
    await welcomed(ok);
    ok.close();
    assert.deepEqual(seen, [{ auth: `Bearer ${jwt}`, body: `{"subscriptions":${given}}` }]);
    const denied = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'secret' }])}`,
    );
    assert.equal(denied.status, 403);
  });

  it('gets the PUT body verbatim and decides it: 403 or 204', async () => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    const token = await welcomed(sse);
    seen.length = 0;
    const deny = '{"subscriptions": [{"eventType": "secret"}]}';
    assert.deepEqual(await put(f.url, token, deny), { status: 403, text: 'Subscription denied.' });
    const jwt = f.jwt({ username: 'x' });
    const allow = '{ "subscriptions": [ {"event_type": "news"} ] }';
    assert.equal((await put(f.url, token, allow, { authorization: `Bearer ${jwt}` })).status, 204);
    assert.deepEqual(seen, [
      { auth: undefined, body: deny },
      { auth: `Bearer ${jwt}`, body: allow },
    ]);
    sse.close();
  });
});
