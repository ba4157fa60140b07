/**
 * Lifecycle events on the bus (LIFECYCLE_EVENTS_TOPIC), on the memory bus: every connection, on
 * every transport, is told on the topic once when it opens and once when it ends, with why
 * (its client left, an operator, a kill, its JWT's expiry, the replica's drain); every change of its
 * subscriptions, by its client or an operator, once. A bus that refuses costs a bounded buffer
 * (the rest dropped and counted on /metrics) and gets each buffered event once it takes them again;
 * a stopping replica produces every close its drain caused before it stops.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Bus, MemoryBus, type OutgoingMessage, type Position } from '@gatehouse/bus';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { MemoryStore } from '@gatehouse/store';
import WebSocket from 'ws';
import { connectionIds, socketIoClient } from '../connection-clients.ts';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

const topic = 'hub-lifecycle';
const tokenSecret = 'a-token-secret-for-tests';
const idOf = connectionIds(tokenSecret);

interface LifecycleEvent {
  specversion: string;
  id: string;
  type: string;
  source: string;
  time: string;
  data: {
    connectionId: string;
    transport: string;
    replica: string;
    user: string | null;
    sessionId: string | null;
    subscriptionCount: number;
    eventTypes: string[];
    reason?: string;
    cause?: string;
  };
}

/** Everything produced to the lifecycle topic of `bus`. */
async function collect(bus: Bus): Promise<LifecycleEvent[]> {
  const seen: LifecycleEvent[] = [];
  await bus.subscribe(topic, (m) => {
    seen.push(JSON.parse(m.value.toString()) as LifecycleEvent);
  });
  return seen;
}

const of = (seen: LifecycleEvent[], id: string, type: string) =>
  seen.filter((e) => e.data.connectionId === id && e.type === type);

async function one(seen: LifecycleEvent[], id: string, type: string): Promise<LifecycleEvent> {
  await waitFor(() => of(seen, id, type).length > 0, { what: `${type} of ${id}`, timeoutMs: 10_000 });
  return of(seen, id, type)[0]!;
}

const welcomeToken = (events: Array<Record<string, unknown>>) =>
  (events.find((e) => e['type'] === 'gw.connection.create')?.['data'] as { connection_token?: string })
    ?.connection_token;

function sseUrl(hub: HubFixture, jwt: string, types = ['news']): string {
  const subs = encodeURIComponent(JSON.stringify(types.map((eventType) => ({ eventType }))));
  return `${hub.url}/_gw/v1/connection/sse?jwt=${jwt}&subscriptions=${subs}`;
}

async function sse(hub: HubFixture, jwt: string) {
  const client = await openSse(sseUrl(hub, jwt));
  const token = await waitFor(() => welcomeToken(client.events()), { what: 'SSE welcome' });
  return { client, token, id: idOf(token) };
}

async function ws(hub: HubFixture, jwt: string) {
  const client = openWs(`${hub.wsUrl}/_gw/v1/connection/ws?jwt=${jwt}`);
  const token = await waitFor(() => welcomeToken(client.events), { what: 'WebSocket welcome' });
  return { client, token, id: idOf(token) };
}

async function longPoll(hub: HubFixture, jwt: string) {
  const client = new LongPollClient(hub.url);
  const created = await client.get(`?jwt=${jwt}`);
  assert.equal(created.status, 200, created.text);
  const token = client.cookies.get('connection_token')!;
  return { client, token, id: idOf(token) };
}

