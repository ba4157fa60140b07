/**
 * How a long-poll connection starts with `rewind=N` or `latest=true`, as on SSE and WebSocket, from
 * outside, with two replicas on one memory bus and store and a client whose polls go to either of
 * them in turn (a long poll may reach any replica). Their event buffers hold 4 events, fewer than
 * the rewind asks for: the last N events it matches come from the broker, in order, then the live
 * ones, each once. `latest=true` gets the newest kept value of each of its places first (oldest
 * first, as on SSE), once, then live events; a value newer than where the connection started comes
 * in its place in the stream, not twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';

type Event = Record<string, unknown>;

describe('long-polling starts with rewind and latest values, on any replica', () => {
  const bus = new MemoryBus();
  const store = new MemoryStore();
  const env = { EVENT_BUFFER_SIZE: '4', LONGPOLL_TIMEOUT: '200ms', LATEST_EVENT_TYPES: 'lp.status,greeting' };
  let one: HubFixture;
  let two: HubFixture;

  before(async () => {
    one = await startHubFixture({ ...env, REPLICA_ID: 'one' }, { bus, store });
    two = await startHubFixture({ ...env, REPLICA_ID: 'two' }, { bus, store });
  });
  after(async () => {
    await one?.stop();
    await two?.stop();
    await bus.close();
    await store.close();
  });

  /** A connection made on the first replica whose polls then go to each replica in turn. */
  async function connect(subscriptions: unknown[], extra: Record<string, string>) {
    const query = new URLSearchParams({ subscriptions: JSON.stringify(subscriptions), ...extra });
    const clients = [new LongPollClient(one.url), new LongPollClient(two.url)];
    clients[1]!.cookies = clients[0]!.cookies;
    const created = await clients[0]!.get(`?${query}`);
    assert.equal(created.status, 200, created.text);
    const got: Event[] = [];
    let polls = 0;
    return {
      got,
      /** Polls (alternating replicas) until `done` holds for what came, failing on any other answer. */
      async until(done: () => boolean, what: string): Promise<void> {
        await waitFor(
          async () => {
            got.push(...(await clients[polls++ % 2]!.poll()));
            return done();
          },
          { what },
        );
      },
      /** One more poll on each replica: what comes then (nothing, once every event came). */
      async pollBoth(): Promise<Event[]> {
        const more = [...(await clients[0]!.poll()), ...(await clients[1]!.poll())];
        got.push(...more);
        return more;
      },
    };
  }

  const idsOf = (events: Event[], type: string) =>
    events.filter((e) => e['type'] === type).map((e) => String(e['id']));

  it('rewinds past the event buffer from the broker: exactly the last N, then live, each once', async () => {
    const type = 'lp.rewound';
    const ids: string[] = [];
    // One event of the type in every three: the buffers of 4 hold at most 2 of them.
    for (let n = 0; n < 10; n++) {
      ids.push(`rw-${n}`);
      await one.publish(type, { n }, { id: `rw-${n}` });
      await one.publish('lp.noise', {});
      await one.publish('lp.noise', {});
    }
    await waitFor(() => one.hub.ring.head === two.hub.ring.head && one.hub.ring.size === 4);
    const client = await connect([{ eventType: type }], { rewind: '6' });
    await client.until(() => idsOf(client.got, type).length >= 6, 'the rewind');
    assert.deepEqual(idsOf(client.got, type), ids.slice(4), 'the last six, oldest first');
    for (let n = 10; n < 13; n++) {
      ids.push(`rw-${n}`);
      await two.publish(type, { n }, { id: `rw-${n}` });
      await two.publish('lp.noise', {});
    }
    await client.until(() => idsOf(client.got, type).length >= 9, 'the live events');
    await client.pollBoth();
    assert.deepEqual(idsOf(client.got, type), ids.slice(4), 'then live, no gap, no duplicate');
  });

  it("rewinds to the stream's first event, which has no event before it (its origin)", async () => {
    const fresh = await startHubFixture({ ...env, REPLICA_ID: 'fresh' });
    try {
      const ids = ['f-0', 'f-1', 'f-2', 'f-3', 'f-4', 'f-5'];
      for (const id of ids) await fresh.publish('lp.first', {}, { id });
      await waitFor(() => fresh.hub.ring.size === 4);
      const client = new LongPollClient(fresh.url);
      const query = new URLSearchParams({ subscriptions: '[{"eventType":"lp.first"}]', rewind: '10' });
      assert.equal((await client.get(`?${query}`)).status, 200);
      const got: Event[] = [];
      await waitFor(async () => got.push(...(await client.poll())) > 0 && idsOf(got, 'lp.first').length >= 6);
      assert.deepEqual(idsOf(got, 'lp.first'), ids);
    } finally {
      await fresh.stop();
    }
  });

  it('rewinds from the event buffer when it holds the last N', async () => {
    const type = 'lp.ring-rewound';
    for (let n = 0; n < 6; n++) await one.publish(type, { n }, { id: `rr-${n}` });
    await waitFor(() => one.hub.ring.head === two.hub.ring.head);
    const client = await connect([{ eventType: type }], { rewind: '2' });
    await client.until(() => idsOf(client.got, type).length >= 2, 'the rewind');
    await two.publish(type, { n: 6 }, { id: 'rr-6' });
    await client.until(() => idsOf(client.got, type).length >= 3, 'the live event');
    await client.pollBoth();
    assert.deepEqual(idsOf(client.got, type), ['rr-4', 'rr-5', 'rr-6']);
  });

  it('sends the newest kept value of each place first, once, then live events', async () => {
    for (const [name, n] of [
      ['alice', 1],
      ['bob', 2],
      ['alice', 3],
      ['carol', 4],
    ] as const)
      await one.publish('greeting', { name, n }, { id: `g-${n}` });
    await one.publish('lp.status', { up: false }, { id: 's-1' });
    await one.publish('lp.status', { up: true }, { id: 's-2' });
    // Enough other events that the buffers hold none of the kept ones: the values are the store's.
    for (let n = 0; n < 4; n++) await one.publish('lp.noise', {});
    await waitFor(async () => (await store.keys('gw:latest:')).length === 5);
    const client = await connect(
      [{ eventType: 'lp.status' }, { eventType: 'greeting', oneOf: [{ name: 'alice' }, { name: 'bob' }] }],
      { latest: 'true' },
    );
    const own = () =>
      client.got.filter((e) => !String(e['type']).startsWith('gw.')).map((e) => String(e['id']));
    await client.until(() => own().length >= 3, 'the latest values');
    assert.deepEqual(own(), ['g-2', 'g-3', 's-2'], 'oldest first; carol and the older ones not');
    assert.deepEqual(await client.pollBoth(), [], 'acknowledged: not sent again');
    await two.publish('greeting', { name: 'bob', n: 5 }, { id: 'g-5' });
    await client.until(() => own().includes('g-5'), 'the live event');
    await client.pollBoth();
    assert.deepEqual(own(), ['g-2', 'g-3', 's-2', 'g-5']);
  });

  it('sends a value kept after the connection started in its place in the stream, not twice', async () => {
    const client = await connect([{ eventType: 'lp.status' }], { latest: 'true' });
    // Published after the connect, before its first poll: the store and the stream both have it.
    await one.publish('lp.status', { up: false }, { id: 's-3' });
    await waitFor(async () => (await keptIds()).includes('s-3'), { what: 's-3 kept' });
    await client.until(() => idsOf(client.got, 'lp.status').includes('s-3'), 'the newer value');
    await client.pollBoth();
    assert.deepEqual(idsOf(client.got, 'lp.status'), ['s-3']);
  });

  it('sends the latest values again until the client acknowledges them (an answer lost on its way)', async () => {
    const query = new URLSearchParams({ subscriptions: '[{"eventType":"lp.status"}]', latest: 'true' });
    const client = new LongPollClient(two.url);
    assert.equal((await client.get(`?${query}`)).status, 200);
    const token = client.cookies.get('connection_token')!;
    const kept = (await client.poll()).filter((e) => e['type'] === 'lp.status');
    assert.equal(kept.length, 1);
    // The same connection without the cookies: nothing acknowledged, the answer comes again.
    const again = await fetch(`${one.url}/_gw/v1/connection/longpolling?pollToken=${token}`);
    const body = (await again.json()) as { events: Event[] };
    assert.deepEqual(
      body.events.filter((e) => e['type'] === 'lp.status'),
      kept,
    );
    // The cookies acknowledge it: not again.
    assert.deepEqual(await client.poll(), []);
  });

  it('pages latest values larger than an answer holds, in order, before the stream goes on, a lost page again', async () => {
    // An answer holds 16 KiB (the least it may): six kept values of 6 KiB take three answers.
    const paged = await startHubFixture(
      { ...env, REPLICA_ID: 'paged', LONGPOLL_MAX_RESPONSE_BYTES: String(16 * 1024) },
      { bus, store },
    );
    try {
      const filler = 'x'.repeat(6 * 1024);
      const names = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
      for (const name of names) await one.publish('greeting', { name, filler }, { id: `big-${name}` });
      await waitFor(async () => (await keptIds()).includes('big-p5'));
      const query = new URLSearchParams({
        subscriptions: JSON.stringify([{ eventType: 'greeting', oneOf: names.map((name) => ({ name })) }]),
        latest: 'true',
      });
      const client = new LongPollClient(paged.url);
      assert.equal((await client.get(`?${query}`)).status, 200);
      // Kept after the connect: its value comes in the stream, after the others, not as p0's latest.
      await one.publish('greeting', { name: 'p0' }, { id: 'after-p0' });
      await waitFor(async () => (await keptIds()).includes('after-p0'));
      const answers: string[][] = [];
      const sizes: number[] = [];
      const got = () => answers.flat();
      const poll = async () => {
        const answer = await client.get();
        assert.equal(answer.status, 200, answer.text);
        sizes.push(answer.text.length);
        answers.push(idsOf((answer.body as { events: Event[] }).events, 'greeting'));
      };
      await poll();
      // The first page again for the same connection without the cookies (its answer lost).
      const token = client.cookies.get('connection_token')!;
      const lost = await fetch(`${paged.url}/_gw/v1/connection/longpolling?pollToken=${token}`);
      assert.deepEqual(idsOf(((await lost.json()) as { events: Event[] }).events, 'greeting'), answers[0]);
      await waitFor(
        async () => {
          await poll();
          return got().includes('after-p0');
        },
        { what: 'the values and the live event' },
      );
      // The bound, and what the welcome events and one value over it may add.
      assert.ok(Math.max(...sizes) < 16 * 1024 + 8 * 1024, `answers of ${sizes} bytes`);
      assert.deepEqual(got(), [...names.slice(1).map((n) => `big-${n}`), 'after-p0'], 'each once, in order');
      assert.ok(answers.filter((a) => a.length > 0).length >= 3, JSON.stringify(answers));
    } finally {
      await paged.stop();
    }
  });

  /** The ids of the events the store keeps as latest values. */
  async function keptIds(): Promise<string[]> {
    const texts = await Promise.all((await store.keys('gw:latest:')).map((k) => store.get(k)));
    return texts.map((t) => String(JSON.parse(JSON.parse(t!).json).id));
  }
});
