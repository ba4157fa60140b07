/**
 * What the closed event of a long-poll connection needs once its record is gone. A long-poll
 * connection lives in the store, not on a replica, and when it expires there (not polled for
 * LONGPOLL_SESSION_TTL, or its JWT expired) every replica hears it, none holding its record any
 * more. So its user, session, subscription types and expiry are kept under a key of their own that
 * outlives the record (`lp-about:<id>`), and taking it is the claim: of the replicas that end or
 * hear the end of a connection, the one whose delete finds the key tells of it, exactly once.
 *
 * Costs, with lifecycle events on only: a key per long-poll connection (its subscriptions as their
 * types), written at the create and at each change, deleted at the end; one left behind (a replica
 * that died in between) expires after `ttlSeconds`, longer than a record can live.
 */
import type { Store } from '@gatehouse/store';
import type { ConnectionSnapshot } from './lifecycle-event.ts';

const aboutPrefix = 'lp-about:';

export interface LongPollAbout extends ConnectionSnapshot {
  /** When its session's JWT expires (ms since the epoch): an expiry then is `session_expired`. */
  expiresAt?: number | undefined;
}

export class LongPollEnds {
  private readonly store: Store;
  private readonly ttlSeconds: number;

  constructor(store: Store, ttlSeconds: number) {
    this.store = store;
    this.ttlSeconds = ttlSeconds;
  }

  async remember(about: LongPollAbout): Promise<void> {
    const kept = { ...about, subscriptions: about.subscriptions.map((s) => ({ eventType: s.eventType })) };
    await this.store.set(aboutPrefix + about.id, JSON.stringify(kept), { ttlSeconds: this.ttlSeconds });
  }

  /** What was kept of the connection, to this caller only: undefined to every other (or when none was). */
  async take(id: string): Promise<LongPollAbout | undefined> {
    const text = await this.store.get(aboutPrefix + id);
    if (!(await this.store.delete(aboutPrefix + id)) || text === undefined) return undefined;
    try {
      return JSON.parse(text) as LongPollAbout;
    } catch {
      return undefined;
    }
  }
}
