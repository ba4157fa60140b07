/**
 * Micro-batching of the Kafka adapter's publishes. An awaited kafkajs `send` per message costs one
 * produce request, and its encoding and round trip, per message; publishes to one topic that arrive
 * together go out in one request instead:
 * - A publish to a topic with nothing in flight is sent at once (after the current microtasks, so
 *   publishes made in the same tick join it): no timer waits for company. Publishes made while the
 *   topic's request is in flight queue up and form the next request (at most `maxMessages`
 *   messages and about `maxBytes`).
 * - One request per topic is in flight at a time, so messages of a key reach the broker in publish
 *   order within and across batches (kafkajs' own retries resend a request unchanged).
 * - Every message's partition is chosen here, not by kafkajs, so its offset is known: Kafka appends
 *   a request's messages for one partition as one record batch with consecutive offsets, so a
 *   message's offset is that partition's base offset from the answer plus the message's index
 *   among the request's messages for that partition. Keys go where Java and kafkajs producers send
 *   them (kafka-key-partition.ts); keyless messages go round-robin over partitions with a leader.
 *   A topic the cluster does not know yet is sent to one message at a time with no partition set,
 *   as before batching: kafkajs places the message and the broker creates the topic (when its
 *   `auto.create.topics.enable` allows), after which its layout can be read.
 * - Each publish settles on its own. A request the broker answered with a non-retriable error (a
 *   message too large, an invalid record …) is sent again one message at a time, so only the
 *   offending message is rejected. A request that failed otherwise (the broker unreachable after
 *   kafkajs' retries) is rejected together with the publishes queued behind it for that topic:
 *   each of them would have spent the same retry budget, one after another.
 */
import { partitionForKey } from './kafka-key-partition.ts';
import type { KafkaPosition } from './kafka-position.ts';
import type { TopicLayout } from './kafka-topic-layouts.ts';

export interface KafkaRecord {
  key: string | null;
  value: Buffer;
  headers?: Record<string, string>;
}

export interface PartitionedRecord extends KafkaRecord {
  /** Unset only for a topic that does not exist yet: kafkajs chooses. */
  partition?: number;
}

/** The broker's answer for one partition of a produce request (a part of kafkajs' RecordMetadata). */
export interface PartitionAck {
  partition: number;
  baseOffset?: string;
}

export interface KafkaPublishBatcherOptions {
  /** One produce request with acks from all in-sync replicas; resolves with one ack per partition. */
  send(topic: string, records: PartitionedRecord[]): Promise<PartitionAck[]>;
  /** The topic's partitions; undefined when the topic does not exist yet. */
  layout(topic: string): Promise<TopicLayout | undefined>;
  /** A send failed: the topic's layout may be out of date. */
  layoutStale(topic: string): void;
  /** Default 500. */
  maxMessages?: number;
  /** Default 1,000,000: below the broker's default `message.max.bytes` (1 MiB + 12 B). */
  maxBytes?: number;
}

interface Pending {
  record: KafkaRecord;
  size: number;
  resolve(position: KafkaPosition): void;
  reject(err: unknown): void;
}

interface Failure {
  error: unknown;
}

export class KafkaPublishBatcher {
  private readonly options: KafkaPublishBatcherOptions;
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  /** A topic is here while its drain is scheduled or running; the array is its queue. */
  private readonly queues = new Map<string, Pending[]>();
  private readonly drains = new Set<Promise<void>>();
  /** Round-robin counter of keyless messages per topic (random start, like kafkajs). */
  private readonly turns = new Map<string, number>();

  constructor(options: KafkaPublishBatcherOptions) {
    this.options = options;
    this.maxMessages = Math.max(1, options.maxMessages ?? 500);
    this.maxBytes = options.maxBytes ?? 1_000_000;
  }

  publish(topic: string, record: KafkaRecord): Promise<KafkaPosition> {
    return new Promise((resolve, reject) => {
      const pending: Pending = { record, size: recordSize(record), resolve, reject };
      const queue = this.queues.get(topic);
      if (queue) {
        queue.push(pending);
        return;
      }
      const fresh = [pending];
      this.queues.set(topic, fresh);
      const drain = Promise.resolve().then(() => this.drain(topic, fresh));
      this.drains.add(drain);
      void drain.then(() => this.drains.delete(drain));
    });
  }

  /** Resolves once every publish made so far has been resolved or rejected. */
  async settled(): Promise<void> {
    while (this.drains.size > 0) await Promise.all(this.drains);
  }

