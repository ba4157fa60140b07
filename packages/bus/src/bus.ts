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
 * - Messages with the same key reach a subscriber in publish order.
 * - `from` (broadcast only, adapters with `capabilities.replay`) first delivers every message after
 *   that position, then goes on live, with no gap and no duplicate between the two.
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

export interface SubscribeOptions {
  /** Join this consumer group; without it the subscriber is a broadcast subscriber. */
  group?: string;
  /** Replay from just after this position, then go on live (broadcast subscribers only). */
  from?: Position;
  /**
   * Called when the handler throws or the subscription hits a broker error it will retry.
   * The message is then considered handled; handlers that need retries must do them themselves.
   */
  onError?: (err: Error, message?: Message) => void;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface BusCapabilities {
  /** `subscribe({ from })` is supported. */
  replay: boolean;
  /** Message headers travel with the message. */
  headers: boolean;
}

export interface Bus {
  /** Adapter name for logs and metrics: memory, kafka, redis, nats, kinesis. */
  readonly kind: string;
  readonly capabilities: BusCapabilities;
  publish(topic: string, message: OutgoingMessage): Promise<Position>;
  /** Resolves once the subscription is live. */
  subscribe(topic: string, handler: MessageHandler, options?: SubscribeOptions): Promise<Subscription>;
  /** Resolves when the broker answers; used for readiness. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class BusError extends Error {
  override readonly name = 'BusError';
}

export function toBuffer(value: Buffer | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}
