import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpsRequest } from 'node:https';
import { connect as http2Connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, sleep, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

/** Counts the store operations the hub makes (a Redis round trip each in production). */
class CountingStore extends MemoryStore {
  calls = 0;
  /** The queues whose events a poll acknowledged: its last store command before it waits. */
  readonly acknowledged = new Set<string>();
  override get(key: string) {
    this.calls++;
    return super.get(key);
  }
  override list(key: string) {
    this.calls++;
    return super.list(key);
  }
  override removeItems(key: string, items: string[]) {
    this.calls++;
    this.acknowledged.add(key);
    return super.removeItems(key, items);
  }
  override touch(key: string, ttlSeconds: number) {
    this.calls++;
    return super.touch(key, ttlSeconds);
  }
  override exists(key: string) {
    this.calls++;
    return super.exists(key);
  }
  override takeAll(key: string) {
    this.calls++;
    return super.takeAll(key);
  }
}

describe('long-polling transport', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '700ms' });
  });
  after(() => f.stop());

  it('creates a connection with cookies, then polls the welcome events and new matching events', async () => {
    const c = new LongPollClient(f.url);
    const created = await c.get(`?subscriptions=${subs([{ eventType: 'greeting' }])}`);
    assert.equal(created.status, 200);
    assert.equal(created.body, 'ok');
    assert.ok(c.cookies.has('connection_token'));
    assert.ok(c.cookies.has('last_event_id'));
    const welcome = await c.poll();
    assert.deepEqual(
      welcome.map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    const started = Date.now();
    assert.deepEqual(await c.poll(), [], 'an empty answer after the poll window');
    assert.ok(Date.now() - started >= 600);
    const waiting = c.poll();
    await f.publish('greeting', { name: 'lp' });
    await f.publish('other', {});
    const events = await waiting;
    assert.deepEqual(
      events.map((e) => e['data']),
      [{ name: 'lp' }],
    );
  });

  it('answers a bad connect at once', async () => {
    const c = new LongPollClient(f.url);
    const r = await c.get('?jwt=bad');
    assert.equal(r.status, 400);
    assert.match(r.text, /^invalid JWT/);
  });

  it('ends the connection with gw.session_killed on the next poll after a blacklisting', async () => {
    const c = new LongPollClient(f.url);
    await c.get(`?jwt=${f.jwt({ username: 'l', jti: 'lp-session' })}`);
    await c.poll();
    await f.blacklist('lp-session');
    const events = await c.poll();
    assert.deepEqual(
      events.map((e) => e['type']),
      ['gw.session_killed'],
    );
    assert.equal(c.cookies.has('connection_token'), false, 'the cookie is cleared');
  });

  it('keeps private events until the client acknowledges them: an answer that never arrived loses nothing', async () => {
    const c = new LongPollClient(f.url);
    await c.get(`?subscriptions=${subs([{ eventType: 'greeting' }])}`);
    const beforeAnswer = new Map(c.cookies);
    const first = await c.poll();
    assert.deepEqual(
      first.map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    assert.equal(c.cookies.get('last_private_event_id'), first[1]!['id']);
    // The answer is lost on its way: the client polls again with the cookies it had.
    const acknowledged = new Map(c.cookies);
    c.cookies = beforeAnswer;
    const again = await c.poll();
    assert.deepEqual(
      again.map((e) => e['id']),
      first.map((e) => e['id']),
      'the same private events again',
    );
    c.cookies = acknowledged;
    assert.deepEqual(await c.poll(), [], 'acknowledged, so gone');
  });
});

/**
 * Two long-polling clients of one browser (two tabs of an app on one origin) share its cookie jar:
 * with the connection in cookies alone, each overwrote the other's token and cursor, and the events
 * of one connection were split between them. A client that keeps its connection itself sends no
 * cookies and names it in the query (`pollToken`, `lastEventId`, `lastPrivateEventId`), which
 * the gateway takes before any cookie; it reads the token and the acknowledgement from the answer's
 * headers.
 */
