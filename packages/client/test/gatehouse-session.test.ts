/**
 * What the gateway says about the session, through the real gateway: a blacklisted session ends
 * the client for good, and so does an operator's disconnect without reconnect (one with reconnect
 * brings it back at once); a resume the server cannot serve is a 'resync'; a JWT that expires is
 * refreshed through `token` and the client resumes; a refused JWT is retried only with a new one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import type { GatehouseOptions } from '../src/index.ts';
import { connected, jwt, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];
const transports = ['websocket', 'sse', 'longpolling'] as const;

describe('Gatehouse and the session', () => {
  const gateway = useGatewayFixture({ SUBSCRIPTION_CHECK: 'jwt_validation' });

  const client = (options: GatehouseOptions = {}) => gateway.client({ subscriptions, ...options });
  /** The connections API of the gateway's internal API: ends the session's connections. */
  const disconnect = async (body: { session: string; reason: string; reconnect: boolean }) => {
    const res = await fetch(`${gateway.fx.apiUrl}/v3/connections/disconnect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal((JSON.parse(text) as { disconnected: number }).disconnected, 1, text);
  };

  for (const transport of transports) {
    it(`${transport}: a blacklisted session ends the client for good`, async () => {
      const session = `kill-${transport}`;
      const gw = client({ transports: [transport], token: jwt({ jti: session, sid: session }) });
      const got = record(gw);
      await connected(gw);
      await gw.subscribe(subscriptions);
      const res = await fetch(`${gateway.fx.apiUrl}/v3/session-blacklist`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: session, validityInSeconds: 60 }),
      });
      assert.equal(res.status, 201);
      await waitFor(() => gw.state.state === 'closed', { timeoutMs: 20_000, what: 'closed' });
      assert.deepEqual(gw.state, { state: 'closed', code: 'session_killed', reason: 'session killed' });
      const connects = gateway.fx.proxy.acceptedAt.length;
      await sleep(1500);
      assert.equal(gateway.fx.proxy.acceptedAt.length, connects, 'no reconnect');
      assert.equal(got.states.filter((s) => s.state === 'reconnecting').length, 0);
    });

    it(`${transport}: an operator's disconnect without reconnect ends the client for good, with the reason`, async () => {
      const session = `operator-off-${transport}`;
      const gw = client({ transports: [transport], token: jwt({ jti: session, sid: session }) });
      const got = record(gw);
      await connected(gw);
      await gw.subscribe(subscriptions);
      await disconnect({ session, reason: 'account moved', reconnect: false });
      await waitFor(() => gw.state.state === 'closed', { timeoutMs: 20_000, what: 'closed' });
      assert.deepEqual(gw.state, {
        state: 'closed',
        code: 'disconnected_by_gateway',
        reason: 'disconnected by the gateway: account moved',
      });
      const connects = gateway.fx.proxy.acceptedAt.length;
      await sleep(1500);
      assert.equal(gateway.fx.proxy.acceptedAt.length, connects, 'no reconnect');
      assert.equal(got.states.filter((s) => s.state === 'reconnecting').length, 0);
    });

    it(`${transport}: an operator's disconnect with reconnect brings the client back at once, no event lost`, async () => {
      const session = `operator-move-${transport}`;
      const gw = client({ transports: [transport], token: jwt({ jti: session, sid: session }) });
      const got = record(gw);
      await connected(gw);
      await gw.subscribe(subscriptions);
      const base = 9000 + transports.indexOf(transport) * 100;
      await gateway.fx.publish(base + 1);
      await waitFor(() => got.ns.includes(base + 1), { timeoutMs: 20_000, what: 'the first event' });
      await disconnect({ session, reason: 'rebalancing', reconnect: true });
      await waitFor(() => got.states.some((s) => s.state === 'reconnecting'), {
        timeoutMs: 20_000,
        what: 'the client reconnecting',
      });
      const reconnecting = got.states.find((s) => s.state === 'reconnecting') as {
        code: string;
        reason: string;
        delayMs: number;
      };
      assert.equal(reconnecting.reason, 'disconnected by the gateway: rebalancing');
      assert.equal(reconnecting.code, 'disconnected_by_gateway');
      assert.equal(reconnecting.delayMs, 0, 'at once, not after a backoff');
      await gateway.fx.publish(base + 2);
      await waitFor(() => got.ns.includes(base + 2), { timeoutMs: 20_000, what: 'an event after the move' });
      assert.deepEqual(got.ns, [base + 1, base + 2]);
      assert.notEqual(gw.state.state, 'closed');
    });

    it(`${transport}: resumes from a position the server cannot serve with a 'resync', once, saying why`, async () => {
      const gw = client({ transports: [transport], token: jwt(), lastEventId: 'no-such-position' });
      const got = record(gw);
      await waitFor(() => got.resyncs === 1, { timeoutMs: 20_000, what: 'resync' });
      assert.deepEqual(got.resyncReasons, ['unknown-position']);
      await gw.subscribe(subscriptions);
      const n = 7001 + transports.indexOf(transport);
      await gateway.fx.publish(n);
      await waitFor(() => got.ns.includes(n), { timeoutMs: 20_000, what: 'a live event after the resync' });
      assert.equal(got.resyncs, 1);
    });

    it(`${transport}: a JWT that expires is asked for again through token, and the client resumes`, async (t) => {
      let calls = 0;
      const gw = client({
        transports: [transport],
        token: () => {
          calls++;
          return jwt({ jti: `expiring-${transport}-${calls}` }, 2);
        },
      });
      // It renews its 2 s tokens for as long as it is open: each renewal a request of its own, which
      // the next tests would count as a connect of theirs.
      t.after(() => gw.close());
      const got = record(gw);
      await connected(gw);
      const base = 8000 + transports.indexOf(transport) * 100;
      for (let n = base + 1; n <= base + 40; n++) {
        await gateway.fx.publish(n);
        await sleep(120);
      }
      await waitFor(() => got.ns.length >= 40, {
        timeoutMs: 30_000,
        what: `40 events (got ${got.ns.length})`,
      });
      await sleep(300);
      assert.deepEqual(got.ns, range(base + 1, base + 40));
      assert.ok(calls >= 3, `the token function was asked ${calls} times over 5 s of 2 s tokens`);
      assert.notEqual(gw.state.state, 'closed');
    });
  }

  it('retries a refused JWT only with a new one from token, once', async () => {
    let calls = 0;
    const gw = client({
      transports: ['sse'],
      token: () => (++calls === 1 ? 'not-a-jwt' : jwt()),
    });
    await connected(gw);
    assert.equal(calls, 2);
    let refusedCalls = 0;
    const refusedAgain = client({
      transports: ['sse'],
      token: () => `not-a-jwt-${++refusedCalls}`,
    });
    await waitFor(() => refusedAgain.state.state === 'closed', { timeoutMs: 20_000, what: 'closed' });
    await sleep(500);
    assert.equal(refusedCalls, 2, 'a new token once, not one per refusal for ever');
    assert.match((refusedAgain.state as { reason: string }).reason, /400 invalid/);
    const denied = client({ transports: ['websocket'] });
    await waitFor(() => denied.state.state === 'closed', { timeoutMs: 20_000, what: 'closed' });
    assert.match((denied.state as { reason: string }).reason, /403/);
  });
});