  private async drain(topic: string, queue: Pending[]): Promise<void> {
    try {
      while (queue.length > 0) {
        const failure = await this.sendBatch(topic, takeBatch(queue, this.maxMessages, this.maxBytes));
        if (failure) rejectAll(queue.splice(0), failure.error);
      }
    } finally {
      // Same synchronous step as the emptiness check: a publish after it starts a new drain.
      this.queues.delete(topic);
    }
  }

  /** Settles every publish of the batch; returns the failure the publishes queued behind it share. */
  private async sendBatch(topic: string, batch: Pending[]): Promise<Failure | undefined> {
    try {
      const layout = await this.options.layout(topic);
      if (layout === undefined && batch.length > 1) return await this.sendOneByOne(topic, batch);
      const records: PartitionedRecord[] = batch.map((p) =>
        layout ? { ...p.record, partition: this.partitionOf(topic, p.record, layout) } : p.record,
      );
      const acks = await this.options.send(topic, records);
      // A lone message kafkajs placed: the answer names its partition.
      const placed = records.map((r) => ({ partition: r.partition ?? acks[0]?.partition ?? -1 }));
      positionsOf(placed, acks).forEach((position, i) => {
        if (position instanceof Error) batch[i]!.reject(position);
        else batch[i]!.resolve(position);
      });
      return undefined;
    } catch (error) {
      this.options.layoutStale(topic);
      if (!brokerRefused(error)) {
        rejectAll(batch, error);
        return { error };
      }
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return undefined;
      }
      return this.sendOneByOne(topic, batch);
    }
  }

  private async sendOneByOne(topic: string, batch: Pending[]): Promise<Failure | undefined> {
    for (let i = 0; i < batch.length; i++) {
      const failure = await this.sendBatch(topic, [batch[i]!]);
      if (failure) {
        rejectAll(batch.slice(i + 1), failure.error);
        return failure;
      }
    }
    return undefined;
  }

  private partitionOf(topic: string, record: KafkaRecord, layout: TopicLayout): number {
    if (record.key !== null) return partitionForKey(record.key, layout.partitionCount);
    const turn = this.turns.get(topic) ?? Math.floor(Math.random() * 0x7fffffff);
    this.turns.set(topic, (turn + 1) & 0x7fffffff);
    const { available, partitionCount } = layout;
    return available.length > 0 ? available[turn % available.length]! : turn % partitionCount;
  }
}

/**
 * Positions of a request's records from the broker's answer: per partition, the base offset plus
 * the record's index among that partition's records (an Error for a partition the answer lacks).
 */
export function positionsOf(
  records: readonly { partition: number }[],
  acks: readonly PartitionAck[],
): Array<KafkaPosition | Error> {
  const base = new Map<number, bigint>();
  for (const ack of acks) if (ack.baseOffset !== undefined) base.set(ack.partition, BigInt(ack.baseOffset));
  const next = new Map<number, bigint>();
  return records.map(({ partition }) => {
    const first = base.get(partition);
    if (first === undefined) return new Error(`the broker returned no offset for partition ${partition}`);
    const index = next.get(partition) ?? 0n;
    next.set(partition, index + 1n);
    return { partition, offset: first + index };
  });
}

/**
 * An upper bound of a record's size in a v2 record batch: every varint at its widest (length,
 * timestamp and offset deltas, key and value lengths, header count: 36 B; 10 B per header).
 */
export function recordSize(record: KafkaRecord): number {
  let size = 36 + record.value.length + (record.key === null ? 0 : Buffer.byteLength(record.key));
  for (const [name, value] of Object.entries(record.headers ?? {}))
    size += 10 + Buffer.byteLength(name) + Buffer.byteLength(value);
  return size;
}

/**
 * The broker answered and refused the request (a non-retriable protocol error, possibly wrapped by
 * kafkajs' retrier), as opposed to a broker that could not be reached.
 */
export function brokerRefused(err: unknown): boolean {
  let e = err;
  for (let depth = 0; e instanceof Error && depth < 5; depth++, e = e.cause) {
    if (e.name === 'KafkaJSProtocolError' && (e as { retriable?: unknown }).retriable === false) return true;
  }
  return false;
}

/** At least one message, then as many as fit both caps, from the head of the queue. */
function takeBatch(queue: Pending[], maxMessages: number, maxBytes: number): Pending[] {
  let count = 1;
  let bytes = queue[0]!.size;
  while (count < queue.length && count < maxMessages && bytes + queue[count]!.size <= maxBytes) {
    bytes += queue[count]!.size;
    count++;
  }
  return queue.splice(0, count);
}

function rejectAll(batch: Pending[], error: unknown): void {
  for (const p of batch) p.reject(error);
}
