/**
 * The long polls this replica holds open, indexed the way connections are: by the subscriptions
 * they wait for (the same SubscriptionIndex), by connection id (private events) and by session
 * (kills). A fan-out event wakes only the polls whose subscriptions it matches; the others sleep
 * on, costing nothing per event.
 */
import {
  type ExtractorConfig,
  type PatternLimits,
  type Subscription,
  SubscriptionIndex,
  type TypeInterest,
} from '../subscriptions/index.ts';
import type { RingEvent } from '../delivery/index.ts';

export type WakeReason = 'stream' | 'private' | 'killed' | 'timeout' | 'closed';

export interface WaitingPoll {
  id: string;
  sessionId: string | undefined;
  subscriptions: Subscription[];
  /** The client's address: its type patterns count for it while the poll waits (pattern-budget.ts). */
  clientAddress?: string | undefined;
}

interface Waiter {
  poll: WaitingPoll;
  wake(reason: WakeReason): void;
}

/**
 * A poll registered for its whole life, from before it first looks at the blacklist, its queue and
 * the stream until it answers: whatever happens meanwhile (an event, a kill, a private event) is
 * kept, and `wait` returns it at once instead of sleeping through the window. A poll registered only
 * while it sleeps would miss what came while it was reading, and a kill rescan would not see its
 * session then.
 */
export interface ArmedPoll {
  /** The next kept wake-up (a kill first, then private events, then stream events), else the first that comes, or `timeout` after `ms`, or `closed` when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<WakeReason>;
  /** Its subscriptions or session changed: index it by the new ones. */
  update(poll: WaitingPoll): void;
  /** Unregisters it (idempotent); every poll disarms when it answers. */
  disarm(): void;
}

/** The order in which kept wake-ups are handed out: a kill wins over everything else. */
const priority: WakeReason[] = ['killed', 'closed', 'private', 'stream', 'timeout'];

export class LongPollWaiters {
  private readonly index: SubscriptionIndex<Waiter>;
  private readonly byId = new Map<string, Set<Waiter>>();
  private readonly bySession = new Map<string, Set<Waiter>>();
  constructor(extractors: ExtractorConfig, interest?: TypeInterest, limits?: PatternLimits) {
    this.index = new SubscriptionIndex(extractors, interest, limits);
  }

  /** Polls in flight on this replica. */
  get size(): number {
    let n = 0;
    for (const set of this.byId.values()) n += set.size;
    return n;
  }

  /** Registers the poll now; its wake-ups from here on are kept until it waits for them. */
  arm(poll: WaitingPoll): ArmedPoll {
    const kept = new Set<WakeReason>();
    let sleeping: ((reason: WakeReason) => void) | undefined;
    const take = (): WakeReason => {
      const reason = priority.find((r) => kept.has(r))!;
      kept.delete(reason);
      return reason;
    };
    const waiter: Waiter = {
      poll,
      wake: (reason) => {
        kept.add(reason);
        sleeping?.(take());
      },
    };
    this.add(waiter);
    return {
      wait: (ms, signal) => {
        if (kept.size > 0) return Promise.resolve(take());
        if (signal.aborted) return Promise.resolve('closed');
        return new Promise((resolve) => {
          const onAbort = () => waiter.wake('closed');
          const timer = setTimeout(() => waiter.wake('timeout'), Math.max(ms, 0));
          signal.addEventListener('abort', onAbort);
          sleeping = (reason) => {
            sleeping = undefined;
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            resolve(reason);
          };
        });
      },
      update: (next) => {
        this.remove(waiter);
        waiter.poll = next;
        this.add(waiter);
      },
      disarm: () => this.remove(waiter),
    };
  }

  /** Whether a poll in flight here subscribes to events of `type` (a fan-out event may wake it). */
  wants(type: string): boolean {
    return this.index.has(type);
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
    for (const w of [...(this.bySession.get(sessionId) ?? [])]) w.wake('killed');
  }

  /** Wakes every waiting poll (a missed notification, or the replica stopping). */
  wakeAll(reason: WakeReason): void {
    for (const set of [...this.byId.values()]) for (const w of [...set]) w.wake(reason);
  }

  /** The sessions of the polls in flight now. */
  sessionIds(): string[] {
    return [...this.bySession.keys()];
  }

  private add(w: Waiter): void {
    this.index.set(w, w.poll.subscriptions, w.poll.clientAddress);
    addTo(this.byId, w.poll.id, w);
    if (w.poll.sessionId !== undefined) addTo(this.bySession, w.poll.sessionId, w);
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
