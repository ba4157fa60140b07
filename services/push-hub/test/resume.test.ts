/**
 * Resuming from positions older than the event buffer, through the public surface of one or two
 * hubs on the memory bus: a broker replay, then live events, nothing missed or doubled; a
 * position the broker no longer holds gets gw.resync_required; a replica started later warms its
 * buffer from the stream; WebSocket and socket.io clients resume too.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const alice = subs([{ eventType: 'greeting', oneOf: [{ name: 'alice' }] }]);
const sseUrl = (f: HubFixture) => `${f.url}/_gw/v1/connection/sse?subscriptions=${alice}`;
const numbers = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e['type'] === 'greeting').map((e) => (e['data'] as { n: number }).n);

/** Publishes events n = from … to-1, alice on even n and bob on odd; resolves with their positions. */
async function publishRange(f: HubFixture, from: number, to: number): Promise<string[]> {
  const positions: string[] = [];
  for (let n = from; n < to; n++)
    positions.push(await f.publish('greeting', { name: n % 2 === 0 ? 'alice' : 'bob', n }));
  return positions;
}

const aliceAfter = (n: number, to: number) =>
  Array.from({ length: to }, (_, i) => i).filter((i) => i > n && i % 2 === 0);

describe('resume beyond the event buffer', () => {
  const started: HubFixture[] = [];
  const start = async (...args: Parameters<typeof startHubFixture>) => {
    const f = await startHubFixture(...args);
    started.push(f);
    return f;
  };
  afterEach(async () => {
    for (const f of started.splice(0)) await f.stop();
  });

  it('serves a Last-Event-ID older than the buffer from the broker, then live, nothing missed or doubled', async () => {
    const f = await start({ EVENT_BUFFER_SIZE: '5' });
    const positions = await publishRange(f, 0, 30);
    // Events keep coming while the client resumes.
    const publishing = publishRange(f, 30, 50);
    const sse = await openSse(sseUrl(f), { 'last-event-id': positions[3]! });
    await publishing;
    const expected = aliceAfter(3, 50);
    await waitFor(() => numbers(sse.events()).length >= expected.length, { what: 'the missed events' });
    await publishRange(f, 50, 52);
    await waitFor(() => numbers(sse.events()).length >= expected.length + 1, { what: 'a live event' });
    await sleep(100);
    assert.deepEqual(numbers(sse.events()), [...expected, 50]);
    assert.equal(sse.events('gw.resync_required').length, 0);
    assert.deepEqual(
      sse.frames.slice(0, 2).map((fr) => fr.id),
      [positions[3], positions[3]],
      'the welcome events carry the position resumed from',
    );
    assert.equal(await f.metric('gw_resumes_total', 'source="broker"'), 1);
    sse.close();
  });

  it('answers gw.resync_required for a position the broker no longer holds, never had, or cannot read', async () => {
    const f = await start({ EVENT_BUFFER_SIZE: '5' });
    const positions = await publishRange(f, 0, 20);
    f.bus.trim('gw.events', positions[10]!);
    const cases = [
      [positions[2]!, 'retention-gap'],
      [positions.at(-1)!.replace(/^\d+/, (seq) => String(Number(seq) + 1000)), 'unknown-position'],
      ['not-a-position', 'unknown-position'],
    ] as const;
    for (const [from, reason] of cases) {
      const sse = await openSse(sseUrl(f), { 'last-event-id': from });
      await waitFor(() => sse.events('gw.resync_required').length === 1, { what: `a resync for ${from}` });
      const data = sse.events('gw.resync_required')[0]!['data'] as Record<string, unknown>;
      assert.equal(data['last_event_id'], from);
      assert.equal(data['reason'], reason, `why ${from} cannot be resumed`);
      assert.match(String(data['detail']), /reload the state you derive from events/);
      await publishRange(f, 20, 21);
      await waitFor(() => numbers(sse.events()).includes(20), { what: 'live events after the resync' });
      assert.deepEqual(numbers(sse.events()), [20]);
      sse.close();
    }
    assert.equal(await f.metric('gw_resumes_total', 'source="resync"'), 3);
  });

  it('fills the buffer of a replica started later from the stream, so resumes after a restart come from memory', async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const first = await startHubFixture({ REPLICA_ID: 'first', EVENT_BUFFER_SIZE: '100' }, shared);
    const sse = await openSse(sseUrl(first));
    await publishRange(first, 0, 10);
    await waitFor(() => numbers(sse.events()).length === 5);
    const lastId = sse.frames.at(-1)!.id!;
    sse.close();
    await first.stop();
    await publishRange(first, 10, 20);
    const second = await start({ REPLICA_ID: 'second', EVENT_BUFFER_SIZE: '100' }, shared);
    const resumed = await openSse(sseUrl(second), { 'last-event-id': lastId });
    await waitFor(() => numbers(resumed.events()).length === 5, { what: 'the events missed meanwhile' });
    await sleep(100);
    assert.deepEqual(numbers(resumed.events()), [10, 12, 14, 16, 18]);
    assert.equal(await second.metric('gw_resumes_total', 'source="ring"'), 1);
    assert.equal(await second.metric('gw_resumes_total', 'source="broker"'), 0);
    resumed.close();
  });

  it('resumes a WebSocket client from the gwposition its events carried', async () => {
    const f = await start({ EVENT_BUFFER_SIZE: '5' });
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?positions=true&subscriptions=${alice}`);
    await waitFor(() => ws.events.length >= 2);
    const positions = await publishRange(f, 0, 6);
    await waitFor(() => numbers(ws.events).length === 3);
    const last = ws.events.at(-1)!;
    assert.equal(last['gwposition'], positions[4], 'the position of the event, as a CloudEvents attribute');
    assert.deepEqual(last['data'], { name: 'alice', n: 4 });
    ws.ws.close();
    await publishRange(f, 6, 20);
    const again = openWs(
      `${f.wsUrl}/_gw/v1/connection/ws?positions=true&subscriptions=${alice}&lastEventId=${last['gwposition']}`,
    );
    await waitFor(() => numbers(again.events).length === 7, { what: 'the missed events' });
    await sleep(100);
    assert.deepEqual(numbers(again.events), [6, 8, 10, 12, 14, 16, 18]);
    assert.equal(
      again.events[0]!['gwcontrol'],
      positions[4],
      "the welcome carries the resume position, as the hub's own event (gwcontrol)",
    );
    assert.equal(again.events[0]!['gwposition'], undefined);
    const plain = openWs(`${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${alice}`);
    await waitFor(() => plain.events.length >= 2);
    await publishRange(f, 20, 21);
    await waitFor(() => plain.events.length >= 3);
    assert.equal(plain.events[2]!['gwposition'], undefined, 'only asked for');
    again.ws.close();
    plain.ws.close();
  });

  it('resumes a socket.io client from the offset its client library keeps', async () => {
    const f = await start({ EVENT_BUFFER_SIZE: '5' });
    const socket = io(f.url, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions: [{ eventType: 'greeting', oneOf: [{ name: 'alice' }] }] },
      transports: ['websocket'],
      reconnection: false,
    });
    const events: Array<Record<string, unknown>> = [];
    socket.on('greeting', (e: Record<string, unknown>) => events.push(e));
    await waitFor(() => socket.connected);
    await publishRange(f, 0, 6);
    await waitFor(() => events.length === 3);
    socket.disconnect();
    await publishRange(f, 6, 20);
    socket.connect();
    await waitFor(() => events.length === 10, { what: 'the missed events after the reconnect' });
    await sleep(100);
    assert.deepEqual(numbers(events), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    assert.equal(socket.recovered, true, 'the client sees its session recovered');
    assert.equal(await f.metric('gw_resumes_total', 'source="broker"'), 1);
    socket.close();
  });
});
