/**
 * History, rewind, since and latest value through the real gateway with @gatehouse/client:
 * `history()` pages a place newest first to its oldest event; `rewind` on each transport gives the
 * last N events, then live ones; `since` starts right after a history page's position; `latest`
 * gives the newest kept event of each place at once (long polling too); a refused history rejects
 * with the status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { SubscriptionError } from '../src/index.ts';
import { connected, jwt, range, record, useGatewayFixture } from './gateway-fixture.ts';

describe('Gatehouse history, rewind and latest value', () => {
  const gateway = useGatewayFixture({
    EXTRACTORS: JSON.stringify({
      'h.room': { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
    }),
    LATEST_EVENT_TYPES: 'h.room',
    SUBSCRIPTION_CHECK: 'jwt_validation',
  });

  it('pages a place with history(), newest first, to its oldest event', async () => {
    for (const n of range(1, 9)) await gateway.fx.publish(n, 'h.room', { room: n % 3 });
    const gw = gateway.client({ token: jwt() });
    const seen: number[] = [];
    let before: string | undefined;
    do {
      const page = await gw.history('h.room', { where: { room: 1 }, limit: 2, ...(before && { before }) });
      seen.push(...page.events.map((e) => (e.event.data as { n: number }).n));
      before = page.next;
    } while (before !== undefined);
    assert.deepEqual(seen, [7, 4, 1]);
    await assert.rejects(
      gateway.client({}).history('h.room'),
      (err) => err instanceof SubscriptionError && err.status === 403,
    );
  });

  for (const [i, transport] of (['websocket', 'sse', 'longpolling'] as const).entries()) {
    it(`${transport}: rewind gives the last events, then live ones`, async () => {
      const type = `h.rewind.${transport}`;
      const base = 100 * (i + 1);
      for (const n of range(base, base + 5)) await gateway.fx.publish(n, type);
      const gw = gateway.client({
        transports: [transport],
        token: jwt(),
        subscriptions: [{ eventType: type }],
        rewind: 3,
      });
      const got = record(gw);
      await connected(gw);
      await gateway.fx.publish(base + 6, type);
      await waitFor(() => got.ns.at(-1) === base + 6);
      assert.deepEqual(got.ns, range(base + 3, base + 6));
    });
  }

  it('starts right after a position with since, and gives the latest value with latest', async () => {
    const page = await gateway.client({ token: jwt() }).history('h.room', { where: { room: 2 } });
    const [newest, older] = page.events;
    const since = gateway.client({
      token: jwt(),
      subscriptions: [{ eventType: 'h.room', oneOf: [{ room: 2 }] }],
      since: older!.position,
    });
    const fromSince = record(since);
    await waitFor(() => fromSince.ns.length === 1);
    assert.deepEqual(fromSince.ns, [(newest!.event.data as { n: number }).n]);

    const latest = gateway.client({
      token: jwt(),
      subscriptions: [{ eventType: 'h.room', oneOf: [{ room: 0 }, { room: 1 }] }],
      latest: true,
    });
    const got = record(latest);
    await waitFor(() => got.ns.length === 2);
    assert.deepEqual(got.ns, [7, 9]);
  });

  it('longpolling: gives the latest values with latest, once, then live ones', async () => {
    const gw = gateway.client({
      transports: ['longpolling'],
      token: jwt(),
      subscriptions: [{ eventType: 'h.room', oneOf: [{ room: 0 }, { room: 1 }] }],
      latest: true,
    });
    const got = record(gw);
    await connected(gw);
    await waitFor(() => got.ns.length === 2, { what: 'the latest values' });
    await gateway.fx.publish(10, 'h.room', { room: 1 });
    await waitFor(() => got.ns.at(-1) === 10, { what: 'the live event' });
    assert.deepEqual(got.ns, [7, 9, 10]);
  });
});
