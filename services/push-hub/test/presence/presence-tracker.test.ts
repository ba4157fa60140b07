/**
 * The presence tracker's rules, on three replicas wired to each other in this process (a gather
 * asks every live replica's `answer`, as the control channel does): each replica tells its
 * subscribers of a change exactly once, whichever replicas announce it; a member over
 * PRESENCE_MAX_MEMBERS is not announced but counted; a replica that left has its members moved to
 * where they are live, or left, by exactly one replica; a stopped tracker announces nothing.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Gathered } from '@gatehouse/bus';
import { createLogger } from '@gatehouse/service-kit';
import { sleep, waitFor } from '@gatehouse/testkit';
import type { PresenceRequest } from '../../src/presence/presence-messages.ts';
import { type PresenceChange, PresenceTracker } from '../../src/presence/presence-tracker.ts';

const logger = createLogger({ name: 'presence-tracker-test', level: 'silent' });
const room = (n: number) => [{ eventType: 'chat', oneOf: [{ room: n }] }];

class Cluster {
  readonly trackers = new Map<string, PresenceTracker>();
  readonly told = new Map<string, string[]>();
  readonly live = new Set<string>();
  readonly claimed = new Set<string>();
  overflows = 0;

  add(name: string, maxMembers = 1000): PresenceTracker {
    const tracker = new PresenceTracker({
      replica: name,
      announces: (type) => type === 'chat',
      leaveDelayMs: 50,
      maxMembers,
      gather: (request, ask) => this.gather(request, ask),
      liveReplicas: async () => [...this.live],
      claimGone: async (replica) => !this.claimed.has(replica) && Boolean(this.claimed.add(replica)),
      tell: (c: PresenceChange) => this.told.get(name)!.push(`${c.kind} ${c.member} ${c.where}`),
      overflowed: () => this.overflows++,
      logger,
      checkEveryMs: 30,
      batchMs: 5,
    });
    this.trackers.set(name, tracker);
    this.told.set(name, []);
    this.live.add(name);
    return tracker;
  }

  async gather(request: PresenceRequest, ask: (r: string) => boolean = () => true): Promise<Gathered> {
    const answers = new Map<string, unknown>();
    for (const name of this.live)
      if (ask(name) && request.op !== 'query') answers.set(name, this.trackers.get(name)!.answer(request));
    return { answers, missing: [] };
  }

  stopAll(): void {
    for (const t of this.trackers.values()) t.stop();
  }
}

describe('presence tracker', () => {
  let cluster: Cluster;
  afterEach(() => cluster?.stopAll());
  /** A new cluster of these replicas, each started. */
  async function started(...names: string[]): Promise<[PresenceTracker, PresenceTracker, PresenceTracker]> {
    cluster = new Cluster();
    const trackers = names.map((n) => cluster.add(n));
    for (const t of trackers) await t.start();
    return trackers as [PresenceTracker, PresenceTracker, PresenceTracker];
  }

  it('tells each replica of a join once, however many connections or replicas have the member', async () => {
    const [a, b] = await started('a', 'b', 'c');
    a.changed({ connectionId: 'x1', sessionId: 's1' }, [], room(1));
    b.changed({ connectionId: 'x2', sessionId: 's1' }, [], room(1));
    a.changed({ connectionId: 'x3', sessionId: 's1' }, [], room(1));
    await waitFor(() => cluster.told.get('c')!.length >= 1, { timeoutMs: 2000 });
    await sleep(100);
    for (const name of ['a', 'b', 'c'])
      assert.deepEqual(cluster.told.get(name), ['joined s:s1 {"room":1}'], name);
    // Two of three gone: no leave; the last: one leave, told once everywhere.
    a.changed({ connectionId: 'x1', sessionId: 's1' }, room(1), []);
    a.changed({ connectionId: 'x3', sessionId: 's1' }, room(1), []);
    await sleep(200);
    assert.equal(cluster.told.get('c')!.length, 1, 'still on b');
    b.changed({ connectionId: 'x2', sessionId: 's1' }, room(1), []);
    await waitFor(() => cluster.told.get('c')!.length === 2, { timeoutMs: 2000 });
    await sleep(100);
    for (const name of ['a', 'b', 'c'])
      assert.deepEqual(cluster.told.get(name), ['joined s:s1 {"room":1}', 'left s:s1 {"room":1}'], name);
  });

  it('announces no member past PRESENCE_MAX_MEMBERS, and counts each one it leaves out', async () => {
    cluster = new Cluster();
    const a = cluster.add('a', 2);
    await a.start();
    for (let i = 0; i < 5; i++) a.changed({ connectionId: `x${i}`, user: `u${i}` }, [], room(i));
    await waitFor(() => cluster.overflows === 3, { timeoutMs: 2000 });
    assert.equal(a.size, 2);
    assert.equal(cluster.told.get('a')!.length, 2);
  });

  it("takes over a gone replica's members: moved where they are live, left otherwise, by one replica", async () => {
    const [a, b, c] = await started('a', 'b', 'c');
    a.changed({ connectionId: 'x1', sessionId: 'gone' }, [], room(7));
    a.changed({ connectionId: 'x2', sessionId: 'moved' }, [], room(7));
    await waitFor(() => b.size === 2 && c.size === 2, { timeoutMs: 2000 });
    // a dies (announces nothing more); "moved" reconnects to b before anyone notices.
    a.stop();
    cluster.live.delete('a');
    b.changed({ connectionId: 'x3', sessionId: 'moved' }, [], room(7));
    await waitFor(() => cluster.told.get('c')!.length === 3, { timeoutMs: 3000 });
    await sleep(200);
    for (const name of ['b', 'c'])
      assert.deepEqual(
        cluster.told.get(name),
        ['joined s:gone {"room":7}', 'joined s:moved {"room":7}', 'left s:gone {"room":7}'],
        name,
      );
    assert.deepEqual([...cluster.claimed], ['a'], 'claimed once');
    // "moved" is held by b now: its leave there is told.
    b.changed({ connectionId: 'x3', sessionId: 'moved' }, room(7), []);
    await waitFor(() => cluster.told.get('c')!.length === 4, { timeoutMs: 2000 });
    assert.equal(cluster.told.get('c')![3], 'left s:moved {"room":7}');
  });

  it('announces nothing once stopped', async () => {
    const [a] = await started('a', 'b');
    a.stop();
    a.changed({ connectionId: 'x1', user: 'u' }, [], room(1));
    await sleep(100);
    assert.deepEqual(cluster.told.get('b'), []);
  });
});
