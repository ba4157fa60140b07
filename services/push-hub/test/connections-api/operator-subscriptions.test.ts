/**
 * Server-side subscriptions: the operator changes live connections' subscriptions through the
 * connections API of either of two push-hub processes on real Redis (fan-out bus, control bus,
 * store), with clients on SSE, WebSocket, socket.io and long-polling on both. One by id on the other
 * replica, several by user and by session: each gets `gw.subscriptions_set` with its JWT-inferred
 * subscription kept and the operator's list instead of its own; an event of an added type reaches
 * exactly the changed connections and one of a removed type none of them. A bad body is a 400 with
 * the client PUT's own text, an unknown connection a 404.
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
import { startRedisHubPair } from './redis-hub-pair.ts';

const run = uniqueName('op-subs');
const tokenSecret = `${run}-token-secret`;
const jwtSecret = 'operator-subscriptions-jwt-secret-long';
const apiToken = 'operator-subscriptions-internal-token';
const extractors = {
  greeting: {
    name: {
      stable_field_index: 0,
      event: { json_pointer: '/data/name' },
      jwt: { json_pointer: '/username' },
    },
  },
};
const env = {
  FANOUT_TOPIC: `${run}-events`,
  JWT_SECRET_KEY: jwtSecret,
  TOKEN_SECRET: tokenSecret,
  INTERNAL_API_TOKEN: apiToken,
  EXTRACTORS: JSON.stringify(extractors),
  MAX_SUBSCRIPTIONS_PER_CONNECTION: '4',
  MAX_SUBSCRIPTIONS_BYTES: '1024',
  MAX_JSON_DEPTH: '8',
  // A client's PUT (compared below) is limited; the operator's is not (and must not use it up).
  MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: '20',
  CONNECTIONS_API_TIMEOUT: '2s',
  LONGPOLL_TIMEOUT: '1s',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
};
const auth = { authorization: `Bearer ${apiToken}` };
const json = { ...auth, 'content-type': 'application/json' };

const connect = (user: string, session: string): ConnectParams => ({
  jwt: signJwt(withExpiry({ username: user, jti: session }), { alg: 'HS256', key: jwtSecret }),
  subscriptions: [{ eventType: 'news' }],
});
/** What the JWT of `user` infers: its greetings. */
const greeting = (user: string) => ({ eventType: 'greeting', oneOf: [{ name: user }] });
const plain = (eventType: string) => ({ eventType, oneOf: [] });