describe('long-polling with the connection kept by the client', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '500ms' });
  });
  after(() => f.stop());

  /** A client keeping its connection in the query; `cookie` is what a browser's jar would add. */
  function queryClient(cookie?: string) {
    const state: Record<string, string> = {};
    const got: Array<Record<string, unknown>> = [];
    return {
      got,
      state,
      async poll() {
        const url = new URL(`${f.url}/_gw/v1/connection/longpolling`);
        url.searchParams.set('subscriptions', JSON.stringify([{ eventType: 'greeting' }]));
        for (const [k, v] of Object.entries(state)) url.searchParams.set(k, v);
        const res = await fetch(url, { headers: cookie ? { cookie } : {} });
        assert.equal(res.status, 200);
        assert.match(res.headers.get('access-control-expose-headers') ?? '', /gatehouse-connection-token/);
        const token = res.headers.get('gatehouse-connection-token');
        assert.ok(token, 'the answer names its connection');
        state['pollToken'] = token;
        const ack = res.headers.get('gatehouse-last-private-event-id');
        if (ack) state['lastPrivateEventId'] = ack;
        const body = (await res.json()) as
          | 'ok'
          | { last_event_id: string; events: Array<Record<string, unknown>> };
        if (body === 'ok') return;
        state['lastEventId'] = body.last_event_id;
        got.push(...body.events);
      },
    };
  }
  const types = (c: { got: Array<Record<string, unknown>> }) => c.got.map((e) => e['type']);
  const greetings = (c: { got: Array<Record<string, unknown>> }) =>
    c.got.filter((e) => e['type'] === 'greeting').map((e) => (e['data'] as { n: number }).n);

  it('keeps two clients apart, each with every event once and its own welcome', async () => {
    const clients = [queryClient(), queryClient()];
    for (const c of clients) await c.poll(); // "ok": a connection each
    for (const c of clients) await c.poll(); // its welcome events, acknowledged by the next poll
    const ns = [1, 2, 3, 4, 5, 6];
    const polling = clients.map(async (c) => {
      const deadline = Date.now() + 15_000;
      while (greetings(c).length < ns.length && Date.now() < deadline) await c.poll();
    });
    for (const n of ns) {
      await f.publish('greeting', { n });
      await sleep(50);
    }
    await Promise.all(polling);
    for (const c of clients) {
      assert.deepEqual(greetings(c), ns);
      assert.deepEqual(types(c).slice(0, 2), ['gw.connection.create', 'gw.subscriptions_set'], 'once each');
      assert.equal(types(c).filter((t) => t === 'gw.connection.create').length, 1, JSON.stringify(types(c)));
    }
    assert.notEqual(clients[0]!.state['pollToken'], clients[1]!.state['pollToken']);
  });

  it("takes the query's connection before the cookies of another one", async () => {
    const other = new LongPollClient(f.url);
    await other.get(`?subscriptions=${subs([{ eventType: 'greeting' }])}`);
    const jar = [...other.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const mine = queryClient();
    await mine.poll(); // a connection of its own
    const withJar = queryClient(jar);
    Object.assign(withJar.state, mine.state);
    await withJar.poll();
    assert.equal(withJar.state['pollToken'], mine.state['pollToken']);
    assert.deepEqual(types(withJar), ['gw.connection.create', 'gw.subscriptions_set'], 'its own welcome');
    assert.deepEqual(
      (await other.poll()).map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
  });
});

/**
 * A long-poll connection not polled for LONGPOLL_SESSION_TTL is forgotten (its client was away, or
 * its poll waited in a saturated replica's accept queue longer than that), and the client's next
 * poll, on whichever replica, makes a new connection from the client's cursor. Every event after
 * that cursor must come once, or `gw.resync_required` must say it cannot: never a silent gap (the
 * cluster bench lost long-polling clients' events after a replica was killed and the recovery
 * outlasted the TTL). Two replicas on one bus and store, a one-second TTL, the client's cookies
 * carried from one replica to the other as a balancer would.
 */
