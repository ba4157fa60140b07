/**
 * The connections API on the hub's internal API, across two push-hub processes on real Redis (fan-out
 * bus, control bus and store), with clients on SSE, WebSocket, socket.io and long-polling spread over
 * both: either replica lists, filters, pages, shows and disconnects the connections of both; a
 * replica that stops answering (SIGSTOP) makes the answer partial, naming it, within the time-out;
 * the API needs INTERNAL_API_TOKEN and answers 400 to bad input.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { type ServiceProcess, uniqueName, waitFor } from '@gatehouse/testkit';
import {
  type ConnectParams,
  connectionIds,
  longPollClient,
  socketIoClient,
  sseClient,
  type TestClient,
  wsClient,
} from '../connection-clients.ts';
import { replicaName, startRedisHubPair } from './redis-hub-pair.ts';

const run = uniqueName('conn-api');
const tokenSecret = `${run}-token-secret`;
const jwtSecret = 'connections-api-jwt-secret-long-enough';
const apiToken = 'connections-api-internal-token';
const timeoutMs = 1500;
const env = {
  JWT_SECRET_KEY: jwtSecret,
  TOKEN_SECRET: tokenSecret,
  INTERNAL_API_TOKEN: apiToken,
  CONNECTIONS_API_TIMEOUT: `${timeoutMs}ms`,
  LONGPOLL_TIMEOUT: '2s',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
};
const auth = { authorization: `Bearer ${apiToken}` };

interface Entry {
  id: string;
  transport: string;
  replica: string;
  session?: string;
  user?: string;
  remoteAddress?: string;
  connectedAt: string;
  expiresAt?: string;
  subscriptions: Array<{ eventType: string }>;
}
interface ListAnswer {
  connections: Entry[];
  next?: string;
  partial: boolean;
  missing: string[];
}

const connect = (user: string, session: string, eventType: string): ConnectParams => ({
  jwt: signJwt(withExpiry({ username: user, jti: session }), { alg: 'HS256', key: jwtSecret }),
  subscriptions: [{ eventType }],
});

describe('connections API across two hub replicas', () => {
  const hubs: ServiceProcess[] = [];
  const clients: Record<string, TestClient> = {};
  const replicaOf = (i: number) => replicaName(run, i);
  let a: ServiceProcess;
  let b: ServiceProcess;

  before(async () => {
    [a, b] = await startRedisHubPair(run, env, hubs);
    const idOf = connectionIds(tokenSecret);
    const ws = (h: ServiceProcess) => h.publicUrl!.replace('http', 'ws');
    clients['aliceSse'] = await sseClient(a.publicUrl!, connect('alice', 's-alice-1', 'news'), idOf);
    clients['bobWs'] = await wsClient(ws(a), connect('bob', 's-bob', 'sports'), idOf);
    clients['carolLp'] = await longPollClient(a.publicUrl!, connect('carol', 's-carol', 'news'), idOf);
    clients['aliceSse2'] = await sseClient(b.publicUrl!, connect('alice', 's-alice-2', 'news'), idOf);
    clients['daveWs'] = await wsClient(ws(b), connect('dave', 's-dave', 'weather'), idOf);
    clients['erinLp'] = await longPollClient(b.publicUrl!, connect('erin', 's-erin', 'sports'), idOf);
    clients['frankIo'] = await socketIoClient(b.publicUrl!, connect('frank', 's-frank', 'news'), idOf);
  });
  after(async () => {
    for (const c of Object.values(clients)) c.close();
    for (const hub of hubs) {
      process.kill(hub.pid, 'SIGCONT');
      await hub.stop();
    }
  });

  const get = (hub: ServiceProcess, path: string, headers: Record<string, string> = auth) =>
    fetch(`${hub.apiUrl}${path}`, { headers });
  async function list(hub: ServiceProcess, query = ''): Promise<ListAnswer> {
    const res = await get(hub, `/v3/connections${query}`);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as ListAnswer;
  }
  const ours = (entries: Entry[]) => {
    const ids = new Set(Object.values(clients).map((c) => c.id));
    return entries.filter((e) => ids.has(e.id));
  };
  const idsOf = (entries: Entry[]) => entries.map((e) => e.id).sort();
  const clientIds = (...names: string[]) => names.map((n) => clients[n]!.id).sort();

  it('lists the connections of both replicas from either, with transport, replica, session, user and subscriptions', async () => {
    for (const hub of hubs) {
      const answer = await list(hub);
      assert.equal(answer.partial, false);
      assert.deepEqual(answer.missing, []);
      const byId = new Map(answer.connections.map((e) => [e.id, e]));
      const expected: Array<[string, string, number, string, string, string]> = [
        ['aliceSse', 'sse', 0, 's-alice-1', 'alice', 'news'],
        ['bobWs', 'ws', 0, 's-bob', 'bob', 'sports'],
        ['carolLp', 'longpolling', 0, 's-carol', 'carol', 'news'],
        ['aliceSse2', 'sse', 1, 's-alice-2', 'alice', 'news'],
        ['daveWs', 'ws', 1, 's-dave', 'dave', 'weather'],
        ['erinLp', 'longpolling', 1, 's-erin', 'erin', 'sports'],
        ['frankIo', 'socketio', 1, 's-frank', 'frank', 'news'],
      ];
      for (const [name, transport, replica, session, user, eventType] of expected) {
        const entry = byId.get(clients[name]!.id);
        assert.ok(entry, `${name} is listed by ${hub.name}`);
        assert.equal(entry.transport, transport, name);
        assert.equal(entry.replica, replicaOf(replica), name);
        assert.equal(entry.session, session, name);
        assert.equal(entry.user, user, name);
        assert.deepEqual(
          entry.subscriptions.map((s) => s.eventType),
          [eventType],
          name,
        );
        assert.equal(entry.remoteAddress, '127.0.0.1', name);
        assert.ok(Date.parse(entry.connectedAt) <= Date.now(), name);
        assert.ok(Date.parse(entry.expiresAt!) > Date.now(), name);
      }
      assert.equal(ours(answer.connections).length, expected.length);
    }
  });

  it('filters by transport, session, user, replica and subscribed event type', async () => {
    assert.deepEqual(idsOf((await list(a, '?transport=ws')).connections), clientIds('bobWs', 'daveWs'));
    assert.deepEqual(
      idsOf((await list(b, '?transport=longpolling')).connections),
      clientIds('carolLp', 'erinLp'),
    );
    assert.deepEqual(idsOf((await list(a, '?session=s-frank')).connections), clientIds('frankIo'));
    assert.deepEqual(idsOf((await list(a, '?user=alice')).connections), clientIds('aliceSse', 'aliceSse2'));
    assert.deepEqual(
      idsOf((await list(a, `?replica=${replicaOf(1)}`)).connections),
      clientIds('aliceSse2', 'daveWs', 'erinLp', 'frankIo'),
    );
    assert.deepEqual(
      idsOf((await list(b, '?eventType=news')).connections),
      clientIds('aliceSse', 'carolLp', 'aliceSse2', 'frankIo'),
    );
    assert.deepEqual(
      idsOf((await list(b, '?eventType=news&transport=sse&user=alice')).connections),
      clientIds('aliceSse', 'aliceSse2'),
    );
    assert.deepEqual((await list(a, '?user=nobody')).connections, []);
  });

  it('pages through every connection exactly once with limit and the next cursor', async () => {
    const all = idsOf((await list(a)).connections);
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const answer = await list(page % 2 ? b : a, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.ok(answer.connections.length <= limit);
        seen.push(...answer.connections.map((e) => e.id));
        cursor = answer.next;
        if (cursor === undefined) break;
      }
      assert.equal(cursor, undefined, 'the last page has no next cursor');
      assert.deepEqual([...seen].sort(), all, `limit ${limit}: every connection once`);
    }
  });

  it('shows a connection held by the other replica: transport, replica, address, since, subscriptions, JWT expiry, bytes queued, events written', async () => {
    const res = await get(a, `/v3/connections/${clients['daveWs']!.id}`);
    assert.equal(res.status, 200, await res.clone().text());
    const { connection, partial } = (await res.json()) as {
      connection: Entry & { bytesQueued: number; eventsWritten: number };
      partial: boolean;
    };
    assert.equal(partial, false);
    assert.equal(connection.id, clients['daveWs']!.id);
    assert.equal(connection.transport, 'ws');
    assert.equal(connection.replica, replicaOf(1));
    assert.equal(connection.remoteAddress, '127.0.0.1');
    assert.equal(connection.session, 's-dave');
    assert.deepEqual(connection.subscriptions, [{ eventType: 'weather', oneOf: [] }]);
    assert.ok(Date.parse(connection.connectedAt) > Date.now() - 120_000);
    assert.ok(Date.parse(connection.expiresAt!) > Date.now() + 3000_000);
    assert.equal(connection.bytesQueued, 0);
    assert.ok(connection.eventsWritten >= 2, 'the welcome pair at least');

    const lp = await get(b, `/v3/connections/${clients['carolLp']!.id}`);
    assert.equal(lp.status, 200);
    assert.equal(((await lp.json()) as { connection: Entry }).connection.transport, 'longpolling');

    const unknown = await get(a, '/v3/connections/AAAAAAAAAAAAAAAA');
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: string }).error, /AAAAAAAAAAAAAAAA/);
  });

  it('counts connections per transport on each replica', async () => {
    const res = await get(b, '/v3/replicas');
    assert.equal(res.status, 200);
    const { replicas, partial } = (await res.json()) as {
      replicas: Array<{ replica: string; connections: Record<string, number>; deliveriesPerSecond: number }>;
      partial: boolean;
    };
    assert.equal(partial, false);
    const one = replicas.find((r) => r.replica === replicaOf(1));
    assert.deepEqual(one?.connections, { sse: 1, ws: 1, socketio: 1, longpolling: 1 });
    assert.deepEqual(replicas.find((r) => r.replica === replicaOf(0))?.connections, {
      sse: 1,
      ws: 1,
      socketio: 0,
      longpolling: 1,
    });
    assert.equal(typeof one?.deliveriesPerSecond, 'number');
  });

  it('answers 401 without the internal API token', async () => {
    for (const path of ['/v3/connections', `/v3/connections/${clients['bobWs']!.id}`, '/v3/replicas']) {
      assert.equal((await get(a, path, {})).status, 401, path);
      assert.equal((await get(a, path)).status, 200, `${path} with the token`);
    }
    for (const [method, path] of [
      ['DELETE', `/v3/connections/${clients['bobWs']!.id}`],
      ['POST', '/v3/connections/disconnect'],
    ] as const) {
      const res = await fetch(`${a.apiUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session: 's-bob' }),
      });
      assert.equal(res.status, 401, path);
    }
    assert.equal(clients['bobWs']!.events.at(-1)?.['type'], 'gw.subscriptions_set', 'bob is still connected');
  });

  it('answers 400 naming the problem for bad parameters and bodies', async () => {
    const bad: Array<[string, RegExp]> = [
      ['?transport=pigeon', /transport/],
      ['?limit=0', /limit/],
      ['?limit=ten', /limit/],
      ['?limit=100000', /limit/],
      ['?cursor=not-a-cursor!', /cursor/],
      ['?sesion=s-bob', /sesion/],
    ];
    for (const [query, problem] of bad) {
      const res = await get(a, `/v3/connections${query}`);
      assert.equal(res.status, 400, query);
      assert.match(((await res.json()) as { error: string }).error, problem, query);
    }
    for (const body of [{}, { session: 's-bob', user: 'bob' }, { session: 's-bob', reconnect: 'no' }, []]) {
      const res = await fetch(`${a.apiUrl}/v3/connections/disconnect`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 400, JSON.stringify(body));
    }
    const res = await fetch(`${a.apiUrl}/v3/connections/${clients['bobWs']!.id}?reconnect=maybe`, {
      method: 'DELETE',
      headers: auth,
    });
    assert.equal(res.status, 400);
    assert.equal(clients['bobWs']!.events.at(-1)?.['type'], 'gw.subscriptions_set', 'bob is still connected');
  });

  const finalEvent = (c: TestClient) => c.events.find((e) => e['type'] === 'gw.connection_closed');

  it('disconnects one connection by id on the other replica; the client is told why and not to come back', async () => {
    const dave = clients['daveWs']!;
    const res = await fetch(
      `${a.apiUrl}/v3/connections/${dave.id}?reason=${encodeURIComponent('moving you off')}&reconnect=false`,
      { method: 'DELETE', headers: auth },
    );
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { disconnected: number }).disconnected, 1);
    assert.equal(await dave.ended, '4410 Disconnected.');
    assert.deepEqual(finalEvent(dave)?.['data'], { reason: 'moving you off', reconnect: false });
    const left = idsOf(ours((await list(b)).connections));
    assert.ok(!left.includes(dave.id));
    assert.equal(left.length, 6);
    const again = await fetch(`${a.apiUrl}/v3/connections/${dave.id}`, { method: 'DELETE', headers: auth });
    assert.equal(again.status, 404);
  });

  it('disconnects every connection of a session, and of a user, on whichever replica, and nothing else', async () => {
    const post = async (hub: ServiceProcess, body: unknown) => {
      const res = await fetch(`${hub.apiUrl}/v3/connections/disconnect`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { disconnected: number }).disconnected;
    };
    assert.equal(await post(a, { session: 's-alice-2', reason: 'session ended by support' }), 1);
    await clients['aliceSse2']!.ended;
    assert.deepEqual(finalEvent(clients['aliceSse2']!)?.['data'], {
      reason: 'session ended by support',
      reconnect: false,
    });
    assert.equal(finalEvent(clients['aliceSse']!), undefined, "alice's other session stays");

    assert.equal(await post(b, { user: 'carol', reason: 'rebalancing', reconnect: true }), 1);
    await waitFor(() => finalEvent(clients['carolLp']!), { what: 'the long poll told', timeoutMs: 15_000 });
    assert.equal(await clients['carolLp']!.ended, 'ended');
    assert.deepEqual(finalEvent(clients['carolLp']!)?.['data'], { reason: 'rebalancing', reconnect: true });

    assert.equal(await post(a, { user: 'frank', reason: 'bye' }), 1);
    assert.equal(await clients['frankIo']!.ended, 'io server disconnect');
    assert.deepEqual(finalEvent(clients['frankIo']!)?.['data'], { reason: 'bye', reconnect: false });

    assert.equal(await post(a, { user: 'nobody' }), 0);
    assert.deepEqual(idsOf(ours((await list(a)).connections)), clientIds('aliceSse', 'bobWs', 'erinLp'));

    // Told to reconnect, a WebSocket client gets 1012 (what a stopping replica sends), not 4410.
    const gina = await wsClient(
      b.publicUrl!.replace('http', 'ws'),
      connect('gina', 's-gina', 'news'),
      connectionIds(tokenSecret),
    );
    clients['ginaWs'] = gina;
    assert.equal(await post(a, { session: 's-gina', reason: 'rebalancing', reconnect: true }), 1);
    assert.equal(await gina.ended, '1012 Disconnected; reconnect.');
    assert.deepEqual(finalEvent(gina)?.['data'], { reason: 'rebalancing', reconnect: true });
    const metrics = await (await get(a, '/metrics')).text();
    assert.match(metrics, /gw_connections_disconnected_total\{[^}]*by="user"[^}]*\} 1/);
  });

  it('answers partial, naming the replica, when one does not answer in time (SIGSTOP), without waiting longer', async () => {
    process.kill(b.pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const answer = await list(a);
      const took = Date.now() - started;
      assert.equal(answer.partial, true);
      assert.deepEqual(answer.missing, [replicaOf(1)]);
      assert.deepEqual(idsOf(ours(answer.connections)), clientIds('aliceSse', 'bobWs'));
      assert.ok(took >= timeoutMs - 100 && took < timeoutMs + 3000, `answered in ${took} ms`);
      const detail = await get(a, `/v3/connections/${clients['erinLp']!.id}`);
      assert.equal(detail.status, 404);
      assert.deepEqual(((await detail.json()) as { missing: string[] }).missing, [replicaOf(1)]);
    } finally {
      process.kill(b.pid, 'SIGCONT');
    }
  });
});
