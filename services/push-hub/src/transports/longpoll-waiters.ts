/**
 * The long polls this replica holds open, indexed the way connections are: by the subscriptions
 * they wait for (the same SubscriptionIndex), by connection id (private events) and by session
 * (kills). A fan-out event wakes only the polls whose subscriptions it matches; the others sleep
 * on, costing nothing per event. A kill is remembered for a while, so a poll of that session that
 * was between two waits when it came (reading the store) is woken as soon as it waits again.
 */
import type { ExtractorConfig } from '../extractor-config.ts';
import type { RingEvent } from '../event-ring.ts';
import type { Subscription } from '../subscription.ts';
import { SubscriptionIndex } from '../subscription-index.ts';

export type WakeReason = 'stream' | 'private' | 'killed' | 'timeout' | 'closed';

export interface WaitingPoll {
  id: string;
  sessionId: string | undefined;
  subscriptions: Subscription[];
  /** When the poll last looked its session up in the blacklist: a kill remembered from before is no news. */
  blacklistCheckedAt?: number;
}

interface Waiter {
  poll: WaitingPoll;
  wake(reason: WakeReason): void;
}

export class LongPollWaiters {
  private readonly index: SubscriptionIndex<Waiter>;
  private readonly byId = new Map<string, Set<Waiter>>();
  private readonly bySession = new Map<string, Set<Waiter>>();
  /** Sessions killed lately, with when. */
  private readonly killed = new Map<string, number>();
  private readonly killMemoryMs: number;

  constructor(extractors: ExtractorConfig, options: { killMemoryMs?: number } = {}) {
    this.index = new SubscriptionIndex(extractors);
    this.killMemoryMs = options.killMemoryMs ?? 60_000;
  }

  get size(): number {
    let n = 0;
    for (const set of this.byId.values()) n += set.size;
    return n;
  }

  /** Resolves with why the poll should look again: an event for it, time out, or its client left. */
  wait(poll: WaitingPoll, ms: number, signal: AbortSignal): Promise<WakeReason> {
    if (signal.aborted) return Promise.resolve('closed');
    if (poll.sessionId !== undefined && this.killedSince(poll.sessionId, poll.blacklistCheckedAt ?? 0))
      return Promise.resolve('killed');
    return new Promise((resolve) => {
      const waiter: Waiter = {
        poll,
        wake: (reason) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.remove(waiter);
          resolve(reason);
        },
      };
      const onAbort = () => waiter.wake('closed');
      const timer = setTimeout(() => waiter.wake('timeout'), Math.max(ms, 0));
      signal.addEventListener('abort', onAbort);
      this.index.set(waiter, poll.subscriptions);
      addTo(this.byId, poll.id, waiter);
      if (poll.sessionId !== undefined) addTo(this.bySession, poll.sessionId, waiter);
    });
  }

  /** A fan-out event: wakes the polls it matches. */
  streamEvent(e: RingEvent): void {
    this.index.match(e.event as { type: string }, (w) => w.wake('stream'));
  }

  /** The connection's private events or subscriptions changed (on any replica). */
  privateEvent(id: string): void {
    for (const w of [...(this.byId.get(id) ?? [])]) w.wake('private');
  }

  sessionKilled(sessionId: string): void {
    const now = Date.now();
    for (const [s, at] of this.killed) if (now - at > this.killMemoryMs) this.killed.delete(s);
    this.killed.set(sessionId, now);
    for (const w of [...(this.bySession.get(sessionId) ?? [])]) w.wake('killed');
  }

  private killedSince(sessionId: string, since: number): boolean {
    const at = this.killed.get(sessionId);
    return at !== undefined && at >= since && Date.now() - at <= this.killMemoryMs;
  }

  /** Wakes every waiting poll (a missed notification, or the replica stopping). */
  wakeAll(reason: WakeReason): void {
    for (const set of [...this.byId.values()]) for (const w of [...set]) w.wake(reason);
  }

  /** The sessions of the polls waiting now. */
  sessionIds(): string[] {
    return [...this.bySession.keys()];
  }

  private remove(w: Waiter): void {
    this.index.remove(w);
    removeFrom(this.byId, w.poll.id, w);
    if (w.poll.sessionId !== undefined) removeFrom(this.bySession, w.poll.sessionId, w);
  }
}

function addTo(map: Map<string, Set<Waiter>>, key: string, w: Waiter): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(w);
}

function removeFrom(map: Map<string, Set<Waiter>>, key: string, w: Waiter): void {
  const set = map.get(key);
  set?.delete(w);
  if (set?.size === 0) map.delete(key);
}