describe('long-poll connections forgotten and made again', () => {
  const ttlMs = 1000;
  const query = `?subscriptions=${subs([{ eventType: 'greeting' }])}`;
  const started: HubFixture[] = [];
  after(() => Promise.all(started.map((h) => h.stop())));

  async function twoReplicas(b: Record<string, string> = {}, bus = new MemoryBus()) {
    const shared = { bus, store: new MemoryStore() };
    const env = { LONGPOLL_TIMEOUT: '200ms', LONGPOLL_SESSION_TTL: `${ttlMs}ms` };
    const hubs = [
      await startHubFixture({ ...env, REPLICA_ID: 'replica-a' }, shared),
      await startHubFixture({ ...env, ...b, REPLICA_ID: 'replica-b' }, shared),
    ];
    started.push(...hubs);
    return hubs as [HubFixture, HubFixture];
  }

  /** One browser's long polls, to whichever replica, with one cookie jar; what came, in order. */
  function browser() {
    let cookies = new Map<string, string>();
    const greetings: number[] = [];
    let resyncs = 0;
    return {
      greetings,
      /** The jar a browser would send (another client's, to carry a connection over). */
      set cookies(jar: Map<string, string>) {
        cookies = jar;
      },
      get resyncs() {
        return resyncs;
      },
      async poll(on: HubFixture): Promise<'ok' | 'events'> {
        const c = new LongPollClient(on.url);
        c.cookies = cookies;
        const r = await c.get(query);
        assert.equal(r.status, 200, r.text);
        if (r.body === 'ok') return 'ok';
        for (const e of (r.body as { events: Array<Record<string, unknown>> }).events) {
          if (e['type'] === 'gw.resync_required') resyncs++;
          if (e['type'] === 'greeting') greetings.push((e['data'] as { n: number }).n);
        }
        return 'events';
      },
      /** Polls until `n` greetings (or a resync) came, at most 20 polls of the 200 ms window. */
      async pollUntil(on: HubFixture, n: number): Promise<void> {
        for (let i = 0; i < 20 && greetings.length < n && resyncs === 0; i++) await this.poll(on);
      },
    };
  }

  /** Past the TTL and the touch period after it (an eighth of the TTL): the connection is forgotten. */
  const forgotten = () => sleep(ttlMs * 1.125 + 400);

  it('resumes a connection forgotten before it had any event from the start, not from the newest event', async () => {
    const [a, b] = await twoReplicas();
    const client = browser();
    assert.equal(await client.poll(a), 'ok', 'made while the stream was still empty');
    await client.poll(a); // the welcome events; no stream position yet
    for (let n = 1; n <= 3; n++) await a.publish('greeting', { n });
    await forgotten();
    assert.equal(await client.poll(b), 'ok', 'forgotten: a new connection');
    await client.pollUntil(b, 3);
    assert.equal(client.resyncs, 0);
    assert.deepEqual(client.greetings, [1, 2, 3], 'the events published while it was away, once each');
  });

  it('starts a client coming back without a position on a new connection (connectionToken, as @gatehouse/client after a drop) from the start too', async () => {
    const [a, b] = await twoReplicas();
    const before = new LongPollClient(a.url);
    assert.equal((await before.get(query)).body, 'ok', 'made while the stream was still empty');
    await before.get(query); // the welcome events; no stream position yet
    for (let n = 1; n <= 3; n++) await a.publish('greeting', { n });
    // Its next connection names the previous one, with no cookie and no lastEventId.
    const previous = before.cookies.get('connection_token')!;
    const client = browser();
    const again = new LongPollClient(b.url);
    assert.equal((await again.get(`${query}&connectionToken=${previous}`)).body, 'ok');
    client.cookies = again.cookies;
    await client.pollUntil(b, 3);
    assert.equal(client.resyncs, 0);
    assert.deepEqual(client.greetings, [1, 2, 3]);
  });

  it('resumes a forgotten connection from its cursor on another replica', async () => {
    const [a, b] = await twoReplicas();
    const client = browser();
    await client.poll(a);
    await a.publish('greeting', { n: 1 });
    await client.pollUntil(a, 1);
    for (let n = 2; n <= 4; n++) await a.publish('greeting', { n });
    await forgotten();
    assert.equal(await client.poll(b), 'ok');
    await client.pollUntil(b, 4);
    assert.deepEqual(client.greetings, [1, 2, 3, 4]);
    assert.equal(client.resyncs, 0);
  });

  it("replays from the broker a cursor older than the replica's ring", async () => {
    const [a, b] = await twoReplicas({ EVENT_BUFFER_SIZE: '2' });
    const client = browser();
    await client.poll(a);
    await a.publish('greeting', { n: 1 });
    await client.pollUntil(a, 1);
    for (let n = 2; n <= 6; n++) await a.publish('greeting', { n });
    await forgotten();
    assert.equal(await client.poll(b), 'ok');
    await client.pollUntil(b, 6);
    assert.deepEqual(client.greetings, [1, 2, 3, 4, 5, 6]);
    assert.equal(client.resyncs, 0);
  });

  it('says gw.resync_required when neither the ring nor the broker holds its cursor any more', async () => {
    const [a, b] = await twoReplicas({ EVENT_BUFFER_SIZE: '2' }, new MemoryBus({ retention: 3 }));
    const client = browser();
    await client.poll(a);
    await a.publish('greeting', { n: 1 });
    await client.pollUntil(a, 1);
    for (let n = 2; n <= 8; n++) await a.publish('greeting', { n });
    await forgotten();
    assert.equal(await client.poll(b), 'ok');
    await client.pollUntil(b, 8);
    assert.equal(client.resyncs, 1, `told, not a silent gap (got ${client.greetings})`);
  });
});

