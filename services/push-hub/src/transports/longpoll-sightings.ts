/**
 * The long-poll connections a replica has served lately, for the connections API. A long-poll
 * connection lives in the store and is held by no replica: any replica answers any poll. So each
 * replica remembers the connections it answered (their record as of the poll, the client's address,
 * when), and the connections API takes, of a connection several replicas have seen, the sighting
 * with the latest poll: that replica is the one it shows. A connection not polled here for the
 * session TTL is forgotten here too (its record expires in the store then); one the hub ends (kill,
 * disconnect) is forgotten at once.
 *
 * Memory: one small object per connection polled within the TTL, holding the record the poll read
 * anyway (its subscription list is not copied).
 *
 * A sighting is also how long a long-poll connection holds its place among the replica's
 * connections (connection-places.ts): `forgotten` is told of every connection dropped, whether the
 * hub ended it or it went unpolled for the TTL, and gives its place back.
 */
import type { LongPollRecord } from './longpoll-records.ts';

export interface LongPollSighting {
  id: string;
  record: LongPollRecord;
  remoteAddress: string | undefined;
  /** When this replica last answered (or began to answer) one of its polls. */
  lastPollAt: number;
}

export class LongPollSightings {
  private readonly seen = new Map<string, LongPollSighting>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly forgotten: (id: string) => void;

  constructor(ttlMs: number, now: () => number = Date.now, forgotten: (id: string) => void = () => {}) {
    this.ttlMs = ttlMs;
    this.now = now;
    this.forgotten = forgotten;
  }

  saw(id: string, record: LongPollRecord, remoteAddress: string | undefined): void {
    this.prune();
    // Re-inserted so the map stays in order of the last poll: the stale ones are at its start.
    this.seen.delete(id);
    this.seen.set(id, { id, record, remoteAddress, lastPollAt: this.now() });
  }

  forget(id: string): void {
    if (this.seen.delete(id)) this.forgotten(id);
  }

  get(id: string): LongPollSighting | undefined {
    this.prune();
    return this.seen.get(id);
  }

  /** Every connection polled here within the TTL. */
  all(): LongPollSighting[] {
    this.prune();
    return [...this.seen.values()];
  }

  /** Drops the connections not polled here within the TTL (the oldest are first in the map). */
  prune(): void {
    const oldest = this.now() - this.ttlMs;
    for (const [id, s] of this.seen) {
      if (s.lastPollAt >= oldest) break;
      this.seen.delete(id);
      this.forgotten(id);
    }
  }
}
