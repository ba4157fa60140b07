/**
 * Latest value on subscribe, from outside, on the memory bus: a connect with `latest=true` gets at
 * once the newest event of its type and, for a constraint on an extractor field, of that field's
 * value (a greeting to one name), on SSE, WebSocket and socket.io, then live events, each once. The
 * values are the store's: a second hub on the same store but a new, empty stream (its ring holds
 * nothing) gives them too. `latest` other than true or false is a 400.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryStore } from '@gatehouse/store';
import { MemoryBus } from '@gatehouse/bus';
import { openSse, openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

type Transport = 'sse' | 'ws' | 'socketio';

describe('latest value on subscribe', () => {
  const store = new MemoryStore();
  const env = { LATEST_EVENT_TYPES: 'greeting,status' };
  let first: HubFixture;
  let second: HubFixture;
  const closers: Array<() => void> = [];

  before(async () => {
    first = await startHubFixture(env, { bus: new MemoryBus(), store });
    for (const [name, n] of [
      ['alice', 1],
      ['bob', 2],
      ['alice', 3],
      ['bob', 4],
      ['carol', 5],
    ] as const)
      await first.publish('greeting', { name, n }, { id: `g-${n}` });
    await first.publish('status', { up: false }, { id: 's-1' });
    await first.publish('status', { up: true }, { id: 's-2' });
    await first.publish('other', {}, { id: 'o-1' });
    // Every write has reached the store once the newest can be read back.
    await waitFor(async () => (await store.keys('gw:latest:')).length === 5);
    second = await startHubFixture(env, { bus: new MemoryBus(), store });
  });
  after(async () => {
    for (const close of closers) close();
    await first?.stop();
    await second?.stop();
    await store.close();
  });

  async function open(fx: HubFixture, transport: Transport, subscriptions: unknown[], extra = {}) {
    const params = { subscriptions: JSON.stringify(subscriptions), latest: 'true', ...extra };
    const query = new URLSearchParams(params);
    let events: () => Array<Record<string, unknown>>;
    if (transport === 'sse') {
      const sse = await openSse(`${fx.url}/_gw/v1/connection/sse?${query}`);
      assert.equal(sse.status, 200, sse.errorBody);
      events = () => sse.events();
      closers.push(() => sse.close());
    } else if (transport === 'ws') {
      const ws = openWs(`${fx.wsUrl}/_gw/v1/connection/ws?${query}`);
      events = () => ws.events;
      closers.push(() => ws.ws.terminate());
    } else {
      const got: Array<Record<string, unknown>> = [];
      const socket = io(fx.url, {
        path: '/_gw/v1/socket.io/',
        auth: { ...params, subscriptions, latest: true },
        transports: ['websocket'],
        reconnection: false,
      });
      socket.onAny((_t: string, e: Record<string, unknown>) => got.push(e));
      events = () => got;
      closers.push(() => socket.close());
    }
    await waitFor(() => events().some((e) => e['type'] === 'gw.subscriptions_set'));
    return () =>
      events()
        .filter((e) => !String(e['type']).startsWith('gw.'))
        .map((e) => String(e['id']));
  }

  for (const transport of ['sse', 'ws', 'socketio'] as const) {
    it(`${transport}: the newest of the type and of a field's value at once, then live, each once`, async () => {
      const ids = await open(first, transport, [
        { eventType: 'status' },
        { eventType: 'greeting', oneOf: [{ name: 'alice' }, { name: 'bob' }, { name: transport }] },
      ]);
      await waitFor(() => ids().length === 3, { what: `${transport}: the latest values` });
      assert.deepEqual(ids(), ['g-3', 'g-4', 's-2'], 'oldest first; carol and the older ones not');
      await first.publish('greeting', { name: transport }, { id: `live-${transport}` });
      await waitFor(() => ids().includes(`live-${transport}`));
      assert.deepEqual(ids(), ['g-3', 'g-4', 's-2', `live-${transport}`]);
    });
  }

  it('gives them from the store on a replica whose stream holds none of them', async () => {
    assert.equal(second.hub.ring.size, 0);
    const ids = await open(second, 'sse', [{ eventType: 'greeting', oneOf: [{ name: 'carol' }] }]);
    await waitFor(() => ids().length === 1);
    assert.deepEqual(ids(), ['g-5']);
  });

  it('gives the values the welcome’s position, so a client resuming after them gets neither a resync nor older events', async () => {
    // The second hub's stream is new (another epoch); the values were kept from the first's.
    const subs = JSON.stringify([{ eventType: 'greeting', oneOf: [{ name: 'carol' }] }]);
    const sse = await openSse(
      `${second.url}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(subs)}&latest=true`,
    );
    closers.push(() => sse.close());
    await waitFor(() => sse.frames.some((f) => f.event === 'greeting'));
    const welcome = sse.frames.find((f) => f.event === 'gw.connection.create')!;
    const value = sse.frames.find((f) => f.event === 'greeting')!;
    assert.equal(value.id, welcome.id, 'a kept value is at the place the connection started');
    sse.close();
    await second.publish('greeting', { name: 'carol' }, { id: 'after-resume' });
    const again = await openSse(
      `${second.url}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(subs)}`,
      {
        'last-event-id': value.id!,
      },
    );
    closers.push(() => again.close());
    await waitFor(() => again.frames.some((f) => f.event === 'greeting'));
    assert.deepEqual(
      again.frames
        .filter((f) => f.origin !== 'gateway' || f.event === 'gw.resync_required')
        .map((f) => f.event),
      ['greeting'],
    );
    assert.equal(JSON.parse(again.frames.find((f) => f.event === 'greeting')!.data)['id'], 'after-resume');
  });

  it('refuses a latest that is neither true nor false', async () => {
    const query = new URLSearchParams({ subscriptions: '[{"eventType":"status"}]', latest: 'yes' });
    const sse = await openSse(`${first.url}/_gw/v1/connection/sse?${query}`);
    sse.close();
    assert.equal(sse.status, 400);
    assert.match(sse.errorBody ?? '', /^latest: /);
  });
});
