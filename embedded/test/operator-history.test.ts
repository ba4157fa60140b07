/**
 * The console's history view reads `GET /v3/history` on the internal API (operator-history.ts), in
 * one process on the memory bus with an event buffer of 8, so older pages come from the broker:
 * behind INTERNAL_API_TOKEN (no client JWT: the operator sees every place, the JWT rules and
 * SUBSCRIPTION_CHECK are the clients'); pages newest first walked with `next` to the oldest event
 * hold every event of the place once (a type, a type pattern, a `where`); HISTORY_MAX_LIMIT and
 * HISTORY_MAX_BYTES bound a page; HISTORY_QUERIES_PER_MINUTE bounds the operator's address apart
 * from the clients'; bad parameters are 400s naming them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const key = 'operator-history-test-secret-long-enough';
const token = 'operator-history-internal-api-token';
const operator = { authorization: `Bearer ${token}` };
const settings = {
  ...ephemeralGatewaySettings,
  JWT_SECRET_KEY: key,
  INTERNAL_API_TOKEN: token,
  SUBSCRIPTION_CHECK: 'jwt_validation',
  EVENT_BUFFER_SIZE: '8',
  EXTRACTORS: JSON.stringify({
    'chat.message': { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
    'user.note': {
      user: {
        stable_field_index: 0,
        event: { json_pointer: '/data/user' },
        jwt: { json_pointer: '/username' },
      },
    },
  }),
};

interface Page {
  eventType: string;
  events: Array<{ position: string; event: { id: string; type: string; data: Record<string, unknown> } }>;
  next?: string;
}

async function publish(edge: string, event: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${edge}/_gw/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ specversion: '1.0', source: 'operator-history-test', ...event }),
  });
  assert.equal(res.status, 202, await res.text());
}

describe('the operator history (GET /v3/history on the internal API)', () => {
  let gw: EmbeddedGateway;
  let api: string;
  let edge: string;
  /** Ids per type (and room), oldest first. */
  const ids: Record<string, string[]> = { room1: [], chat: [], notes: [] };

  const history = (query: string, headers: Record<string, string> = operator) =>
    fetch(`${api}/v3/history?${query}`, { headers });

  /** Every page of the query, walked with `next`; the ids newest first. */
  async function walk(query: string): Promise<{ ids: string[]; pages: number }> {
    const seen: string[] = [];
    let before = '';
    for (let pages = 1; pages <= 50; pages++) {
      const res = await history(`${query}${before}`);
      assert.equal(res.status, 200, await res.clone().text());
      const page = (await res.json()) as Page;
      seen.push(...page.events.map((e) => e.event.id));
      if (page.next === undefined) return { ids: seen, pages };
      before = `&before=${encodeURIComponent(page.next)}`;
    }
    throw new Error('more than 50 pages');
  }

  before(async () => {
    gw = await startEmbeddedGateway(settings);
    api = `http://127.0.0.1:${gw.apiPort}`;
    edge = `http://127.0.0.1:${gw.publicPort}`;
    for (let i = 0; i < 24; i++) {
      const room = (i % 2) + 1;
      await publish(edge, {
        id: `m-${i}`,
        type: 'chat.message',
        data: { room, text: `<img src=x onerror=alert(${i})>` },
      });
      ids['chat']!.push(`m-${i}`);
      if (room === 1) ids['room1']!.push(`m-${i}`);
      if (i % 4 === 0) {
        await publish(edge, { id: `t-${i}`, type: 'chat.typing', data: { room } });
        ids['chat']!.push(`t-${i}`);
      }
      if (i % 8 === 0) {
        for (const user of ['alice', 'bob']) {
          await publish(edge, { id: `note-${user}-${i}`, type: 'user.note', data: { user } });
          ids['notes']!.push(`note-${user}-${i}`);
        }
      }
    }
  });
  after(() => gw?.stop());

  it('needs the internal API token, not a client JWT', async () => {
    const jwt = signJwt(withExpiry({ jti: 's', username: 'alice' }), { alg: 'HS256', key });
    const res = await history('eventType=chat.message', { authorization: `Bearer ${jwt}` });
    assert.equal(res.status, 401);
    assert.equal((await history('eventType=chat.message', {})).status, 401);
  });

  it('pages a type newest first, past the event buffer into the broker, every event once', async () => {
    const { ids: seen, pages } = await walk('eventType=chat.message&limit=5');
    const expected = ids['chat']!.filter((id) => id.startsWith('m-')).reverse();
    assert.deepEqual(seen, expected);
    assert.equal(pages, 5);
  });

  it('answers each event as it was published, its attacker-written text untouched', async () => {
    const page = (await (await history('eventType=chat.message&limit=1')).json()) as Page;
    assert.equal(page.eventType, 'chat.message');
    const [newest] = page.events;
    assert.equal(newest?.event.id, 'm-23');
    assert.equal(newest?.event.data['text'], '<img src=x onerror=alert(23)>');
    assert.match(newest?.position ?? '', /\S/);
  });

  it('sees every place: the constraints a JWT would infer are the clients’, not the operator’s', async () => {
    const { ids: seen } = await walk('eventType=user.note&limit=3');
    assert.deepEqual(seen, [...ids['notes']!].reverse());
  });

  it('pages a place (where) and a type pattern', async () => {
    const where = encodeURIComponent(JSON.stringify({ room: 1 }));
    assert.deepEqual(
      (await walk(`eventType=chat.message&where=${where}&limit=4`)).ids,
      [...ids['room1']!].reverse(),
    );
    assert.deepEqual((await walk('eventType=chat.*&limit=7')).ids, [...ids['chat']!].reverse());
    assert.deepEqual((await walk('eventType=chat.>&limit=100')).ids, [...ids['chat']!].reverse());
  });

  it('refuses bad parameters with a 400 naming them, a `before` of another epoch with a 409', async () => {
    const refused: Array<[string, RegExp]> = [
      ['', /eventType/],
      ['eventType=chat.message&limit=101', /limit: expected an integer from 1 to 100/],
      ['eventType=chat.message&limit=0', /limit/],
      ['eventType=chat.message&before=not-a-position', /before/],
      [`eventType=chat.message&before=${'9'.repeat(300)}`, /before/],
      ['eventType=chat.>.x', /pattern/],
      [`eventType=chat.message&where=${encodeURIComponent('{"floor":1}')}`, /where: .*floor/],
      [`eventType=chat.message&where=${encodeURIComponent('[1]')}`, /where/],
    ];
    for (const [query, message] of refused) {
      const res = await history(query);
      assert.equal(res.status, 400, query);
      assert.match(((await res.json()) as { error: string }).error, message, query);
    }
    // A `next` kept from before the stream was created anew names no place in this one: 409.
    const newest = (await (await history('eventType=chat.message&limit=1')).json()) as Page;
    const [place, epoch] = newest.events[0]!.position.split('.');
    const stale = `${place}.${epoch === '00000000' ? '00000001' : '00000000'}`;
    const res = await history(`eventType=chat.message&before=${stale}`);
    assert.equal(res.status, 409);
    assert.match(((await res.json()) as { error: string }).error, /^before: .*epoch/);
    const post = await fetch(`${api}/v3/history?eventType=x`, { method: 'POST', headers: operator });
    assert.equal(post.status, 405);
    assert.match(post.headers.get('allow') ?? '', /GET/);
    await post.text();
  });
});

