/**
 * Type patterns through the public edge (issue 37), on the memory bus: `…orders.*` takes exactly one
 * segment and `…orders.>` one or more, on SSE, WebSocket, socket.io and long-polling alike; a
 * pattern combines with constraints on the fields the extractor configuration names for it, and a
 * JWT's claims infer a pattern subscription as they do a type's; what is no pattern, reaches the
 * gateway's own events or passes a bound is a 400 naming the rule, and a publish of a type holding
 * a wildcard is a 400. With SUBSCRIPTION_TYPES_CLAIM a token allowing `com.example.orders.*`
 * allows exactly what it matches: `>`, `*.*.*.*` and the patterns that overlap other types get the
 * 403 of a disallowed type. The replica's distinct patterns are bounded (503 with Retry-After). A
 * check service not declared to judge patterns (a deny-list reads `>` as a type) never sees one.
 * Each stream's last event is a marker every subscriber wants: once it came, what came before it
 * is all that will.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';
import { typesClaimSettings, typesIn } from './types-claim.ts';

const jwtKey = 'type-patterns-test-secret-of-sufficient-length';
const jwt = (claims: Record<string, unknown>) => signJwt(withExpiry(claims), { alg: 'HS256', key: jwtKey });
const q = (subs: unknown) => `subscriptions=${encodeURIComponent(JSON.stringify(subs))}`;
const extractors = {
  'com.example.orders.*': {
    customer: {
      stable_field_index: 0,
      event: { json_pointer: '/data/customer' },
      jwt: { json_pointer: '/customer' },
    },
  },
};

async function publish(edge: string, type: string, data: Record<string, unknown> = {}): Promise<Response> {
  const res = await fetch(`${edge}/_gw/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ specversion: '1.0', id: crypto.randomUUID(), type, source: 'test', data }),
  });
  await res.clone().text();
  return res;
}

/** Types of a stream's events, the hub's own left out. */

