/**
 * One Kafka binding's consumer: its own group, its topics (a pattern's current matches), records
 * through their flows. At-least-once by default: a partition's records run one after another and
 * each offset is committed only after its flow finished (or the record was dead-lettered), so a
 * crash hands the uncommitted ones to the next member of the group. `auto-commit: true` hands
 * records to flows without waiting (at most max-in-flight at once) and lets kafkajs commit what it
 * handed over: faster, and a crash loses the records in flows.
 */
import type { Consumer, EachMessagePayload, Kafka, Producer } from 'kafkajs';
import type { KafkaBinding } from './binding.ts';
import { kafkaRecordOf } from './kafka-record.ts';
import { pinnedAssigner } from './pinned-assigner.ts';
import { deadLetterHeaders, type InboundRecord, type RecordRunContext } from './record-run.ts';
import { runAndSettle } from './record-settle.ts';
import { RestartLoop } from './restart-loop.ts';
import { Slots } from './slots.ts';

export interface KafkaBindingContext extends RecordRunContext {
  kafka: Kafka;
  producer: () => Promise<Producer>;
  dlqTimeoutMs: number;
  sessionTimeoutMs: number;
  maxRecordBytes: number;
}

export class KafkaBindingConsumer {
  readonly binding: KafkaBinding;
  private readonly ctx: KafkaBindingContext;
  private consumer: Consumer | undefined;
  private joined = false;
  private subscribed: string[] = [];
  /** Stopping: records still handed over by kafkajs are left uncommitted for the next member. */
  private draining = false;
  private readonly slots: Slots;
  private readonly restarts: RestartLoop;

  constructor(binding: KafkaBinding, ctx: KafkaBindingContext) {
    this.binding = binding;
    this.ctx = ctx;
    this.slots = new Slots(binding.maxInFlight);
    this.restarts = new RestartLoop(
      () => this.restart(),
      (attempt, err) => {
        ctx.metrics.consumerRestarts.inc({ binding: binding.label });
        if (err)
          ctx.logger.warn({ binding: binding.label, attempt, err }, 'flow adapter: Kafka restart failed');
      },
    );
  }

  /** The engine stops: no restart after this. */
  async shutdown(graceMs: number): Promise<void> {
    this.restarts.stop();
    await this.stop(graceMs);
  }

  /** A consumer kafkajs gave up on: a new one on the same topics. */
  private async restart(): Promise<void> {
    const topics = this.subscribed;
    await this.stop(this.ctx.dlqTimeoutMs);
    this.subscribed = [];
    await this.read(topics);
  }

  /** Ready when it reads: joined its group, or has no topic to read yet (a pattern without match). */
  get ready(): boolean {
    return this.consumer === undefined || this.joined;
  }

  get topics(): readonly string[] {
    return this.subscribed;
  }

