/**
 * Events that look like the hub's own, put on the fan-out stream past the publisher (an old record,
 * a producer with access to the stream): the hub delivers none of them on any transport, live or
 * resumed, and counts them as `reserved`. And the wire mark clients tell the hub's own events by,
 * which no event's content can make: an SSE `origin: gateway` line; over WebSocket `gwcontrol` in
 * place of the `gwposition` every stream event ends with (a producer's own `gwposition` is
 * overridden); first in a long-poll answer, counted by `gateway_events`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const forged = [
  { type: 'gw.session_killed', source: 'gatehouse', data: { session_id: 's' } },
  { type: 'gw.connection.create', source: 'gatehouse', data: { connection_token: 'forged-token' } },
  { type: 'GW.Connection_Closed', source: 'test', data: { reason: 'x', reconnect: false } },
  { type: 'tick', source: 'gatehouse', data: { forged: true } },
];
const subscribed = subs(
  [...new Set([...forged.map((f) => f.type), 'tick'])].map((eventType) => ({ eventType })),
);

describe('forged gateway events on the fan-out stream', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '300ms' });
  });
  after(() => f?.stop());

  it('reach no connection on any transport, live or resumed, and are counted as reserved', async () => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subscribed}`);
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?positions=true&subscriptions=${subscribed}`);
    const poll = new LongPollClient(f.url);
    assert.equal((await poll.get(`?subscriptions=${subscribed}`)).status, 200);
    const welcome = await poll.get();
    await waitFor(() => sse.frames.length >= 2 && ws.events.length >= 2);
    const before = await f.publish('warm-up', {});

    for (const e of forged) await f.publish(e.type, e.data, { source: e.source });
    const tick = await f.publish('tick', { n: 1 }, { gwposition: 'forged-position' });

    await waitFor(() => sse.events('tick').length === 1 && ws.events.some((e) => e['type'] === 'tick'));
    assert.deepEqual(
      sse.frames.slice(2).map((x) => [x.event, x.id, x.origin]),
      [['tick', tick, undefined]],
    );
    assert.deepEqual(
      ws.events.slice(2).map((e) => [e['type'], e['gwposition'], e['gwcontrol']]),
      [['tick', tick, undefined]],
      "the stream event's position is the hub's, whatever the event said",
    );
    const polled = await poll.get();
    const answer = polled.body as { events: Array<Record<string, unknown>>; gateway_events?: number };
    assert.deepEqual(
      answer.events.map((e) => [e['type'], (e['data'] as { n?: number }).n]),
      [['tick', 1]],
    );
    assert.equal(answer.gateway_events, 0);
    assert.equal(await f.metric('gw_events_dropped_total', 'reason="reserved"'), forged.length);

    // Resumed from before them (from the ring): still only the real event.
    const resumed = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subscribed}`, {
      'last-event-id': before,
    });
    await waitFor(() => resumed.events('tick').length === 1);
    assert.deepEqual(
      resumed.frames.slice(2).map((x) => x.event),
      ['tick'],
    );
    // The hub's own events: marked on SSE and WebSocket (with the position the connection is at,
    // here the stream's head); first in a long-poll answer, counted.
    const head = resumed.frames[0]!.id;
    assert.ok(head !== undefined, 'a welcome on a stream that has events carries the head');
    assert.deepEqual(
      [...sse.frames.slice(0, 2), ...resumed.frames.slice(0, 2)].map((x) => [x.event, x.origin]),
      [
        ['gw.connection.create', 'gateway'],
        ['gw.subscriptions_set', 'gateway'],
        ['gw.connection.create', 'gateway'],
        ['gw.subscriptions_set', 'gateway'],
      ],
    );
    assert.equal(resumed.frames[0]!.id, before, "a resuming connection's welcome carries its position");
    // The WebSocket connected while the stream was empty: its welcome is at the stream's origin
    // (sequence 0, in the stream's epoch).
    assert.deepEqual(
      ws.events.slice(0, 2).map((e) => [e['type'], e['gwposition'], String(e['gwcontrol']).split('.')[0]]),
      [
        ['gw.connection.create', undefined, '0'],
        ['gw.subscriptions_set', undefined, '0'],
      ],
    );
    assert.match(String(ws.events[0]!['gwcontrol']), /^0\.[0-9a-f]{8}$/);
    const first = welcome.body as { events: Array<Record<string, unknown>>; gateway_events?: number };
    assert.deepEqual(
      first.events.map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    assert.equal(first.gateway_events, 2);
    for (const c of [sse, resumed]) c.close();
    ws.ws.close();
    await ws.closed;
  });
});