describe('type patterns through the public edge', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  let wsEdge: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      JWT_SECRET_KEY: jwtKey,
      EXTRACTORS: JSON.stringify(extractors),
      MAX_PATTERNS_PER_CONNECTION: '3',
      MAX_PATTERN_SEGMENTS: '8',
      LONGPOLL_TIMEOUT: '500ms',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    wsEdge = `ws://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  /** Publishes one event of each shape under `prefix`, then the marker every test subscriber wants. */
  async function publishShapes(prefix: string): Promise<void> {
    for (const type of [
      `${prefix}.orders.created`,
      `${prefix}.orders.eu.created`,
      `${prefix}.orders`,
      `${prefix}.payments.created`,
      `${prefix}.ordersx.created`,
    ])
      assert.equal((await publish(edge, type)).status, 202, type);
    assert.equal((await publish(edge, `${prefix}.marker`)).status, 202);
  }
  const shapes = (prefix: string) => ({
    one: [{ eventType: `${prefix}.orders.*` }, { eventType: `${prefix}.marker` }],
    rest: [{ eventType: `${prefix}.orders.>` }, { eventType: `${prefix}.marker` }],
    oneExpected: [`${prefix}.orders.created`, `${prefix}.marker`],
    restExpected: [`${prefix}.orders.created`, `${prefix}.orders.eu.created`, `${prefix}.marker`],
  });

  it('delivers by pattern on SSE: `*` one segment, `>` one or more', async () => {
    const p = 'sse.example';
    const s = shapes(p);
    const one = await openSse(`${edge}/_gw/v1/connection/sse?${q(s.one)}`);
    const rest = await openSse(`${edge}/_gw/v1/connection/sse?${q(s.rest)}`);
    assert.equal(one.status, 200, one.errorBody);
    await waitFor(
      () => one.events('gw.subscriptions_set').length + rest.events('gw.subscriptions_set').length === 2,
    );
    await publishShapes(p);
    await waitFor(() => one.events(`${p}.marker`).length === 1 && rest.events(`${p}.marker`).length === 1);
    assert.deepEqual(typesIn(one.events()), s.oneExpected);
    assert.deepEqual(typesIn(rest.events()), s.restExpected);
    one.close();
    rest.close();
  });

  it('delivers by pattern on WebSocket', async () => {
    const p = 'ws.example';
    const s = shapes(p);
    const one = openWs(`${wsEdge}/_gw/v1/connection/ws?${q(s.one)}`);
    const rest = openWs(`${wsEdge}/_gw/v1/connection/ws?${q(s.rest)}`);
    await waitFor(() => one.events.length >= 2 && rest.events.length >= 2, { what: 'the welcomes' });
    await publishShapes(p);
    const marked = (events: Array<Record<string, unknown>>) => typesIn(events).includes(`${p}.marker`);
    await waitFor(() => marked(one.events) && marked(rest.events), { what: 'the markers' });
    assert.deepEqual(typesIn(one.events), s.oneExpected);
    assert.deepEqual(typesIn(rest.events), s.restExpected);
    one.ws.close();
    rest.ws.close();
  });

  it('delivers by pattern on socket.io', async () => {
    const p = 'sio.example';
    const s = shapes(p);
    const connect = (subscriptions: unknown) => {
      const socket = io(edge, {
        path: '/_gw/v1/socket.io/',
        auth: { subscriptions },
        transports: ['websocket'],
        reconnection: false,
      });
      const types: string[] = [];
      socket.onAny((type: string) => types.push(type));
      return { socket, types };
    };
    const one = connect(s.one);
    const rest = connect(s.rest);
    try {
      await waitFor(() => one.types.length >= 2 && rest.types.length >= 2, { what: 'the welcomes' });
      await publishShapes(p);
      await waitFor(() => one.types.includes(`${p}.marker`) && rest.types.includes(`${p}.marker`), {
        what: 'the markers',
      });
      assert.deepEqual(
        one.types.filter((t) => !t.startsWith('gw.')),
        s.oneExpected,
      );
      assert.deepEqual(
        rest.types.filter((t) => !t.startsWith('gw.')),
        s.restExpected,
      );
    } finally {
      one.socket.close();
      rest.socket.close();
    }
  });

  it('delivers by pattern on long-polling, live and from its cursor', async () => {
    const p = 'lp.example';
    const s = shapes(p);
    const clients = [new LongPollClient(edge), new LongPollClient(edge)];
    const got: string[][] = [[], []];
    for (const [i, subs] of [s.one, s.rest].entries()) {
      const first = await clients[i]!.get(`?${q(subs)}`);
      assert.equal(first.status, 200, first.text);
    }
    await publishShapes(p);
    for (const [i, client] of clients.entries())
      await waitFor(
        async () => {
          got[i]!.push(...typesIn(await client.poll()));
          return got[i]!.includes(`${p}.marker`);
        },
        { what: `long poll ${i} marker` },
      );
    assert.deepEqual(got[0], s.oneExpected);
    assert.deepEqual(got[1], s.restExpected);
  });

  it('combines a pattern with constraints on the fields the extractors name for it, and infers it from a JWT', async () => {
    const p = 'com.example';
    const alice = await openSse(
      `${edge}/_gw/v1/connection/sse?${q([{ eventType: `${p}.orders.*`, oneOf: [{ customer: 'alice' }] }, { eventType: `${p}.marker` }])}`,
    );
    // No list: the claim `customer` infers {com.example.orders.*, customer: bob} (EXTRACTORS' jwt pointer).
    const bob = await openSse(`${edge}/_gw/v1/connection/sse?jwt=${jwt({ customer: 'bob' })}`);
    assert.equal(alice.status, 200, alice.errorBody);
    assert.equal(bob.status, 200, bob.errorBody);
    await waitFor(
      () => alice.events('gw.subscriptions_set').length + bob.events('gw.subscriptions_set').length === 2,
    );
    assert.deepEqual(bob.events('gw.subscriptions_set')[0]!['data'], [
      { eventType: `${p}.orders.*`, oneOf: [{ customer: 'bob' }] },
    ]);
    for (const [type, customer] of [
      [`${p}.orders.created`, 'alice'],
      [`${p}.orders.created`, 'bob'],
      [`${p}.orders.shipped`, 'alice'],
      [`${p}.orders.eu.created`, 'alice'],
      [`${p}.orders.shipped`, 'bob'],
    ])
      assert.equal((await publish(edge, type!, { customer })).status, 202);
    await publish(edge, `${p}.marker`);
    await waitFor(() => alice.events(`${p}.marker`).length === 1, { what: 'the marker' });
    await waitFor(() => bob.events(`${p}.orders.shipped`).length === 1, { what: "bob's shipped" });
    const seen = (c: typeof alice) =>
      c
        .events()
        .filter((e) => !(e['type'] as string).startsWith('gw.') && e['type'] !== `${p}.marker`)
        .map((e) => `${e['type']}/${(e['data'] as { customer: string }).customer}`);
    assert.deepEqual(seen(alice), [`${p}.orders.created/alice`, `${p}.orders.shipped/alice`]);
    assert.deepEqual(seen(bob), [`${p}.orders.created/bob`, `${p}.orders.shipped/bob`]);
    alice.close();
    bob.close();
  });

  it('refuses what is no pattern, reaches the gateway’s own events or passes a bound, with a 400 naming why', async () => {
    const refused: Array<[unknown, RegExp]> = [
      [[{ eventType: 'a.>.b' }], /">" may only be the last segment/],
      [[{ eventType: 'a.orders*' }], /wildcards only as a whole segment/],
      [[{ eventType: 'a.>x' }], /wildcards only as a whole segment/],
      [[{ eventType: 'gw.>' }], /gw\.… events are subscribed to by name/],
      [[{ eventType: 'gw.presence.*' }], /gw\.… events are subscribed to by name/],
      [
        [{ eventType: 'a.*', oneOf: [{ customer: 'x' }] }],
        /field "customer" is not defined for event type "a\.\*"/,
      ],
      [[{ eventType: '*.*.*.*.*.*.*.*.*' }], /9 segments, at most 8 \(MAX_PATTERN_SEGMENTS\)/],
      [
        ['a.*', 'b.*', 'c.*', 'd.*'].map((eventType) => ({ eventType })),
        /too many type patterns: 4, at most 3 per connection \(MAX_PATTERNS_PER_CONNECTION\)/,
      ],
    ];
    for (const [subs, why] of refused) {
      const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q(subs)}`);
      assert.equal(sse.status, 400, JSON.stringify(subs));
      assert.match(sse.errorBody ?? '', why);
      const ws = await openWs(`${wsEdge}/_gw/v1/connection/ws?${q(subs)}`).closed;
      assert.equal(ws.code, 4400, JSON.stringify(subs));
      assert.equal((await new LongPollClient(edge).get(`?${q(subs)}`)).status, 400, JSON.stringify(subs));
    }
    // A change to a pattern on a live connection is judged the same.
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q([{ eventType: 'a.b' }])}`);
    await waitFor(() => sse.events('gw.connection.create').length === 1);
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const put = await fetch(`${edge}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ eventType: 'a.>.b' }] }),
    });
    assert.equal(put.status, 400);
    assert.match(await put.text(), /cannot accept subscription request: .*">" may only be the last segment/);
    sse.close();
  });

  it("shows pattern subscribers in the console: a connection search by type and a test event's reach", async () => {
    const api = `http://127.0.0.1:${gw.apiPort}`;
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q([{ eventType: 'console.orders.*' }])}`);
    await waitFor(() => sse.events('gw.connection.create').length === 1);
    const listed = async (eventType: string) => {
      const res = await fetch(`${api}/v3/connections?eventType=${encodeURIComponent(eventType)}`);
      assert.equal(res.status, 200);
      return ((await res.json()) as { connections: unknown[] }).connections.length;
    };
    assert.equal(await listed('console.orders.created'), 1, 'found by a type its pattern matches');
    assert.equal(await listed('console.orders.*'), 1, 'found by the pattern as named');
    assert.equal(await listed('console.orders.eu.created'), 0);
    const sent = await fetch(`${api}/v3/console/test-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'console.orders.tested' }),
    });
    assert.equal(sent.status, 200);
    assert.equal(((await sent.json()) as { connections: unknown[] }).connections.length, 1);
    await waitFor(() => sse.events('console.orders.tested').length === 1, { what: 'the test event' });
    const wildcard = await fetch(`${api}/v3/console/test-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'console.orders.*' }),
    });
    assert.equal(wildcard.status, 400);
    assert.match(((await wildcard.json()) as { error: string }).error, /holds "\*" or ">"/);
    sse.close();
  });

  it('refuses a publish of a type holding a wildcard with a 400 saying so', async () => {
    for (const type of ['com.example.orders.*', 'com.example.>', 'a*b', '>']) {
      const res = await publish(edge, type);
      assert.equal(res.status, 400, type);
      assert.match(await res.text(), /holds "\*" or ">": they are the wildcards of subscription patterns/);
    }
    const binary = await fetch(`${edge}/_gw/v1/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': '1',
        'ce-type': 'a.*',
        'ce-source': 'test',
      },
      body: '{}',
    });
    assert.equal(binary.status, 400);
    await binary.text();
  });
});

