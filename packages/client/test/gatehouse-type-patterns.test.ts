/**
 * Type patterns through the real gateway with @gatehouse/client, on each transport: a client
 * subscribed to `shop.orders.*` and `shop.audit.>` gets exactly the events the gateway matches to
 * them, changes to a pattern with `subscribe` and removes one by its pattern, and `matchesType`
 * tells in the handler which pattern an event came through.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { matchesType } from '../src/index.ts';
import { connected, record, useGatewayFixture } from './gateway-fixture.ts';

describe('Gatehouse type patterns', () => {
  const gateway = useGatewayFixture();

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: receives by pattern, changes and removes patterns`, async () => {
      const p = `${transport}.shop`;
      const gw = gateway.client({
        transports: [transport],
        subscriptions: [{ eventType: `${p}.orders.*` }, { eventType: `${p}.marker` }],
      });
      const got = record(gw);
      await connected(gw);
      const base = 1000 * (1 + ['websocket', 'sse', 'longpolling'].indexOf(transport));
      await gateway.fx.publish(base + 1, `${p}.orders.created`);
      await gateway.fx.publish(base + 2, `${p}.orders.eu.created`);
      await gateway.fx.publish(base + 3, `${p}.audit.login`);
      await gateway.fx.publish(base + 4, `${p}.marker`);
      await waitFor(() => got.ns.includes(base + 4), { timeoutMs: 20_000, what: 'the first marker' });
      assert.deepEqual(got.ns, [base + 1, base + 4]);

      await gw.addSubscriptions({ eventType: `${p}.audit.>` });
      await gw.removeSubscriptions(`${p}.orders.*`);
      await gateway.fx.publish(base + 5, `${p}.orders.created`);
      await gateway.fx.publish(base + 6, `${p}.audit.login`);
      await gateway.fx.publish(base + 7, `${p}.audit.eu.logout`);
      await gateway.fx.publish(base + 8, `${p}.marker`);
      await waitFor(() => got.ns.includes(base + 8), { timeoutMs: 20_000, what: 'the second marker' });
      assert.deepEqual(got.ns.slice(2), [base + 6, base + 7, base + 8]);
      assert.deepEqual(
        got.events.filter((e) => matchesType(`${p}.audit.>`, e.type)).map((e) => e.type),
        [`${p}.audit.login`, `${p}.audit.eu.logout`],
      );
      gw.close();
    });
  }

  it('matchesType reads patterns as the gateway does', () => {
    assert.equal(matchesType('a.*', 'a.b'), true);
    assert.equal(matchesType('a.*', 'a.b.c'), false);
    assert.equal(matchesType('a.*', 'a'), false);
    assert.equal(matchesType('a.>', 'a.b.c'), true);
    assert.equal(matchesType('a.>', 'a'), false);
    assert.equal(matchesType('*.b.>', 'x.b.y'), true);
    assert.equal(matchesType('a.b', 'a.b'), true);
    assert.equal(matchesType('a.b', 'a.c'), false);
  });
});
