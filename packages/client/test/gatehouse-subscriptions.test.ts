/**
 * Subscriptions through the real gateway: changed with the connection's token, kept and set again
 * on a new connection (after a cut, over any transport), and a change the gateway refuses rejects
 * with its message while the previous subscriptions stay in force.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { SubscriptionError } from '../src/index.ts';
import { connected, record, useGatewayFixture } from './gateway-fixture.ts';

const extractors = {
  'order.updated': { customer: { stable_field_index: 0, event: { json_pointer: '/data/customer' } } },
};

describe('Gatehouse subscriptions', () => {
  const gateway = useGatewayFixture({ EXTRACTORS: JSON.stringify(extractors) });

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: changes them on the connection, keeps them across a cut, and rejects a refused change`, async () => {
      const gw = gateway.client({ transports: [transport] });
      const got = record(gw);
      await connected(gw);
      const base = 10_000 * (1 + ['websocket', 'sse', 'longpolling'].indexOf(transport));
      await gw.subscribe([{ eventType: 'order.updated', oneOf: [{ customer: 'c-17' }] }]);
      await gateway.fx.publish(base + 1, 'order.updated', { customer: 'c-17' });
      await gateway.fx.publish(base + 2, 'order.updated', { customer: 'c-18' });
      await gateway.fx.publish(base + 3, 'order.created', { customer: 'c-17' });
      await waitFor(() => got.ns.length >= 1, { timeoutMs: 20_000 });

      gateway.fx.proxy.cut();
      await gateway.fx.publish(base + 4, 'order.updated', { customer: 'c-17' });
      await gateway.fx.publish(base + 5, 'order.updated', { customer: 'c-18' });
      gateway.fx.proxy.restore();
      await waitFor(() => got.ns.length >= 2, { timeoutMs: 20_000, what: 'the event missed during the cut' });
      await connected(gw);
      await gateway.fx.publish(base + 6, 'order.updated', { customer: 'c-17' });
      await gateway.fx.publish(base + 7, 'order.updated', { customer: 'c-18' });

      const refused = await gw
        .subscribe([{ eventType: 'order.updated', oneOf: [{ nosuchfield: 'x' }] }])
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(refused instanceof SubscriptionError, String(refused));
      assert.equal(refused.status, 400);
      assert.match(refused.message, /nosuchfield/);
      await gateway.fx.publish(base + 8, 'order.updated', { customer: 'c-17' });
      await gateway.fx.publish(base + 9, 'order.updated', { customer: 'c-18' });
      await waitFor(() => got.ns.length >= 4, { timeoutMs: 20_000 });
      await sleep(1500);
      assert.deepEqual(got.ns, [base + 1, base + 4, base + 6, base + 8]);
    });
  }

  it('sets them again on the next connection when the connection is cut while they change', async () => {
    const gw = gateway.client({ transports: ['sse'], backoff: { initialMs: 50, maxMs: 200 } });
    const got = record(gw);
    await connected(gw);
    gateway.fx.proxy.cut();
    const changed = gw.subscribe([{ eventType: 'order.cut' }]);
    await sleep(300);
    gateway.fx.proxy.restore();
    await changed;
    await gateway.fx.publish(90_001, 'order.cut');
    await waitFor(() => got.ns.includes(90_001), { timeoutMs: 20_000 });
  });
});

describe('Gatehouse subscription changes made at once', () => {
  const gateway = useGatewayFixture({ EXTRACTORS: JSON.stringify(extractors) });

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: two adds not awaited both hold, a refused one takes nothing away, remove stops a type, the getter says what holds`, async () => {
      const gw = gateway.client({ transports: [transport] });
      const got = record(gw);
      await connected(gw);
      const base = 50_000 + 1000 * ['websocket', 'sse', 'longpolling'].indexOf(transport);
      const adds = [
        gw.addSubscriptions({ eventType: 'order.updated', oneOf: [{ customer: 'c-17' }] }),
        gw.addSubscriptions({ eventType: 'order.created' }),
        gw.addSubscriptions({ eventType: 'order.updated', oneOf: [{ nosuchfield: 'x' }] }),
      ];
      const outcomes = await Promise.allSettled(adds);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'fulfilled', 'rejected'],
      );
      assert.equal(((outcomes[2] as PromiseRejectedResult).reason as SubscriptionError).status, 400);
      assert.deepEqual(gw.subscriptions, [
        { eventType: 'order.updated', oneOf: [{ customer: 'c-17' }] },
        { eventType: 'order.created' },
      ]);
      await gateway.fx.publish(base + 1, 'order.updated', { customer: 'c-17' });
      await gateway.fx.publish(base + 2, 'order.created', { customer: 'c-99' });
      await gateway.fx.publish(base + 3, 'order.updated', { customer: 'c-18' });
      await waitFor(() => got.ns.length >= 2, { timeoutMs: 20_000, what: 'both added types' });

      await gw.removeSubscriptions('order.created');
      assert.deepEqual(gw.subscriptions, [{ eventType: 'order.updated', oneOf: [{ customer: 'c-17' }] }]);
      await gateway.fx.publish(base + 4, 'order.created', { customer: 'c-99' });
      await gateway.fx.publish(base + 5, 'order.updated', { customer: 'c-17' });
      await waitFor(() => got.ns.length >= 3, { timeoutMs: 20_000 });
      await sleep(1000);
      assert.deepEqual(got.ns, [base + 1, base + 2, base + 5]);
      gw.close();
    });
  }
});
