/**
 * One publish/subscribe interface over every broker Gatehouse uses (memory, Kafka, Redis streams,
 * NATS JetStream, Kinesis). Adapters pass the shared contract suite in test/bus-contract.ts against
 * the real servers.
 *
 * Semantics every adapter keeps:
 * - `publish` resolves with the message's stream position once the broker has accepted it, and
 *   rejects when it cannot be delivered (broker down, stream missing …): never a silent drop.
 * - A broadcast subscriber (no `group`) sees every message published after `subscribe` resolved.
 * - Members of the same `group` split the messages between them: each message reaches one member.
 *   A message counts as handled (offset committed, acknowledged, checkpointed) once the handler has
 *   returned or thrown, except when it throws NotHandledError: then the group delivers it again,
 *   to this member or another (at least once; see NotHandledError).
 * - Messages with the same key reach a subscriber in publish order.
 * - `from` (broadcast only, adapters with `capabilities.replay`) first delivers every message after
 *   that position, then goes on live, with no gap and no duplicate between the two. When the broker
 *   no longer holds every message after that position (retention, a trim) or does not know it
 *   (beyond the stream's end, a partition or shard it lacks, malformed), `subscribe` rejects with
 *   PositionUnavailableError instead of silently starting later.
 * - `last` (broadcast only, `capabilities.tail`) first delivers the newest `last` messages the
 *   broker holds, then goes on live.
 * - A broadcast subscription tells where its live part starts (`Subscription.liveAfter`), so a
 *   caller can tell the backlog it asked for (`from`, `last`) from what arrived afterwards, and where
 *   the topic starts (`Subscription.origin`), a position before any message (Kafka: the offset
 *   before the log start, `0--1` on a new topic; NATS: sequence 0; Redis: `0-0`; memory: `0`; each
 *   with the topic's epoch where positions carry one).
 * - `comparePositions` orders the positions of one partition (shard) of a topic.
 * - Subscribers survive a restart of the broker: they reconnect and go on where they were.
 */

/** Opaque, URL-safe text naming a message's place in its stream (offset, stream id, sequence …). */
export type Position = string;

export interface OutgoingMessage {
  /** Messages with the same key keep their order (and land on the same partition / shard). */
  key?: string;
  value: Buffer | string;
  headers?: Record<string, string>;
}

export interface Message {
  topic: string;
  key: string | undefined;
  value: Buffer;
  headers: Record<string, string>;
  position: Position;
}

export type MessageHandler = (message: Message) => void | Promise<void>;

export interface PublishOptions {
  /**
   * Keep about this many messages in the topic (Redis: XADD MAXLEN ~ instead of the bus's
   * retention; memory: exactly). Kafka, NATS and Kinesis keep their configured retention.
   */
  maxLength?: number;
  /**
   * Reject with TopicMissingError instead of creating the topic (Redis: XADD NOMKSTREAM; memory).
   * Kafka, NATS and Kinesis cannot tell a topic created on first publish and ignore it.
   */
  onlyIfTopicExists?: boolean;
  /**
   * What the message is about (a CloudEvent type), for adapters that can route by it
   * (`capabilities.routes`): subscribers limited to other routes never receive it. Same topic,
   * same positions; adapters without routes ignore it.
   */
  route?: string;
}

export interface SubscribeOptions {
  /** Join this consumer group; without it the subscriber is a broadcast subscriber. */
  group?: string;
  /**
   * Replay from just after this position, then go on live (broadcast subscribers only). Rejects
   * with PositionUnavailableError when the broker cannot replay everything after it.
   */
  from?: Position;
  /** Start with the newest `last` messages already stored, then go on live (broadcast only). */
  last?: number;
  /**
   * Broadcast only, adapters with `capabilities.routes`: receive only the messages published with
   * one of these routes (none: only those published without a route). Change it with
   * `Subscription.route`.
   */
  routes?: ReadonlySet<string>;
  /**
   * Called when the handler throws or the subscription hits a broker error it will retry.
   * The message is then considered handled; handlers that need retries must do them themselves.
   * A NotHandledError from a group member's handler is not reported here: the message comes again.
   */
  onError?: (err: Error, message?: Message) => void;
}

export interface Subscription {
  /**
   * Broadcast subscriptions: the position of the newest message stored when the subscription went
   * live. Every message after it is delivered; messages up to it only with `from` or `last`.
   * Undefined when the stream was empty, or where the adapter cannot tell (Kinesis, a topic of
   * several partitions).
   */
  readonly liveAfter?: Position;
  /**
   * Broadcast subscriptions: the topic's origin when the subscription went live, the position
   * before the first message it held then (before its first message ever, while nothing was
   * trimmed): `from` it replays everything the topic holds. A subscriber that went live on an empty
   * topic can give it to a client as its place, which any subscriber can resume from later, where
   * `liveAfter` is undefined. Undefined where the adapter cannot tell (Kinesis, a topic of several
   * partitions, a Redis stream trimmed since).
   */
  readonly origin?: Position;
  /**
   * A subscription made with `routes`: limits it to these routes from now on (undefined: every
   * message). No message is delivered until the broker reads with the new routes; answers the
   * position after which every message of these routes comes, with no gap (the last one delivered).
   */
  route?(routes: ReadonlySet<string> | undefined): Position;
  /**
   * A subscription made with `routes`: the position through which every message of its routes was
   * delivered (it may lie past the last one delivered: the broker read on without a match).
   */
  readThrough?(): Position;
  close(): Promise<void>;
}

