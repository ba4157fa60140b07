/**
 * The gateway's connect hook (CONNECT_CHECK) as an app sees it, through the real gateway and a real
 * hook server: the `data` the hook gives reaches the app on every transport (`welcomeData`, the
 * `welcome` event), and the end the hook sets (`expireAt`) brings the client straight back, a
 * fixed JWT included (it has not expired), so the hook is asked again.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { Gatehouse } from '../src/index.ts';
import { connected, type GatewayFixture, jwt, record, startGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];

describe('Gatehouse and the connect hook', () => {
  let hook: Server;
  let calls = 0;
  let answer: (call: number) => unknown = () => ({});
  let fx: GatewayFixture;
  const clients: Gatehouse[] = [];
  before(async () => {
    hook = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(calls)));
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => hook.once('listening', r));
    fx = await startGatewayFixture({
      CONNECT_CHECK: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/connect`,
      LONGPOLL_TIMEOUT: '1s',
    });
  });
  after(async () => {
    for (const c of clients) c.close();
    await fx?.stop();
    hook.closeAllConnections();
    hook.close();
  });
  const client = (options: ConstructorParameters<typeof Gatehouse>[1]) => {
    const gw = new Gatehouse(fx.url, { backoff: { initialMs: 50, maxMs: 500 }, subscriptions, ...options });
    clients.push(gw);
    return gw;
  };

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: hands the app the hook's data, as welcomeData and a welcome event`, async () => {
      answer = () => ({ data: { plan: 'gold', transport } });
      const gw = client({ transports: [transport] });
      const welcomes: unknown[] = [];
      gw.on('welcome', (data) => welcomes.push(data));
      await connected(gw);
      await waitFor(() => welcomes.length === 1, { what: 'the welcome data' });
      assert.deepEqual(welcomes, [{ plan: 'gold', transport }]);
      assert.deepEqual(gw.welcomeData, { plan: 'gold', transport });
      gw.close();
    });
  }

  it("reconnects at once, with its fixed JWT, when the hook's expireAt ends the connection", async () => {
    const first = calls + 1;
    answer = (call) =>
      call === first
        ? { data: { round: 1 }, expireAt: Math.floor(Date.now() / 1000) + 1 }
        : { data: { round: 2 } };
    const gw = client({ transports: ['sse'], token: jwt({ sub: 'fixed' }) });
    const got = record(gw);
    await connected(gw);
    await waitFor(() => (gw.welcomeData as { round?: number } | undefined)?.round === 2, {
      timeoutMs: 10_000,
      what: 'the second connection',
    });
    assert.equal(gw.state.state, 'connected');
    assert.ok(
      got.states.some((s) => s.state === 'reconnecting' && s.code === 'session_expired'),
      JSON.stringify(got.states),
    );
    assert.equal(calls, first + 1, 'the hook was asked again');
    gw.close();
  });
});
