/**
 * Connects with `ackSession=<name>` through the public port of two hubs ("replicas") on one memory
 * bus and store: a session with an acknowledged position starts right after it on either replica,
 * whatever the request's own Last-Event-ID or rewind says, on SSE, WebSocket, socket.io and
 * long-polling; one with none starts as without the session; the welcome tells the session, its
 * position and ACK_TIMEOUT; a bad name, a JWT without sub and the store down are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const greetings = subs([{ eventType: 'greeting', oneOf: [] }]);
const numbers = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e['type'] === 'greeting').map((e) => (e['data'] as { n: number }).n);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('connect with ackSession', () => {
  const bus = new MemoryBus();
  const store = new MemoryStore();
  let a: HubFixture;
  let b: HubFixture;
  const positions: string[] = [];
  let jwt: string;

  const acknowledge = async (f: HubFixture, session: string, position: string, token = jwt) => {
    const res = await fetch(`${f.url}/_gw/v1/ack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ session, position }),
    });
    assert.equal(res.status, 204, await res.text());
  };
  const sseUrl = (f: HubFixture, query: string) =>
    `${f.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${jwt}&${query}`;

  before(async () => {
    a = await startHubFixture({ REPLICA_ID: 'a', ACK_TIMEOUT: '20s' }, { bus, store });
    b = await startHubFixture({ REPLICA_ID: 'b', ACK_TIMEOUT: '20s' }, { bus, store });
    jwt = a.jwt({ sub: 'reader', iss: 'tests' });
    for (let n = 0; n < 10; n++) positions.push(await a.publish('greeting', { name: 'x', n }));
    await acknowledge(a, 'inbox', positions[3]!);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await bus.close();
    await store.close();
  });

  it('starts after the acknowledged position on the other replica, ignoring lastEventId and rewind', async () => {
    const sse = await openSse(sseUrl(b, `ackSession=inbox&rewind=2`), { 'last-event-id': positions[7]! });
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => numbers(sse.events()).length >= 6, { what: 'the events after the acked one' });
    assert.deepEqual(numbers(sse.events()), range(4, 10));
    const welcome = sse.events('gw.connection.create')[0]!['data'] as Record<string, unknown>;
    assert.deepEqual(welcome['ack'], { session: 'inbox', position: positions[3], timeoutMs: 20_000 });
    assert.equal(typeof welcome['connection_token'], 'string');
    assert.equal(sse.frames[0]!.id, positions[3], 'the welcome is at the acknowledged position');
    await a.publish('greeting', { name: 'x', n: 10 }).then((p) => positions.push(p));
    await waitFor(() => numbers(sse.events()).includes(10), { what: 'then live' });
    assert.deepEqual(numbers(sse.events()), range(4, 11));
    sse.close();
  });

  it('starts as without the session when the store holds no position for it', async () => {
    const sse = await openSse(sseUrl(a, 'ackSession=new-one'), { 'last-event-id': positions[7]! });
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => numbers(sse.events()).length >= 2, { what: 'the events after Last-Event-ID' });
    assert.deepEqual(numbers(sse.events()).slice(0, 2), [8, 9]);
    const welcome = sse.events('gw.connection.create')[0]!['data'] as Record<string, unknown>;
    assert.deepEqual(welcome['ack'], { session: 'new-one', position: null, timeoutMs: 20_000 });
    sse.close();
  });

  it('keeps where a new session’s first connection started, so events it was sent and never acknowledged come again', async () => {
    // The first connection of `fresh` starts live, is sent three events, and goes away (a tab
    // killed) before its client acknowledged anything, well within ACK_TIMEOUT.
    const first = await openSse(sseUrl(a, 'ackSession=fresh'));
    assert.equal(first.status, 200, first.errorBody);
    await waitFor(() => first.events('gw.subscriptions_set').length > 0, { what: 'the first welcome' });
    const sent: number[] = [];
    for (const n of [100, 101, 102]) {
      sent.push(n);
      await a.publish('greeting', { name: 'x', n }).then((p) => positions.push(p));
    }
    await waitFor(() => numbers(first.events()).length === 3, { what: 'the three events' });
    first.close();
    // The next connection of the session, on the other replica, with nothing of the first's.
    const next = await openSse(sseUrl(b, 'ackSession=fresh'));
    assert.equal(next.status, 200, next.errorBody);
    await waitFor(() => numbers(next.events()).length >= 3, { what: 'the unacknowledged events again' });
    assert.deepEqual(numbers(next.events()), sent);
    next.close();
  });

  it('keeps where a new session’s first long-poll connection started, too', async () => {
    const first = new LongPollClient(a.url);
    const created = await first.get(`?subscriptions=${greetings}&jwt=${jwt}&ackSession=fresh-lp`);
    assert.equal(created.status, 200, created.text);
    await first.poll();
    const sent = [200, 201];
    for (const n of sent) await a.publish('greeting', { name: 'x', n }).then((p) => positions.push(p));
    const got: number[] = [];
    await waitFor(async () => got.push(...numbers(await first.poll())) >= 2, { what: 'the two events' });
    assert.deepEqual(got, sent);
    // Gone before acknowledging: the session's next connection, on the other replica.
    const next = await openSse(sseUrl(b, 'ackSession=fresh-lp'));
    assert.equal(next.status, 200, next.errorBody);
    await waitFor(() => numbers(next.events()).length >= 2, { what: 'the unacknowledged events again' });
    assert.deepEqual(numbers(next.events()), sent);
    next.close();
  });

  it('starts after the acknowledged position over WebSocket, socket.io and long-polling too', async () => {
    await acknowledge(b, 'transports', positions[6]!);
    const ws = openWs(
      `${b.wsUrl}/_gw/v1/connection/ws?subscriptions=${greetings}&jwt=${jwt}&ackSession=transports`,
    );
    await waitFor(() => numbers(ws.events).length >= 3, { what: 'WebSocket events' });
    assert.deepEqual(numbers(ws.events).slice(0, 3), [7, 8, 9]);
    ws.ws.close();

    const socket = io(a.url, {
      path: '/_gw/v1/socket.io/',
      transports: ['websocket'],
      reconnection: false,
      auth: { jwt, subscriptions: [{ eventType: 'greeting', oneOf: [] }], ackSession: 'transports' },
    });
    const viaSocketIo: Array<Record<string, unknown>> = [];
    socket.on('greeting', (e: Record<string, unknown>) => viaSocketIo.push(e));
    try {
      await waitFor(() => numbers(viaSocketIo).length >= 3, { what: 'socket.io events' });
      assert.deepEqual(numbers(viaSocketIo).slice(0, 3), [7, 8, 9]);
    } finally {
      socket.close();
    }

    const lp = new LongPollClient(a.url);
    const created = await lp.get(`?subscriptions=${greetings}&jwt=${jwt}&ackSession=transports`);
    assert.equal(created.status, 200, created.text);
    const events = await lp.poll();
    const welcome = events.find((e) => e['type'] === 'gw.connection.create');
    assert.deepEqual((welcome!['data'] as Record<string, unknown>)['ack'], {
      session: 'transports',
      position: positions[6],
      timeoutMs: 20_000,
    });
    assert.deepEqual(numbers(events).slice(0, 3), [7, 8, 9]);
  });

  it('refuses a bad session name and a JWT without sub with 400, on every transport', async () => {
    for (const [query, token, text] of [
      ['ackSession=', jwt, /^ackSession:/],
      [`ackSession=${'x'.repeat(65)}`, jwt, /^ackSession:/],
      ['ackSession=a%2Fb', jwt, /^ackSession:/],
      ['ackSession=inbox', a.jwt({ name: 'no-sub' }), /^ackSession needs a JWT with a sub claim\.$/],
      ['ackSession=inbox', '', /^ackSession needs a JWT with a sub claim\.$/],
    ] as const) {
      const res = await fetch(
        `${a.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${token}&${query}`,
      );
      assert.equal(res.status, 400, query);
      assert.match(await res.text(), text, query);
    }
    const ws = openWs(`${a.wsUrl}/_gw/v1/connection/ws?subscriptions=${greetings}&ackSession=a%2Fb`);
    assert.equal((await ws.closed).code, 4400);
  });
});

describe('connect with ackSession while the store is down', () => {
  it('refuses with 503 and Retry-After (WebSocket: close 4503)', async () => {
    const bus = new MemoryBus();
    const store = new MemoryStore();
    const f = await startHubFixture({}, { bus, store });
    try {
      const jwt = f.jwt({ sub: 'outage' });
      const plain = `${f.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${jwt}`;
      (await openSse(plain)).close();
      await store.close();
      // The connect's own steps are served from what this replica holds: only the session needs the store.
      const without = await openSse(plain);
      assert.equal(without.status, 200, without.errorBody);
      without.close();
      const res = await fetch(
        `${f.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${jwt}&ackSession=inbox`,
      );
      assert.equal(res.status, 503, await res.clone().text());
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
      const ws = openWs(
        `${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${greetings}&jwt=${jwt}&ackSession=inbox`,
      );
      assert.equal((await ws.closed).code, 4503);
    } finally {
      await f.stop();
      await bus.close();
    }
  });
});
