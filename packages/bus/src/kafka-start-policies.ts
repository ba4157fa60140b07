/**
 * Where a Kafka subscriber reads after each join of its consumer group (see StartPolicy).
 *
 * kafkajs has no assign(): every consumer is in a group. A broadcast subscriber therefore gets a
 * private group of its own and ignores the group's offsets; a group member uses the group's
 * committed offsets as Kafka intends.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer } from 'kafkajs';
import { BusError } from './bus.ts';
import type { KafkaPosition } from './kafka-position.ts';
import type { StartPolicy } from './kafka-subscriber.ts';

/**
 * A broadcast subscriber: a private group (nobody else joins it) that never commits. The next
 * offset of every partition is kept in memory and sought to on every join, so a consumer that
 * restarts after a broker outage goes on exactly where it was, in a fresh private group that it
 * can join at once. It starts at the end offsets read before the first join (or just after
 * `from` on that position's partition), so it sees every message published after `subscribe`
 * resolved and nothing before.
 */
export class BroadcastStart implements StartPolicy {
  readonly autoCommit = false;
  // Only reached when a sought offset is gone (retention): then read what is still there.
  readonly fromBeginning = true;
  readonly restartInNewGroup = true;
  private readonly groupIdPrefix: string;
  private readonly groupIds: string[] = [];
  private readonly topic: string;
  private readonly from: KafkaPosition | undefined;
  private readonly admin: () => Promise<Admin>;
  private readonly next = new Map<number, bigint>();

  constructor(options: {
    groupIdPrefix: string;
    topic: string;
    from?: KafkaPosition;
    admin: () => Promise<Admin>;
  }) {
    this.groupIdPrefix = options.groupIdPrefix;
    this.topic = options.topic;
    this.from = options.from;
    this.admin = options.admin;
  }

  nextGroupId(): string {
    const groupId = `${this.groupIdPrefix}-${randomUUID()}`;
    this.groupIds.push(groupId);
    return groupId;
  }

  async prepare(): Promise<void> {
    const admin = await this.admin();
    const offsets = await admin.fetchTopicOffsets(this.topic);
    for (const { partition, high } of offsets) this.next.set(partition, BigInt(high));
    if (this.from) this.next.set(this.from.partition, this.replayStart(this.from, offsets));
  }

  async joined(consumer: Consumer, partitions: number[]): Promise<void> {
    for (const partition of partitions) {
      const offset = this.next.get(partition);
      // A partition added after subscribe has no entry: kafkajs starts it from its beginning.
      if (offset !== undefined) consumer.seek({ topic: this.topic, partition, offset: String(offset) });
    }
  }

  isNew(partition: number, offset: string): boolean {
    const next = this.next.get(partition);
    return next === undefined || BigInt(offset) >= next;
  }

  handled(partition: number, offset: string): void {
    this.next.set(partition, BigInt(offset) + 1n);
  }

  /** The private groups have no committed offsets, but their (empty) registrations go too. */
  async closed(): Promise<void> {
    try {
      const admin = await this.admin();
      await admin.deleteGroups(this.groupIds);
    } catch {
      // Best effort: groups that never formed do not exist, and empty groups expire by themselves.
    }
  }

  /** Older than retention: replay what is left; beyond the end (a position from elsewhere): go live. */
  private replayStart(
    from: KafkaPosition,
    offsets: { partition: number; low: string; high: string }[],
  ): bigint {
    const bounds = offsets.find((o) => o.partition === from.partition);
    if (!bounds)
      throw new BusError(`position ${from.partition}-${from.offset} names no partition of ${this.topic}`);
    const after = from.offset + 1n;
    const [low, high] = [BigInt(bounds.low), BigInt(bounds.high)];
    return after < low ? low : after > high ? high : after;
  }
}

/**
 * A member of a real consumer group: it reads from the group's committed offsets. A partition the
 * group has never committed starts at its end offset at the time of the join, and that start is
 * committed at once, before the member reads: otherwise a rebalance could hand the partition to a
 * member that resolves "latest" later and skips what was published in between.
 */
export class GroupStart implements StartPolicy {
  readonly autoCommit = true;
  readonly fromBeginning = false;
  readonly restartInNewGroup = false;
  private readonly groupId: string;
  private readonly topic: string;
  private readonly admin: () => Promise<Admin>;

  constructor(options: { groupId: string; topic: string; admin: () => Promise<Admin> }) {
    this.groupId = options.groupId;
    this.topic = options.topic;
    this.admin = options.admin;
  }

  nextGroupId(): string {
    return this.groupId;
  }

  async prepare(): Promise<void> {}

  async joined(consumer: Consumer, partitions: number[], isCurrent: () => boolean): Promise<void> {
    const topics = [{ topic: this.topic }];
    // Synchronous, before kafkajs fetches: nothing is read until the start offsets are committed.
    consumer.pause(topics);
    await this.commitStartOffsets(consumer, partitions);
    if (isCurrent()) consumer.resume(topics);
  }

  isNew(): boolean {
    return true;
  }

  handled(): void {}

  async closed(): Promise<void> {}

  private async commitStartOffsets(consumer: Consumer, partitions: number[]): Promise<void> {
    const admin = await this.admin();
    const [committed] = await admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] });
    const unread = partitions.filter(
      (p) => (committed?.partitions.find((c) => c.partition === p)?.offset ?? '-1') === '-1',
    );
    if (unread.length === 0) return;
    const ends = await admin.fetchTopicOffsets(this.topic);
    const starts = ends.filter((e) => unread.includes(e.partition));
    await consumer.commitOffsets(
      starts.map((e) => ({ topic: this.topic, partition: e.partition, offset: e.high })),
    );
  }
}
