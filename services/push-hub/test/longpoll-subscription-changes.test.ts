/**
 * Long-polling while subscriptions change, property style: seeded random runs interleave PUTs
 * (through the other replica), a client that keeps a poll open (on one replica, or alternating
 * between both), and publishes. Whatever the interleaving:
 * - an event whose type every subscription set in force from its publication on includes is
 *   delivered, once, and an event no such set includes never is;
 * - events come in publish order, none twice;
 * - the client learns every change: the `gw.subscriptions_set` it gets come in PUT order, none
 *   twice, and the last is the last PUT's; changes made between two polls come as one, the latest
 *   (the record holds one list; the queue notes that it changed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, sleep, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';

const TYPES = ['tick', 'a', 'b', 'c'];

/** mulberry32: a small seeded generator, so a failing run can be repeated. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Put {
  types: Set<string>;
  started: number;
  ended: number;
}

interface Published {
  n: number;
  type: string;
  at: number;
}

async function putSubscriptions(url: string, token: string, types: Set<string>): Promise<void> {
  const res = await fetch(`${url}/_gw/v1/connection/longpolling/${token}/subscriptions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: [...types].map((eventType) => ({ eventType })) }),
  });
  assert.equal(res.status, 204, await res.text());
}

describe('long-polling while subscriptions change', () => {
  let a: HubFixture;
  let b: HubFixture;
  before(async () => {
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    a = await startHubFixture({ REPLICA_ID: 'lp-a', LONGPOLL_TIMEOUT: '250ms' }, shared);
    b = await startHubFixture({ REPLICA_ID: 'lp-b', LONGPOLL_TIMEOUT: '250ms' }, shared);
  });
  after(async () => {
    await a.stop();
    await b.stop();
  });

  /** One seeded run; returns what went wrong, or nothing. */
  async function run(seed: number, alternate: boolean): Promise<string[]> {
    const rnd = random(seed);
    const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)]!;
    const subset = () => new Set(['tick', ...TYPES.slice(1).filter(() => rnd() < 0.5)]);
    const initial = subset();
    const client = new LongPollClient(a.url);
    const created = await client.get(
      `?subscriptions=${encodeURIComponent(JSON.stringify([...initial].map((eventType) => ({ eventType }))))}`,
    );
    assert.equal(created.status, 200);
    const received: Array<Record<string, unknown>> = [];
    let token: string | undefined;
    let polling = true;
    const poller = (async () => {
      for (let i = 0; polling; i++) {
        const on = alternate && i % 2 ? b : a;
        const other = new LongPollClient(on.url);
        other.cookies = client.cookies;
        const events = await other.poll();
        received.push(...events);
        for (const e of events)
          if (e['type'] === 'gw.connection.create')
            token = (e['data'] as { connection_token: string }).connection_token;
      }
    })();
    await waitFor(() => token !== undefined, { what: 'the welcome events' });
    const puts: Put[] = [{ types: initial, started: 0, ended: 0 }];
    const published: Published[] = [];
    let n = 0;
    for (let step = 0; step < 30; step++) {
      const r = rnd();
      if (r < 0.25) {
        const types = subset();
        const put: Put = { types, started: performance.now(), ended: Infinity };
        puts.push(put);
        await putSubscriptions(b.url, token!, types);
        put.ended = performance.now();
      } else if (r < 0.85) {
        const type = pick(TYPES);
        const at = performance.now();
        await a.publish(type, { n });
        published.push({ n: n++, type, at });
      }
      if (rnd() < 0.5) await sleep(Math.floor(rnd() * 120));
    }
    const last = n;
    await a.publish('tick', { n: last });
    published.push({ n: last, type: 'tick', at: performance.now() });
    await waitFor(
      () => received.some((e) => e['type'] === 'tick' && (e['data'] as { n: number }).n === last),
      {
        timeoutMs: 5000,
        what: `seed ${seed}: the closing tick`,
      },
    );
    polling = false;
    await poller;
    return check(published, puts, received);
  }

  function check(published: Published[], puts: Put[], received: Array<Record<string, unknown>>): string[] {
    const problems: string[] = [];
    const got = received
      .filter((e) => TYPES.includes(e['type'] as string))
      .map((e) => (e['data'] as { n: number }).n);
    if (new Set(got).size !== got.length) problems.push(`duplicates in ${got.join(',')}`);
    if (got.some((v, i) => i > 0 && v < got[i - 1]!)) problems.push(`out of order: ${got.join(',')}`);
    for (const e of published) {
      // Sets in force from the publication on: the last one whose PUT had ended before, and later.
      const from = puts.findLastIndex((p) => p.ended < e.at);
      const inForce = puts.slice(Math.max(0, from));
      const must = inForce.every((p) => p.types.has(e.type));
      const mustNot = inForce.every((p) => !p.types.has(e.type));
      if (must && !got.includes(e.n)) problems.push(`event ${e.n} (${e.type}) skipped`);
      if (mustNot && got.includes(e.n)) problems.push(`event ${e.n} (${e.type}) delivered unsubscribed`);
    }
    const sets = received.filter((e) => e['type'] === 'gw.subscriptions_set');
    const expected = puts.map((p) => [...p.types].sort().join(','));
    const seen = sets.map((e) =>
      (e['data'] as Array<{ eventType: string }>)
        .map((s) => s.eventType)
        .sort()
        .join(','),
    );
    let next = 0;
    const inOrder = seen.every((set) => {
      next = expected.indexOf(set, next) + 1;
      return next > 0;
    });
    if (!inOrder || seen.at(-1) !== expected.at(-1))
      problems.push(`subscription changes seen ${seen.join(' | ')}, made ${expected.join(' | ')}`);
    return problems;
  }

  it('never skips an event, on one replica', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const problems = await run(seed, false);
      assert.deepEqual(problems, [], `seed ${seed}`);
    }
  });

  it('never skips an event, polling the two replicas in turn', async () => {
    for (let seed = 101; seed <= 108; seed++) {
      const problems = await run(seed, true);
      assert.deepEqual(problems, [], `seed ${seed}`);
    }
  });
});
