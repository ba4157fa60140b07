/**
 * The blacklist's state: one Store key per session, `blacklist:<sessionId>` (the key
 * @gatehouse/auth's BlacklistCheck reads), living exactly `validityInSeconds` (the store's own
 * expiry: PX on Redis, so it survives restarts of every Gatehouse process and is exact to the
 * millisecond). Writing the key is what kills the session: every push-hub replica watches the
 * prefix and closes the session's connections when it hears the write.
 *
 * Blacklisting a session that is already blacklisted extends its expiry and never shortens it: the
 * entry lives until the later of its current expiry and now + validityInSeconds. A shorter request
 * still rewrites the key with the current remaining lifetime, so it still kills (a connection that
 * slipped in through a race is closed too). The read-compare-write runs under a store lock, so two
 * replicas blacklisting the same session at once cannot shorten each other's entry.
 */
import { blacklistKey, blacklistPrefix } from '@gatehouse/auth';
import type { Store } from '@gatehouse/store';
import { type StoreLockOptions, withStoreLock } from './store-lock.ts';

/** `added`: not blacklisted before; `extended`: expiry moved later; `kept`: the old expiry was later. */
export type AddOutcome = 'added' | 'extended' | 'kept';

export interface BlacklistEntry {
  sessionId: string;
  /** Epoch milliseconds; undefined for a key without expiry (written by hand, never by the service). */
  expiresAt: number | undefined;
}

export interface SessionBlacklistOptions {
  now?: () => number;
  lock?: StoreLockOptions;
}

/** Outside the `blacklist:` prefix, so locks are never counted or mistaken for entries. */
const lockKey = (sessionId: string) => `blacklist-lock:${sessionId}`;
const defaultLock: StoreLockOptions = { ttlSeconds: 10, waitMs: 3000, retryMs: 10 };

export class SessionBlacklist {
  private readonly store: Store;
  private readonly now: () => number;
  private readonly lock: StoreLockOptions;

  constructor(store: Store, options: SessionBlacklistOptions = {}) {
    this.store = store;
    this.now = options.now ?? Date.now;
    this.lock = options.lock ?? defaultLock;
  }

  /** Rejects with the store's error, or a LockTimeoutError when another writer holds the session. */
  add(sessionId: string, validityInSeconds: number): Promise<{ entry: BlacklistEntry; outcome: AddOutcome }> {
    return withStoreLock(this.store, lockKey(sessionId), this.lock, async () => {
      const key = blacklistKey(sessionId);
      const requestedMs = validityInSeconds * 1000;
      const remainingSeconds = await this.store.ttl(key);
      const now = this.now();
      if (remainingSeconds === Infinity) {
        await this.store.set(key, 'never');
        return { entry: { sessionId, expiresAt: undefined }, outcome: 'kept' };
      }
      const remainingMs = remainingSeconds === undefined ? 0 : remainingSeconds * 1000;
      const ttlMs = Math.max(requestedMs, remainingMs);
      const expiresAt = now + ttlMs;
      // The value is for people reading Redis; the expiry is what counts.
      await this.store.set(key, new Date(expiresAt).toISOString(), { ttlSeconds: ttlMs / 1000 });
      const outcome =
        remainingSeconds === undefined ? 'added' : requestedMs > remainingMs ? 'extended' : 'kept';
      return { entry: { sessionId, expiresAt }, outcome };
    });
  }

  /** The entry of a blacklisted session, undefined when it is not (or no longer) blacklisted. */
  async lookup(sessionId: string): Promise<BlacklistEntry | undefined> {
    const remainingSeconds = await this.store.ttl(blacklistKey(sessionId));
    if (remainingSeconds === undefined) return undefined;
    const expiresAt = remainingSeconds === Infinity ? undefined : this.now() + remainingSeconds * 1000;
    return { sessionId, expiresAt };
  }

  /** Sessions blacklisted now. A key scan: call it rarely (see BlacklistMetrics). */
  async count(): Promise<number> {
    return (await this.store.keys(blacklistPrefix)).length;
  }

  /** Whole seconds an entry has left (rounded up, so a live entry never shows 0); null without expiry. */
  remainingSeconds(entry: BlacklistEntry): number | null {
    if (entry.expiresAt === undefined) return null;
    return Math.max(1, Math.ceil((entry.expiresAt - this.now()) / 1000));
  }
}
