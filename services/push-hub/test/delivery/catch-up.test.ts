/**
 * A client that comes back to a large backlog catches up, whatever its size in the ring or the
 * broker: the hub writes it with backpressure, live events queue behind it in order, and the
 * slow-consumer bound applies to what the client does not read, not to what the hub chose to send
 * at once. A client that stops reading is still cut off, with memory bounded. Long-poll answers
 * are bounded in bytes and the cursor moves by what was sent.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, MiB, mib, openSse, openWs, settledMemory, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const wanted = [{ eventType: 'backlog' }];
const sseUrl = (f: HubFixture) => `${f.url}/_gw/v1/connection/sse?subscriptions=${subs(wanted)}`;

/** Publishes `count` events of about `bytes` JSON each; resolves with their positions. */
async function publishMany(f: HubFixture, count: number, bytes: number, from = 0): Promise<string[]> {
  const pad = 'p'.repeat(Math.max(0, bytes - 120));
  const positions: string[] = [];
  for (let n = from; n < from + count; n++) positions.push(await f.publish('backlog', { n, pad }));
  await waitFor(() => f.hub.ring.head === positions.at(-1), {
    what: 'the hub dispatched them',
    timeoutMs: 60_000,
  });
  return positions;
}

const numbers = (frames: Array<{ event: string; data: string }>) =>
  frames.filter((x) => x.event === 'backlog').map((x) => JSON.parse(x.data).data.n as number);

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('catching up on a large backlog', () => {
  describe('from the ring (64 MiB, its default byte bound)', () => {
    let f: HubFixture;
    let positions: string[];
    before(async () => {
      f = await startHubFixture({ HEARTBEAT_INTERVAL: '1h' });
      // 5 KiB events until the ring is at its byte bound and has dropped its oldest.
      positions = await publishMany(f, 7000, 5 * 1024);
      assert.ok(f.hub.ring.bytes > 63 * MiB, `ring holds ${mib(f.hub.ring.bytes)}`);
    });
    after(() => f?.stop());

    it('sends an SSE client the whole backlog, in order, then live events', async () => {
      const first = positions.indexOf(f.hub.ring.oldest!);
      const sse = await openSse(sseUrl(f), { 'last-event-id': positions[first]! });
      after(() => sse.close());
      const live = await publishMany(f, 50, 1024, 7000);
      const expected = [...range(first + 1, 7000), ...range(7000, 7050)];
      await waitFor(() => numbers(sse.frames).length >= expected.length, {
        what: `the backlog and the live events (have ${numbers(sse.frames).length} of ${expected.length})`,
        timeoutMs: 60_000,
      });
      assert.deepEqual(numbers(sse.frames), expected, 'every event once, in order');
      assert.equal(sse.frames.at(-1)!.id, live.at(-1));
      assert.equal(f.hub.size, 1, 'still connected');
    });

    it('sends a WebSocket client the same backlog', async () => {
      const first = positions.indexOf(f.hub.ring.oldest!);
      const ws = openWs(
        `${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${subs(wanted)}&lastEventId=${positions[first]}`,
      );
      after(() => ws.ws.close());
      const expected = range(first + 1, 7050);
      const got = () => ws.events.filter((e) => e.type === 'backlog').map((e) => (e.data as { n: number }).n);
      await waitFor(() => got().length >= expected.length, {
        what: `the backlog over WebSocket (have ${got().length} of ${expected.length})`,
        timeoutMs: 60_000,
      });
      assert.deepEqual(got(), expected);
    });
  });

  describe('from the broker (100k events older than the ring)', () => {
    let f: HubFixture;
    let positions: string[];
    // The memory bus as a broker that keeps all 100k.
    const bus = new MemoryBus({ retention: 200_000, retentionBytes: 1024 * 1024 * 1024 });
    const store = new MemoryStore();
    before(async () => {
      f = await startHubFixture({ HEARTBEAT_INTERVAL: '1h', EVENT_BUFFER_SIZE: '1000' }, { bus, store });
      positions = await publishMany(f, 100_000, 300);
    });
    after(async () => {
      await f?.stop();
      await bus.close();
      await store.close();
    });

    it('replays every event to a client reading at full speed, in order, no duplicate', async () => {
      const sse = await openSse(sseUrl(f), { 'last-event-id': positions[0]! });
      after(() => sse.close());
      await waitFor(() => numbers(sse.frames).length >= 99_999, {
        what: `the replay (have ${numbers(sse.frames).length})`,
        timeoutMs: 120_000,
      });
      assert.deepEqual(numbers(sse.frames), range(1, 100_000));
    });
  });

  describe('a resuming client that stops reading', () => {
    let f: HubFixture;
    let positions: string[];
    const maxBuffered = 1 * MiB;
    before(async () => {
      f = await startHubFixture({ HEARTBEAT_INTERVAL: '1h', MAX_BUFFERED_BYTES: String(maxBuffered) });
      positions = await publishMany(f, 3000, 5 * 1024);
    });
    after(() => f?.stop());

    it('holds little for it while it is behind, and cuts it once live events pass the limit', async () => {
      const before = await settledMemory();
      const stalled = Array.from({ length: 20 }, () => stalledSse(f, positions[0]!));
      after(() => {
        for (const s of stalled) s.destroy();
      });
      await waitFor(() => f.hub.size === 20, { what: 'the stalled clients connected' });
      await new Promise((r) => setTimeout(r, 500));
      const held = await settledMemory();
      const grown = held.heap + held.external - before.heap - before.external;
      console.log(`20 stalled resuming clients with a ${mib(f.hub.ring.bytes)} backlog: +${mib(grown)}`);
      assert.ok(grown < 20 * MiB, `the hub holds ${mib(grown)} for 20 stalled clients`);
      assert.equal(f.hub.size, 20, 'not cut for the backlog the hub chose to send');
      // Live events they do not read: cut once those pass MAX_BUFFERED_BYTES.
      let sent = 0;
      while (f.hub.size > 0) {
        assert.ok(sent < 100, `${f.hub.size} stalled clients still held after ${sent} live events of 64 KiB`);
        await publishMany(f, 1, 64 * 1024, 10_000 + sent);
        sent++;
      }
      assert.ok(sent * 64 * 1024 >= maxBuffered, `cut after ${sent} live events, not before the limit`);
    });
  });

  describe('long-polling', () => {
    let f: HubFixture;
    let positions: string[];
    before(async () => {
      f = await startHubFixture({ LONGPOLL_MAX_RESPONSE_BYTES: String(256 * 1024) });
      positions = await publishMany(f, 2500, 2048);
    });
    after(() => f?.stop());

    it('answers at most LONGPOLL_MAX_RESPONSE_BYTES, and the next poll continues', async () => {
      const client = new LongPollClient(f.url);
      client.cookies.set('last_event_id', encodeURIComponent(positions[0]!));
      const created = await client.get(`?subscriptions=${subs(wanted)}`);
      assert.equal(created.status, 200);
      const got: number[] = [];
      let answers = 0;
      while (got.length < 2499) {
        assert.ok(answers < 200, `only ${got.length} events after ${answers} polls`);
        const r = await client.get();
        assert.equal(r.status, 200);
        assert.ok(r.text.length <= 256 * 1024 + 4096, `an answer of ${r.text.length} bytes`);
        const events = (r.body as { events: Array<{ type: string; data: { n: number } }> }).events;
        got.push(...events.filter((e) => e.type === 'backlog').map((e) => e.data.n));
        answers++;
      }
      assert.deepEqual(got, range(1, 2500));
      assert.ok(answers >= (2500 * 2048) / (256 * 1024), `${answers} answers`);
    });
  });
});

/** An SSE client that sends its request and never reads. */
function stalledSse(f: HubFixture, lastEventId: string) {
  const { port } = new URL(f.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `GET /_gw/v1/connection/sse?subscriptions=${subs(wanted)} HTTP/1.1\r\nhost: x\r\nlast-event-id: ${lastEventId}\r\n\r\n`,
  );
  socket.pause();
  return socket;
}
