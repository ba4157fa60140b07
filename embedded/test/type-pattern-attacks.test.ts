/**
 * An attacker's review of type patterns (issue 37) through the public edge, as a browser would
 * reach it: spellings of a wildcard that should not be one (fullwidth `＊`, `%252A`, case), empty
 * segments, a change widening a subscription after connect, broad claim entries, the gateway's own
 * `gw.…` types reached by a pattern, the replica's pattern budget taken by one address or kept
 * after a client vanished, and a published type of many segments against the trie. After each the
 * process still answers /health.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';
import { typesClaimSettings, typesIn } from './types-claim.ts';

const jwtKey = 'type-pattern-attacks-secret-of-sufficient-length';
const jwt = (claims: Record<string, unknown>) => signJwt(withExpiry(claims), { alg: 'HS256', key: jwtKey });
const q = (subs: unknown) => `subscriptions=${encodeURIComponent(JSON.stringify(subs))}`;

async function publish(edge: string, type: string): Promise<number> {
  const res = await fetch(`${edge}/_gw/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ specversion: '1.0', id: crypto.randomUUID(), type, source: 'attack', data: {} }),
  });
  await res.text();
  return res.status;
}

async function healthy(edge: string): Promise<void> {
  const res = await fetch(`${edge}/_gw/health`);
  await res.text();
  assert.equal(res.status, 200, '/health');
}

describe('type pattern attacks under SUBSCRIPTION_TYPES_CLAIM', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway(typesClaimSettings(jwtKey));
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  const status = async (query: string) => {
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?${query}`);
    sse.close();
    return sse.status;
  };

  it('reads no other spelling as a wildcard: fullwidth, double-encoded and case variants are other types', async () => {
    const orders = jwt({ types: ['com.example.orders.*'] });
    const raw = (subs: string) => `subscriptions=${subs}&jwt=${orders}`;
    // %2A is `*` once decoded, as any query string is: the pattern the token allows.
    assert.equal(await status(raw('%5B%7B%22eventType%22%3A%22com.example.orders.%2A%22%7D%5D')), 200);
    for (const eventType of [
      'com.example.orders.%2A', // double-encoded: the literal type `…%2A`, still under the allowed pattern
      'com.example.orders.＊',
    ])
      assert.equal(await status(`${q([{ eventType }])}&jwt=${orders}`), 200, eventType);
    for (const eventType of [
      'com.example.%2A.created',
      'com.example.＊.created',
      'com.example.%3E',
      'com.example.＞',
      'COM.example.orders.*',
      'com.example.Orders.*',
      'com.example.orders',
      'com.example.orders..*',
      '.com.example.orders.*',
    ])
      assert.equal(await status(`${q([{ eventType }])}&jwt=${orders}`), 403, eventType);
    await healthy(edge);
  });

  it('delivers a fullwidth or encoded "wildcard" type only to its literal subscribers, and `*` takes an empty segment only where the token allows it', async () => {
    const sse = await openSse(
      `${edge}/_gw/v1/connection/sse?${q([{ eventType: 'lit.*' }, { eventType: 'lit.＊.x' }])}&jwt=${jwt({ types: ['lit.*', 'lit.＊.x'] })}`,
    );
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1);
    for (const type of ['lit.a.x', 'lit.＊.x', 'lit.', 'lit..x', 'lit', 'lit.%2A', 'lit.done'])
      assert.equal(await publish(edge, type), 202, type);
    await waitFor(() => sse.events('lit.done').length === 1, { what: 'the marker' });
    assert.deepEqual(typesIn(sse.events()), ['lit.＊.x', 'lit.', 'lit.%2A', 'lit.done']);
    sse.close();
  });

  it('judges a change (PUT) by the token as a connect: it cannot widen the subscription past the claim', async () => {
    const token = jwt({ types: ['com.example.orders.*'] });
    const sse = await openSse(
      `${edge}/_gw/v1/connection/sse?${q([{ eventType: 'com.example.orders.*' }])}&jwt=${token}`,
    );
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.connection.create').length === 1);
    const connection = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const put = (subs: unknown, authorization?: string) =>
      fetch(`${edge}/_gw/v1/connection/sse/${connection}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
        body: JSON.stringify({ subscriptions: subs }),
      });
    for (const subs of [[{ eventType: '>' }], [{ eventType: 'com.example.>' }], [{ eventType: '*.*.*.*' }]]) {
      for (const authorization of [`Bearer ${token}`, undefined]) {
        const res = await put(subs, authorization);
        await res.text();
        assert.ok([400, 403].includes(res.status), `${JSON.stringify(subs)} ${authorization}: ${res.status}`);
      }
    }
    assert.equal(await publish(edge, 'com.example.payments.created'), 202);
    assert.equal(await publish(edge, 'com.example.orders.done'), 202);
    await waitFor(() => sse.events('com.example.orders.done').length === 1);
    assert.deepEqual(typesIn(sse.events()), ['com.example.orders.done']);
    sse.close();
    await healthy(edge);
  });

  it('reads a broad claim entry as exactly as broad as it is', async () => {
    const one = jwt({ types: '*' });
    assert.equal(await status(`${q([{ eventType: 'solo' }])}&jwt=${one}`), 200);
    assert.equal(await status(`${q([{ eventType: '*' }])}&jwt=${one}`), 200);
    for (const eventType of ['*.*', '>', 'a.b', 'a.*'])
      assert.equal(await status(`${q([{ eventType }])}&jwt=${one}`), 403, eventType);
    const com = jwt({ types: ['com.>'] });
    for (const eventType of ['com.a', 'com.a.b.c', 'com.*.b', 'com.>'])
      assert.equal(await status(`${q([{ eventType }])}&jwt=${com}`), 200, eventType);
    for (const eventType of ['com', '>', '*.a', 'comx.a'])
      assert.equal(await status(`${q([{ eventType }])}&jwt=${com}`), 403, eventType);
    for (const entry of ['', '.', '..', '*.', '.>', 'a.>.b', 'a.**'])
      assert.equal(
        await status(`${q([{ eventType: 'a.b' }])}&jwt=${jwt({ types: [entry] })}`),
        403,
        `entry ${JSON.stringify(entry)}`,
      );
  });

  it('never delivers the gateway’s own events of other connections to `>` or `*.*`', async () => {
    const all = jwt({ types: '>' });
    const wide = await openSse(
      `${edge}/_gw/v1/connection/sse?${q([{ eventType: '>' }, { eventType: '*.*' }, { eventType: '*.*.*' }])}&jwt=${all}`,
    );
    assert.equal(wide.status, 200, wide.errorBody);
    await waitFor(() => wide.events('gw.subscriptions_set').length === 1);
    const other = await openSse(`${edge}/_gw/v1/connection/sse?${q([{ eventType: 'x.y' }])}&jwt=${all}`);
    await waitFor(() => other.events('gw.subscriptions_set').length === 1);
    other.close();
    assert.equal(await publish(edge, 'gw.presence.joined'), 400);
    assert.equal(await publish(edge, 'wide.done'), 202);
    await waitFor(() => wide.events('wide.done').length === 1);
    const gwTypes = wide
      .events()
      .map((e) => e['type'] as string)
      .filter((t) => t.startsWith('gw.'));
    assert.deepEqual(gwTypes, ['gw.connection.create', 'gw.subscriptions_set']);
    wide.close();
  });
});

describe('a published type of many segments against the trie', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      MAX_PATTERN_SEGMENTS: '64',
      LONGPOLL_TIMEOUT: '500ms',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  it('matches a type of 10,000 segments and one of ~900 KB of dots as any other, and stays up', async () => {
    const patterns = [
      { eventType: '>' },
      { eventType: 'a.>' },
      { eventType: 'a.*' },
      ...Array.from({ length: 13 }, (_, i) => ({ eventType: `${'*.'.repeat(i + 2)}>` })),
    ];
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q(patterns)}`);
    assert.equal(sse.status, 200, sse.errorBody);
    const poll = new LongPollClient(edge);
    assert.equal((await poll.get(`?${q(patterns)}`)).status, 200);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1);
    const deep = `a.${'b.'.repeat(10_000)}c`;
    const dots = `a${'.'.repeat(900_000)}`;
    const polled: string[] = [];
    const polling = (async () => {
      while (!polled.includes('deep.done')) polled.push(...typesIn(await poll.poll()));
    })();
    for (const type of [deep, dots, dots, dots, 'deep.done']) assert.equal(await publish(edge, type), 202);
    await waitFor(() => sse.events('deep.done').length === 1, { what: 'the marker', timeoutMs: 60_000 });
    await polling;
    assert.deepEqual(
      typesIn(sse.events()).map((t) => t.length),
      [deep.length, dots.length, dots.length, dots.length, 'deep.done'.length],
    );
    assert.deepEqual(
      polled.map((t) => t.length),
      [deep.length, dots.length, dots.length, dots.length, 'deep.done'.length],
    );
    sse.close();
    await healthy(edge);
  });
});

describe('the replica’s pattern budget (MAX_TYPE_PATTERNS)', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      MAX_TYPE_PATTERNS: '4',
      MAX_PATTERNS_PER_CONNECTION: '2',
      LONGPOLL_TIMEOUT: '500ms',
      EXTRACTORS: JSON.stringify({
        'hist.*': { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
      }),
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  const patternsFor = (tag: string) => [{ eventType: `${tag}.a.*` }, { eventType: `${tag}.b.*` }];

  /** Connects until `tag`'s pattern is admitted again, closing each try. */
  const admittedAgain = (tag: string) =>
    waitFor(
      async () => {
        const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q(patternsFor(tag))}`);
        sse.close();
        return sse.status === 200;
      },
      { what: `room for ${tag}'s patterns` },
    );

  it('releases the patterns of an SSE response destroyed abruptly, a WebSocket terminated and a long poll that ended', async () => {
    const sse = await new Promise<import('node:http').ClientRequest>((resolve, reject) => {
      const req = request(`${edge}/_gw/v1/connection/sse?${q(patternsFor('gone1'))}`, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => resolve(req));
      });
      req.on('error', () => {});
      req.on('error', reject);
      req.end();
    });
    const ws = openWs(`ws://127.0.0.1:${gw.publicPort}/_gw/v1/connection/ws?${q(patternsFor('gone2'))}`);
    await waitFor(() => ws.events.length >= 2, { what: 'the welcome' });
    const full = await openSse(`${edge}/_gw/v1/connection/sse?${q(patternsFor('late'))}`);
    assert.equal(full.status, 503, 'four patterns held');
    sse.destroy();
    ws.ws.terminate();
    await admittedAgain('late');
    await healthy(edge);

    const keep = await openSse(`${edge}/_gw/v1/connection/sse?${q(patternsFor('keep'))}`);
    assert.equal(keep.status, 200, keep.errorBody);
    const poll = new LongPollClient(edge);
    assert.equal((await poll.get(`?${q(patternsFor('lp1'))}`)).status, 200);
    // A poll answers at once while events wait for it: poll again until one is waiting.
    let waiting: Promise<unknown> | undefined;
    await waitFor(
      async () => {
        waiting ??= poll.get().then(() => {
          waiting = undefined;
        });
        const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q(patternsFor('late2'))}`);
        sse.close();
        return sse.status === 503;
      },
      { what: 'the waiting poll holding its patterns' },
    );
    await waiting;
    await admittedAgain('late2');
    keep.close();
  });

  it('answers a history query by a new pattern with a where while every pattern place is held (a query holds none)', async () => {
    // Fill the replica's budget (earlier tests' long polls may hold some of it still).
    const held: Array<Awaited<ReturnType<typeof openSse>>> = [];
    try {
      for (let i = 0; i < 3; i++) {
        const sse = await openSse(`${edge}/_gw/v1/connection/sse?${q(patternsFor(`full${i}`))}`);
        held.push(sse);
        if (sse.status === 503) break;
      }
      assert.equal(held.at(-1)!.status, 503, 'every pattern place is held');
      const where = encodeURIComponent(JSON.stringify({ room: 1 }));
      const res = await fetch(`${edge}/_gw/v1/history?eventType=hist.*&where=${where}`);
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(((await res.json()) as { events: unknown[] }).events, []);
    } finally {
      for (const c of held) c.close();
    }
  });
});

describe('the replica’s pattern budget and one address (MAX_TYPE_PATTERNS_PER_ADDRESS)', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      MAX_TYPE_PATTERNS: '5',
      MAX_TYPE_PATTERNS_PER_ADDRESS: '2',
      // The test client stands for a load balancer: its X-Forwarded-For names each client.
      TRUSTED_PROXIES: '127.0.0.1,::1',
      MAX_PATTERNS_PER_CONNECTION: '2',
      LONGPOLL_TIMEOUT: '500ms',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  const from = (address: string) => ({ 'x-forwarded-for': address });
  const patternsFor = (tag: string) => [{ eventType: `${tag}.a.*` }, { eventType: `${tag}.b.*` }];
  const connect = (tag: string, address: string) =>
    openSse(`${edge}/_gw/v1/connection/sse?${q(patternsFor(tag))}`, from(address));

  it('lets no one address take every pattern of the replica: past its share it alone gets a 429', async () => {
    const hog = await connect('hog1', '203.0.113.7');
    assert.equal(hog.status, 200, hog.errorBody);
    const more = await connect('hog2', '203.0.113.7');
    assert.equal(more.status, 429, 'the address holds its share');
    assert.ok(Number(more.headers.get('retry-after')) > 0);
    assert.match(more.errorBody ?? '', /MAX_TYPE_PATTERNS_PER_ADDRESS/);
    const same = await connect('hog1', '203.0.113.7');
    assert.equal(same.status, 200, 'a pattern the address holds already costs it nothing more');
    const other = await connect('fair', '198.51.100.9');
    assert.equal(other.status, 200, `another address still gets patterns: ${other.errorBody}`);

    // A change (PUT) spends the same share.
    await waitFor(() => other.events('gw.connection.create').length === 1);
    const token = (other.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const put = await fetch(`${edge}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...from('198.51.100.9') },
      body: JSON.stringify({ subscriptions: [...patternsFor('fair'), { eventType: 'fair.c.*' }] }),
    });
    assert.equal(put.status, 400, 'three patterns on one connection are over MAX_PATTERNS_PER_CONNECTION');
    await put.text();
    const swap = await fetch(`${edge}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...from('198.51.100.9') },
      body: JSON.stringify({ subscriptions: [{ eventType: 'wide.*' }] }),
    });
    assert.equal(swap.status, 429, 'a change past the share of its address');
    await swap.text();

    hog.close();
    same.close();
    await waitFor(
      async () => {
        const again = await connect('hog2', '203.0.113.7');
        again.close();
        return again.status === 200;
      },
      { what: "the address's share back once its connections closed" },
    );
    other.close();
    await healthy(edge);
  });

  it('counts the patterns of waiting long polls for their address too', async () => {
    const address = '203.0.113.99';
    const poll = new LongPollClient(edge);
    // As a browser behind one address: the cookies of each answer go with the next poll.
    const get = async (query = '') => {
      const res = await fetch(`${edge}/_gw/v1/connection/longpolling${query}`, {
        headers: { ...from(address), cookie: [...poll.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const c of res.headers.getSetCookie()) {
        const [k, v] = c.split(';')[0]!.split('=');
        poll.cookies.set(k!, v ?? '');
      }
      await res.text();
      return res.status;
    };
    assert.equal(await get(`?${q(patternsFor('lpa'))}`), 200);
    let waiting: Promise<unknown> | undefined;
    await waitFor(
      async () => {
        waiting ??= get().then(() => {
          waiting = undefined;
        });
        const more = await connect('lpb', address);
        more.close();
        return more.status === 429;
      },
      { what: "a waiting poll's patterns counted for its address" },
    );
    await waiting;
  });
});
