/**
 * The client against the real gateway (embedded, memory bus) through a proxy that cuts every TCP
 * connection: each transport delivers, and resumes after cuts while events keep being published,
 * every event once and in order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { Gatehouse, type TransportName } from '../src/index.ts';
import { connected, type GatewayFixture, range, record, startGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];

describe('Gatehouse against the gateway', () => {
  let fx: GatewayFixture;
  const clients: Gatehouse[] = [];
  before(async () => {
    fx = await startGatewayFixture({ LONGPOLL_TIMEOUT: '1s' });
  });
  after(async () => {
    for (const c of clients) c.close();
    await fx?.stop();
  });

  const client = (transports: TransportName[]) => {
    const gw = new Gatehouse(fx.url, { transports, subscriptions, backoff: { initialMs: 50, maxMs: 500 } });
    clients.push(gw);
    return gw;
  };

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: delivers, then resumes across cuts while events are published: every event once, in order`, async () => {
      const gw = client([transport]);
      const got = record(gw);
      await connected(gw);
      assert.equal(gw.transport, transport);
      // The subscriptions of a connection are in place once its welcome came.
      await gw.subscribe(subscriptions);
      const base = transport.length * 1000;
      for (const n of range(base + 1, base + 5)) await fx.publish(n);
      await waitFor(() => got.ns.length === 5, { timeoutMs: 20_000, what: 'first events' });
      const accepted = fx.proxy.acceptedAt.length;
      for (let n = base + 6; n <= base + 60; n++) {
        await fx.publish(n);
        if (n % 10 === 0) fx.proxy.cut();
        if (n % 10 === 3) fx.proxy.restore();
        await sleep(20);
      }
      fx.proxy.restore();
      await waitFor(() => got.ns.length >= 60, {
        timeoutMs: 30_000,
        what: `60 events (got ${got.ns.length})`,
      });
      await sleep(300);
      assert.deepEqual(got.ns, range(base + 1, base + 60));
      assert.equal(got.resyncs, 0);
      assert.ok(fx.proxy.acceptedAt.length > accepted, 'it reconnected');
      assert.ok(got.states.some((s) => s.state === 'reconnecting'));
      gw.close();
      assert.equal(gw.state.state, 'closed');
    });
  }
});
