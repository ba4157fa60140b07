/**
 * Where a Kafka subscriber reads after each join of its consumer group (see StartPolicy).
 *
 * kafkajs has no assign(): every consumer is in a group. A broadcast subscriber therefore gets a
 * private group of its own and ignores the group's offsets; a group member uses the group's
 * committed offsets as Kafka intends.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer } from 'kafkajs';
import { type Position, PositionUnavailableError } from './bus.ts';
import { formatKafkaPosition, type KafkaPosition } from './kafka-position.ts';
import type { StartPolicy } from './kafka-subscriber.ts';

/**
 * A broadcast subscriber: a private group (nobody else joins it) that never commits. The next
 * offset of every partition is kept in memory and sought to on every join, so a consumer that
 * restarts after a broker outage goes on exactly where it was, in a fresh private group that it
 * can join at once. It starts at the end offsets read before the first join (or just after
 * `from` on that position's partition), so it sees every message published after `subscribe`
 * resolved and nothing before. With `last`, every partition starts that many messages before its
 * end (or at its beginning).
 *
 * A `from` whose successor is below the partition's log start offset (retention deleted it) or
 * beyond its end offset (a position from elsewhere, or from a topic since created anew), or whose
 * epoch is not the topic's (created anew since), is refused with PositionUnavailableError before
 * the consumer joins. Each later join (a restart after a crash) looks at the topic's id again: a
 * topic created anew meanwhile is read from its beginning, its messages in its new epoch.
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
  private readonly last: number | undefined;
  private readonly admin: () => Promise<Admin>;
  private readonly epochOf: () => Promise<string | undefined>;
  private readonly next = new Map<number, bigint>();
  private joins = 0;
  private looking = Promise.resolve();
  /** The topic's epoch (kafkaEpoch of its id) its messages are read in. */
  epoch: string | undefined;
  /** Newest message when the subscriber went live, for a topic of one partition. */
  liveAfter: Position | undefined;
  /** The offset before the log start when the subscriber went live, for a topic of one partition. */
  origin: Position | undefined;

  constructor(options: {
    groupIdPrefix: string;
    topic: string;
    from?: KafkaPosition;
    last?: number;
    admin: () => Promise<Admin>;
    epochOf: () => Promise<string | undefined>;
  }) {
    this.groupIdPrefix = options.groupIdPrefix;
    this.topic = options.topic;
    this.from = options.from;
    this.last = options.last;
    this.admin = options.admin;
    this.epochOf = options.epochOf;
  }

  nextGroupId(): string {
    const groupId = `${this.groupIdPrefix}-${randomUUID()}`;
    this.groupIds.push(groupId);
    return groupId;
  }

  async prepare(): Promise<void> {
    const admin = await this.admin();
    const [offsets, epoch] = await Promise.all([admin.fetchTopicOffsets(this.topic), this.epochOf()]);
    this.epoch = epoch;
    for (const { partition, low, high } of offsets) {
      const tail = BigInt(high) - BigInt(this.last ?? 0);
      this.next.set(partition, tail > BigInt(low) ? tail : BigInt(low));
    }
    if (this.from) this.next.set(this.from.partition, this.replayStart(this.from, offsets));
    const only = offsets.length === 1 ? offsets[0]! : undefined;
    this.liveAfter =
      only && BigInt(only.high) > 0n
        ? formatKafkaPosition(only.partition, BigInt(only.high) - 1n, epoch)
        : undefined;
    this.origin = only && formatKafkaPosition(only.partition, BigInt(only.low) - 1n, epoch);
  }

  async joined(consumer: Consumer, partitions: number[], isCurrent: () => boolean): Promise<void> {
    if (this.joins++ > 0) {
      // Synchronous, before kafkajs fetches: nothing is read until the epoch is known again.
      consumer.pause([{ topic: this.topic }]);
      const epoch = await this.epochOf();
      // Unknown for now (the topic missing, the broker not answering): nothing is known to have changed.
      if (epoch !== undefined && epoch !== this.epoch) {
        this.epoch = epoch;
        // The topic was created anew: its offsets start over, and every one of them is new.
        this.next.clear();
      }
      if (!isCurrent()) return;
      this.seek(consumer, partitions);
      consumer.resume([{ topic: this.topic }]);
      return;
    }
    this.seek(consumer, partitions);
  }

  /**
   * Looks whether the topic was created anew since its epoch was read: nothing is read meanwhile,
   * and a topic made anew is read from its log start, in its new epoch (what was delivered of it
   * already comes again: the hub drops the events it holds by their CloudEvent id). Its offsets may
   * lie within the new topic's, so they cannot tell it themselves. One look at a time; a topic
   * missing for now is looked at again next time.
   */
  lookAtEpoch(consumer: Consumer, isCurrent: () => boolean): Promise<void> {
    this.looking = this.looking.then(() => this.lookAgain(consumer, isCurrent));
    return this.looking;
  }

  private async lookAgain(consumer: Consumer, isCurrent: () => boolean): Promise<void> {
    if (this.joins === 0 || !isCurrent()) return;
    const topics = [{ topic: this.topic }];
    consumer.pause(topics);
    try {
      const epoch = await this.epochOf();
      if (epoch === undefined || epoch === this.epoch || !isCurrent()) return;
      const offsets = await (await this.admin()).fetchTopicOffsets(this.topic);
      if (!isCurrent()) return;
      this.epoch = epoch;
      this.next.clear();
      for (const { partition, low } of offsets) this.next.set(partition, BigInt(low));
      // A broadcast subscriber is its private group's only member: every partition is its own.
      this.seek(consumer, [...this.next.keys()]);
    } finally {
      if (isCurrent()) consumer.resume(topics);
    }
  }

  private seek(consumer: Consumer, partitions: number[]): void {
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

  /** The offset after `from`, when the partition still holds everything from there to its end. */
  private replayStart(
    from: KafkaPosition,
    offsets: { partition: number; low: string; high: string }[],
  ): bigint {
    const position = formatKafkaPosition(from.partition, from.offset, from.epoch);
    if (from.epoch !== undefined && this.epoch !== undefined && from.epoch !== this.epoch)
      throw new PositionUnavailableError(
        position,
        'epoch',
        `${this.topic} was created anew since (its epoch is ${this.epoch})`,
      );
    const bounds = offsets.find((o) => o.partition === from.partition);
    if (!bounds)
      throw new PositionUnavailableError(position, 'unknown', `names no partition of ${this.topic}`);
    const after = from.offset + 1n;
    const [low, high] = [BigInt(bounds.low), BigInt(bounds.high)];
    if (after < low)
      throw new PositionUnavailableError(
        position,
        'expired',
        `the log of ${this.topic} starts at offset ${low}`,
      );
    if (after > high)
      throw new PositionUnavailableError(
        position,
        'unknown',
        `the log of ${this.topic} ends at offset ${high}`,
      );
    return after;
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
  private readonly epochOf: () => Promise<string | undefined>;
  /** The topic's epoch when the member started: the one its messages' positions carry. */
  epoch: string | undefined;

  constructor(options: {
    groupId: string;
    topic: string;
    admin: () => Promise<Admin>;
    epochOf: () => Promise<string | undefined>;
  }) {
    this.groupId = options.groupId;
    this.topic = options.topic;
    this.admin = options.admin;
    this.epochOf = options.epochOf;
  }

  nextGroupId(): string {
    return this.groupId;
  }

  async prepare(): Promise<void> {
    this.epoch = await this.epochOf();
  }

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
