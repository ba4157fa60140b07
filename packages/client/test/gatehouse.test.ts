/**
 * The client against the real gateway (embedded, memory bus) through a proxy that cuts every TCP
 * connection: each transport delivers, and resumes after cuts while events keep being published,
 * every event once and in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import type { TransportName } from '../src/index.ts';
import { connected, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];

describe('Gatehouse against the gateway', () => {
  const gateway = useGatewayFixture();

  const client = (transports: TransportName[]) => gateway.client({ transports, subscriptions });

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: delivers, then resumes across cuts while events are published: every event once, in order`, async () => {
      const gw = client([transport]);
      const got = record(gw);
      await connected(gw);
      assert.equal(gw.transport, transport);
      // The subscriptions of a connection are in place once its welcome came.
      await gw.subscribe(subscriptions);
      const base = transport.length * 1000;
      for (const n of range(base + 1, base + 5)) await gateway.fx.publish(n);
      await waitFor(() => got.ns.length === 5, { timeoutMs: 20_000, what: 'first events' });
      const accepted = gateway.fx.proxy.acceptedAt.length;
      for (let n = base + 6; n <= base + 60; n++) {
        await gateway.fx.publish(n);
        if (n % 10 === 0) gateway.fx.proxy.cut();
        if (n % 10 === 3) gateway.fx.proxy.restore();
        await sleep(20);
      }
      gateway.fx.proxy.restore();
      await waitFor(() => got.ns.length >= 60, {
        timeoutMs: 30_000,
        what: `60 events (got ${got.ns.length})`,
      });
      await sleep(300);
      assert.deepEqual(got.ns, range(base + 1, base + 60));
      assert.equal(got.resyncs, 0);
      assert.ok(gateway.fx.proxy.acceptedAt.length > accepted, 'it reconnected');
      assert.ok(got.states.some((s) => s.state === 'reconnecting'));
      gw.close();
      assert.equal(gw.state.state, 'closed');
    });
  }
});
