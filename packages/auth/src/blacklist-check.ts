/**
 * "Is this session blacklisted?" for every token the gateway accepts, answered from the shared
 * Store (key `blacklist:<sessionId>`, written by the blacklist service with the entry's TTL).
 *
 * Caching, and why it is safe:
 * - A positive answer is kept locally until the key's TTL runs out: an entry only ever ends by
 *   expiry, and a `delete`/`expire` notification drops it early anyway.
 * - A `watch('blacklist:')` hears additions from every replica, so a session blacklisted anywhere is
 *   refused here at once, and any cached "not blacklisted" answer for it is dropped.
 * - Negative answers are cached only when `negativeCacheMs` > 0 (default 0: ask the store each
 *   time). Caching them saves a store round trip per request for the common case (nobody is
 *   blacklisted). When the watch was cut off (a pub/sub reconnect, told by a `resync` change),
 *   every cached answer is dropped. Kill notifications to open connections do not depend on
 *   this cache.
 * Concurrent checks of the same session share one store lookup.
 */
import type { Change, Store } from '@gatehouse/store';
import { ExpiringCache } from './expiring-cache.ts';

export const blacklistPrefix = 'blacklist:';

/** The Store key marking a blacklisted session; the blacklist service writes the same key. */
export function blacklistKey(sessionId: string): string {
  return blacklistPrefix + sessionId;
}

export interface BlacklistCheckOptions {
  /** How long a "not blacklisted" answer is reused, in ms (default 0: always ask the store). */
  negativeCacheMs?: number;
  /** Answers kept locally (default 100,000). */
  cacheSize?: number;
  now?: () => number;
}

export class BlacklistCheck {
  private readonly store: Store;
  private readonly negativeCacheMs: number;
  private readonly now: () => number;
  private readonly answers: ExpiringCache<string, boolean>;
  private readonly pending = new Map<string, Promise<boolean>>();
  /** Counts notifications, so a lookup that raced with one does not cache a stale "no". */
  private changes = 0;
  private unwatch: (() => Promise<void>) | undefined;

  constructor(store: Store, options: BlacklistCheckOptions = {}) {
    this.store = store;
    this.negativeCacheMs = options.negativeCacheMs ?? 0;
    this.now = options.now ?? Date.now;
    this.answers = new ExpiringCache(options.cacheSize ?? 100_000);
  }

  /** Starts listening for blacklist changes; resolves once listening. */
  async start(): Promise<void> {
    this.unwatch ??= await this.store.watch(blacklistPrefix, (change) => this.onChange(change));
  }

  async close(): Promise<void> {
    const unwatch = this.unwatch;
    this.unwatch = undefined;
    await unwatch?.();
    this.answers.clear();
  }

  /** Rejects when the store cannot answer: the caller decides whether that refuses the request. */
  isBlacklisted(sessionId: string): Promise<boolean> {
    const cached = this.answers.get(sessionId, this.now());
    if (cached !== undefined) return Promise.resolve(cached);
    const running = this.pending.get(sessionId);
    if (running) return running;
    const lookup = this.lookup(sessionId).finally(() => {
      if (this.pending.get(sessionId) === lookup) this.pending.delete(sessionId);
    });
    this.pending.set(sessionId, lookup);
    return lookup;
  }

  private async lookup(sessionId: string): Promise<boolean> {
    const changesBefore = this.changes;
    const ttlSeconds = await this.store.ttl(blacklistKey(sessionId));
    const now = this.now();
    if (ttlSeconds !== undefined) {
      this.answers.set(sessionId, true, now + ttlSeconds * 1000, now);
      return true;
    }
    if (this.negativeCacheMs > 0 && this.changes === changesBefore)
      this.answers.set(sessionId, false, now + this.negativeCacheMs, now);
    return false;
  }

  private onChange(change: Change): void {
    if (change.kind === 'resync') {
      // The watch was cut off: any change made meanwhile was not heard; ask the store again.
      this.changes++;
      this.answers.clear();
      this.pending.clear();
      return;
    }
    if (!change.key.startsWith(blacklistPrefix)) return;
    const sessionId = change.key.slice(blacklistPrefix.length);
    this.changes++;
    // Whatever we knew about this session is out of date; the next check asks the store.
    this.answers.delete(sessionId);
    this.pending.delete(sessionId);
  }
}
