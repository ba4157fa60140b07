/**
 * The Bus on Apache Kafka, with kafkajs.
 *
 * - publish: one shared producer, acks=all (-1). kafkajs' idempotent producer is not used (it is
 *   experimental and allows one request in flight), so a send retried after a lost acknowledgement
 *   may be stored twice: delivery is at least once. Retries and timeouts are bounded, so a publish
 *   while the broker is unreachable rejects within about ten seconds instead of hanging.
 * - Publishes to one topic that arrive together (same tick, or while that topic's produce request
 *   is in flight) share one produce request, one request per topic at a time; the adapter chooses
 *   each message's partition (Java-compatible for keys) to know its offset
 *   (kafka-publish-batcher.ts). A lone publish is sent at once.
 * - Positions are `<partition>-<offset>` (kafka-position.ts).
 * - Broadcast subscribers use a private consumer group (`groupIdPrefix` + random id) that never
 *   commits and is deleted on close; they track their offsets in memory (kafka-start-policies.ts).
 * - `from` replays the partition named by the position and starts every other partition at its end
 *   offset: a position is one partition's offset, so on a multi-partition topic only messages of
 *   that partition are replayed. Keep replayable streams (gw.events) at one partition. A position
 *   below the log start offset (retention) or beyond the end is refused (PositionUnavailableError).
 * - `last` starts every partition that many messages before its end.
 * - Group members form a real consumer group named after the group and commit after every batch;
 *   a group that has never read a partition starts it at its end offset when it first joins.
 * - Broker outages: kafkajs crashes a consumer that cannot reach the broker and restarts it; a
 *   broadcast subscriber then goes on in a fresh private group at once, a group member rejoins its
 *   group under a new member id, which the broker admits once the old one's session has expired
 *   (`sessionTimeoutMs`): kafkajs has no static membership.
 * - Topics are auto-created by the broker on first use (its `num.partitions`); `ensureTopic`
 *   creates one with a given number of partitions explicitly.
 */
import type { ConnectionOptions } from 'node:tls';
import {
  type Admin,
  type ConsumerConfig,
  type ISocketFactory,
  Kafka,
  type KafkaConfig,
  type LogEntry,
  logLevel,
  Partitioners,
  type Producer,
  type RetryOptions,
  type SASLOptions,
} from 'kafkajs';
import {
  type Bus,
  BusError,
  BusUnavailableError,
  type MessageHandler,
  type OutgoingMessage,
  type Position,
  type SubscribeOptions,
  type Subscription,
  toBuffer,
} from './bus.ts';
import { isRetriableKafkaError, kafkaErrorMessage } from './kafka-errors.ts';
import {
  compareKafkaPositions,
  formatKafkaPosition,
  kafkaEpoch,
  parseKafkaPosition,
} from './kafka-position.ts';
import { KafkaPublishBatcher } from './kafka-publish-batcher.ts';
import { KafkaSubscriber } from './kafka-subscriber.ts';
import { BroadcastStart, GroupStart } from './kafka-start-policies.ts';
import { KafkaTopicIds } from './kafka-topic-id.ts';
import { KafkaTopicLayouts, type TopicLayout, topicLayout } from './kafka-topic-layouts.ts';

