/**
 * Typed events: `Gatehouse<{ type: Data }>` hands listeners a union TypeScript narrows by `type`,
 * a misspelt attribute does not compile (the `@ts-expect-error` lines below fail the typecheck the
 * day they compile), and extension attributes are read with `extensionOf`. Against the real gateway.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { extensionOf, Gatehouse } from '../src/index.ts';
import { type GatewayFixture, startGatewayFixture } from './gateway-fixture.ts';

interface Order {
  n: number;
  customer: string;
}
type ShopEvents = { 'order.updated': Order; 'order.created': { n: number } };

describe('typed events', () => {
  let fx: GatewayFixture;
  let gw: Gatehouse<ShopEvents> | undefined;
  before(async () => {
    fx = await startGatewayFixture();
  });
  after(async () => {
    gw?.close();
    await fx.stop();
  });

  it('narrow by type, keep each data type, and read extensions by name', async () => {
    gw = new Gatehouse<ShopEvents>(fx.url, {
      transports: ['sse'],
      subscriptions: [{ eventType: 'order.updated' }, { eventType: 'order.created' }],
    });
    const customers: string[] = [];
    const created: number[] = [];
    const tenants: unknown[] = [];
    gw.on('event', (event) => {
      tenants.push(extensionOf(event, 'tenant'));
      if (event.type === 'order.updated') customers.push(event.data!.customer);
      else {
        created.push(event.data!.n);
        // @ts-expect-error an order.created event's data has no customer
        void event.data!.customer;
      }
      // @ts-expect-error a misspelt attribute does not compile
      void event.tpye;
    });
    await waitFor(() => gw!.state.state === 'connected', { timeoutMs: 20_000 });
    const post = async (type: string, data: unknown, extra: Record<string, string> = {}) => {
      const res = await fetch(`${fx.edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          specversion: '1.0',
          id: `t-${Math.random()}`,
          type,
          source: 'typed',
          data,
          ...extra,
        }),
      });
      assert.equal(res.status, 202, await res.text());
    };
    await post('order.updated', { n: 1, customer: 'c-17' }, { tenant: 'acme' });
    await post('order.created', { n: 2 });
    await waitFor(() => tenants.length === 2, { timeoutMs: 20_000, what: 'both events' });
    assert.deepEqual(customers, ['c-17']);
    assert.deepEqual(created, [2]);
    assert.deepEqual(tenants, ['acme', undefined]);
  });
});