  /** Reads `topics` from now on (restarting the consumer when they changed). */
  async read(topics: readonly string[]): Promise<void> {
    const sorted = [...topics].sort();
    if (sorted.join('\n') === this.subscribed.join('\n') && this.consumer) return;
    if (this.consumer) await this.stop(this.ctx.dlqTimeoutMs);
    this.subscribed = sorted;
    if (sorted.length === 0) return;
    const consumer = this.createConsumer();
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: sorted, fromBeginning: true });
    await consumer.run({
      autoCommit: this.binding.autoCommit,
      // Manual commit: one record per partition at a time keeps commits in partition order.
      partitionsConsumedConcurrently: this.binding.autoCommit ? 1 : this.binding.maxInFlight,
      eachMessage: (payload) =>
        this.binding.autoCommit ? this.handOver(payload) : this.process(consumer, payload),
    });
  }

  /**
   * Lets in-flight flows finish (within `graceMs`) and commit, then leaves the group. The consumer
   * keeps running meanwhile, paused: kafkajs drops every commit once `stop()` has begun, so a flow
   * that finished during a plain stop would be read again by the next member.
   */
  async stop(graceMs: number): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    if (!consumer) return;
    this.draining = true;
    try {
      consumer.pause(this.subscribed.map((topic) => ({ topic })));
    } catch {
      // Not running (it never joined): nothing is in flight.
    }
    await this.slots.idle(graceMs);
    await withDeadline(consumer.disconnect(), 10_000);
    this.joined = false;
    this.draining = false;
  }

  private createConsumer(): Consumer {
    const { binding, ctx } = this;
    const consumer = ctx.kafka.consumer({
      groupId: binding.group,
      sessionTimeout: ctx.sessionTimeoutMs,
      heartbeatInterval: Math.floor(ctx.sessionTimeoutMs / 10),
      // A fetch brings at most one largest record per partition beyond what was asked.
      maxBytesPerPartition: ctx.maxRecordBytes + 65_536,
      maxBytes: (ctx.maxRecordBytes + 65_536) * binding.maxInFlight,
      allowAutoTopicCreation: false,
      ...(binding.partition !== undefined && {
        partitionAssigners: [pinnedAssigner(binding.topic!, binding.partition)],
      }),
    });
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.joined = true;
    });
    consumer.on(consumer.events.CRASH, (e) => {
      this.joined = false;
      ctx.logger.error(
        { binding: binding.label, err: e.payload.error, restart: e.payload.restart },
        'flow adapter: Kafka consumer crashed',
      );
      // kafkajs restarts it itself unless the error is not retriable: then it is ours to do.
      if (!e.payload.restart && consumer === this.consumer) this.restarts.schedule();
    });
    return consumer;
  }

  /** At-least-once: the flow (and a dead-letter write) first, then the commit. */
  private async process(
    consumer: Consumer,
    { topic, partition, message, heartbeat }: EachMessagePayload,
  ): Promise<void> {
    if (this.draining) return;
    const record = kafkaRecordOf(topic, partition, message);
    await this.slots.take();
    // kafkajs heartbeats between records only: a flow longer than the session would cost the
    // partition. heartbeat() sends at most one per heartbeat interval, so calling it often is cheap.
    const beat = setInterval(() => void heartbeat().catch(() => undefined), this.ctx.sessionTimeoutMs / 10);
    // The slot is held until the commit: a stop waits for both before it leaves the group.
    try {
      await this.runAndSettle(record, heartbeat);
      await this.commit(consumer, topic, partition, message.offset);
    } finally {
      clearInterval(beat);
      this.slots.give();
    }
  }

  /** Auto-commit: the record goes to its flow and the next one is read at once. */
  private async handOver({ topic, partition, message }: EachMessagePayload): Promise<void> {
    // kafkajs would commit a record passed over quietly; an error leaves it, and the rest, uncommitted.
    if (this.draining) throw new Error('flow adapter stopping: record left for the next member');
    const record = kafkaRecordOf(topic, partition, message);
    await this.slots.take();
    if (this.draining) {
      this.slots.give();
      throw new Error('flow adapter stopping: record left for the next member');
    }
    void this.runAndSettle(record).finally(() => this.slots.give());
  }

  /** The flow, then done or dead-lettered within kafka.dlq.timeout.ms, or dropped with an error. */
  private async runAndSettle(record: InboundRecord, heartbeat?: () => Promise<void>): Promise<void> {
    const { binding } = this;
    const dlqTopic = binding.dlqTopic;
    return runAndSettle(binding, record, this.ctx, {
      ...(heartbeat && { between: heartbeat }),
      deadLetter: dlqTopic === undefined ? undefined : (r, error) => this.deadLetter(dlqTopic, r, error),
      words: { unit: 'record', dlqOption: 'dlq-topic', write: 'write' },
    });
  }

  /** To the binding's dead-letter topic, confirmed by every in-sync replica. */
  private async deadLetter(topic: string, record: InboundRecord, error: string): Promise<void> {
    const producer = await this.ctx.producer();
    const key = record.metadata['key'] as string | undefined;
    const send = producer.send({
      topic,
      acks: -1,
      messages: [
        {
          key: key ?? null,
          value: record.value,
          headers: deadLetterHeaders(record, 'dlq.origin.topic', error),
        },
      ],
    });
    await withDeadline(send, this.ctx.dlqTimeoutMs, true);
  }

  /** Also while stopping: a record that finished then is committed before the group is left. */
  private async commit(consumer: Consumer, topic: string, partition: number, offset: string): Promise<void> {
    try {
      await consumer.commitOffsets([{ topic, partition, offset: String(BigInt(offset) + 1n) }]);
    } catch (err) {
      // A rebalance took the partition: its new owner reads the record again (at-least-once).
      this.ctx.logger.warn(
        { binding: this.binding.label, topic, partition, offset, err },
        'flow adapter: commit failed',
      );
    }
  }
}

/** Waits for `promise` at most `ms`; past it, resolves (or rejects when `strict`) without it. */
async function withDeadline<T>(promise: Promise<T>, ms: number, strict = false): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => (strict ? reject(new Error(`not done within ${ms} ms`)) : resolve()), ms);
  });
  try {
    const settled = strict ? promise : promise.catch(() => undefined);
    await Promise.race([settled.then(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