describe('lifecycle events', () => {
  let hub: HubFixture;
  let seen: LifecycleEvent[];
  before(async () => {
    hub = await startHubFixture({
      LIFECYCLE_EVENTS_TOPIC: topic,
      LIFECYCLE_EVENTS_FLUSH_INTERVAL: '10ms',
      LONGPOLL_TIMEOUT: '300ms',
    });
    seen = await collect(hub.bus);
  });
  after(() => hub.stop());

  it('tells once of every connection opened and closed by its client, on every transport, with its replica, user and session', async () => {
    const jwt = (n: number) => hub.jwt({ username: `user-${n}`, jti: `session-${n}` });
    const s = await sse(hub, jwt(1));
    const w = await ws(hub, jwt(2));
    const lp = await longPoll(hub, jwt(3));
    const io = await socketIoClient(hub.url, { jwt: jwt(4), subscriptions: [{ eventType: 'news' }] }, idOf);
    const ids = { sse: s.id, ws: w.id, longpolling: lp.id, socketio: io.id };
    for (const [n, [transport, id]] of Object.entries(ids).entries()) {
      const opened = await one(seen, id, 'gw.connection.opened');
      assert.equal(opened.specversion, '1.0');
      assert.equal(opened.source, '/gw/push-hub/replica-1');
      assert.ok(!Number.isNaN(Date.parse(opened.time)));
      assert.equal(opened.data.transport, transport);
      assert.equal(opened.data.replica, 'replica-1');
      assert.equal(opened.data.user, `user-${n + 1}`);
      assert.equal(opened.data.sessionId, `session-${n + 1}`);
      assert.ok(opened.data.eventTypes.includes('greeting'), JSON.stringify(opened.data));
    }
    s.client.close();
    w.client.ws.terminate();
    io.close();
    const deleted = await fetch(`${hub.url}/_gw/v1/connection/longpolling?pollToken=${lp.token}`, {
      method: 'DELETE',
    });
    assert.equal(deleted.status, 204);
    for (const id of Object.values(ids))
      assert.equal((await one(seen, id, 'gw.connection.closed')).data.reason, 'client_closed');
    for (const id of Object.values(ids)) {
      assert.equal(of(seen, id, 'gw.connection.opened').length, 1);
      assert.equal(of(seen, id, 'gw.connection.closed').length, 1);
    }
    assert.equal(new Set(seen.map((e) => e.id)).size, seen.length, 'every event has its own id');
  });

  it('gives the reason of each end: an operator, a session kill, the JWT expiry', async () => {
    const operated = await ws(hub, hub.jwt({ username: 'op' }));
    const operatedLp = await longPoll(hub, hub.jwt({ username: 'op-lp' }));
    const killed = await sse(hub, hub.jwt({ username: 'k', jti: 'kill-me' }));
    const expiring = await sse(hub, hub.jwt({ username: 'x', exp: Math.floor(Date.now() / 1000) + 2 }));
    for (const c of [operated, operatedLp]) {
      const res = await fetch(`${hub.apiUrl}/v3/connections/${c.id}?reconnect=false`, { method: 'DELETE' });
      assert.equal(res.status, 200, await res.text());
    }
    await operatedLp.client.get(); // takes its gw.connection_closed: the connection ends there
    await hub.blacklist('kill-me');
    assert.equal((await one(seen, operated.id, 'gw.connection.closed')).data.reason, 'disconnected');
    assert.equal((await one(seen, operatedLp.id, 'gw.connection.closed')).data.reason, 'disconnected');
    assert.equal((await one(seen, killed.id, 'gw.connection.closed')).data.reason, 'session_killed');
    assert.equal((await one(seen, expiring.id, 'gw.connection.closed')).data.reason, 'session_expired');
    for (const c of [operated, operatedLp, killed, expiring])
      assert.equal(of(seen, c.id, 'gw.connection.closed').length, 1);
  });

  it('tells of subscription changes by the client and by an operator, on SSE and long-polling', async () => {
    const s = await sse(hub, hub.jwt({ username: 'changer' }));
    const lp = await longPoll(hub, hub.jwt({ username: 'changer-lp' }));
    for (const c of [s, lp]) {
      const transport = c === s ? 'sse' : 'longpolling';
      const res = await fetch(`${hub.url}/_gw/v1/connection/${transport}/${c.token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'sports' }, { eventType: 'weather' }] }),
      });
      assert.equal(res.status, 204, await res.text());
      const byClient = await one(seen, c.id, 'gw.subscriptions.changed');
      assert.equal(byClient.data.cause, 'client');
      assert.deepEqual(byClient.data.eventTypes, ['sports', 'weather']);
      const op = await fetch(`${hub.apiUrl}/v3/connections/${c.id}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'alerts' }] }),
      });
      assert.equal(op.status, 204, await op.text());
      await waitFor(() => of(seen, c.id, 'gw.subscriptions.changed').length === 2, { timeoutMs: 10_000 });
      const byOperator = of(seen, c.id, 'gw.subscriptions.changed')[1]!;
      assert.equal(byOperator.data.cause, 'operator');
      assert.ok(byOperator.data.eventTypes.includes('alerts'), JSON.stringify(byOperator.data));
    }
    s.client.close();
  });

  it('counts a replica-wide limit: events past LIFECYCLE_EVENTS_MAX_BUFFER are dropped, the rest produced once the bus takes them again', async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const refusing = new RefusingBus(shared.bus);
    const flaky = await startHubFixture(
      {
        REPLICA_ID: 'flaky',
        LIFECYCLE_EVENTS_TOPIC: topic,
        LIFECYCLE_EVENTS_FLUSH_INTERVAL: '10ms',
        LIFECYCLE_EVENTS_MAX_BUFFER: '5',
      },
      { ...shared, lifecycleBus: refusing },
    );
    try {
      const got = await collect(shared.bus);
      refusing.down = true;
      const clients = [];
      for (let i = 0; i < 8; i++)
        clients.push(await openSse(sseUrl(flaky, flaky.jwt({ username: `u${i}` }))));
      await waitFor(async () => (await flaky.metric('gw_lifecycle_events_publish_failures_total')) >= 2, {
        what: 'a batch refused, then its retry',
      });
      assert.equal(await flaky.metric('gw_lifecycle_events_dropped_total', 'reason="buffer_full"'), 3);
      assert.equal(await flaky.metric('gw_lifecycle_events_buffered'), 5);
      assert.equal(got.length, 0);
      refusing.down = false;
      await waitFor(() => got.length === 5, { what: 'the 5 buffered events', timeoutMs: 15_000 });
      assert.equal(new Set(got.map((e) => e.id)).size, 5, 'none twice');
      assert.equal(await flaky.metric('gw_lifecycle_events_produced_total'), 5);
      assert.equal(await flaky.metric('gw_lifecycle_events_buffered'), 0);
      for (const c of clients) c.close();
    } finally {
      await flaky.stop();
      await shared.bus.close();
    }
  });

  it('produces, before it stops, the close of every connection its drain ended (none lost)', async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    // Nothing goes out on its own before the stop: only the stop's flush can produce them.
    const stopping = await startHubFixture(
      {
        REPLICA_ID: 'stopping',
        LIFECYCLE_EVENTS_TOPIC: topic,
        LIFECYCLE_EVENTS_FLUSH_INTERVAL: '1m',
        LIFECYCLE_EVENTS_BATCH_SIZE: '1000',
        SHUTDOWN_DRAIN_TIMEOUT_MS: '2000',
      },
      shared,
    );
    const got = await collect(shared.bus);
    const ids: string[] = [];
    const open: Array<{ close(): void }> = [];
    for (let i = 0; i < 5; i++) {
      const s = await sse(stopping, stopping.jwt({ username: `s${i}` }));
      const w = await ws(stopping, stopping.jwt({ username: `w${i}` }));
      ids.push(s.id, w.id);
      open.push(s.client, { close: () => w.client.ws.terminate() });
    }
    assert.equal(got.length, 0);
    await stopping.stop();
    await waitFor(() => got.length >= 20, { what: '10 opened and 10 closed', timeoutMs: 5000 });
    for (const id of ids) {
      assert.equal(of(got, id, 'gw.connection.opened').length, 1);
      const closed = of(got, id, 'gw.connection.closed');
      assert.equal(closed.length, 1, `closed of ${id}`);
      assert.equal(closed[0]!.data.reason, 'shutdown');
    }
    for (const c of open) c.close();
    await shared.bus.close();
  });

  it('tells a WebSocket that stopped answering pings (idle_timeout) from one that sent a message (protocol_error)', async () => {
    const bus = new MemoryBus();
    const quick = await startHubFixture(
      {
        REPLICA_ID: 'quick',
        LIFECYCLE_EVENTS_TOPIC: topic,
        LIFECYCLE_EVENTS_FLUSH_INTERVAL: '10ms',
        HEARTBEAT_INTERVAL: '100ms',
      },
      { bus, store: new MemoryStore() },
    );
    const sockets: WebSocket[] = [];
    try {
      const got = await collect(bus);
      const open = async (options: WebSocket.ClientOptions) => {
        const socket = new WebSocket(
          `${quick.wsUrl}/_gw/v1/connection/ws?jwt=${quick.jwt({ username: 'w' })}`,
          options,
        );
        sockets.push(socket);
        const events: Array<Record<string, unknown>> = [];
        socket.on('message', (data) => events.push(JSON.parse(data.toString()) as Record<string, unknown>));
        socket.on('error', () => {});
        const token = await waitFor(() => welcomeToken(events), { what: 'WebSocket welcome' });
        return { socket, id: idOf(token) };
      };
      const silent = await open({ autoPong: false });
      const talker = await open({});
      talker.socket.send('hello');
      assert.equal((await one(got, silent.id, 'gw.connection.closed')).data.reason, 'idle_timeout');
      assert.equal((await one(got, talker.id, 'gw.connection.closed')).data.reason, 'protocol_error');
    } finally {
      for (const s of sockets) s.terminate();
      await quick.stop();
      await bus.close();
    }
  });

  it('tells once, from one replica of two, of a long-poll connection nobody polls any more (idle_timeout, with its user)', async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const env = {
      LIFECYCLE_EVENTS_TOPIC: topic,
      LIFECYCLE_EVENTS_FLUSH_INTERVAL: '10ms',
      LONGPOLL_TIMEOUT: '200ms',
      LONGPOLL_SESSION_TTL: '1s',
    };
    const a = await startHubFixture({ ...env, REPLICA_ID: 'lp-a' }, shared);
    const b = await startHubFixture({ ...env, REPLICA_ID: 'lp-b' }, shared);
    try {
      const got = await collect(shared.bus);
      const lp = await longPoll(a, a.jwt({ username: 'left', jti: 'left-session' }));
      const polled = await new LongPollClient(b.url).get(`?pollToken=${lp.token}`);
      assert.equal(polled.status, 200, polled.text);
      const closed = await one(got, lp.id, 'gw.connection.closed');
      assert.equal(closed.data.reason, 'idle_timeout');
      assert.equal(closed.data.user, 'left');
      assert.equal(closed.data.sessionId, 'left-session');
      assert.ok(closed.data.eventTypes.includes('greeting'), JSON.stringify(closed.data));
      // A connection opened and closed on each replica after it: both have produced what they made before.
      for (const hub of [a, b]) {
        const marker = await sse(hub, hub.jwt({ username: 'marker' }));
        marker.client.close();
        await one(got, marker.id, 'gw.connection.closed');
      }
      assert.equal(of(got, lp.id, 'gw.connection.closed').length, 1);
      assert.equal(of(got, lp.id, 'gw.connection.opened').length, 1);
    } finally {
      await a.stop();
      await b.stop();
      await shared.bus.close();
    }
  });

  it('is off unless LIFECYCLE_EVENTS_TOPIC is set, and refuses the fan-out topic as its topic', async () => {
    const off = await startHubFixture({ REPLICA_ID: 'off' });
    try {
      const text = await (await fetch(`${off.apiUrl}/metrics`)).text();
      assert.doesNotMatch(text, /gw_lifecycle_events/);
    } finally {
      await off.stop();
    }
    await assert.rejects(
      startHubFixture({ LIFECYCLE_EVENTS_TOPIC: 'gw.events' }),
      /LIFECYCLE_EVENTS_TOPIC: must not be the fan-out topic/,
    );
  });
});

