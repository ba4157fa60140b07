/**
 * LATEST_MAX_KEYS against a publisher inventing ids, from outside on the memory bus and store: the
 * bound counts the keys the store still holds, not every key the replica ever wrote, so once the
 * invented ids' keys have expired (LATEST_TTL after their last write) a new order's latest value is
 * kept again and a client subscribing with `latest=true` gets it. Before, a replica that had once
 * written LATEST_MAX_KEYS keys kept no new key until it restarted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { openSse, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

describe('latest values: the key bound frees expired keys', () => {
  const store = new MemoryStore();
  let fx: HubFixture;
  let n = 0;

  before(async () => {
    fx = await startHubFixture(
      {
        LATEST_EVENT_TYPES: 'order',
        LATEST_MAX_KEYS: '3',
        LATEST_TTL: '1s',
        EXTRACTORS: JSON.stringify({
          order: { id: { stable_field_index: 0, event: { json_pointer: '/data/id' } } },
        }),
      },
      { bus: new MemoryBus(), store },
    );
  });
  after(async () => {
    await fx?.stop();
    await store.close();
  });

  /** Publishes an order event; answers whether a `latest=true` connect for that id gets it. */
  async function keptAndGiven(id: string): Promise<boolean> {
    const eventId = `order-${n++}`;
    await fx.publish('order', { id }, { id: eventId });
    const query = new URLSearchParams({
      subscriptions: JSON.stringify([{ eventType: 'order', oneOf: [{ id }] }]),
      latest: 'true',
    });
    const sse = await openSse(`${fx.url}/_gw/v1/connection/sse?${query}`);
    try {
      assert.equal(sse.status, 200, sse.errorBody);
      await waitFor(() => sse.events().some((e) => e['type'] === 'gw.subscriptions_set'));
      return sse.events().some((e) => e['id'] === eventId);
    } finally {
      sse.close();
    }
  }

  it('keeps a new key once the keys filling the bound have expired', async () => {
    // The type's key and two invented ids fill the bound of 3.
    assert.equal(await keptAndGiven('invented-1'), true);
    assert.equal(await keptAndGiven('invented-2'), true);
    await waitFor(() => keptAndGiven('real-order'), {
      what: "a new order's latest value once the invented ids' keys expired",
      timeoutMs: 10_000,
    });
    assert.equal((await fetch(`${fx.url}/_gw/health`)).status, 200);
  });
});
