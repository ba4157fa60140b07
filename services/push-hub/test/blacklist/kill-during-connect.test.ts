/**
 * A session killed while one of its connects is being admitted: the connect read the blacklist
 * before the kill was written ("not blacklisted"), and the kill's notification reached the hub
 * before the connection was held, so `killSession` found nothing to close. Over Redis this is two
 * connections (commands and pub/sub) whose answers come in either order; here a store holds the
 * blacklist read's answer until the test has written the kill and the hub has heard it. The
 * connection must still end with `gw.session_killed`, on every transport the hub holds. So must it
 * when the kill was never heard (the store watch was cut off, and listened again while the connect
 * was admitted), and when a subscription change gives a connection its session as the kill comes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { blacklistKey } from '@gatehouse/auth';
import { MemoryBus } from '@gatehouse/bus';
import { LongPollClient, openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';
import { WatchCutStore } from './watch-cut-store.ts';

/**
 * A memory store whose blacklist reads answer what the store held when asked, once let go; its
 * notifications can be lost (`muted`, as while a watch reconnects) and it can tell of a resync.
 */
class StaleBlacklistReads extends WatchCutStore {
  readonly held = new Map<string, () => void>();
  /** Off: blacklist reads answer at once. */
  holding = true;

  override async ttl(key: string): Promise<number | undefined> {
    const answer = await super.ttl(key);
    if (!this.holding || !key.startsWith(blacklistKey(''))) return answer;
    await new Promise<void>((resolve) => this.held.set(key, resolve));
    return answer;
  }

  letGo(key: string): void {
    this.held.get(key)?.();
    this.held.delete(key);
  }
}

