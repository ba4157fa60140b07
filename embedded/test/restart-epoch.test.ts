/**
 * The embedded gateway keeps its event stream in the memory bus, which a restart of the process
 * starts anew: its positions count from 1 again. A client's position from before the restart names
 * a place the new stream has too (once as many events came), and read as one of the new stream it
 * resumed silently: the new stream's first events skipped, or the old ones' successors taken for
 * them. Positions carry the stream's epoch, so the client is told `gw.resync_required` with
 * `reason: "epoch-changed"` instead, and gets the live events after it.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { openSse, type SseConnection, waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const subscriptions = encodeURIComponent('[{"eventType":"tick"}]');
const numbers = (sse: SseConnection) => sse.events('tick').map((e) => (e['data'] as { n: number }).n);

describe('a client resuming across a restart of the embedded gateway', () => {
  const running: EmbeddedGateway[] = [];
  const opened: SseConnection[] = [];
  let n = 0;

  const start = async () => {
    const gw = await startEmbeddedGateway({ ...ephemeralGatewaySettings, EVENT_BUFFER_SIZE: '100' });
    running.push(gw);
    return `http://127.0.0.1:${gw.publicPort}`;
  };
  const publish = async (edge: string, count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          specversion: '1.0',
          id: `tick-${n}`,
          type: 'tick',
          source: 'epoch',
          data: { n: n++ },
        }),
      });
      assert.equal(res.status, 202, await res.text());
    }
  };
  const watch = async (edge: string, lastEventId?: string) => {
    const sse = await openSse(
      `${edge}/_gw/v1/connection/sse?subscriptions=${subscriptions}`,
      lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
    );
    opened.push(sse);
    return sse;
  };

  after(async () => {
    for (const sse of opened) sse.close();
    for (const gw of running) await gw.stop();
  });

  it('is told to resync, epoch-changed, and is replayed nothing of the new stream', async () => {
    const before = await start();
    const watcher = await watch(before);
    await publish(before, 3);
    await waitFor(() => numbers(watcher).length === 3, { what: 'the events before the restart' });
    const lastBefore = watcher.frames.filter((f) => f.event === 'tick').at(-1)!.id!;
    watcher.close();
    await running.shift()!.stop();

    const restarted = await start();
    // More than before the restart: the old position's sequence number is one of the new stream's.
    await publish(restarted, 6);
    const resumed = await watch(restarted, lastBefore);
    await waitFor(() => resumed.events('gw.resync_required').length === 1, { what: 'the resync' });
    const data = resumed.events('gw.resync_required')[0]!['data'] as Record<string, unknown>;
    assert.equal(data['reason'], 'epoch-changed');
    assert.equal(data['last_event_id'], lastBefore);
    await publish(restarted, 1);
    await waitFor(() => numbers(resumed).length === 1, { what: 'the live event after the resync' });
    assert.deepEqual(numbers(resumed), [n - 1], 'none of the new stream replayed as if it followed');
    const newest = resumed.frames.filter((f) => f.event === 'tick').at(-1)!.id!;
    assert.notEqual(newest.split('.')[1], lastBefore.split('.')[1], 'the new stream has another epoch');
  });
});