describe('the operator history: bounds', () => {
  let gw: EmbeddedGateway;
  let api: string;
  let edge: string;
  const queriesPerMinute = 3;

  before(async () => {
    gw = await startEmbeddedGateway({
      ...settings,
      HISTORY_MAX_BYTES: String(64 * 1024),
      HISTORY_QUERIES_PER_MINUTE: String(queriesPerMinute),
    });
    api = `http://127.0.0.1:${gw.apiPort}`;
    edge = `http://127.0.0.1:${gw.publicPort}`;
    for (let i = 0; i < 5; i++)
      await publish(edge, { id: `big-${i}`, type: 'big.thing', data: { text: 'x'.repeat(30_000) } });
  });
  after(() => gw?.stop());

  it('cuts a page at HISTORY_MAX_BYTES, and the next page goes on from there', async () => {
    const res = await fetch(`${api}/v3/history?eventType=big.thing&limit=10`, { headers: operator });
    assert.equal(res.status, 200);
    const page = (await res.json()) as Page;
    assert.deepEqual(
      page.events.map((e) => e.event.id),
      ['big-4', 'big-3'],
    );
    assert.equal(page.next, page.events[1]!.position);
  });

  it('answers the operator’s address 429 with Retry-After past HISTORY_QUERIES_PER_MINUTE, apart from the clients’ budget', async () => {
    // One query was made by the test above.
    for (let i = 1; i < queriesPerMinute; i++)
      assert.equal((await fetch(`${api}/v3/history?eventType=big.thing`, { headers: operator })).status, 200);
    const refused = await fetch(`${api}/v3/history?eventType=big.thing`, { headers: operator });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.match(((await refused.json()) as { error: string }).error, /history queries/);
    // A client of the same address still has its own.
    const jwt = signJwt(withExpiry({ jti: 's' }), { alg: 'HS256', key });
    const client = await fetch(`${edge}/_gw/v1/history?eventType=big.thing&limit=1`, {
      headers: { authorization: `Bearer ${jwt}` },
    });
    assert.equal(client.status, 200, await client.clone().text());
    await client.text();
  });
});