describe('a session killed while its connect is admitted', () => {
  const store = new StaleBlacklistReads();
  const bus = new MemoryBus();
  let f: HubFixture;
  let kills = 0;
  before(async () => {
    f = await startHubFixture({}, { bus, store });
  });
  after(async () => {
    for (const key of [...store.held.keys()]) store.letGo(key);
    await f.stop();
    await bus.close();
    await store.close();
  });

  /** Writes the kill while the connect's blacklist read is held, then lets the (stale) answer go. */
  async function killDuringAdmission(sessionId: string): Promise<void> {
    const key = blacklistKey(sessionId);
    await waitFor(() => store.held.has(key), { what: 'the connect to read the blacklist' });
    await f.blacklist(sessionId);
    // The hub hears the kill (the memory store tells its watchers at once) before the read answers.
    await sleep(20);
    kills++;
    store.letGo(key);
  }

  /** PUT of a connection's subscriptions with a JWT of session `jti` (its reply is awaited by the caller). */
  const changeWithJwt = (transport: string, connectionToken: string, jti: string) =>
    fetch(`${f.url}/_gw/v1/connection/${transport}/${encodeURIComponent(connectionToken)}/subscriptions`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${f.jwt({ username: 'a', jti })}`,
      },
      body: JSON.stringify({ subscriptions: [{ eventType: 'greeting' }] }),
    });

  it('ends an SSE stream admitted on a stale "not blacklisted"', async () => {
    const opening = openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'a', jti: 'sse-race' })}`,
    );
    await killDuringAdmission('sse-race');
    const victim = await opening;
    assert.equal(victim.status, 200);
    await Promise.race([victim.ended, sleep(5000)]);
    assert.deepEqual(
      victim.frames.map((fr) => fr.event),
      ['gw.session_killed'],
      'the kill only: no welcome, so no connection token',
    );
    victim.close();
  });

  it('closes a WebSocket admitted on a stale "not blacklisted"', async () => {
    const c = openWs(`${f.wsUrl}/_gw/v1/connection/ws?jwt=${f.jwt({ username: 'a', jti: 'ws-race' })}`);
    try {
      await killDuringAdmission('ws-race');
      const closed = await Promise.race([c.closed, sleep(5000).then(() => undefined)]);
      assert.equal(closed?.reason, 'Session killed.');
      assert.deepEqual(
        c.events.map((e) => e['type']),
        ['gw.session_killed'],
      );
    } finally {
      c.ws.close();
    }
  });

  it('disconnects a socket.io client admitted on a stale "not blacklisted"', async () => {
    const socket = io(f.url, {
      path: '/_gw/v1/socket.io/',
      auth: { jwt: f.jwt({ username: 'a', jti: 'sio-race' }) },
      transports: ['websocket'],
      reconnection: false,
    });
    const events: string[] = [];
    socket.onAny((type: string) => events.push(type));
    const disconnected = new Promise<string>((resolve) => socket.on('disconnect', resolve));
    try {
      await killDuringAdmission('sio-race');
      assert.equal(
        await Promise.race([disconnected, sleep(5000).then(() => 'still connected')]),
        'io server disconnect',
      );
      assert.deepEqual(events, ['gw.session_killed']);
    } finally {
      socket.close();
    }
  });

  it('ends a connect admitted across a cut store watch, whose kill was never heard', async () => {
    const opening = openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'a', jti: 'cut-race' })}`,
    );
    const key = blacklistKey('cut-race');
    await waitFor(() => store.held.has(key), { what: 'the connect to read the blacklist' });
    store.muted = true;
    await f.blacklist('cut-race');
    store.muted = false;
    // The watch listens again: the hub looks up the sessions it holds, which this connect is not yet.
    store.resync();
    await sleep(20);
    kills++;
    store.letGo(key);
    const victim = await opening;
    await Promise.race([victim.ended, sleep(5000)]);
    assert.equal(victim.frames.at(-1)?.event, 'gw.session_killed', 'the stream ends with the kill');
    victim.close();
  });

  it('ends a connection whose subscription change gives it a session killed meanwhile', async () => {
    const c = await openSse(`${f.url}/_gw/v1/connection/sse`);
    await waitFor(() => c.frames.length >= 2);
    const token = c.events('gw.connection.create')[0]!['data'] as { connection_token: string };
    const changing = changeWithJwt('sse', token.connection_token, 'change-race');
    await killDuringAdmission('change-race');
    assert.equal((await changing).status, 204);
    await Promise.race([c.ended, sleep(5000)]);
    assert.equal(c.frames.at(-1)?.event, 'gw.session_killed', 'the stream ends with the kill');
    c.close();
  });

  it("ends a connection changed with another session's JWT when that session is killed", async () => {
    const opening = openSse(`${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'a', jti: 'own' })}`);
    await waitFor(() => store.held.has(blacklistKey('own')));
    store.letGo(blacklistKey('own'));
    const c = await opening;
    await waitFor(() => c.frames.length >= 2);
    const token = c.events('gw.connection.create')[0]!['data'] as { connection_token: string };
    const changing = changeWithJwt('sse', token.connection_token, 'taken');
    await waitFor(() => store.held.has(blacklistKey('taken')));
    store.letGo(blacklistKey('taken'));
    assert.equal((await changing).status, 204);
    // The session whose JWT it holds now is killed: it goes with it.
    await f.blacklist('taken');
    kills++;
    await Promise.race([c.ended, sleep(5000)]);
    assert.equal(c.frames.at(-1)?.event, 'gw.session_killed', 'the stream ends with the kill');
    c.close();
  });

  it("ends a long-poll connection changed with another session's JWT when that session is killed", async (t) => {
    // Every poll reads the blacklist: here the reads answer at once.
    store.holding = false;
    t.after(() => {
      store.holding = true;
    });
    const c = new LongPollClient(f.url);
    assert.equal((await c.get(`?jwt=${f.jwt({ username: 'a', jti: 'lp-own' })}`)).status, 200);
    const welcome = await c.poll();
    const token = (welcome[0]!['data'] as { connection_token: string }).connection_token;
    const changed = await changeWithJwt('longpolling', token, 'lp-taken');
    assert.equal(changed.status, 204);
    await f.blacklist('lp-taken');
    const events: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 5 && events.at(-1)?.['type'] !== 'gw.session_killed'; i++)
      events.push(...(await c.poll()));
    assert.equal(events.at(-1)?.['type'], 'gw.session_killed');
  });

  it('counts those kills, and lets a later connect of another session in', async () => {
    assert.equal(await f.metric('gw_session_kills_total'), kills);
    const other = openSse(`${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'a', jti: 'innocent' })}`);
    await waitFor(() => store.held.has(blacklistKey('innocent')));
    store.letGo(blacklistKey('innocent'));
    const c = await other;
    await waitFor(() => c.frames.length >= 2);
    await sleep(100);
    assert.deepEqual(
      c.frames.map((fr) => fr.event),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    c.close();
  });
});