describe('type patterns a token allows (SUBSCRIPTION_TYPES_CLAIM)', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({ ...typesClaimSettings(jwtKey), MAX_TYPE_PATTERNS: '3' });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  const connect = (subs: unknown, token: string) =>
    openSse(`${edge}/_gw/v1/connection/sse?${q(subs)}&jwt=${token}`);

  it('allows exactly what the allowed pattern matches; anything broader is denied as a disallowed type', async () => {
    const orders = jwt({ types: ['com.example.orders.*'] });
    for (const eventType of ['com.example.orders.*', 'com.example.orders.created']) {
      const sse = await connect([{ eventType }], orders);
      assert.equal(sse.status, 200, `${eventType}: ${sse.errorBody}`);
      sse.close();
    }
    for (const subs of [
      [{ eventType: '>' }],
      [{ eventType: '*.*.*.*' }],
      [{ eventType: 'com.example.orders.>' }],
      [{ eventType: 'com.example.*.created' }],
      [{ eventType: 'com.example.>' }],
      [{ eventType: 'com.example.orders' }],
      [{ eventType: 'com.example.payments.created' }],
      [{ eventType: 'com.example.orders.*' }, { eventType: 'com.example.payments.*' }],
    ]) {
      const sse = await connect(subs, orders);
      assert.equal(sse.status, 403, JSON.stringify(subs));
      assert.equal(sse.errorBody, 'Subscription denied.');
    }
    const malformed = await connect([{ eventType: 'com.example.orders.created' }], jwt({ types: 'com.>.x' }));
    assert.equal(malformed.status, 403, 'a claim entry that is no pattern allows nothing, not `com.>`');
    const none = await connect([{ eventType: 'com.example.orders.created' }], jwt({}));
    assert.equal(none.status, 403, 'a token without the claim allows nothing');
    await none.ended.catch(() => {});
  });

  it('delivers what the allowed pattern matches and nothing else', async () => {
    const sse = await connect(
      [{ eventType: 'com.example.orders.*' }],
      jwt({ types: 'com.example.orders.*' }),
    );
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1);
    for (const type of ['com.example.payments.created', 'com.example.orders.eu.x', 'com.example.orders.done'])
      assert.equal((await publish(edge, type)).status, 202);
    await waitFor(() => sse.events('com.example.orders.done').length === 1);
    assert.deepEqual(typesIn(sse.events()), ['com.example.orders.done']);
    sse.close();
  });

  it('holds at most MAX_TYPE_PATTERNS distinct patterns: one more is a 503 with Retry-After, a held one still comes in', async () => {
    const any = jwt({ types: '>' });
    const held = [];
    for (const eventType of ['x.*', 'y.*', 'z.>']) {
      const sse = await connect([{ eventType }], any);
      assert.equal(sse.status, 200, sse.errorBody);
      held.push(sse);
    }
    const past = await connect([{ eventType: 'w.*' }], any);
    assert.equal(past.status, 503);
    assert.ok(Number(past.headers.get('retry-after')) > 0);
    assert.match(past.errorBody ?? '', /MAX_TYPE_PATTERNS/);
    const same = await connect([{ eventType: 'x.*' }], any);
    assert.equal(same.status, 200, 'a pattern held already costs nothing more');
    same.close();
    held.shift()!.close();
    await waitFor(
      async () => {
        const again = await connect([{ eventType: 'w.*' }], any);
        again.close();
        return again.status === 200;
      },
      { what: 'room for a pattern once its last subscriber left' },
    );
    for (const sse of held) sse.close();
  });
});

