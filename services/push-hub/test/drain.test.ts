/**
 * Drain: a stopping hub turns /ready false, keeps delivering to the connections it has not moved
 * yet, and closes them in batches spread over DRAIN_SPREAD_PERCENT of the drain window: SSE streams
 * end with a jittered `retry:` hint, WebSocket connections with 1012, socket.io connections with a
 * transport close the client reconnects from by itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { startHubFixture, subs } from './hub-fixture.ts';

const wanted = subs([{ eventType: 'greeting' }]);

/** A raw SSE stream: everything it received, and when it ended. */
async function rawSse(url: string) {
  const abort = new AbortController();
  const res = await fetch(`${url}/_gw/v1/connection/sse?subscriptions=${wanted}`, { signal: abort.signal });
  assert.equal(res.status, 200);
  const client = { text: '', endedAt: 0, close: () => abort.abort() };
  const decoder = new TextDecoder();
  const ended = (async () => {
    for await (const chunk of res.body!) client.text += decoder.decode(chunk, { stream: true });
    client.endedAt = Date.now();
  })().catch(() => {
    client.endedAt = Date.now();
  });
  return { client, ended };
}

describe('drain', () => {
  // Timing windows leave room for a machine at load 4 on 2 cores: the drain spreads over 3 s, and
  // each bound is a share of that, not a few milliseconds. The 20 s window (never waited for: the
  // hub stops once the last connection moved) is far above the spread, so closes held until its
  // end are told apart.
  it('moves its clients away in batches over part of the drain window, still delivering to the rest', async (t) => {
    const hub = await startHubFixture({
      SHUTDOWN_DRAIN_TIMEOUT_MS: '20000',
      DRAIN_SPREAD_PERCENT: '15',
      DRAIN_RECONNECT_JITTER: '300ms',
    });
    t.after(() => hub.stop());
    const sse = await Promise.all(Array.from({ length: 20 }, () => rawSse(hub.url)));
    const ws = Array.from({ length: 20 }, () => {
      const c = openWs(`${hub.wsUrl}/_gw/v1/connection/ws?subscriptions=${wanted}`);
      const closedAt = c.closed.then((close) => ({ ...close, at: Date.now() }));
      return { ...c, closedAt };
    });
    const sio = io(hub.url, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions: [{ eventType: 'greeting' }] },
      reconnection: false,
    });
    // Whatever happens below, no client is left open (a reconnecting socket.io client keeps the file alive).
    t.after(() => {
      sio.close();
      for (const c of ws) c.ws.terminate();
      for (const c of sse) c.client.close();
    });
    const sioReasons: string[] = [];
    sio.on('disconnect', (reason) => sioReasons.push(reason));
    await waitFor(() => hub.hub.size === 41, { what: 'every connection' });
    await hub.publish('greeting', { n: 1 });
    await waitFor(() => sse.every((s) => s.client.text.includes('"n":1')), { what: 'the first event' });

    const started = Date.now();
    const stopped = hub.stop();
    const ready = await fetch(`${hub.apiUrl}/ready`);
    assert.equal(ready.status, 503, '/ready turns false as the drain starts, and still answers');
    assert.equal(((await ready.json()) as { checks: Record<string, string> }).checks['shutdown'], 'draining');
    // The first batches moved (one every 100 ms, about 2 each): the rest are not all gone with them.
    const { stillOpen } = await waitFor(() => (hub.hub.size < 39 ? { stillOpen: hub.hub.size } : undefined), {
      what: 'the first batches to move',
    });
    assert.ok(stillOpen > 2, `some moved, some not yet (${stillOpen} open)`);
    const secondAt = Date.now();
    await hub.publish('greeting', { n: 2 });
    await stopped;

    const ends = [
      ...sse.map((s) => s.client.endedAt),
      ...(await Promise.all(ws.map((w) => w.closedAt))).map((c) => c.at),
    ];
    const spread = Math.max(...ends) - Math.min(...ends);
    assert.ok(spread >= 1800 && spread < 10_000, `the closes spread over ${spread} ms (3000 ms asked)`);
    const buckets = new Set(ends.map((t) => Math.floor((t - started) / 100)));
    assert.ok(buckets.size >= 6, `closed in batches (${buckets.size} distinct 100 ms slots)`);

    for (const { client } of sse) {
      const retry = /retry: (\d+)\n\n$/.exec(client.text);
      assert.ok(retry, `an SSE stream ends with a retry hint: ${JSON.stringify(client.text.slice(-80))}`);
      assert.ok(Number(retry[1]) <= 300);
      // A stream still open well after the second event came got it; none was cut short of it.
      if (client.endedAt - secondAt > 1000) assert.ok(client.text.includes('"n":2'), 'delivered until moved');
    }
    const hints = new Set(sse.map((s) => /retry: (\d+)/.exec(s.client.text)![1]));
    assert.ok(hints.size > 5, `the hints are jittered (${hints.size} distinct values)`);
    for (const w of ws) assert.equal((await w.closed).code, 1012, 'WebSocket: Service Restart');
    await waitFor(() => sioReasons.length > 0, { what: 'the socket.io disconnect' });
    // Not `io server disconnect` (final for the client): a transport close, or a transport error
    // when it came while a poll was under way; the socket.io client reconnects by itself from both.
    assert.ok(
      ['transport close', 'transport error'].includes(sioReasons[0]!),
      `the socket.io client was left to reconnect by itself (${sioReasons[0]})`,
    );
  });

  it('with DRAIN_SPREAD_PERCENT=0 closes every connection at once', async (t) => {
    const hub = await startHubFixture({ SHUTDOWN_DRAIN_TIMEOUT_MS: '20000', DRAIN_SPREAD_PERCENT: '0' });
    t.after(() => hub.stop());
    const sse = await Promise.all(Array.from({ length: 10 }, () => rawSse(hub.url)));
    t.after(() => {
      for (const s of sse) s.client.close();
    });
    await waitFor(() => hub.hub.size === 10, { what: 'every connection' });
    const started = Date.now();
    await hub.stop();
    await Promise.all(sse.map((s) => s.ended));
    const last = Math.max(...sse.map((s) => s.client.endedAt));
    assert.ok(last - started < 2000, `all closed within ${last - started} ms, not over the 20 s window`);
  });

  it('stops at once when it holds no connection, or once the last one has moved', async (t) => {
    // A 20 s drain window, half of it for spreading the moves.
    const env = { SHUTDOWN_DRAIN_TIMEOUT_MS: '20000', DRAIN_SPREAD_PERCENT: '50' };
    const idle = await startHubFixture(env);
    t.after(() => idle.stop());
    let started = Date.now();
    await idle.stop();
    assert.ok(Date.now() - started < 5000, `an idle hub stopped in ${Date.now() - started} ms, not 10 s`);

    const busy = await startHubFixture(env);
    t.after(() => busy.stop());
    const sse = await Promise.all(Array.from({ length: 3 }, () => rawSse(busy.url)));
    t.after(() => {
      for (const s of sse) s.client.close();
    });
    await waitFor(() => busy.hub.size === 3, { what: 'every connection' });
    started = Date.now();
    await busy.stop();
    assert.ok(
      Date.now() - started < 5000,
      `a hub with 3 clients stopped in ${Date.now() - started} ms, not 10 s`,
    );
  });
});
