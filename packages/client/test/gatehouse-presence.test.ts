/**
 * Presence and server-side subscriptions through the real gateway: a client hears members join and
 * leave a room (`presence` events), asks who is there (`presence()`, allowed as subscribing there is),
 * and takes the subscriptions an operator sets for its connection (`subscriptions` event), keeping
 * them on its next connection instead of asking for the list the operator replaced.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { type PresenceChange, SubscriptionError, type Subscription } from '../src/index.ts';
import { connected, jwt, record, useGatewayFixture } from './gateway-fixture.ts';

const extractors = {
  'chat.message': { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
};
const room = (n: number): Subscription => ({ eventType: 'chat.message', oneOf: [{ room: n }] });

describe('Gatehouse presence and server-side subscriptions', () => {
  const gateway = useGatewayFixture({
    EXTRACTORS: JSON.stringify(extractors),
    PRESENCE_EVENT_TYPES: 'chat.message',
    PRESENCE_LEAVE_DELAY: '300ms',
    PRESENCE_CACHE_TTL: '0ms',
    SUBSCRIPTION_CHECK: 'jwt_validation',
  });

  for (const transport of ['websocket', 'sse'] as const) {
    it(`${transport}: hears joins and leaves of a room and asks who is there`, async () => {
      const n = transport === 'websocket' ? 5 : 6;
      const watcher = gateway.client({
        transports: [transport],
        token: jwt({ username: 'watcher' }),
        subscriptions: [
          { eventType: 'gw.presence.joined', oneOf: [{ eventType: 'chat.message', room: n }] },
          { eventType: 'gw.presence.left', oneOf: [{ eventType: 'chat.message', room: n }] },
        ],
      });
      const heard: PresenceChange[] = [];
      watcher.on('presence', (c) => heard.push(c));
      const got = record(watcher);
      await connected(watcher);
      const alice = gateway.client({
        transports: ['sse'],
        token: jwt({ username: 'alice' }),
        subscriptions: [room(n)],
      });
      const bob = gateway.client({
        transports: ['websocket'],
        token: jwt({ username: 'bob' }),
        subscriptions: [room(n)],
      });
      await Promise.all([connected(alice), connected(bob)]);
      await waitFor(() => heard.length === 2, { what: 'two joins', timeoutMs: 10_000 });
      assert.deepEqual(heard.map((h) => `${h.kind} ${h.user} ${JSON.stringify(h.where)}`).sort(), [
        `joined alice {"room":${n}}`,
        `joined bob {"room":${n}}`,
      ]);
      assert.deepEqual(got.events, [], 'presence changes are no stream events');

      const present = await watcher.presence('chat.message', { room: n });
      assert.equal(present.count, 2);
      assert.deepEqual(
        present.members.map((m) => `${m.member} ${m.user}`).sort(),
        heard.map((h) => `${h.member} ${h.user}`).sort(),
        'the query names members as the events do',
      );

      alice.close();
      await waitFor(() => heard.length === 3, { what: "alice's leave", timeoutMs: 10_000 });
      assert.equal(`${heard[2]!.kind} ${heard[2]!.user}`, 'left alice');
      assert.equal((await watcher.presence('chat.message', { room: n })).count, 1);
    });
  }

  it('rejects a presence query the gateway refuses, with its status and text', async () => {
    const anonymous = gateway.client({ transports: ['sse'] });
    const refused = await anonymous.presence('chat.message', { room: 1 }).catch((e: unknown) => e);
    assert.ok(refused instanceof SubscriptionError, String(refused));
    assert.equal(refused.status, 403);
    const user = gateway.client({ transports: ['sse'], token: jwt({ username: 'carol' }) });
    const bad = await user.presence('chat.message', { floor: 1 }).catch((e: unknown) => e);
    assert.ok(bad instanceof SubscriptionError, String(bad));
    assert.equal(bad.status, 400);
    assert.match(bad.message, /floor/);
  });

  it("takes an operator's change of its subscriptions and keeps it on its next connection", async () => {
    const gw = gateway.client({
      transports: ['sse'],
      token: jwt({ username: 'dave' }),
      subscriptions: [room(20)],
    });
    const got = record(gw);
    const changes: Array<readonly Subscription[]> = [];
    gw.on('subscriptions', (list) => changes.push(list));
    await connected(gw);
    await sleep(300);
    assert.deepEqual(changes, [], "the welcome's list is no change");
    const page = (await (await fetch(`${gateway.fx.apiUrl}/v3/connections?user=dave`)).json()) as {
      connections: Array<{ id: string }>;
    };
    const put = await fetch(`${gateway.fx.apiUrl}/v3/connections/${page.connections[0]!.id}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [room(21)] }),
    });
    assert.equal(put.status, 204, await put.text());
    await waitFor(() => changes.length === 1, { what: 'the change told', timeoutMs: 10_000 });
    assert.deepEqual(changes[0], [room(21)]);
    assert.deepEqual(gw.subscriptions, [room(21)]);

    gateway.fx.proxy.cut();
    gateway.fx.proxy.restore();
    await waitFor(() => gw.state.state !== 'connected', { timeoutMs: 10_000 }).catch(() => {});
    await connected(gw);
    await gateway.fx.publish(9001, 'chat.message', { room: 20 });
    await gateway.fx.publish(9002, 'chat.message', { room: 21 });
    await waitFor(() => got.ns.includes(9002), {
      what: 'the event of the room set by the operator',
      timeoutMs: 20_000,
    });
    await sleep(500);
    assert.deepEqual(
      got.ns,
      [9002],
      "the next connection asked for the operator's list, not the one it replaced",
    );
  });
});