describe('a long-poll connection its client closes (DELETE)', () => {
  const query = `?subscriptions=${subs([{ eventType: 'greeting' }])}`;
  const started: HubFixture[] = [];
  after(() => Promise.all(started.map((h) => h.stop())));

  /** The long-poll connections the connections API lists, asked of `hub` (the whole cluster). */
  async function listed(hub: HubFixture): Promise<string[]> {
    const res = await fetch(`${hub.apiUrl}/v3/connections?transport=longpolling`);
    assert.equal(res.status, 200);
    return ((await res.json()) as { connections: Array<{ id: string }> }).connections.map((c) => c.id);
  }

  it('forgets it on every replica that served it, at once: listed nowhere, its token answered as a new connection', async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const env = { LONGPOLL_TIMEOUT: '200ms', LONGPOLL_SESSION_TTL: '60s' };
    const a = await startHubFixture({ ...env, REPLICA_ID: 'close-a' }, shared);
    const b = await startHubFixture({ ...env, REPLICA_ID: 'close-b' }, shared);
    started.push(a, b);
    const c = new LongPollClient(a.url);
    assert.equal((await c.get(query)).body, 'ok');
    const token = c.cookies.get('connection_token')!;
    await c.get(query);
    // Polled on b too, as a load balancer without affinity sends polls.
    const onB = new LongPollClient(b.url);
    onB.cookies = c.cookies;
    await onB.get(query);
    await waitFor(async () => (await listed(a)).length === 1, { what: 'the connection listed' });

    const closed = await fetch(
      `${b.url}/_gw/v1/connection/longpolling?pollToken=${encodeURIComponent(token)}`,
      {
        method: 'DELETE',
      },
    );
    assert.equal(closed.status, 204, await closed.text());
    assert.match(closed.headers.get('set-cookie') ?? '', /connection_token=;.*Max-Age=0/);
    await waitFor(async () => (await listed(a)).length === 0 && (await listed(b)).length === 0, {
      timeoutMs: 5_000,
      what: 'the connection listed on neither replica',
    });
    // Closed twice (a retried DELETE): the same answer.
    const again = await fetch(
      `${a.url}/_gw/v1/connection/longpolling?pollToken=${encodeURIComponent(token)}`,
      {
        method: 'DELETE',
      },
    );
    assert.equal(again.status, 204);
    // A poll with the old token makes a new connection.
    const poll = new LongPollClient(a.url);
    poll.cookies = new Map([['connection_token', token]]);
    assert.equal((await poll.get(query)).body, 'ok');
  });

  it('forgets a connection when its JWT expires, not LONGPOLL_SESSION_TTL later (each token renewal left one listed)', async () => {
    const f = await startHubFixture({ LONGPOLL_TIMEOUT: '200ms', LONGPOLL_SESSION_TTL: '60s' });
    started.push(f);
    const exp = Math.floor(Date.now() / 1000) + 3;
    const c = new LongPollClient(f.url);
    assert.equal(
      (await c.get(`${query}&jwt=${f.jwt({ exp, jti: 'expiring-session', sub: 'expiring' })}`)).body,
      'ok',
    );
    await c.get(query);
    assert.equal((await listed(f)).length, 1);
    await waitFor(async () => (await listed(f)).length === 0, {
      timeoutMs: 10_000,
      what: 'the connection forgotten once its JWT expired',
    });
    assert.ok(Date.now() >= exp * 1000, 'not forgotten before its JWT expired');
  });

  it('answers 400 to a DELETE that names no connection or a forged one, and says DELETE in its preflight', async () => {
    const f = await startHubFixture({});
    started.push(f);
    for (const suffix of ['', '?pollToken=not-a-token']) {
      const res = await fetch(`${f.url}/_gw/v1/connection/longpolling${suffix}`, { method: 'DELETE' });
      assert.equal(res.status, 400, suffix);
      assert.match(await res.text(), /connection token/i);
    }
    const preflight = await fetch(`${f.url}/_gw/v1/connection/longpolling`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'DELETE' },
    });
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /DELETE/);
    const put = await fetch(`${f.url}/_gw/v1/connection/longpolling`, { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET, DELETE, OPTIONS');
  });
});

