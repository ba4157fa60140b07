/**
 * What the members of one Kinesis consumer group share through a Store, in place of the DynamoDB
 * lease table the KCL uses (Kinesis itself has no consumer groups):
 *
 * - `member:<id>`: a live member, kept alive with a TTL; the count sets each member's fair share.
 * - `lease:<shardId>`: the member reading that shard, with a TTL its holder renews.
 * - `checkpoint:<shardId>`: the last handled sequence number, tagged with the stream's creation
 *   time so that a checkpoint from a stream since re-created is recognised as stale.
 * - `created`: when the group first subscribed; a shard without checkpoint is read from then on.
 *
 * The Store has no compare-and-set, so renewing a lease is get-then-set: a holder that misses its
 * renewals for a whole TTL may overwrite a successor's lease once before noticing. Renewals run
 * every third of the TTL, which keeps that window to a stalled process.
 */
import type { Store } from '@gatehouse/store';

export interface Checkpoint {
  streamCreatedAt: number;
  sequenceNumber: string;
}

export type GroupChange =
  | { kind: 'member'; memberId: string; removed: boolean }
  | { kind: 'lease'; removed: boolean };

export class KinesisGroupState {
  /** Every key of this group starts with it (for `watch`). */
  readonly prefix: string;
  private readonly store: Store;
  private readonly leaseTtlSeconds: number;
  private readonly checkpointTtlSeconds: number;

  constructor(options: {
    store: Store;
    topic: string;
    group: string;
    leaseTtlSeconds: number;
    checkpointTtlSeconds: number;
  }) {
    this.store = options.store;
    this.prefix = `kinesis-bus:${options.topic}:${encodeURIComponent(options.group)}:`;
    this.leaseTtlSeconds = options.leaseTtlSeconds;
    this.checkpointTtlSeconds = options.checkpointTtlSeconds;
  }

  /** When the group was created: now for a new group, else the time stored by its first member. */
  async createdAt(): Promise<Date> {
    const key = this.prefix + 'created';
    const ttlSeconds = this.checkpointTtlSeconds;
    await this.store.set(key, String(Date.now()), { ifAbsent: true, ttlSeconds });
    const stored = (await this.store.get(key)) ?? String(Date.now());
    await this.store.set(key, stored, { ttlSeconds });
    return new Date(Number(stored));
  }

  async renewMember(memberId: string): Promise<void> {
    await this.store.set(`${this.prefix}member:${memberId}`, '1', { ttlSeconds: this.leaseTtlSeconds });
  }

  async removeMember(memberId: string): Promise<void> {
    await this.store.delete(`${this.prefix}member:${memberId}`);
  }

  async memberCount(): Promise<number> {
    return (await this.store.keys(`${this.prefix}member:`)).length;
  }

  async acquireLease(shardId: string, memberId: string): Promise<boolean> {
    return this.store.set(this.leaseKey(shardId), memberId, {
      ifAbsent: true,
      ttlSeconds: this.leaseTtlSeconds,
    });
  }

  /** Extends the lease if this member still holds it (or takes it back if it lapsed unclaimed). */
  async renewLease(shardId: string, memberId: string): Promise<boolean> {
    const holder = await this.store.get(this.leaseKey(shardId));
    if (holder === undefined) return this.acquireLease(shardId, memberId);
    if (holder !== memberId) return false;
    await this.store.set(this.leaseKey(shardId), memberId, { ttlSeconds: this.leaseTtlSeconds });
    return true;
  }

  async releaseLease(shardId: string, memberId: string): Promise<void> {
    if ((await this.store.get(this.leaseKey(shardId))) === memberId)
      await this.store.delete(this.leaseKey(shardId));
  }

  async checkpoint(shardId: string): Promise<Checkpoint | undefined> {
    const value = await this.store.get(`${this.prefix}checkpoint:${shardId}`);
    const match = value === undefined ? null : /^(\d+)~(\d+)$/.exec(value);
    return match ? { streamCreatedAt: Number(match[1]), sequenceNumber: match[2]! } : undefined;
  }

  async saveCheckpoint(shardId: string, checkpoint: Checkpoint): Promise<void> {
    await this.store.set(
      `${this.prefix}checkpoint:${shardId}`,
      `${checkpoint.streamCreatedAt}~${checkpoint.sequenceNumber}`,
      { ttlSeconds: this.checkpointTtlSeconds },
    );
  }

  /** What a changed key of this group means for balancing; undefined for keys that do not matter. */
  classify(key: string, kind: 'set' | 'delete' | 'expire'): GroupChange | undefined {
    const name = key.slice(this.prefix.length);
    const removed = kind !== 'set';
    if (name.startsWith('member:'))
      return { kind: 'member', memberId: name.slice('member:'.length), removed };
    if (name.startsWith('lease:')) return { kind: 'lease', removed };
    return undefined;
  }

  private leaseKey(shardId: string): string {
    return `${this.prefix}lease:${shardId}`;
  }
}