/** The memory bus, refusing every publish while `down` (a broker that is unreachable). */
class RefusingBus extends MemoryBus {
  down = false;
  private readonly inner: MemoryBus;

  constructor(inner: MemoryBus) {
    super();
    this.inner = inner;
  }

  override publish(t: string, message: OutgoingMessage): Promise<Position> {
    if (this.down) return Promise.reject(new Error('broker unreachable'));
    return this.inner.publish(t, message);
  }
}

describe('lifecycle events: presence', () => {
  const presenceTopic = 'hub-lifecycle-presence';
  let hub: HubFixture;
  const seen: Array<{ type: string; data: Record<string, unknown> }> = [];
  before(async () => {
    hub = await startHubFixture({
      LIFECYCLE_EVENTS_TOPIC: presenceTopic,
      LIFECYCLE_EVENTS_FLUSH_INTERVAL: '10ms',
      PRESENCE_EVENT_TYPES: 'greeting',
      PRESENCE_LEAVE_DELAY: '100ms',
    });
    await hub.bus.subscribe(presenceTopic, (m) => {
      seen.push(JSON.parse(m.value.toString()) as { type: string; data: Record<string, unknown> });
    });
  });
  after(() => hub.stop());

  it('puts each join and leave of an announced type on the topic once, with the session and the replica', async () => {
    const jwt = hub.jwt({ username: 'pia', jti: 'pia-session' });
    const subs = encodeURIComponent(JSON.stringify([{ eventType: 'greeting', oneOf: [{ name: 'lobby' }] }]));
    const url = `${hub.url}/_gw/v1/connection/sse?jwt=${jwt}&subscriptions=${subs}`;
    const [tab1, tab2] = [await openSse(url), await openSse(url)];
    // Its JWT infers greetings of name "pia" too: a second place. This test looks at the lobby.
    const presence = (type: string) =>
      seen.filter((e) => e.type === type && JSON.stringify(e.data['where']) === '{"name":"lobby"}');
    await waitFor(() => presence('gw.presence.joined').length === 1, {
      what: 'the join',
      timeoutMs: 10_000,
    }).catch((err) => {
      throw new Error(`${err.message}; seen: ${seen.map((e) => e.type).join(', ')}`);
    });
    tab1.close();
    tab2.close();
    await waitFor(() => presence('gw.presence.left').length === 1, { what: 'the leave', timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(presence('gw.presence.joined').length, 1, 'two tabs of one session: one join');
    assert.equal(presence('gw.presence.left').length, 1);
    const joined = presence('gw.presence.joined')[0]!.data;
    assert.deepEqual(
      { ...joined, member: typeof joined['member'] },
      {
        eventType: 'greeting',
        where: { name: 'lobby' },
        member: 'string',
        user: 'pia',
        replica: 'replica-1',
        sessionId: 'pia-session',
      },
    );
    assert.equal(presence('gw.presence.left')[0]!.data['member'], joined['member']);
  });
});
