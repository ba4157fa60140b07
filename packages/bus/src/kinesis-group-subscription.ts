/**
 * A member of a consumer group on a Kinesis stream. Kinesis has no server-side groups, so members
 * share shards through leases in a Store (see kinesis-group-state.ts), like the KCL does with
 * DynamoDB: each member reads the shards it holds a lease on, renews its leases, and rebalances
 * whenever a member joins or leaves, a lease is released or expires, and every third of the lease
 * TTL. Balancing aims at a fair share of ceil(shards / members) each: a member over it releases
 * shards, a member under it takes free (released or expired) ones.
 *
 * After each handled record the member checkpoints its sequence number, and it stops reading a
 * shard before releasing its lease, so whoever takes the shard over (or the group when it comes
 * back) goes on right after the last handled record. A shard the group never read is read from the
 * group's creation time (AT_TIMESTAMP), which makes a brand new group start with what is published
 * after it was created, and keeps what is published while no member is there for the next one.
 * That timestamp comes from this machine's clock, compared with Kinesis' arrival times.
 */
import { randomUUID } from 'node:crypto';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import type { Change, Store } from '@gatehouse/store';
import { BusError, type Message, type MessageHandler, type Subscription } from './bus.ts';
import { KinesisGroupState } from './kinesis-group-state.ts';
import { ShardReader, type StartPoint } from './kinesis-shard-reader.ts';
import { asError, isNotFound, type KinesisStreams, type StreamInfo } from './kinesis-streams.ts';

export interface GroupSubscriptionOptions {
  client: KinesisClient;
  streams: KinesisStreams;
  pollIntervalMs: number;
  handler: MessageHandler;
  onError: (err: Error, message?: Message) => void;
  store: Store;
  group: string;
  leaseTtlSeconds: number;
  checkpointTtlSeconds: number;
}

/** How soon to look again for a stream that vanished. */
const STREAM_RETRY_MS = 1_000;

export class KinesisGroupSubscription implements Subscription {
  private readonly options: GroupSubscriptionOptions;
  private readonly state: KinesisGroupState;
  private readonly memberId = randomUUID();
  private readonly streamName: string;
  /** The stream being read; undefined after it vanished, until it is found again. */
  private stream: StreamInfo | undefined;
  private groupCreatedAt = new Date();
  private readonly held = new Set<string>();
  private readonly readers = new Map<string, ShardReader>();
  /** Members already seen, so that their lease renewals do not set off a rebalance each time. */
  private readonly knownMembers = new Set<string>();
  private balancing: Promise<void> | undefined;
  private balanceAgain = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private unwatch: (() => Promise<void>) | undefined;
  private closed = false;

  private constructor(options: GroupSubscriptionOptions, stream: StreamInfo) {
    this.options = options;
    this.stream = stream;
    this.streamName = stream.name;
    this.state = new KinesisGroupState({ ...options, topic: stream.name });
  }