export type KafkaLogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface KafkaLogEntry {
  level: KafkaLogLevel;
  /** The kafkajs component, e.g. `Consumer`, `Connection`. */
  namespace: string;
  message: string;
  extra: Record<string, unknown>;
}

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  ssl?: boolean | ConnectionOptions;
  sasl?: SASLOptions;
  /** Makes the connections to brokers (kafka-security.ts: one that checks pinned certificates). */
  socketFactory?: ISocketFactory;
  /** Prefix of the private consumer groups of broadcast subscribers (default `<clientId>-broadcast`). */
  groupIdPrefix?: string;
  /** Receives kafkajs' own log lines; without it kafkajs logs nothing. */
  log?: (entry: KafkaLogEntry) => void;
  /** Lowest level passed to `log` (default `error`). */
  logLevel?: KafkaLogLevel;
  /** A group member that stops heartbeating is dropped after this long (default 10 s). */
  sessionTimeoutMs?: number;
  /**
   * How often a broadcast subscription asks for its topic's id (default 10 s): a topic deleted and
   * created anew gives a consumer no error when its offsets lie within the new topic's, so only
   * this tells it; it then reads the new topic from its start, in its new epoch.
   */
  epochCheckMs?: number;
  /**
   * How long the broker holds a fetch that has less than `fetchMinBytes` for it (Java's
   * `fetch.max.wait.ms`); also bounds how fast a rebalance is noticed (default 1 s).
   */
  maxWaitTimeMs?: number;
  /**
   * The broker answers a fetch once it has this many bytes of records for it, or after
   * `maxWaitTimeMs` (Java's `fetch.min.bytes`; default 1: at once). kafkajs' cost is per fetch
   * more than per record, so a consumer of a trickle of records pays less per record when it
   * waits for a few of them, at the price of up to `maxWaitTimeMs` of latency.
   */
  fetchMinBytes?: number;
  /** `ping` rejects after this long (default 3 s). */
  pingTimeoutMs?: number;
  /** `subscribe` rejects when the subscription is not live after this long (default 30 s). */
  subscribeTimeoutMs?: number;
  /** Most messages in one produce request of batched publishes (default 500). */
  publishBatchMaxMessages?: number;
  /**
   * Most bytes (estimated from above) in one produce request of batched publishes (default
   * 1,000,000, under the broker's default `message.max.bytes`). A request the broker refuses as too
   * large is sent again one message at a time, so a topic with a lower `max.message.bytes` still
   * works, but setting this below that limit saves the second attempt.
   */
  publishBatchMaxBytes?: number;
}