export interface BusCapabilities {
  /** `subscribe({ from })` is supported. */
  replay: boolean;
  /** `subscribe({ last })` is supported. */
  tail: boolean;
  /** Message headers travel with the message. */
  headers: boolean;
  /**
   * How many routes one broadcast subscription can be limited to (`SubscribeOptions.routes`);
   * absent where the broker cannot filter by route (every subscriber reads everything).
   */
  routes?: number;
}

export interface Bus {
  /** Adapter name for logs and metrics: memory, kafka, redis, nats, kinesis. */
  readonly kind: string;
  readonly capabilities: BusCapabilities;
  publish(topic: string, message: OutgoingMessage, options?: PublishOptions): Promise<Position>;
  /** Resolves once the subscription is live. */
  subscribe(topic: string, handler: MessageHandler, options?: SubscribeOptions): Promise<Subscription>;
  /**
   * Orders two positions of the same partition (shard) of a topic: negative when `a` comes first,
   * 0 when equal, positive when `a` comes later. Throws PositionUnavailableError for a malformed
   * position. Positions of different partitions are ordered by partition, which means nothing more.
   */
  comparePositions(a: Position, b: Position): number;
  /**
   * The epoch a position carries (adapters whose positions carry one; Kafka: the topic's id; Redis,
   * NATS, Kinesis and memory: position-epoch.ts): two
   * positions of different epochs belong to different incarnations of the topic (deleted and
   * created anew), and `from` refuses a position of another epoch than the topic's now (reason
   * `epoch`). Undefined for a position without one (made before epochs, or where the broker has
   * none). Throws PositionUnavailableError for a malformed position.
   */
  positionEpoch?(position: Position): string | undefined;
  /**
   * Creates the topic, empty, unless it exists (then it is left as it is). Adapters whose topics
   * are created on first publish (Redis, memory) have it; for the others a topic is made apart.
   */
  createTopic?(topic: string): Promise<void>;
  /** Removes the topic and every message it holds; nothing happens when it does not exist. */
  deleteTopic?(topic: string): Promise<void>;
  /** Resolves when the broker answers; used for readiness. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class BusError extends Error {
  override readonly name: string = 'BusError';
}

/**
 * Thrown by a group member's handler that could not handle a message and must not let it count as
 * handled, typically because the member is shutting down while the message's work is unfinished.
 * The message is not committed, acknowledged or checkpointed, and nothing after it in its partition
 * (shard) is either: the group delivers it again, to this member after a pause or to another one
 * (Kafka: the member's consumer restarts from the committed offset; NATS: a nak; Kinesis: the shard
 * is read again from its checkpoint; Redis: the entry stays pending and is made claimable at once;
 * memory: the group hands it on). A member that goes on reading gets it again, so a handler that
 * throws this for a message it will never handle stalls its partition. Broadcast subscribers treat
 * it as any other error.
 */
export class NotHandledError extends BusError {
  override readonly name: string = 'NotHandledError';
}

/** Whether `err` asks for the message to be delivered again (see NotHandledError). */
export function isNotHandled(err: unknown): boolean {
  return err instanceof NotHandledError;
}

/**
 * The broker could not be reached or could not take the message now (down, reconnecting, timed
 * out). The services answer 503 with Retry-After for it (service-kit's dependency-unavailable.ts);
 * other BusErrors are misuse or a refusal by a broker that did answer.
 */
export class BusUnavailableError extends BusError {
  override readonly name: string = 'BusUnavailableError';
  readonly unavailable = true as const;
  readonly dependency = 'bus';
}

/** A publish with `onlyIfTopicExists` found no such topic: nothing was stored, nothing created. */
export class TopicMissingError extends BusError {
  override readonly name: string = 'TopicMissingError';
  readonly topic: string;

  constructor(topic: string) {
    super(`topic ${topic} does not exist`);
    this.topic = topic;
  }
}

/**
 * Why a position cannot be replayed from: `expired` when the broker no longer holds every message
 * after it (retention, a trim); `unknown` when it is malformed or names a place the stream does not
 * have (beyond its end, another partition or shard, a stream created anew since); `epoch` when it
 * carries the epoch of another incarnation of the topic (deleted and created anew since).
 */
export type UnavailableReason = 'expired' | 'unknown' | 'epoch';

export class PositionUnavailableError extends BusError {
  override readonly name: string = 'PositionUnavailableError';
  readonly position: Position;
  readonly reason: UnavailableReason;

  constructor(position: Position, reason: UnavailableReason, detail: string) {
    super(`position '${position}' cannot be replayed (${reason}): ${detail}`);
    this.position = position;
    this.reason = reason;
  }
}

/** Compares two non-negative decimal integers of any length given as text. */
export function compareDecimal(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

export function toBuffer(value: Buffer | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}
