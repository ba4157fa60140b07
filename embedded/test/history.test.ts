/**
 * History at the public edge (`GET /_gw/v1/history`), in one process on the memory bus, with an
 * event buffer of 8 so that older pages come from the broker: pages newest first, walked with
 * `before` to the oldest event, hold every event of the place once and nothing else; the place is
 * allowed as subscribing to it is and filtered as that subscription would be; bad parameters are 400s
 * naming them, and a `before` of another epoch of the stream (created anew since) a 409.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const key = 'history-test-secret-of-sufficient-length';
const jwt = (claims: Record<string, unknown> = {}) =>
  signJwt(withExpiry({ jti: 'history-session', ...claims }), { alg: 'HS256', key });

interface Page {
  eventType: string;
  events: Array<{ position: string; event: { id: string; type: string; data: { room: number } } }>;
  next?: string;
}

describe('history at the public edge', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  /** Ids of the chat.message events of each room, oldest first. */
  const ofRoom: Record<number, string[]> = { 1: [], 2: [] };

  /** `token` null: no Authorization header. */
  const history = (query: string, token: string | null = jwt()) =>
    fetch(`${edge}/_gw/v1/history?${query}`, {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
  const where = (room: number) => `where=${encodeURIComponent(JSON.stringify({ room }))}`;

  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      JWT_SECRET_KEY: key,
      SUBSCRIPTION_CHECK: 'jwt_validation',
      EVENT_BUFFER_SIZE: '8',
      EXTRACTORS: JSON.stringify({
        'chat.message': {
          room: { stable_field_index: 0, event: { json_pointer: '/data/room' } },
        },
        'user.note': {
          user: {
            stable_field_index: 0,
            event: { json_pointer: '/data/user' },
            jwt: { json_pointer: '/username' },
          },
        },
      }),
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    const publish = async (event: Record<string, unknown>) => {
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ specversion: '1.0', source: 'history-test', ...event }),
      });
      assert.equal(res.status, 202, await res.text());
    };
    for (let i = 0; i < 30; i++) {
      const room = (i % 3) + 1;
      const id = `m-${i}`;
      await publish({ id, type: 'chat.message', data: { room } });
      ofRoom[room]?.push(id);
      if (i % 5 === 0) await publish({ id: `other-${i}`, type: 'other.thing', data: {} });
      if (i % 10 === 0) {
        await publish({ id: `note-alice-${i}`, type: 'user.note', data: { user: 'alice' } });
        await publish({ id: `note-bob-${i}`, type: 'user.note', data: { user: 'bob' } });
      }
    }
    // The buffer holds the newest 8: the last page must come from the broker.
    const newest = await (await history('eventType=other.thing&limit=1')).json();
    assert.equal((newest as Page).events.length, 1);
  });
  after(() => gw?.stop());

  it('pages a place newest first, past the event buffer, each event once', async () => {
    const seen: string[] = [];
    let next: string | undefined;
    let pages = 0;
    do {
      const res = await history(
        `eventType=chat.message&${where(1)}&limit=3${next ? `&before=${encodeURIComponent(next)}` : ''}`,
      );
      assert.equal(res.status, 200, await res.clone().text());
      const page = (await res.json()) as Page;
      assert.equal(page.eventType, 'chat.message');
      assert.ok(page.events.length <= 3);
      seen.push(...page.events.map((e) => e.event.id));
      for (const e of page.events) assert.equal(e.event.data.room, 1);
      next = page.next;
      pages++;
    } while (next !== undefined && pages < 20);
    assert.deepEqual(seen, [...ofRoom[1]!].reverse(), 'every event of room 1, newest first, once');
    assert.ok(pages >= 4, `${pages} pages`);
  });

  it('gives the type as a whole without `where`, newest first', async () => {
    const page = (await (await history('eventType=chat.message&limit=5')).json()) as Page;
    assert.deepEqual(
      page.events.map((e) => e.event.id),
      ['m-29', 'm-28', 'm-27', 'm-26', 'm-25'],
    );
    assert.equal(page.next, page.events[4]!.position);
  });

  it('filters by a constraint field as a subscription to the place would', async () => {
    const place = `where=${encodeURIComponent('{"user":"alice"}')}`;
    const page = (await (await history(`eventType=user.note&${place}`, jwt())).json()) as Page;
    assert.deepEqual(
      page.events.map((e) => e.event.id),
      ['note-alice-20', 'note-alice-10', 'note-alice-0'],
    );
  });

  it('refuses a `before` of another incarnation of the stream (409) instead of paging the new one', async () => {
    // A `next` kept from before the stream was created anew (a restart of the memory bus, a topic
    // recreated): read as a place in the new stream, it paged events the old stream never had.
    const newest = (await (await history('eventType=chat.message&limit=1')).json()) as Page;
    const [place, epoch] = newest.events[0]!.position.split('.');
    const stale = `${place}.${epoch === '00000000' ? '00000001' : '00000000'}`;
    const res = await history(`eventType=chat.message&before=${encodeURIComponent(stale)}`);
    const body = await res.text();
    assert.equal(res.status, 409, body);
    assert.match(body, /^before: .*epoch/);
  });

  it('refuses what subscribing refuses, and bad parameters with a 400 naming them', async () => {
    const cases: Array<[string, string | null, number, RegExp]> = [
      ['eventType=chat.message', null, 403, /denied/i],
      ['eventType=chat.message', 'not.a.jwt', 400, /invalid JWT/],
      ['limit=3', jwt(), 400, /^eventType/],
      ['eventType=chat.message&limit=0', jwt(), 400, /^limit/],
      ['eventType=chat.message&limit=101', jwt(), 400, /^limit/],
      ['eventType=chat.message&limit=1e1', jwt(), 400, /^limit/],
      ['eventType=chat.message&before=not-a-position', jwt(), 400, /^before/],
      ['eventType=chat.message&before=', jwt(), 400, /^before/],
      [`eventType=chat.message&where=${encodeURIComponent('{"floor":1}')}`, jwt(), 400, /^where/],
      [`eventType=chat.message&where=${encodeURIComponent('[1]')}`, jwt(), 400, /^where/],
    ];
    for (const [query, token, status, text] of cases) {
      const res = await history(query, token);
      const body = await res.text();
      assert.equal(res.status, status, `${query}: ${body}`);
      assert.match(body, text, query);
    }
    const post = await fetch(`${edge}/_gw/v1/history?eventType=chat.message`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, OPTIONS');
  });
});