const kafkaLogLevels: Record<KafkaLogLevel, logLevel> = {
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

/**
 * Short, bounded retries: the caller learns about an unreachable broker in seconds. Consumers use
 * them too; a consumer that runs out of them crashes and is restarted (kafka-subscriber.ts).
 */
const requestRetry: RetryOptions = { initialRetryTime: 200, maxRetryTime: 2_000, retries: 5 };

export class KafkaBus implements Bus {
  readonly kind = 'kafka';
  readonly capabilities = { replay: true, tail: true, headers: true };
  private readonly kafka: Kafka;
  private readonly groupIdPrefix: string;
  private readonly consumerConfig: Omit<ConsumerConfig, 'groupId'>;
  private readonly pingTimeoutMs: number;
  private readonly subscribeTimeoutMs: number;
  private readonly epochCheckMs: number;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly layouts: KafkaTopicLayouts;
  private readonly topicIds: KafkaTopicIds;
  /** Each topic's epoch, for the positions publish answers; forgotten with the layouts. */
  private readonly epochs = new Map<string, Promise<string | undefined>>();
  private readonly batcher: KafkaPublishBatcher;
  private producerReady: Promise<Producer> | undefined;
  private adminReady: Promise<Admin> | undefined;
  private readonly subscribers = new Set<KafkaSubscriber>();
  private closed = false;

  constructor(options: KafkaBusOptions) {
    this.kafka = new Kafka(clientConfig(options));
    this.groupIdPrefix = options.groupIdPrefix ?? `${options.clientId}-broadcast`;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 3_000;
    this.subscribeTimeoutMs = options.subscribeTimeoutMs ?? 30_000;
    this.epochCheckMs = options.epochCheckMs ?? 10_000;
    const sessionTimeout = options.sessionTimeoutMs ?? 10_000;
    this.consumerConfig = {
      sessionTimeout,
      heartbeatInterval: Math.min(1_000, Math.floor(sessionTimeout / 3)),
      maxWaitTimeInMs: options.maxWaitTimeMs ?? 1_000,
      minBytes: options.fetchMinBytes ?? 1,
    };
    // The Java client's murmur2 partitioner: the same key lands on the same partition as from Java.
    // Publishes set every message's partition (the same murmur2 choice for keys); this partitioner
    // only places messages sent without one.
    this.producer = this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    this.admin = this.kafka.admin();
    this.layouts = new KafkaTopicLayouts({ fetch: (topic) => this.fetchLayout(topic) });
    // kafkajs asks for metadata when the broker said its metadata is stale (and when it expires):
    // the layouts are read again then too.
    this.topicIds = new KafkaTopicIds(this.kafka);
    this.producer.on(this.producer.events.REQUEST, ({ payload }) => {
      if (payload.apiName !== 'Metadata') return;
      this.layouts.invalidateAll();
      this.epochs.clear();
    });
    this.batcher = new KafkaPublishBatcher({
      send: async (topic, messages) => (await this.connectedProducer()).send({ topic, acks: -1, messages }),
      layout: (topic) => this.layouts.get(topic),
      layoutStale: (topic) => this.layouts.invalidate(topic),
      maxMessages: options.publishBatchMaxMessages,
      maxBytes: options.publishBatchMaxBytes,
    });
  }

  async publish(topic: string, message: OutgoingMessage): Promise<Position> {
    this.assertOpen();
    try {
      const { partition, offset } = await this.batcher.publish(topic, {
        key: message.key ?? null,
        value: toBuffer(message.value),
        headers: message.headers,
      });
      return formatKafkaPosition(partition, offset, await this.publishedEpoch(topic));
    } catch (err) {
      const Failure = refusedByKafka(err) ? BusError : BusUnavailableError;
      throw new Failure(`publish to ${topic} failed: ${kafkaErrorMessage(err)}`, { cause: err });
    }
  }

  async subscribe(
    topic: string,
    handler: MessageHandler,
    options: SubscribeOptions = {},
  ): Promise<Subscription> {
    this.assertOpen();
    if (options.group !== undefined && (options.from !== undefined || options.last !== undefined)) {
      throw new BusError(
        '`from` and `last` are for broadcast subscribers only; a group reads from its committed offsets',
      );
    }
    const admin = () => this.connectedAdmin();
    const epochOf = () => this.epochOf(topic);
    const policy =
      options.group !== undefined
        ? new GroupStart({ groupId: options.group, topic, admin, epochOf })
        : new BroadcastStart({
            groupIdPrefix: this.groupIdPrefix,
            topic,
            admin,
            epochOf,
            ...(options.from !== undefined && { from: parseKafkaPosition(options.from) }),
            ...(options.last !== undefined && { last: options.last }),
          });
    const subscriber = new KafkaSubscriber({
      kafka: this.kafka,
      topic,
      handler,
      onError: options.onError,
      policy,
      consumer: this.consumerConfig,
      startTimeoutMs: this.subscribeTimeoutMs,
      retryDelayMs: 1_000,
      epochCheckMs: this.epochCheckMs,
    });
    this.subscribers.add(subscriber);
    try {
      await subscriber.start();
    } catch (err) {
      this.subscribers.delete(subscriber);
      throw err;
    }
    return {
      liveAfter: policy instanceof BroadcastStart ? policy.liveAfter : undefined,
      origin: policy instanceof BroadcastStart ? policy.origin : undefined,
      close: async () => {
        this.subscribers.delete(subscriber);
        await subscriber.close();
      },
    };
  }

  comparePositions(a: Position, b: Position): number {
    return compareKafkaPositions(a, b);
  }

  /**
   * Creates the topic with that many partitions (default: the broker's `num.partitions`). Resolves
   * true when it was created, false when it already existed (its partitions are left as they are).
   */
  async ensureTopic(topic: string, partitions?: number): Promise<boolean> {
    this.assertOpen();
    for (let attempt = 1; ; attempt++) {
      try {
        const admin = await this.connectedAdmin();
        const created = await admin.createTopics({
          topics: [{ topic, numPartitions: partitions ?? -1 }],
          waitForLeaders: true,
        });
        // A retry follows only a create that went through (see below).
        return created || attempt > 1;
      } catch (err) {
        // What passes with time is asked again a little later: right after a create the broker may
        // not list the topic yet (kafkajs' wait for its leaders fails with
        // UNKNOWN_TOPIC_OR_PARTITION instead of waiting), and a broker that has just started
        // answers metadata without a controller (KafkaJSBrokerNotFound "Broker -1"). Both were seen
        // at pod start in a cluster: the proxy's start-up failed and its pod restarted.
        if (attempt < maxTopicAttempts && isRetriableKafkaError(err)) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(250 * attempt, 2_000)));
          continue;
        }
        throw new BusError(`cannot create topic ${topic}: ${kafkaErrorMessage(err)}`, { cause: err });
      }
    }
  }

  positionEpoch(position: Position): string | undefined {
    return parseKafkaPosition(position).epoch;
  }

  /**
   * The topic's epoch now (asked of the broker), undefined where it has no topic ids or cannot be
   * asked now: positions then carry none and are read as before epochs, rather than a subscription
   * or a publish failing for want of one.
   */
  private async epochOf(topic: string): Promise<string | undefined> {
    try {
      return kafkaEpoch(await this.topicIds.of(topic));
    } catch {
      return undefined;
    }
  }

  /**
   * The epoch of a topic just published to, asked once until kafkajs reads metadata again (a
   * topic created anew makes the producer do so). Undefined when it cannot be asked now: the
   * position then carries none, and reads as one made before epochs.
   */
  private publishedEpoch(topic: string): Promise<string | undefined> {
    let epoch = this.epochs.get(topic);
    if (!epoch) {
      epoch = this.epochOf(topic).then((known) => {
        // Not known now: asked again at the next publish.
        if (known === undefined) this.epochs.delete(topic);
        return known;
      });
      this.epochs.set(topic, epoch);
    }
    return epoch;
  }

  /** Deletes the topic and every record it holds; a topic that does not exist is no error. */
  async deleteTopic(topic: string): Promise<void> {
    this.assertOpen();
    const admin = await this.connectedAdmin();
    try {
      await admin.deleteTopics({ topics: [topic] });
    } catch (err) {
      if (!/UNKNOWN_TOPIC_OR_PARTITION|does not host this topic/i.test(kafkaErrorMessage(err)))
        throw new BusError(`cannot delete topic ${topic}: ${kafkaErrorMessage(err)}`, { cause: err });
    } finally {
      this.layouts.invalidate(topic);
      this.epochs.delete(topic);
    }
  }

  /** A metadata request to the cluster. */
  async ping(): Promise<void> {
    this.assertOpen();
    const answer = this.connectedAdmin().then((admin) => admin.describeCluster());
    try {
      await withTimeout(answer, this.pingTimeoutMs, 'kafka did not answer a metadata request');
    } catch (err) {
      if (err instanceof BusUnavailableError) throw err;
      throw new BusUnavailableError(`kafka ping failed: ${kafkaErrorMessage(err)}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Publishes already made are sent (or rejected) before the producer goes.
    await Promise.allSettled([...[...this.subscribers].map((s) => s.close()), this.batcher.settled()]);
    this.subscribers.clear();
    await Promise.allSettled([
      this.producerReady && this.producer.disconnect(),
      this.adminReady && this.admin.disconnect(),
      this.topicIds.close(),
    ]);
  }

  private connectedProducer(): Promise<Producer> {
    this.producerReady ??= this.producer.connect().then(
      () => this.producer,
      (err) => {
        // The next publish tries again instead of failing forever.
        this.producerReady = undefined;
        throw err;
      },
    );
    return this.producerReady;
  }

  /**
   * The topic's partitions, or undefined for a topic that does not exist yet: kafkajs' admin asks
   * without auto-creation, so such a topic is created by the first produce request, as before.
   */
  private async fetchLayout(topic: string): Promise<TopicLayout | undefined> {
    const admin = await this.connectedAdmin();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topicLayout(topic, topics.find((t) => t.name === topic)?.partitions ?? []);
    } catch (err) {
      if ((err as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return undefined;
      throw err;
    }
  }

  private connectedAdmin(): Promise<Admin> {
    this.adminReady ??= this.admin.connect().then(
      () => this.admin,
      (err) => {
        this.adminReady = undefined;
        throw err;
      },
    );
    return this.adminReady;
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('kafka bus is closed');
  }
}

function clientConfig(options: KafkaBusOptions): KafkaConfig {
  const { log } = options;
  return {
    brokers: options.brokers,
    clientId: options.clientId,
    ...(options.ssl !== undefined && { ssl: options.ssl }),
    ...(options.sasl !== undefined && { sasl: options.sasl }),
    ...(options.socketFactory !== undefined && { socketFactory: options.socketFactory }),
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: requestRetry,
    logLevel: log ? kafkaLogLevels[options.logLevel ?? 'error'] : logLevel.NOTHING,
    ...(log && { logCreator: () => (entry: LogEntry) => log(toLogEntry(entry)) }),
  };
}

function toLogEntry({ namespace, level, log }: LogEntry): KafkaLogEntry {
  const { message, timestamp: _timestamp, ...extra } = log;
  return { level: levelName(level), namespace, message, extra };
}

function levelName(level: logLevel): KafkaLogLevel {
  if (level <= logLevel.ERROR) return 'error';
  if (level === logLevel.WARN) return 'warn';
  return level === logLevel.INFO ? 'info' : 'debug';
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BusUnavailableError(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The broker answered and refused for good (too large, unknown topic, not allowed): no outage. */
function refusedByKafka(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const k = e as Error & { retriable?: boolean };
    if (k.name === 'KafkaJSProtocolError' && k.retriable === false) return true;
  }
  return false;
}

/** About 15 s of asking in all: a broker's start in a cluster, not an outage. */
const maxTopicAttempts = 12;
