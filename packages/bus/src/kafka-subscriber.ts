/**
 * One Bus subscription on Kafka: a kafkajs consumer in a consumer group that hands messages to the
 * handler one at a time per partition, in order, and keeps going through broker restarts. Where it
 * reads after each group join is decided by its StartPolicy (broadcast subscriber or group member,
 * see kafka-start-policies.ts).
 */
import type { Consumer, ConsumerConfig, EachMessagePayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { isRetriableKafkaError, kafkaErrorMessage } from './kafka-errors.ts';
import { BusError, isNotHandled, type Message, type MessageHandler, type Subscription } from './bus.ts';
import { formatKafkaPosition } from './kafka-position.ts';

export interface StartPolicy {
  /** Commit handled offsets to the group (members) or keep them only in memory (broadcast). */
  readonly autoCommit: boolean;
  /** Where kafkajs starts a partition that has no offset (or whose offset fell out of retention). */
  readonly fromBeginning: boolean;
  /**
   * After a crash, start over in a new group instead of rejoining the old one: kafkajs rejoins with
   * a new member id, and the broker holds the join until it has expired the old member.
   */
  readonly restartInNewGroup: boolean;
  /** The group for the next consumer (a fresh one each time when `restartInNewGroup`). */
  nextGroupId(): string;
  /** Runs once the topic is known to exist, before the consumer first joins. */
  prepare(): Promise<void>;
  /** The topic's epoch, which the positions of the messages read carry (kafka-position.ts). */
  readonly epoch: string | undefined;
  /**
   * Where the policy follows the topic's epoch: looks whether the topic was created anew and, if so,
   * reads it from its start. Called every `epochCheckMs` and whenever kafkajs reads the topic's
   * metadata again (after an error such as the topic's deletion).
   */
  lookAtEpoch?(consumer: Consumer, isCurrent: () => boolean): Promise<void>;
  /**
   * Runs on every join of the group. It is called synchronously from inside kafkajs before its next
   * fetch, so seeks and pauses made before the first await apply to everything that is read; it
   * resolves once the member reads from where it should. May be called again after a failure.
   */
  joined(consumer: Consumer, partitions: number[], isCurrent: () => boolean): Promise<void>;
  /** False for a message this subscriber has already handled (a fetch that raced a seek). */
  isNew(partition: number, offset: string): boolean;
  handled(partition: number, offset: string): void;
  /** Clean-up once the consumer has left its group for good. */
  closed(): Promise<void>;
}

export interface KafkaSubscriberOptions {
  kafka: Kafka;
  topic: string;
  handler: MessageHandler;
  onError: ((err: Error, message?: Message) => void) | undefined;
  policy: StartPolicy;
  consumer: Omit<ConsumerConfig, 'groupId'>;
  /** How long `start` may take before the subscription is given up. */
  startTimeoutMs: number;
  /** Pause before retrying after a failure kafkajs does not retry by itself. */
  retryDelayMs: number;
  /** How often the policy looks at the topic's epoch (StartPolicy.lookAtEpoch). */
  epochCheckMs?: number;
}

/** Broker errors while a topic that is being auto-created has no metadata or leader yet. */
const topicNotReady = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

export class KafkaSubscriber implements Subscription {
  private readonly options: KafkaSubscriberOptions;
  private consumer: Consumer;
  private readonly live = Promise.withResolvers<void>();
  private isLive = false;
  private joins = 0;
  private closing: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private epochTimer: NodeJS.Timeout | undefined;

  constructor(options: KafkaSubscriberOptions) {
    this.options = options;
    this.consumer = this.createConsumer();
    // A failure before anyone awaits `live` must not become an unhandled rejection.
    this.live.promise.catch(() => {});
  }

  /** Resolves once the consumer has joined its group and reads from where its policy says. */
  async start(): Promise<void> {
    const { topic, startTimeoutMs } = this.options;
    const timer = setTimeout(
      () => this.live.reject(new BusError(`no live subscription to ${topic} after ${startTimeoutMs} ms`)),
      startTimeoutMs,
    );
    try {
      await this.launchUntilStarted(Date.now() + startTimeoutMs);
      await this.live.promise;
    } catch (err) {
      await this.close();
      if (err instanceof BusError) throw err;
      throw new BusError(`cannot subscribe to ${topic}: ${kafkaErrorMessage(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A broker that has just started refuses some requests for a moment (its group coordinator is
   * still loading: GROUP_LOAD_IN_PROGRESS from the join, seen right after a Kafka restart): what
   * kafkajs marks retriable is tried again with a new consumer until the start deadline.
   */
  private async launchUntilStarted(deadline: number): Promise<void> {
    const { policy, retryDelayMs } = this.options;
    for (;;) {
      try {
        return await this.launch(this.consumer, () => policy.prepare());
      } catch (err) {
        if (this.closing || !isRetriableKafkaError(err) || Date.now() + retryDelayMs >= deadline) throw err;
        this.report(err);
        await this.consumer.disconnect().catch(() => {});
        this.joins++;
        this.consumer = this.createConsumer();
        await sleep(retryDelayMs);
      }
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    clearTimeout(this.restartTimer);
    clearInterval(this.epochTimer);
    try {
      await this.consumer.disconnect();
    } catch (err) {
      this.report(err);
    }
    await this.options.policy.closed();
  }

  private createConsumer(): Consumer {
    const { kafka, topic, policy } = this.options;
    const consumer = kafka.consumer({
      ...this.options.consumer,
      groupId: policy.nextGroupId(),
      // Consulted by kafkajs for retriable crashes only; every other crash lands in `crashed`.
      retry: {
        ...this.options.consumer.retry,
        restartOnFailure: async () => !this.closing && !policy.restartInNewGroup,
      },
    });
    const current = () => consumer === this.consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      if (current()) this.joined(e.payload.memberAssignment[topic] ?? []);
    });
    consumer.on(consumer.events.CRASH, (e) => {
      if (current()) this.crashed(e.payload.error, e.payload.restart);
    });
    consumer.on(consumer.events.REQUEST, (e) => {
      if (e.payload.apiName === 'Metadata' && current()) this.lookAtEpoch();
    });
    return consumer;
  }

  /** Connects, subscribes and runs a consumer; `run` resolves once it has joined its group. */
  private async launch(consumer: Consumer, beforeRun: () => Promise<void>): Promise<void> {
    const steps = [
      () => consumer.connect(),
      () => this.subscribeTopic(consumer),
      beforeRun,
      () => consumer.run(this.runConfig()),
    ];
    for (const step of steps) {
      if (this.closing) throw new BusError('subscription closed');
      await step();
    }
    // A close that raced the join found nothing running to stop yet.
    if (this.closing) {
      await consumer.disconnect();
      throw new BusError('subscription closed');
    }
  }

  /** Subscribing asks the broker for the topic's metadata, which auto-creates it where allowed. */
  private async subscribeTopic(consumer: Consumer): Promise<void> {
    const { topic, policy, retryDelayMs } = this.options;
    for (let attempt = 1; ; attempt++) {
      try {
        return await consumer.subscribe({ topics: [topic], fromBeginning: policy.fromBeginning });
      } catch (err) {
        if (!topicNotReady.has((err as { type?: string }).type ?? '') || attempt >= 10) throw err;
        await sleep(Math.min(retryDelayMs, 500));
      }
    }
  }

  private runConfig() {
    return {
      autoCommit: this.options.policy.autoCommit,
      eachMessage: (payload: EachMessagePayload) => this.deliver(payload),
    };
  }

  private async deliver({ partition, message: raw }: EachMessagePayload): Promise<void> {
    const { topic, policy, handler, onError } = this.options;
    if (!policy.isNew(partition, raw.offset)) return;
    const message = toBusMessage(topic, partition, raw, policy.epoch);
    try {
      await handler(message);
    } catch (err) {
      // Thrown on to kafkajs, the offset is not resolved: kafkajs commits what came before and
      // reads the partition again from this message (after a restart, or by whoever takes it over).
      if (policy.autoCommit && isNotHandled(err)) throw err;
      onError?.(asError(err), message);
    }
    policy.handled(partition, raw.offset);
  }

  private joined(partitions: number[]): void {
    const join = ++this.joins;
    const isCurrent = () => join === this.joins && !this.closing;
    void this.settle(partitions, isCurrent);
  }

  /** Retries the policy's start until it succeeds or a newer join (or close) makes it moot. */
  private async settle(partitions: number[], isCurrent: () => boolean): Promise<void> {
    const consumer = this.consumer;
    while (isCurrent()) {
      try {
        await this.options.policy.joined(consumer, partitions, isCurrent);
        if (!isCurrent()) return;
        this.isLive = true;
        this.watchEpoch();
        this.live.resolve();
        return;
      } catch (err) {
        if (isCurrent()) this.report(err);
        await sleep(this.options.retryDelayMs);
      }
    }
  }

  /** kafkajs has already disconnected the consumer; `restarting` says whether it starts it again. */
  private crashed(error: Error, restarting: boolean): void {
    if (this.closing) return;
    this.report(error);
    if (restarting) return;
    // Before it is live, only what may pass with time (a group coordinator still loading at a fresh
    // broker) is tried again, with a new consumer, until start's deadline.
    if (!this.isLive && !isRetriableKafkaError(error)) {
      this.live.reject(error);
      return;
    }
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.restart(), this.options.retryDelayMs);
  }

  /** A live subscription must not die with its consumer: a new one takes over. */
  private async restart(): Promise<void> {
    if (this.closing) return;
    this.joins++; // whatever the old consumer was still settling is moot
    const consumer = this.createConsumer();
    this.consumer = consumer;
    try {
      await this.launch(consumer, async () => {});
    } catch (err) {
      if (this.closing || consumer !== this.consumer) return;
      this.report(err);
      await consumer.disconnect().catch(() => {});
      this.scheduleRestart();
    }
  }

  private watchEpoch(): void {
    const { policy, epochCheckMs } = this.options;
    if (!policy.lookAtEpoch || epochCheckMs === undefined || this.epochTimer || this.closing) return;
    this.epochTimer = setInterval(() => this.lookAtEpoch(), epochCheckMs);
    this.epochTimer.unref();
  }

  /** The policy looks whether the topic was created anew (StartPolicy.lookAtEpoch). */
  private lookAtEpoch(): void {
    const { policy } = this.options;
    const consumer = this.consumer;
    if (!policy.lookAtEpoch || this.closing) return;
    const isCurrent = () => consumer === this.consumer && !this.closing;
    policy.lookAtEpoch(consumer, isCurrent).catch((err: unknown) => this.report(err));
  }

  private report(err: unknown): void {
    this.options.onError?.(asError(err));
  }
}

function toBusMessage(
  topic: string,
  partition: number,
  raw: KafkaMessage,
  epoch: string | undefined,
): Message {
  return {
    topic,
    key: raw.key?.toString() ?? undefined,
    value: raw.value ?? Buffer.alloc(0),
    headers: headerStrings(raw.headers),
    position: formatKafkaPosition(partition, raw.offset, epoch),
  };
}

/** A header sent more than once keeps its last value, as Kafka's own `lastHeader` does. */
function headerStrings(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined) result[name] = last.toString();
  }
  return result;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