describe('type patterns and a subscription check service (SUBSCRIPTION_CHECK_PATTERNS)', () => {
  // A deny-list check, as one written before patterns: everything but `admin.secrets`.
  const asked: string[] = [];
  const checker = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      asked.push(body);
      res.writeHead(body.includes('"admin.secrets"') ? 403 : 204).end();
    });
  });
  const gateways: EmbeddedGateway[] = [];
  const start = async (extra: Record<string, string>) => {
    const gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      SUBSCRIPTION_CHECK: `http://127.0.0.1:${(checker.address() as AddressInfo).port}/check`,
      ...extra,
    });
    gateways.push(gw);
    return `http://127.0.0.1:${gw.publicPort}`;
  };
  before(async () => {
    await new Promise<void>((resolve) => checker.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    for (const gw of gateways) await gw.stop();
    checker.close();
  });

  it('refuses a pattern the service was not declared to judge, before asking it; declared, the service sees the pattern', async () => {
    const edge = await start({});
    const pattern = await openSse(`${edge}/_gw/v1/connection/sse?${q([{ eventType: '>' }])}`);
    assert.equal(pattern.status, 400);
    assert.match(pattern.errorBody ?? '', /SUBSCRIPTION_CHECK_PATTERNS/);
    assert.deepEqual(asked, [], 'the service was not asked');
    const named = await openSse(`${edge}/_gw/v1/connection/sse?${q([{ eventType: 'admin.audit' }])}`);
    assert.equal(named.status, 200, named.errorBody);
    named.close();

    const judged = await start({ SUBSCRIPTION_CHECK_PATTERNS: 'true' });
    const allowed = await openSse(`${judged}/_gw/v1/connection/sse?${q([{ eventType: 'admin.*' }])}`);
    assert.equal(allowed.status, 200, allowed.errorBody);
    assert.match(asked.at(-1)!, /"eventType":"admin\.\*"/);
    allowed.close();
  });
});