  /** Resolves once the member is in the group and reads the shards it could take right away. */
  static async open(
    options: GroupSubscriptionOptions,
    stream: StreamInfo,
  ): Promise<KinesisGroupSubscription> {
    const member = new KinesisGroupSubscription(options, stream);
    try {
      member.groupCreatedAt = await member.state.createdAt();
      member.unwatch = await options.store.watch(member.state.prefix, (change) => member.onChange(change));
      await member.requestBalance();
    } catch (err) {
      await member.close();
      throw new BusError(`kinesis group ${options.group} on ${stream.name}: ${asError(err).message}`, {
        cause: err,
      });
    }
    member.renewTimer = setInterval(() => void member.requestBalance(), (options.leaseTtlSeconds * 1000) / 3);
    member.renewTimer.unref();
    return member;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewTimer);
    clearTimeout(this.retryTimer);
    await this.report(this.unwatch?.());
    await this.balancing;
    await Promise.all([...this.readers.values()].map((r) => r.stop()));
    this.readers.clear();
    for (const shardId of this.held) await this.report(this.state.releaseLease(shardId, this.memberId));
    this.held.clear();
    await this.report(this.state.removeMember(this.memberId));
  }

  private onChange(change: Change): void {
    // Changes made while the watch was cut off were not heard: balance again on what is there now.
    if (change.kind === 'resync') return void this.requestBalance();
    const meaning = this.state.classify(change.key, change.kind);
    if (!meaning) return;
    if (meaning.kind === 'member') {
      if (meaning.removed) this.knownMembers.delete(meaning.memberId);
      else if (this.knownMembers.has(meaning.memberId)) return;
      else this.knownMembers.add(meaning.memberId);
    } else if (!meaning.removed) {
      return; // a lease taken or renewed frees nothing
    }
    void this.requestBalance();
  }

  /** Runs one balancing pass at a time; a request during a pass runs another one after it. */
  private requestBalance(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.balanceAgain = true;
    this.balancing ??= this.balanceWhileAsked();
    return this.balancing;
  }

  private async balanceWhileAsked(): Promise<void> {
    // Store listeners fire synchronously inside the pass's own writes: yield first, so that
    // `balancing` is set before they call requestBalance again.
    await Promise.resolve();
    while (this.balanceAgain && !this.closed) {
      this.balanceAgain = false;
      try {
        await this.balance();
      } catch (err) {
        this.options.onError(asError(err));
        this.retrySoon();
      }
    }
    this.balancing = undefined;
  }

  private async balance(): Promise<void> {
    await this.state.renewMember(this.memberId);
    await this.renewLeases();
    this.stream ??= await this.options.streams.active(this.streamName);
    if (!this.stream) return this.retrySoon();
    const { shardIds } = this.stream;
    for (const shardId of this.held) if (!shardIds.includes(shardId)) await this.release(shardId);
    const fairShare = Math.ceil(shardIds.length / Math.max(1, await this.state.memberCount()));
    for (const shardId of [...this.held].slice(fairShare)) await this.release(shardId);
    for (const shardId of shuffled(shardIds)) {
      if (this.held.size >= fairShare || this.closed) break;
      if (!this.held.has(shardId) && (await this.state.acquireLease(shardId, this.memberId)))
        this.held.add(shardId);
    }
    for (const shardId of this.held)
      if (!this.readers.has(shardId)) await this.startReader(this.stream, shardId);
  }

  private async renewLeases(): Promise<void> {
    for (const shardId of [...this.held]) {
      if (await this.state.renewLease(shardId, this.memberId)) continue;
      this.held.delete(shardId);
      await this.stopReader(shardId);
      this.options.onError(new BusError(`kinesis group ${this.options.group} lost its lease on ${shardId}`));
    }
  }

  /** Stops reading first, so the checkpoint is final when the next holder reads it. */
  private async release(shardId: string): Promise<void> {
    await this.stopReader(shardId);
    this.held.delete(shardId);
    await this.state.releaseLease(shardId, this.memberId);
  }

  private async startReader(stream: StreamInfo, shardId: string): Promise<void> {
    const reader = new ShardReader({
      ...this.options,
      stream,
      shardId,
      start: await this.startPoint(stream, shardId),
      onHandled: (sequenceNumber) =>
        this.state.saveCheckpoint(shardId, { streamCreatedAt: stream.createdAt, sequenceNumber }),
      onLost: (err) => this.onLost(shardId, err),
    });
    try {
      await reader.start();
      this.readers.set(shardId, reader);
    } catch (err) {
      this.options.onError(new BusError(`kinesis ${stream.name} shard ${shardId}: ${asError(err).message}`));
      if (isNotFound(err)) this.stream = undefined;
      this.retrySoon();
    }
  }

  private async startPoint(stream: StreamInfo, shardId: string): Promise<StartPoint> {
    const checkpoint = await this.state.checkpoint(shardId);
    if (checkpoint?.streamCreatedAt === stream.createdAt)
      return { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: checkpoint.sequenceNumber };
    if (!checkpoint) return { type: 'AT_TIMESTAMP', timestamp: this.groupCreatedAt };
    this.options.onError(
      new BusError(
        `kinesis stream ${stream.name} was re-created since group ${this.options.group} read ${shardId}; ` +
          'reading the new stream from TRIM_HORIZON',
      ),
    );
    return { type: 'TRIM_HORIZON' };
  }

  private onLost(shardId: string, err: Error): void {
    this.readers.delete(shardId);
    if (this.closed) return;
    this.options.onError(err);
    this.stream = undefined;
    this.retrySoon();
  }

  private async stopReader(shardId: string): Promise<void> {
    const reader = this.readers.get(shardId);
    this.readers.delete(shardId);
    await reader?.stop();
  }

  private retrySoon(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.requestBalance();
    }, STREAM_RETRY_MS);
    this.retryTimer.unref();
  }

  private async report(work: Promise<unknown> | undefined): Promise<void> {
    try {
      await work;
    } catch (err) {
      this.options.onError(asError(err));
    }
  }
}

/** Members try free shards in different orders, so two newcomers rarely race for the same one. */
function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
