/**
 * The connection rate limit and reconnects: a connect that carries a valid connection token or a
 * resume position the stream could hold counts against MAX_RECONNECTS_PER_MINUTE, not as a new
 * connection; a forged token, a malformed position or one beyond the stream's newest counts as new.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { signJwt } from '@gatehouse/auth';
import { openSse, openWs, waitFor } from '@gatehouse/testkit';
import { startHubFixture, subs } from './hub-fixture.ts';

const wanted = subs([{ eventType: 'greeting' }]);

describe('rate limit for reconnects', () => {
  it('admits reconnects beyond MAX_CONNECTIONS_PER_MINUTE, and only real ones', async () => {
    const f = await startHubFixture({ MAX_CONNECTIONS_PER_MINUTE: '2', MAX_RECONNECTS_PER_MINUTE: '4' });
    try {
      const sse = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
      const position = await f.publish('greeting', { n: 1 });
      await f.publish('greeting', { n: 2 });
      const first = await openSse(sse);
      const second = await openSse(sse);
      assert.deepEqual([first.status, second.status], [200, 200]);
      await waitFor(() => first.events('gw.connection.create').length === 1, { what: 'the welcome' });
      const token = (first.events('gw.connection.create')[0]!['data'] as { connection_token: string })
        .connection_token;
      const fresh = await openSse(sse);
      assert.equal(fresh.status, 429, 'the new-connection budget is spent');

      // Positions nobody was ever given: malformed, past the stream's end, before its origin. ('0',
      // the origin, is given to every connection made while the stream was empty: a reconnect.)
      for (const bogus of ['not-a-position', '999999', '-1']) {
        const forged = await openSse(sse, { 'last-event-id': bogus });
        assert.equal(forged.status, 429, `a position the stream could not hold (${bogus}) counts as new`);
      }
      const alteredToken = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      assert.equal((await openSse(`${sse}&connectionToken=${alteredToken}`)).status, 429, 'a forged token');

      const resumed = await openSse(sse, { 'last-event-id': position });
      assert.equal(resumed.status, 200, 'a resume position the stream holds');
      assert.equal(
        (await openSse(`${sse}&connectionToken=${token}`)).status,
        200,
        'a valid connection token',
      );
      const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${wanted}&lastEventId=${position}`);
      await waitFor(() => ws.events.length >= 2, { what: 'the WebSocket reconnect' });
      assert.equal((await openSse(sse, { 'last-event-id': position })).status, 200, 'a fourth reconnect');
      const beyond = await openSse(sse, { 'last-event-id': position });
      assert.equal(beyond.status, 429, 'beyond both budgets');
      assert.equal(await f.metric('gw_connects_admitted_total', 'kind="reconnect"'), 4);
      assert.equal(await f.metric('gw_connects_admitted_total', 'kind="new"'), 2);
      ws.ws.close();
      for (const c of [first, second, resumed]) c.close();
    } finally {
      await f.stop();
    }
  });

  it('refuses past the limit before the costlier checks: no SUBSCRIPTION_CHECK call for a refused connect', async () => {
    let checks = 0;
    const checker = createServer((req, res) => {
      checks++;
      req.resume();
      res.writeHead(200).end();
    });
    await new Promise<void>((r) => checker.listen(0, '127.0.0.1', r));
    const f = await startHubFixture({
      MAX_CONNECTIONS_PER_MINUTE: '1',
      SUBSCRIPTION_CHECK: `http://127.0.0.1:${(checker.address() as AddressInfo).port}/check`,
    });
    try {
      const sse = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
      const first = await openSse(sse);
      assert.equal(first.status, 200);
      assert.equal(checks, 1);
      for (let i = 0; i < 5; i++) assert.equal((await openSse(sse)).status, 429);
      assert.equal(checks, 1, 'refused connects cost no external check');
      first.close();
    } finally {
      await f.stop();
      checker.close();
    }
  });

  it('gives the budget back when a connect is refused after it (a JWT signed with another key)', async () => {
    const f = await startHubFixture({ MAX_CONNECTIONS_PER_MINUTE: '1' });
    try {
      const sse = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
      const forged = await signJwt({ username: 'mallory' }, { alg: 'HS256', key: 'not-the-hub-secret' });
      // Refused after the rate limit (RIG answers a JWT it cannot verify with 400).
      for (let i = 0; i < 5; i++) assert.equal((await openSse(`${sse}&jwt=${forged}`)).status, 400);
      const admitted = await openSse(sse);
      assert.equal(admitted.status, 200, 'the refused ones did not spend it');
      admitted.close();
    } finally {
      await f.stop();
    }
  });
});
