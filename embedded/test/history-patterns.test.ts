/**
 * History of a type pattern at the public edge (`GET /_gw/v1/history?eventType=chat.>`), on the
 * memory bus with an event buffer of 4 so that most of it comes from the broker: a pattern is
 * allowed exactly as subscribing to it is (the token's types claim must cover every type it
 * matches, else 403; a malformed pattern is a 400) and its page holds what that subscription would
 * have been sent: every matching type's events, newest first, and nothing else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const key = 'history-patterns-secret-of-sufficient-length';
const jwt = (types: string[]) => signJwt(withExpiry({ jti: 'patterns', types }), { alg: 'HS256', key });

interface Page {
  events: Array<{ event: { id: string; type: string } }>;
  next?: string;
}

describe('history of a type pattern at the public edge', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  /** Ids of the chat.* events, oldest first. */
  const chat: string[] = [];

  const history = (eventType: string, types: string[], extra = '') =>
    fetch(`${edge}/_gw/v1/history?eventType=${encodeURIComponent(eventType)}${extra}`, {
      headers: { authorization: `Bearer ${jwt(types)}` },
    });

  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      JWT_SECRET_KEY: key,
      SUBSCRIPTION_CHECK: 'jwt_validation',
      SUBSCRIPTION_TYPES_CLAIM: '/types',
      EVENT_BUFFER_SIZE: '4',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    const types = ['chat.message', 'chat.topic', 'other.thing', 'chat.room.joined'];
    for (let i = 0; i < 12; i++) {
      const type = types[i % types.length]!;
      const id = `e-${i}`;
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ specversion: '1.0', source: 'history-patterns', id, type, data: {} }),
      });
      assert.equal(res.status, 202, await res.text());
      if (type.startsWith('chat.')) chat.push(id);
    }
  });
  after(() => gw?.stop());

  it('pages every type a pattern matches, newest first, as subscribing to it would', async () => {
    const all = (await (await history('chat.>', ['chat.>'], '&limit=100')).json()) as Page;
    assert.deepEqual(
      all.events.map((e) => e.event.id),
      [...chat].reverse(),
    );
    const one = (await (await history('chat.*', ['chat.>'], '&limit=100')).json()) as Page;
    assert.ok(one.events.length > 0, 'chat.* matches chat.message and chat.topic');
    for (const e of one.events) assert.match(e.event.type, /^chat\.[a-z]+$/);
  });

  it('refuses a pattern the token may not subscribe to, and a malformed one', async () => {
    const cases: Array<[string, string[], number]> = [
      ['chat.>', ['chat.message'], 403],
      ['>', ['chat.>'], 403],
      ['*.message', ['chat.>'], 403],
      ['chat.>.x', ['chat.>'], 400],
      ['chat*', ['chat.>'], 400],
    ];
    for (const [eventType, types, status] of cases) {
      const res = await history(eventType, types);
      assert.equal(res.status, status, `${eventType} with ${types}: ${await res.text()}`);
    }
    assert.equal((await fetch(`${edge}/_gw/health`)).status, 200);
  });
});
