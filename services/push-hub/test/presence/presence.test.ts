/**
 * Presence across two push-hub processes on real Redis (fan-out bus, control bus, store), asked
 * and watched from outside: `GET /v3/presence` (internal) and `GET /_gw/v1/presence` (clients,
 * allowed as subscribing is) count and list who is present in a chat room over every transport;
 * a client subscribed to `gw.presence.joined` / `gw.presence.left` of a room hears each member
 * join once (a second tab, on either replica, is no new join) and leave once, after the leave delay,
 * and never for a reconnect to the other replica; a SIGKILLed replica's members leave within the
 * registry's TTL plus one check.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { type ServiceProcess, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import {
  type ConnectParams,
  connectionIds,
  longPollClient,
  socketIoClient,
  sseClient,
  type TestClient,
  wsClient,
} from '../connection-clients.ts';
import { startRedisHubPair } from '../connections-api/redis-hub-pair.ts';

const run = uniqueName('presence');
const tokenSecret = `${run}-token-secret`;
const jwtSecret = 'presence-test-jwt-secret-long-enough';
const apiToken = 'presence-test-internal-token';
const leaveDelayMs = 1500;
const env = {
  FANOUT_TOPIC: `${run}-events`,
  JWT_SECRET_KEY: jwtSecret,
  TOKEN_SECRET: tokenSecret,
  INTERNAL_API_TOKEN: apiToken,
  SUBSCRIPTION_CHECK: 'jwt_validation',
  EXTRACTORS: JSON.stringify({
    'chat.message': { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
  }),
  PRESENCE_EVENT_TYPES: 'chat.message',
  PRESENCE_LEAVE_DELAY: `${leaveDelayMs}ms`,
  PRESENCE_CACHE_TTL: '0ms',
  CONNECTIONS_API_TIMEOUT: '2s',
  LONGPOLL_TIMEOUT: '1s',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
};
const internal = { authorization: `Bearer ${apiToken}` };

const jwtOf = (user: string, session: string) =>
  signJwt(withExpiry({ username: user, jti: session }), { alg: 'HS256', key: jwtSecret });
const inRoom = (user: string, session: string, room: number): ConnectParams => ({
  jwt: jwtOf(user, session),
  subscriptions: [{ eventType: 'chat.message', oneOf: [{ room }] }],
});
const where = (room: number) => encodeURIComponent(JSON.stringify({ room }));

interface PresenceAnswer {
  count: number;
  connections: Array<Record<string, string>>;
  members: Array<{ member: string; user?: string }>;
  complete: boolean;
  partial: boolean;
  missing: string[];
}

describe('presence across two hub replicas', () => {
  const hubs: ServiceProcess[] = [];
  const clients: TestClient[] = [];
  let a: ServiceProcess;
  let b: ServiceProcess;
  const idOf = connectionIds(tokenSecret);
  const ws = (h: ServiceProcess) => h.publicUrl!.replace('http', 'ws');
  const keep = async (c: Promise<TestClient>) => {
    const client = await c;
    clients.push(client);
    return client;
  };

  before(async () => {
    [a, b] = await startRedisHubPair(run, env, hubs);
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const hub of hubs) await hub.stop();
  });

  const internalPresence = async (hub: ServiceProcess, query: string) => {
    const res = await fetch(`${hub.apiUrl}/v3/presence?${query}`, { headers: internal });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as PresenceAnswer;
  };
  const publicPresence = (hub: ServiceProcess, query: string, jwt?: string) =>
    fetch(`${hub.publicUrl}/_gw/v1/presence?${query}`, {
      headers: jwt === undefined ? {} : { authorization: `Bearer ${jwt}` },
    });
  /** The presence events a watcher got, as `kind user` (`joined erin`). */
  const heard = (c: TestClient) =>
    c.events
      .filter((e) => String(e['type']).startsWith('gw.presence.'))
      .map(
        (e) => `${String(e['type']).slice('gw.presence.'.length)} ${(e['data'] as { user: string }).user}`,
      );
  const watcher = (hub: ServiceProcess, room: number) =>
    keep(
      sseClient(
        hub.publicUrl!,
        {
          jwt: jwtOf('watcher', uniqueName('w')),
          subscriptions: [
            { eventType: 'gw.presence.joined', oneOf: [{ eventType: 'chat.message', room }] },
            { eventType: 'gw.presence.left', oneOf: [{ eventType: 'chat.message', room }] },
          ],
        },
        idOf,
      ),
    );

  it('counts and lists who is in a room over every transport, on either replica', async () => {
    await Promise.all([
      keep(sseClient(a.publicUrl!, inRoom('alice', 'q-alice', 1), idOf)),
      keep(wsClient(ws(b), inRoom('bob', 'q-bob', 1), idOf)),
      keep(longPollClient(a.publicUrl!, inRoom('carol', 'q-carol', 2), idOf)),
      keep(socketIoClient(b.publicUrl!, inRoom('dave', 'q-dave', 1), idOf)),
    ]);
    for (const hub of [a, b]) {
      const room1 = await internalPresence(hub, `eventType=chat.message&where=${where(1)}`);
      assert.equal(room1.count, 3);
      assert.equal(room1.partial, false);
      assert.deepEqual(room1.connections.map((c) => c['user']).sort(), ['alice', 'bob', 'dave']);
      assert.deepEqual(
        room1.connections.map((c) => `${c['user']} ${c['transport']} ${c['replica']} ${c['session']}`).sort(),
        [`alice sse ${run}-hub-a q-alice`, `bob ws ${run}-hub-b q-bob`, `dave socketio ${run}-hub-b q-dave`],
      );
      const room2 = await internalPresence(hub, `eventType=chat.message&where=${where(2)}`);
      assert.deepEqual(
        room2.connections.map((c) => `${c['user']} ${c['transport']}`),
        ['carol longpolling'],
      );
      assert.equal((await internalPresence(hub, 'eventType=chat.message')).count, 4);
      const limited = await internalPresence(hub, `eventType=chat.message&where=${where(1)}&limit=1`);
      assert.equal(limited.count, 3);
      assert.equal(limited.connections.length, 1);
      assert.equal(limited.complete, false);
    }
  });

  it('shows clients who is there by member id and user, never a session or connection', async () => {
    const res = await publicPresence(b, `eventType=chat.message&where=${where(1)}`, jwtOf('zed', 'z1'));
    assert.equal(res.status, 200);
    const text = await res.text();
    const answer = JSON.parse(text) as PresenceAnswer;
    assert.equal(answer.count, 3);
    assert.deepEqual(answer.members.map((m) => m.user).sort(), ['alice', 'bob', 'dave']);
    for (const m of answer.members) assert.match(m.member, /^[A-Za-z0-9_-]{22}$/);
    assert.doesNotMatch(text, /q-alice|q-bob|q-dave|connection|session/);
    // Allowed as subscribing to the room is: SUBSCRIPTION_CHECK=jwt_validation wants a valid JWT.
    const anonymous = await publicPresence(b, `eventType=chat.message&where=${where(1)}`);
    assert.equal(anonymous.status, 403, await anonymous.text());
    const forged = await publicPresence(b, `eventType=chat.message`, `${jwtOf('zed', 'z1')}x`);
    assert.equal(forged.status, 400, await forged.text());
  });

  it('refuses a bad query with a 400 naming what is wrong', async () => {
    const bad: Array<[string, RegExp]> = [
      ['', /eventType/],
      [`eventType=chat.message&where=${encodeURIComponent('{"floor":1}')}`, /where: .*floor/],
      [`eventType=chat.message&where=${encodeURIComponent('[1]')}`, /where: /],
      [`eventType=chat.message&where=${encodeURIComponent('{"room":')}`, /where: /],
      [
        `eventType=chat.message&where=${encodeURIComponent(`{"room":${'['.repeat(200)}${']'.repeat(200)}}`)}`,
        /where: /,
      ],
      [`eventType=chat.message&where=${'x'.repeat(5000)}`, /where: at most 4096 bytes/],
      ['eventType=chat.message&limit=100000', /limit/],
      ['eventType=chat.message&limit=-1', /limit/],
    ];
    for (const [query, error] of bad) {
      const res = await fetch(`${a.apiUrl}/v3/presence?${query}`, { headers: internal });
      assert.equal(res.status, 400, query);
      assert.match(await res.text(), error, query);
      const pub = await publicPresence(a, query, jwtOf('zed', 'z1'));
      if (!query.includes('limit')) assert.equal(pub.status, 400, `public ${query}`);
    }
    const post = await fetch(`${a.publicUrl}/_gw/v1/presence?eventType=x`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, OPTIONS');
    const put = await fetch(`${a.apiUrl}/v3/presence?eventType=x`, { method: 'PUT', headers: internal });
    assert.equal(put.status, 405);
    assert.match(put.headers.get('allow') ?? '', /GET/);
  });

  it('tells a watcher each join once and each leave once, after the leave delay', async () => {
    const watching = await watcher(a, 7);
    const erin = await keep(sseClient(b.publicUrl!, inRoom('erin', 'e1', 7), idOf));
    await waitFor(() => heard(watching).includes('joined erin'), { what: 'erin joined', timeoutMs: 10_000 });
    const joined = watching.events.find((e) => e['type'] === 'gw.presence.joined')!;
    const data = joined['data'] as { eventType: string; where: unknown; member: string; user: string };
    assert.equal(data.eventType, 'chat.message');
    assert.deepEqual(data.where, { room: 7 });
    const listed = (await (
      await publicPresence(a, `eventType=chat.message&where=${where(7)}`, jwtOf('zed', 'z1'))
    ).json()) as PresenceAnswer;
    assert.deepEqual(
      listed.members,
      [{ member: data.member, user: 'erin' }],
      'the query names the member as the event did',
    );

    // A second tab, same session, on the other replica; one in room 8, which this watcher does not watch.
    const erin2 = await keep(wsClient(ws(a), inRoom('erin', 'e1', 7), idOf));
    await keep(sseClient(a.publicUrl!, inRoom('gus', 'g1', 8), idOf));
    erin.close();
    await sleep(leaveDelayMs * 2);
    assert.deepEqual(
      heard(watching),
      ['joined erin'],
      'no join for the second tab, no leave while one is open',
    );
    erin2.close();
    await sleep(leaveDelayMs / 3);
    assert.deepEqual(heard(watching), ['joined erin'], 'the leave waits for the delay');
    await waitFor(() => heard(watching).includes('left erin'), { what: 'erin left', timeoutMs: 15_000 });
    await sleep(1000);
    assert.deepEqual(heard(watching), ['joined erin', 'left erin']);
  });

  it('takes a reconnect to the other replica within the delay for neither a leave nor a join', async () => {
    const watching = await watcher(b, 9);
    const frank = await keep(sseClient(a.publicUrl!, inRoom('frank', 'f1', 9), idOf));
    await waitFor(() => heard(watching).includes('joined frank'), {
      what: 'frank joined',
      timeoutMs: 10_000,
    });
    frank.close();
    await keep(wsClient(ws(b), inRoom('frank', 'f1', 9), idOf));
    await sleep(leaveDelayMs * 3);
    assert.deepEqual(heard(watching), ['joined frank']);
    const now = await internalPresence(a, `eventType=chat.message&where=${where(9)}`);
    assert.deepEqual(
      now.connections.map((c) => `${c['user']} ${c['replica']}`),
      [`frank ${run}-hub-b`],
    );
  });

  it("announces a SIGKILLed replica's members as left, and stops counting them", async () => {
    const watching = await watcher(a, 11);
    await keep(wsClient(ws(b), inRoom('hana', 'h1', 11), idOf));
    await keep(sseClient(a.publicUrl!, inRoom('ivan', 'i1', 11), idOf));
    await waitFor(() => heard(watching).filter((h) => h.startsWith('joined')).length === 2, {
      what: 'hana and ivan joined',
      timeoutMs: 10_000,
    });
    process.kill(b.pid, 'SIGKILL');
    await b.exited;
    const killedAt = Date.now();
    const after = await internalPresence(a, `eventType=chat.message&where=${where(11)}`);
    assert.deepEqual(
      after.connections.map((c) => c['user']),
      ['ivan'],
      'the dead replica counts for nobody',
    );
    // The registry forgets a replica 15 s after its last beat; presence looks every 5 s.
    await waitFor(() => heard(watching).includes('left hana'), { what: 'hana left', timeoutMs: 60_000 });
    const tookS = (Date.now() - killedAt) / 1000;
    process.stderr.write(`presence: a killed replica's member left ${tookS.toFixed(1)} s after the kill\n`);
    await sleep(1000);
    assert.deepEqual(heard(watching).sort(), ['joined hana', 'joined ivan', 'left hana']);
  });
});