describe('Gatehouse and a long-poll connection the gateway forgot', () => {
  // Forgotten 2 s after its last poll (the least LONGPOLL_TIMEOUT 1 s allows).
  const gateway = useGatewayFixture({ SUBSCRIPTION_CHECK: 'jwt_validation', LONGPOLL_SESSION_TTL: '2s' });

  it('goes on from its position with a fixed JWT when a poll reaches the gateway after the connection was forgotten', async () => {
    const gw = gateway.client({ subscriptions, transports: ['longpolling'], token: jwt({ jti: 'held-up' }) });
    const got = record(gw);
    await connected(gw);
    await gateway.fx.publish(9001);
    await waitFor(() => got.ns.includes(9001), { timeoutMs: 20_000, what: 'the first event' });
    // The next poll waits 4 s on its way in (a full accept queue in front of a starved replica):
    // the gateway forgets the connection meanwhile, and answers the late poll as a new connection.
    gateway.fx.proxy.delayOnce(/^GET \/_gw\/v1\/connection\/longpolling/, 4_000);
    await sleep(300);
    await gateway.fx.publish(9002);
    await gateway.fx.publish(9003);
    await sleep(4_500);
    await gateway.fx.publish(9004);
    await waitFor(() => got.ns.includes(9004) || gw.state.state === 'closed', {
      timeoutMs: 20_000,
      what: 'the event after the late poll',
    });
    assert.notEqual(gw.state.state, 'closed', JSON.stringify(gw.state));
    assert.deepEqual(got.ns, [9001, 9002, 9003, 9004]);
    // Back at once, told as the gateway's doing, not as an expiry.
    const back = got.states.filter((s) => s.state === 'reconnecting') as Array<{
      code: string;
      delayMs: number;
    }>;
    assert.deepEqual(
      back.map((s) => [s.code, s.delayMs < 1000]),
      [['ended', true]],
    );
  });
});

describe('Gatehouse closing a long-poll connection', () => {
  const gateway = useGatewayFixture({});
  const longPolls = async () => {
    const res = await fetch(`${gateway.fx.apiUrl}/v3/connections?transport=longpolling`);
    return ((await res.json()) as { connections: unknown[] }).connections.length;
  };

  it('tells the gateway: close() leaves no connection listed, well before LONGPOLL_SESSION_TTL', async () => {
    const gw = gateway.client({ subscriptions, transports: ['longpolling'] });
    await connected(gw);
    await waitFor(async () => (await longPolls()) === 1, {
      timeoutMs: 10_000,
      what: 'the connection listed',
    });
    gw.close();
    await waitFor(async () => (await longPolls()) === 0, {
      timeoutMs: 10_000,
      what: 'no long-poll connection listed after close() (the TTL is 60 s)',
    });
  });
});
