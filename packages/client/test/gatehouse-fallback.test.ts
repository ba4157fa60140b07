/**
 * Fallback through a proxy that blocks what some corporate proxies block: WebSocket upgrades, then
 * SSE too. The client falls back to the next transport with nothing lost across the switch,
 * remembers the one that worked, and goes back to the preferred one later.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import type { GatehouseOptions } from '../src/index.ts';
import { connected, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];
const wsUpgrade = /upgrade: websocket/i;
const sseConnect = /GET \/_gw\/v1\/connection\/sse/;

describe('Gatehouse fallback', () => {
  const gateway = useGatewayFixture();

  const client = (options: GatehouseOptions = {}) => gateway.client({ subscriptions, ...options });

  it('falls back from websocket to sse to longpolling with nothing lost, and remembers the one that works', async () => {
    gateway.fx.proxy.blocked.clear();
    const gw = client();
    const got = record(gw);
    await connected(gw);
    assert.equal(gw.transport, 'websocket', 'nothing blocked: the preferred transport');
    for (const n of range(1, 5)) await gateway.fx.publish(n);
    await waitFor(() => got.ns.length === 5, { what: 'events over websocket' });

    // Restored at once: only the upgrade stays blocked. (A connect made during a cut fails like a
    // transport that cannot open, and the client would rightly go on past SSE to long-polling.)
    gateway.fx.proxy.blocked.add(wsUpgrade);
    gateway.fx.proxy.cut();
    gateway.fx.proxy.restore();
    for (const n of range(6, 10)) await gateway.fx.publish(n);
    await waitFor(() => gw.transport === 'sse', { timeoutMs: 20_000, what: 'sse' });
    for (const n of range(11, 15)) await gateway.fx.publish(n);
    await waitFor(() => got.ns.length === 15, { timeoutMs: 20_000, what: 'events over sse' });

    gateway.fx.proxy.blocked.add(sseConnect);
    gateway.fx.proxy.cut();
    for (const n of range(16, 20)) await gateway.fx.publish(n);
    gateway.fx.proxy.restore();
    await waitFor(() => gw.transport === 'longpolling', { timeoutMs: 20_000, what: 'longpolling' });
    for (const n of range(21, 25)) await gateway.fx.publish(n);
    await waitFor(() => got.ns.length === 25, { timeoutMs: 20_000, what: 'events over longpolling' });

    // Remembered: a cut now brings it back on long-polling without knocking at the blocked ones.
    const wsTries = gateway.fx.proxy.blockedCount.get(wsUpgrade);
    const sseTries = gateway.fx.proxy.blockedCount.get(sseConnect);
    // (Restored before the client reconnects: a connect that fails during a cut counts as one that
    // cannot open, and the client would rightly try the others.)
    gateway.fx.proxy.cut();
    gateway.fx.proxy.restore();
    for (const n of range(26, 30)) await gateway.fx.publish(n);
    await waitFor(() => got.ns.length === 30, { timeoutMs: 20_000, what: 'events after the cut' });
    await sleep(300);
    assert.equal(gw.transport, 'longpolling');
    assert.equal(gateway.fx.proxy.blockedCount.get(wsUpgrade), wsTries, 'no new websocket attempt');
    assert.equal(gateway.fx.proxy.blockedCount.get(sseConnect), sseTries, 'no new sse attempt');
    assert.deepEqual(got.ns, range(1, 30));
    assert.equal(got.resyncs, 0);
  });

  it('goes back to the preferred transport later, resuming where the fallback was', async () => {
    gateway.fx.proxy.blocked.clear();
    gateway.fx.proxy.blocked.add(wsUpgrade);
    const gw = client({ retryPreferredAfterMs: 1500 });
    const got = record(gw);
    await connected(gw);
    assert.equal(gw.transport, 'sse');
    await gw.subscribe(subscriptions);
    gateway.fx.proxy.blocked.clear();
    for (let n = 101; n <= 130; n++) {
      await gateway.fx.publish(n);
      await sleep(100);
    }
    await waitFor(() => got.ns.length === 30, { timeoutMs: 20_000, what: '30 events' });
    assert.equal(gw.transport, 'websocket');
    assert.deepEqual(got.ns, range(101, 130));
  });
});
