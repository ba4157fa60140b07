/**
 * What one client can do to presence, bounded (found by an outside review): presence answers only
 * for PRESENCE_EVENT_TYPES (an anonymous list of who is online of any type, before); a client
 * address asks at most PRESENCE_QUERIES_PER_MINUTE (distinct places defeated the answer cache, each
 * a cluster-wide query); a connection's joins and leaves are announced for its first
 * PRESENCE_MAX_PLACES_PER_CONNECTION places (a few connections subscribed to thousands of rooms
 * filled PRESENCE_MAX_MEMBERS and silenced every other join).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openSse, type SseConnection, sleep, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const chat = {
  'chat.message': { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
};
const where = (w: unknown) => encodeURIComponent(JSON.stringify(w));

async function withHub(
  env: Record<string, string>,
  run: (f: HubFixture, open: SseConnection[]) => Promise<void>,
) {
  const f = await startHubFixture({ EXTRACTORS: JSON.stringify(chat), ...env });
  const open: SseConnection[] = [];
  try {
    await run(f, open);
  } finally {
    for (const c of open) c.close();
    await f.stop();
  }
}

async function tokenOf(conn: SseConnection): Promise<string> {
  await waitFor(() => conn.events('gw.connection.create').length === 1);
  const created = conn.events('gw.connection.create')[0]!;
  return ((created['data'] ?? created) as { connection_token: string }).connection_token;
}

describe('presence: what one client can do, bounded', () => {
  it('answers clients only for PRESENCE_EVENT_TYPES', async () => {
    await withHub({}, async (f, open) => {
      const alice = await openSse(`${f.url}/_gw/v1/connection/sse`, {
        authorization: `Bearer ${await f.jwt({ username: 'alice', jti: 'a1' })}`,
      });
      open.push(alice);
      await tokenOf(alice);
      const res = await fetch(`${f.url}/_gw/v1/presence?eventType=greeting`);
      assert.equal(res.status, 403);
      assert.doesNotMatch(await res.text(), /alice/);
    });
  });

  it('takes at most PRESENCE_QUERIES_PER_MINUTE from one address, whatever the places', async () => {
    await withHub({ PRESENCE_EVENT_TYPES: 'chat.message', PRESENCE_QUERIES_PER_MINUTE: '20' }, async (f) => {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let room = 0; room < 30; room++) {
        const res = await fetch(`${f.url}/_gw/v1/presence?eventType=chat.message&where=${where({ room })}`);
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
        await res.text();
      }
      assert.equal(statuses.filter((s) => s === 200).length, 20, statuses.join(' '));
      assert.equal(statuses.filter((s) => s === 429).length, 10);
      assert.match(retryAfter ?? '', /^\d+$/);
      const queries = await f.metric('gw_presence_queries_total', 'api="public",answer="complete"');
      assert.equal(queries, 20, 'a refused query asks no replica');
    });
  });

  it("announces a connection's first places only: a few connections cannot fill PRESENCE_MAX_MEMBERS", async () => {
    await withHub(
      { PRESENCE_EVENT_TYPES: 'chat.message', PRESENCE_MAX_MEMBERS: '50', PRESENCE_LEAVE_DELAY: '60s' },
      async (f, open) => {
        const watcher = await openSse(
          `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([
            { eventType: 'gw.presence.joined', oneOf: [{ eventType: 'chat.message', room: 42 }] },
          ])}`,
        );
        open.push(watcher);
        await tokenOf(watcher);
        for (let c = 0; c < 3; c++) {
          const conn = await openSse(
            `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'tick' }])}`,
          );
          open.push(conn);
          const oneOf = Array.from({ length: 500 }, (_, i) => ({ room: 1000 + c * 500 + i }));
          const res = await fetch(`${f.url}/_gw/v1/connection/sse/${await tokenOf(conn)}/subscriptions`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ subscriptions: [{ eventType: 'chat.message', oneOf }] }),
          });
          assert.equal(res.status, 204, await res.text());
        }
        await waitFor(async () => (await f.metric('gw_presence_members')) >= 48, { timeoutMs: 10_000 });
        const alice = await openSse(
          `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'chat.message', oneOf: [{ room: 42 }] }])}`,
          { authorization: `Bearer ${await f.jwt({ username: 'alice', jti: 'a1' })}` },
        );
        open.push(alice);
        await waitFor(() => watcher.events('gw.presence.joined').length === 1, {
          what: "alice's join of room 42",
          timeoutMs: 10_000,
        });
        await sleep(200);
        assert.equal(await f.metric('gw_presence_members'), 49, '16 places for each of the 3, and alice');
        assert.equal(await f.metric('gw_presence_overflow_total'), 0);
      },
    );
  });
});
