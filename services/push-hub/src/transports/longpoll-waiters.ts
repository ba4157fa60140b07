/**
 * The long polls this replica holds open, indexed the way connections are: by the subscriptions
 * they wait for (the same SubscriptionIndex), by connection id (private events) and by session
 * (kills). A fan-out event wakes only the polls whose subscriptions it matches; the others sleep
 * on, costing nothing per event.
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
}

interface Waiter {
  poll: WaitingPoll;
  wake(reason: WakeReason): void;
}

/**
 * A poll registered before it looks at the stream, the store and the blacklist: whatever happens
 * while it looks (an event, a kill, a private event) is kept, and `wait` then returns at once
 * instead of sleeping through the window. Registering only when about to sleep would lose the
 * wake-ups that came in between.
 */
export interface ArmedPoll {
  /** Resolves with the first wake-up since arming, or after `ms`, or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<WakeReason>;
  /** Unregisters it (idempotent); a poll that answered without waiting must disarm. */
  disarm(): void;
}

export class LongPollWaiters {
  private readonly index: SubscriptionIndex<Waiter>;
  private readonly byId = new Map<string, Set<Waiter>>();
  private readonly bySession = new Map<string, Set<Waiter>>();

  constructor(extractors: ExtractorConfig) {
    this.index = new SubscriptionIndex(extractors);
  }

  get size(): number {
    let n = 0;
    for (const set of this.byId.values()) n += set.size;
    return n;
  }

  /** Registers the poll now; its wake-ups from here on are kept until it waits. */
  arm(poll: WaitingPoll): ArmedPoll {
    let woken: WakeReason | undefined;
    let resolveWait: ((reason: WakeReason) => void) | undefined;
    const waiter: Waiter = {
      poll,
      wake: (reason) => {
        this.remove(waiter);
        woken ??= reason;
        resolveWait?.(woken);
      },
    };
    this.index.set(waiter, poll.subscriptions);
    addTo(this.byId, poll.id, waiter);
    if (poll.sessionId !== undefined) addTo(this.bySession, poll.sessionId, waiter);
    return {
      wait: (ms, signal) => {
        if (woken !== undefined) return Promise.resolve(woken);
        if (signal.aborted) return Promise.resolve('closed');
        return new Promise((resolve) => {
          const onAbort = () => waiter.wake('closed');
          const timer = setTimeout(() => waiter.wake('timeout'), Math.max(ms, 0));
          signal.addEventListener('abort', onAbort);
          resolveWait = (reason) => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            resolve(reason);
          };
        });
      },
      disarm: () => this.remove(waiter),
    };
  }

  /** Arms and waits at once (a poll with nothing to look at first). */
  wait(poll: WaitingPoll, ms: number, signal: AbortSignal): Promise<WakeReason> {
    return this.arm(poll).wait(ms, signal);
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