describe('long-polling wake-ups', () => {
  let f: HubFixture;
  let store: CountingStore;
  before(async () => {
    store = new CountingStore();
    // A 20 s poll window, far above a wake-up's time: a poll answered by its window's timer instead
    // of the event is told apart on a loaded machine (the test wakes every poll; none waits it out).
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '20s' }, { bus: new MemoryBus(), store });
  });
  after(() => f.stop());

  it('wakes only the polls an event matches, and costs the waiting ones no store command', async () => {
    const clients = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const c = new LongPollClient(f.url);
        await c.get(`?subscriptions=${subs([{ eventType: 'greeting', oneOf: [{ name: `c${i}` }] }])}`);
        await c.poll();
        return c;
      }),
    );
    const answered = new Map<number, { at: number; events: Array<Record<string, unknown>> }>();
    store.acknowledged.clear();
    const polls = clients.map((c, i) =>
      c.poll().then((events) => void answered.set(i, { at: performance.now(), events })),
    );
    await waitFor(() => store.acknowledged.size === clients.length, { what: 'every poll to wait' });
    store.calls = 0;
    for (let n = 0; n < 200; n++) await f.publish('greeting', { name: 'nobody', n });
    await sleep(100);
    assert.equal(answered.size, 0, 'no poll answered for events it did not subscribe to');
    assert.equal(store.calls, 0, 'and none of them asked the store anything');
    const published = performance.now();
    await f.publish('greeting', { name: 'c7' });
    await waitFor(() => answered.has(7), { what: 'the poll waiting for c7' });
    assert.ok(answered.get(7)!.at - published < 2000, 'woken at once, not by a timer');
    assert.deepEqual(
      answered.get(7)!.events.map((e) => e['data']),
      [{ name: 'c7' }],
    );
    assert.equal(answered.size, 1, 'the others sleep on');
    assert.ok(store.calls <= 4, `the woken poll's answer took ${store.calls} store commands`);
    for (let i = 0; i < clients.length; i++) if (i !== 7) await f.publish('greeting', { name: `c${i}` });
    await Promise.all(polls);
    assert.equal(answered.size, clients.length, 'each woken by its own event');
  });
});

describe('long-poll cookies under TLS', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({}, undefined, { tls: true });
  });
  after(() => f.stop());

  const path = '/_gw/v1/connection/longpolling';

  /** The Set-Cookie lines of a connect over HTTPS (HTTP/1.1) or HTTP/2. */
  async function cookiesOver(protocol: 'https' | 'h2'): Promise<string[]> {
    if (protocol === 'https') {
      return new Promise((resolve, reject) => {
        const req = httpsRequest(`${f.tlsUrl}${path}`, { ca: f.ca, agent: false }, (res) => {
          res.resume();
          resolve(res.headers['set-cookie'] ?? []);
        });
        req.on('error', reject);
        req.end();
      });
    }
    const session = http2Connect(f.tlsUrl, { ca: f.ca });
    try {
      const stream = session.request({ ':path': path });
      const [headers] = (await once(stream, 'response')) as [Record<string, string[] | undefined>];
      stream.resume();
      return headers['set-cookie'] ?? [];
    } finally {
      session.close();
    }
  }

  for (const protocol of ['https', 'h2'] as const) {
    it(`marks every cookie Secure when the connect came over TLS (${protocol})`, async () => {
      const cookies = await cookiesOver(protocol);
      assert.equal(cookies.length, 2);
      for (const c of cookies) assert.match(c, /; Secure(;|$)/, c);
    });
  }

  it('marks them Secure behind a proxy that ended TLS (X-Forwarded-Proto: https), not over plain HTTP', async () => {
    const plain = await fetch(`${f.url}${path}`);
    for (const c of plain.headers.getSetCookie()) assert.doesNotMatch(c, /Secure/, c);
    const forwarded = await fetch(`${f.url}${path}`, { headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(forwarded.headers.getSetCookie().length, 2);
    for (const c of forwarded.headers.getSetCookie()) assert.match(c, /; Secure(;|$)/, c);
  });

  it('keeps Secure on the cookies of a poll and on the cleared ones of a killed session', async () => {
    const c = new LongPollClient(f.url);
    const secure = { 'x-forwarded-proto': 'https' };
    const jwt = f.jwt({ username: 't', jti: 'tls-session' });
    const headersOf = async (query = '') => {
      const res = await fetch(`${f.url}${path}${query}`, {
        headers: { ...secure, cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      const cookies = res.headers.getSetCookie();
      for (const line of cookies) {
        const [k, v] = line.split(';')[0]!.split('=');
        c.cookies.set(k!, v ?? '');
      }
      await res.text();
      return cookies;
    };
    await headersOf(`?jwt=${jwt}`);
    const polled = await headersOf();
    assert.equal(polled.length, 3, 'connection_token, last_event_id, last_private_event_id');
    for (const line of polled) assert.match(line, /; Secure(;|$)/, line);
    await f.blacklist('tls-session');
    const cleared = await headersOf();
    assert.equal(cleared.length, 3);
    for (const line of cleared) assert.match(line, /Max-Age=0.*; Secure|; Secure.*Max-Age=0/, line);
  });
});
