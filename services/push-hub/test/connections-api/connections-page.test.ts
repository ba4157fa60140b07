/**
 * The page the connections API makes of the replicas' parts (connections-cluster.ts pageOf): in id
 * order, deduplicated, cut where a replica holding more stopped, bounded by `limit` and bytes; and
 * that paging through parts made that way yields every connection exactly once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConnectionEntry } from '../../src/connections-api/connection-entry.ts';
import { pageOf } from '../../src/connections-api/connections-cluster.ts';
import { decodeCursor } from '../../src/connections-api/connections-cursor.ts';
import type { ListReply } from '../../src/connections-api/connections-messages.ts';

const entry = (id: string, extra: Partial<ConnectionEntry> = {}): ConnectionEntry => ({
  id,
  transport: 'sse',
  replica: 'r',
  connectedAt: '2025-01-01T00:00:00.000Z',
  subscriptions: [],
  ...extra,
});

/** One replica's part as replica-connections.ts makes it: ids after `after`, at most `limit`. */
function part(ids: string[], after: string | undefined, limit: number): ListReply {
  const rest = ids.filter((id) => after === undefined || id > after).sort();
  return { connections: rest.slice(0, limit).map((id) => entry(id)), more: rest.length > limit };
}

describe('connections API pages', () => {
  it('cuts the page at the last id of a replica that holds more', () => {
    const page = pageOf(
      [part(['a', 'c', 'e', 'g'], undefined, 2), part(['b', 'd', 'f'], undefined, 2)],
      10,
      1e6,
    );
    assert.deepEqual(
      page.connections.map((e) => e.id),
      ['a', 'b', 'c'],
    );
    assert.equal(decodeCursor(page.next!), 'c');
  });

  it('stops at the byte bound (at least one entry) and goes on from there', () => {
    const big = { subscriptions: [{ eventType: 'x'.repeat(1000), oneOf: [] }] };
    const parts: ListReply[] = [{ connections: ['a', 'b', 'c'].map((id) => entry(id, big)), more: false }];
    const page = pageOf(parts, 10, 2500);
    assert.deepEqual(
      page.connections.map((e) => e.id),
      ['a', 'b'],
    );
    assert.equal(decodeCursor(page.next!), 'b');
    assert.equal(pageOf(parts, 10, 10).connections.length, 1, 'one entry even when it alone is larger');
  });

  it('shows a long-poll connection two replicas saw once, as the replica with the latest poll has it', () => {
    const seen = (replica: string, lastPollAt: string) =>
      entry('lp', { transport: 'longpolling', replica, lastPollAt });
    const page = pageOf(
      [
        { connections: [seen('a', '2025-01-01T00:00:05.000Z')], more: false },
        { connections: [seen('b', '2025-01-01T00:00:09.000Z')], more: false },
      ],
      10,
      1e6,
    );
    assert.deepEqual(
      page.connections.map((e) => [e.id, e.replica]),
      [['lp', 'b']],
    );
    assert.equal(page.next, undefined);
  });

  it('pages through uneven replicas exactly once, whatever the limit', () => {
    const replicas = [
      Array.from({ length: 37 }, (_, i) => `a${String(i).padStart(3, '0')}`),
      Array.from({ length: 5 }, (_, i) => `m${i}`),
      [],
      Array.from({ length: 20 }, (_, i) => `${String.fromCharCode(98 + i)}x`),
    ];
    const all = replicas.flat().sort();
    for (const limit of [1, 2, 7, 100]) {
      const seen: string[] = [];
      let after: string | undefined;
      for (let n = 0; n < 200; n++) {
        const page = pageOf(
          replicas.map((ids) => part(ids, after, limit)),
          limit,
          1e6,
        );
        seen.push(...page.connections.map((e) => e.id));
        if (page.next === undefined) break;
        after = decodeCursor(page.next);
      }
      assert.deepEqual(seen, all, `limit ${limit}`);
    }
  });
});
