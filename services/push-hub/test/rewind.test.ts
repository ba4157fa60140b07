/**
 * A connect with `rewind=N` or `since=<position>` on every transport, against a hub on the memory
 * bus whose event buffer holds 8 events: events are published before, during and after the
 * connect, and the client gets a contiguous run of them ending at the newest (no gap), each once (no
 * duplicate), starting no later than the N-th newest before the connect: from the ring, and from
 * the broker when the buffer holds fewer than N of its events (long polling too: its cursor names
 * the message the broker's tail read before the oldest of them). `since` starts right after its
 * position; one the stream cannot have is `gw.resync_required`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';
import { idsOf, openClient, type StartingClient, type Transport, transports } from './starting-clients.ts';

describe('rewind and since on every transport', () => {
  let fx: HubFixture;

  before(async () => {
    fx = await startHubFixture({ EVENT_BUFFER_SIZE: '8', LONGPOLL_TIMEOUT: '300ms' });
  });
  after(async () => {
    for (const c of clients) c.close();
    await fx?.stop();
  });

  const clients: StartingClient[] = [];
  async function open(transport: Transport, type: string, extra: Record<string, string>) {
    const client = await openClient(fx.url, transport, [{ eventType: type }], extra);
    clients.push(client);
    return client;
  }

  /** Publishes events of `type` with ids `type-<n>`, each followed by `noise` events of another type. */
  function publisher(type: string, noise: number) {
    const ids: string[] = [];
    const positions: string[] = [];
    return {
      ids,
      positions,
      async publish(count: number): Promise<void> {
        for (let i = 0; i < count; i++) {
          const id = `${type}-${ids.length}`;
          ids.push(id);
          positions.push(await fx.publish(type, {}, { id }));
          for (let j = 0; j < noise; j++) await fx.publish('noise.event', {});
        }
      },
    };
  }

  /** Connects while events are being published; answers what it got once it has the newest. */
  async function joined(transport: Transport, type: string, extra: Record<string, string>, noise: number) {
    const events = publisher(type, noise);
    await events.publish(12);
    const connecting = open(transport, type, extra);
    const during = events.publish(4);
    const client = await connecting;
    await during;
    await events.publish(5);
    const newest = events.ids.at(-1);
    await waitFor(() => idsOf(client, type).at(-1) === newest, { what: `${transport}: the newest event` });
    const got = idsOf(client, type);
    assert.equal(new Set(got).size, got.length, `${transport}: each event once: ${got}`);
    assert.deepEqual(got, events.ids.slice(events.ids.length - got.length), `${transport}: no gap: ${got}`);
    client.close();
    return { got, events };
  }

  for (const transport of transports) {
    it(`${transport}: rewind from the event buffer, then live`, async () => {
      const { got } = await joined(transport, `rw.ring.${transport}`, { rewind: '3' }, 0);
      assert.ok(got.length >= 3 + 5 && got.length <= 3 + 4 + 5, `${transport}: ${got.length} events`);
    });

    it(`${transport}: since a position, then live`, async () => {
      const type = `rw.since.${transport}`;
      const events = publisher(type, 0);
      await events.publish(6);
      const client = await open(transport, type, { since: events.positions[1]! });
      await events.publish(3);
      await waitFor(() => idsOf(client, type).at(-1) === events.ids.at(-1), { what: 'the newest' });
      assert.deepEqual(idsOf(client, type), events.ids.slice(2));
      client.close();
    });
  }

  for (const transport of transports) {
    it(`${transport}: rewind further back than the event buffer holds, from the broker`, async () => {
      // One event of the type in every three: the buffer of 8 holds 2 or 3 of them.
      const { got } = await joined(transport, `rw.broker.${transport}`, { rewind: '6' }, 2);
      assert.ok(got.length >= 6 + 5 && got.length <= 6 + 4 + 5, `${transport}: ${got.length} events`);
    });
  }

  it('rewinds from the broker on a replica that started after the events (no warm-up)', async () => {
    const type = 'rw.before-start';
    const events = publisher(type, 0);
    await events.publish(4);
    const late = await startHubFixture(
      { EVENT_BUFFER_SIZE: '8', EVENT_BUFFER_WARMUP: 'false', REPLICA_ID: 'late' },
      { bus: fx.bus, store: fx.store },
    );
    try {
      // Its buffer has dropped nothing, yet holds only what came after it started.
      await events.publish(1);
      await waitFor(() => late.hub.ring.size === 1);
      const client = await openClient(late.url, 'sse', [{ eventType: type }], { rewind: '3' });
      await waitFor(() => idsOf(client, type).length === 3, { what: 'the rewind from the broker' });
      assert.deepEqual(idsOf(client, type), events.ids.slice(2));
      client.close();
    } finally {
      await late.stop();
    }
  });

  it('answers a since the stream cannot have with gw.resync_required', async () => {
    const client = await open('sse', 'rw.resync', { since: 'not-a-position' });
    await waitFor(() => client.events().some((e) => e['type'] === 'gw.resync_required'));
  });

  it('refuses a rewind that is not a whole number with a 400 naming it', async () => {
    for (const rewind of ['-1', 'x', '1.5', '99999999']) {
      const query = new URLSearchParams({ subscriptions: '[{"eventType":"a"}]', rewind });
      const sse = await openSse(`${fx.url}/_gw/v1/connection/sse?${query}`);
      sse.close();
      assert.equal(sse.status, 400, rewind);
      assert.match(sse.errorBody ?? '', /^rewind: /, rewind);
    }
  });
});