describe('server-side subscriptions across two hub replicas', () => {
  const hubs: ServiceProcess[] = [];
  const clients: Record<string, TestClient> = {};
  const users: Record<string, string> = {};
  let a: ServiceProcess;
  let b: ServiceProcess;

  before(async () => {
    [a, b] = await startRedisHubPair(run, env, hubs);
    const idOf = connectionIds(tokenSecret);
    const ws = (h: ServiceProcess) => h.publicUrl!.replace('http', 'ws');
    const open: Array<[string, string, string, () => Promise<TestClient>]> = [
      ['sseA', 'alice', 's1', () => sseClient(a.publicUrl!, connect('alice', 's1'), idOf)],
      ['wsA', 'bob', 's2', () => wsClient(ws(a), connect('bob', 's2'), idOf)],
      ['lpA', 'alice', 's3', () => longPollClient(a.publicUrl!, connect('alice', 's3'), idOf)],
      ['ioA', 'carol', 's4', () => socketIoClient(a.publicUrl!, connect('carol', 's4'), idOf)],
      ['sseB', 'dave', 's5', () => sseClient(b.publicUrl!, connect('dave', 's5'), idOf)],
      ['wsB', 'alice', 's6', () => wsClient(ws(b), connect('alice', 's6'), idOf)],
      ['lpB', 'erin', 's7', () => longPollClient(b.publicUrl!, connect('erin', 's7'), idOf)],
      ['ioB', 'alice', 's8', () => socketIoClient(b.publicUrl!, connect('alice', 's8'), idOf)],
    ];
    await Promise.all(
      open.map(async ([name, user, , make]) => {
        clients[name] = await make();
        users[name] = user;
      }),
    );
  });
  after(async () => {
    for (const c of Object.values(clients)) c.close();
    for (const hub of hubs) await hub.stop();
  });

  const putOne = (hub: ServiceProcess, id: string, body: string) =>
    fetch(`${hub.apiUrl}/v3/connections/${id}/subscriptions`, { method: 'PUT', headers: json, body });
  const postMany = (hub: ServiceProcess, body: string) =>
    fetch(`${hub.apiUrl}/v3/connections/subscriptions`, { method: 'POST', headers: json, body });
  /** The lists `gw.subscriptions_set` told a client, in order. */
  const toldLists = (c: TestClient) =>
    c.events.filter((e) => e['type'] === 'gw.subscriptions_set').map((e) => e['data']);
  async function told(name: string, list: unknown[]): Promise<void> {
    const c = clients[name]!;
    await waitFor(() => toldLists(c).some((l) => JSON.stringify(l) === JSON.stringify(list)), {
      what: `${name} told ${JSON.stringify(list)}; it has ${JSON.stringify(toldLists(c))}`,
      timeoutMs: 10_000,
    });
  }

  /**
   * Publishes each type twice over (the console's test event) and waits for each client's own type
   * the second time: events come to a connection in stream order, so by then it has every event of
   * the first round it was going to get. Answers the test events each client got, by type.
   */
  async function delivered(expected: Record<string, string>): Promise<Record<string, string[]>> {
    const types = [...new Set(Object.values(expected))];
    const ids: string[] = [];
    for (const _round of [1, 2])
      for (const type of types) {
        const res = await fetch(`${a.apiUrl}/v3/console/test-event`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ type }),
        });
        assert.equal(res.status, 200, await res.clone().text());
        ids.push(((await res.json()) as { event: { id: string } }).event.id);
      }
    const lastRound = new Set(ids.slice(types.length));
    const got = (c: TestClient) => c.events.filter((e) => ids.includes(e['id'] as string));
    for (const [name, type] of Object.entries(expected))
      await waitFor(
        () => got(clients[name]!).some((e) => lastRound.has(e['id'] as string) && e['type'] === type),
        {
          what: `${name} gets its ${type} event`,
          timeoutMs: 10_000,
        },
      );
    return Object.fromEntries(
      Object.keys(expected).map((name) => [
        name,
        [...new Set(got(clients[name]!).map((e) => e['type'] as string))],
      ]),
    );
  }

  it('changes one connection by id on the other replica, every transport: told the new list, JWT-inferred kept, only its events', async () => {
    for (const name of ['sseB', 'wsB', 'lpB', 'ioB']) {
      const res = await putOne(
        a,
        clients[name]!.id,
        JSON.stringify({ subscriptions: [{ eventType: 'sports' }] }),
      );
      assert.equal(res.status, 204, `${name}: ${await res.text()}`);
      await told(name, [greeting(users[name]!), plain('sports')]);
    }
    const shown = await fetch(`${b.apiUrl}/v3/connections/${clients['lpB']!.id}`, { headers: auth });
    assert.deepEqual(
      ((await shown.json()) as { connection: { subscriptions: unknown } }).connection.subscriptions,
      [greeting('erin'), plain('sports')],
    );
    const got = await delivered({
      sseA: 'news',
      wsA: 'news',
      lpA: 'news',
      ioA: 'news',
      sseB: 'sports',
      wsB: 'sports',
      lpB: 'sports',
      ioB: 'sports',
    });
    for (const name of ['sseA', 'wsA', 'lpA', 'ioA']) assert.deepEqual(got[name], ['news'], name);
    for (const name of ['sseB', 'wsB', 'lpB', 'ioB']) assert.deepEqual(got[name], ['sports'], name);
  });

  it('changes every connection of a user, and of a session, on both replicas, and nothing else', async () => {
    const res = await postMany(
      b,
      JSON.stringify({ user: 'alice', subscriptions: [{ eventType: 'weather' }] }),
    );
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { changed: 4, refused: [], partial: false, missing: [] });
    const bySession = await postMany(
      a,
      JSON.stringify({ session: 's4', subscriptions: [{ eventType: 'weather' }] }),
    );
    assert.equal(bySession.status, 200);
    assert.equal(((await bySession.json()) as { changed: number }).changed, 1);
    for (const name of ['sseA', 'lpA', 'wsB', 'ioB', 'ioA'])
      await told(name, [greeting(users[name]!), plain('weather')]);
    const got = await delivered({
      sseA: 'weather',
      wsA: 'news',
      lpA: 'weather',
      ioA: 'weather',
      sseB: 'sports',
      wsB: 'weather',
      lpB: 'sports',
      ioB: 'weather',
    });
    for (const name of ['sseA', 'lpA', 'ioA', 'wsB', 'ioB']) assert.deepEqual(got[name], ['weather'], name);
    assert.deepEqual(got['wsA'], ['news']);
    assert.deepEqual(got['sseB'], ['sports']);
    assert.deepEqual(got['lpB'], ['sports']);
    assert.deepEqual(
      await (await postMany(a, JSON.stringify({ user: 'nobody', subscriptions: [] }))).json(),
      { changed: 0, refused: [], partial: false, missing: [] },
    );
  });

  it("answers a bad body 400 with the client PUT's own text, the connection left as it was", async () => {
    const deep = JSON.parse(`${'['.repeat(10)}${']'.repeat(10)}`);
    const many = ['a', 'b', 'c', 'd', 'e'].map((eventType) => ({ eventType }));
    const bodies = [
      'not json',
      '[]',
      '{}',
      JSON.stringify({ subscriptions: 'news' }),
      JSON.stringify({ subscriptions: [{ eventType: 'greeting', oneOf: [{ colour: 'red' }] }] }),
      JSON.stringify({ subscriptions: many }),
      JSON.stringify({ subscriptions: [{ eventType: 'x'.repeat(1200) }] }),
      JSON.stringify({ subscriptions: [{ eventType: 'news', oneOf: deep }] }),
    ];
    const dave = clients['sseB']!;
    const token = (
      dave.events.find((e) => e['type'] === 'gw.connection.create')!['data'] as {
        connection_token: string;
      }
    ).connection_token;
    for (const body of bodies) {
      const clientPut = await fetch(
        `${b.publicUrl}/_gw/v1/connection/sse/${encodeURIComponent(token)}/subscriptions`,
        { method: 'PUT', headers: { 'content-type': 'application/json' }, body },
      );
      assert.equal(clientPut.status, 400, body);
      const text = await clientPut.text();
      const one = await putOne(a, dave.id, body);
      assert.equal(one.status, 400, body);
      assert.deepEqual(await one.json(), { error: text }, body);
      const many = await postMany(
        b,
        body.startsWith('{"subscriptions"') ? `{"user":"dave",${body.slice(1)}` : body,
      );
      assert.equal(many.status, 400, body);
      assert.deepEqual(await many.json(), { error: text }, body);
    }
    // Four of the operator's own, with the JWT-inferred greeting, are five: over the bound at the holder.
    const four = JSON.stringify({ subscriptions: many.slice(0, 4) });
    const over = await putOne(a, dave.id, four);
    assert.equal(over.status, 400);
    assert.match(
      ((await over.json()) as { error: string }).error,
      /^cannot accept subscription request: too many subscriptions: 5, at most 4/,
    );
    const refused = await postMany(a, JSON.stringify({ user: 'dave', subscriptions: many.slice(0, 4) }));
    assert.equal(((await refused.json()) as { refused: Array<{ id: string }> }).refused[0]?.id, dave.id);
    for (const body of [
      JSON.stringify({ subscriptions: [] }),
      JSON.stringify({ session: 's5', user: 'dave', subscriptions: [] }),
      JSON.stringify({ sesion: 's5', subscriptions: [] }),
    ]) {
      const res = await postMany(a, body);
      assert.equal(res.status, 400, body);
    }
    assert.deepEqual(toldLists(dave).at(-1), [greeting('dave'), plain('sports')], 'dave keeps his list');
  });

  it('answers 404 for a connection no replica holds, 400 for a malformed id, 401 without the token', async () => {
    const body = JSON.stringify({ subscriptions: [] });
    const unknown = await putOne(b, 'AAAAAAAAAAAAAAAA', body);
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: string }).error, /AAAAAAAAAAAAAAAA/);
    assert.equal((await putOne(b, 'bad!id', body)).status, 400);
    const noToken = await fetch(`${a.apiUrl}/v3/connections/${clients['wsA']!.id}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(noToken.status, 401);
    const stranger = await fetch(`${a.apiUrl}/v3/connections/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'bob', subscriptions: [] }),
    });
    assert.equal(stranger.status, 401);
  });
});
