/**
 * Resume positions come from clients (the long-poll `last_event_id` cookie, `Last-Event-ID`,
 * `lastEventId`), so they can be anything. One the bus cannot even parse is an unknown position:
 * the client is told to resync and the process goes on. A long poll of a live connection with such
 * a cursor cookie used to reach a broker replay that threw while ordering the position, outside any
 * request, and the unhandled rejection stopped the whole process (found by schemathesis following
 * the document's link from a long-poll answer's cookie).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';

const malformed = ['xyz', '*[JRqY5Lsm', '-1', '1-2-3', '99999999999999999999', '%ff'];

describe('hostile resume positions', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '300ms' });
    // Events in the ring, so the positions are compared with real ones too.
    for (let i = 0; i < 3; i++) await f.publish('greeting', { name: 'alice' });
  });
  after(() => f.stop());

  it('tells a long poll whose cursor cookie no bus position can be to resync, and keeps serving', async () => {
    for (const cursor of malformed) {
      const c = new LongPollClient(f.url);
      assert.equal((await c.get()).status, 200);
      // Bounded: the broken hub never answered this poll.
      const res = await fetch(`${f.url}/_gw/v1/connection/longpolling`, {
        headers: {
          cookie: `connection_token=${c.cookies.get('connection_token')}; last_event_id=${encodeURIComponent(cursor)}`,
        },
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      assert.equal(res.status, 200, `${cursor}: ${text}`);
      const events = (JSON.parse(text) as { events: Array<{ type: string }> }).events;
      assert.ok(
        events.some((e) => e.type === 'gw.resync_required'),
        `${cursor}: ${text}`,
      );
    }
    assert.equal((await fetch(`${f.url}/_gw/health`)).status, 200, 'the process still serves');
  });

  it('tells an SSE or WebSocket connect resuming from such a position to resync', async () => {
    for (const cursor of malformed) {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse`, { 'last-event-id': cursor });
      const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?lastEventId=${encodeURIComponent(cursor)}`);
      try {
        await waitFor(() => sse.events('gw.resync_required').length === 1);
        await waitFor(() => ws.events.some((e) => e['type'] === 'gw.resync_required'));
      } finally {
        sse.close();
        ws.ws.close();
      }
    }
  });
});
