/**
 * Redis Streams adapter. A topic is a stream key; publish is XADD with an approximate MAXLEN (the
 * retention), and a message's position is its stream id with the stream's epoch
 * (`1718000000000-0.1a2b3c4d`, URL-safe; redis-stream-epoch.ts), read in the same MULTI as the XADD.
 * A broadcast subscriber reads with XREAD from the last id it handled (redis-broadcast-reader.ts),
 * starting where redis-broadcast-start.ts says (live, after `from`, or the `last` entries);
 * a group is a Redis consumer group created at the stream's end, whose members read with
 * XREADGROUP and take over what dead members left pending (redis-group-reader.ts). Every
 * subscription has a blocking connection of its own; publish and acknowledgements share one.
 *
 * While Redis is down, publish rejects at once (no offline queue) and subscriptions wait, then go on
 * where they were once it is back: streams and groups survive a restart when Redis persists them
 * (AOF or snapshots).
 *
 * Every stream key is `keyPrefix` + topic (STORE_KEY_PREFIX in the services), so that Gatehouse
 * shares a Redis safely: messages still name the topic without it.
 *
 * On a Redis Cluster (`cluster: true`) a stream lives on the node of its key's slot; every command
 * names one stream, so no key needs a hash tag, and each reader's Cluster connection follows its
 * stream to whichever master holds it.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  type Bus,
  BusError,
  BusUnavailableError,
  type MessageHandler,
  type OutgoingMessage,
  type Position,
  type PublishOptions,
  type SubscribeOptions,
  type Subscription,
  TopicMissingError,
} from './bus.ts';
import { BroadcastReader } from './redis-broadcast-reader.ts';
import { broadcastStart, compareStreamIds, parsePosition } from './redis-broadcast-start.ts';
import {
  closeConnection,
  duplicateConnection,
  isRedisOutage,
  openRedisConnection,
  type RedisClient,
  type RedisConnectionOptions,
  whenReady,
  withTimeout,
} from '@gatehouse/store/redis';
import { createGroup, GroupReader } from './redis-group-reader.ts';
import { toStreamFields } from './redis-stream-entry.ts';
import { defineStreamEpoch, queueStreamEpoch, readEpoch, streamEpoch } from './redis-stream-epoch.ts';
import { withEpoch } from './position-epoch.ts';
import type { ReaderSetup, StreamReader } from './redis-stream-reader.ts';

export interface RedisBusOptions extends RedisConnectionOptions {
  /** Prepended to every stream key (STORE_KEY_PREFIX); default none. */
  keyPrefix?: string;
  /** Entries kept per stream, approximately (XADD MAXLEN ~); default 100,000. */
  retention?: number;
  /** Prefix of consumer names in groups; default `<hostname>-<pid>-<random>`. */
  consumerName?: string;
  /**
   * How long an entry may stay unacknowledged with a group member before another member takes it
   * over (default 30 s). Keep it above the slowest handler, or slow entries are handled twice.
   */
  claimIdleMs?: number;
  /** Longest wait of one blocking read (default 5 s); close() never waits for it. */
  blockMs?: number;
  /**
   * Entries a group member takes per read (default 10). Small, so that a burst spreads over the
   * members instead of landing whole on the first one to ask.
   */
  groupBatchSize?: number;
  /** How long ping() waits for PONG (default 1000 ms). */
  pingTimeoutMs?: number;
  /** How long connect() and subscribe() wait for a connection (default 10 s). */
  connectTimeoutMs?: number;
  /** Hears connection errors nobody awaits (reconnect attempts while Redis is down). */
  onError?: (err: Error) => void;
}

export class RedisBus implements Bus {
  readonly kind = 'redis';
  readonly capabilities = { replay: true, tail: true, headers: true };
  private readonly options: RedisBusOptions;
  private readonly client: RedisClient;
  private readonly consumerPrefix: string;
  private readonly readers = new Set<StreamReader>();
  private members = 0;
  private closed = false;

  /** Connects in the background; commands fail until the connection is up (see connect()). */
  constructor(options: RedisBusOptions = {}) {
    this.options = options;
    this.client = openRedisConnection(options, 'gatehouse-bus');
    this.client.on('error', (err: Error) => this.options.onError?.(err));
    defineStreamEpoch(this.client);
    this.consumerPrefix =
      options.consumerName ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  }

  /** Resolves once connected, so the first publish does not fail. */
  static async connect(options: RedisBusOptions = {}): Promise<RedisBus> {
    const bus = new RedisBus(options);
    try {
      await whenReady(bus.client, options.connectTimeoutMs ?? 10_000);
    } catch (err) {
      await bus.close();
      throw new BusUnavailableError(`cannot connect to redis: ${(err as Error).message}`, { cause: err });
    }
    return bus;
  }

  async publish(topic: string, message: OutgoingMessage, options: PublishOptions = {}): Promise<Position> {
    this.assertOpen();
    const retention = String(options.maxLength ?? this.options.retention ?? 100_000);
    const create = options.onlyIfTopicExists ? ['NOMKSTREAM'] : [];
    const key = this.key(topic);
    let id: string | null;
    let epoch: string | undefined;
    try {
      const fields = toStreamFields(message);
      // One MULTI: the epoch is the one of the stream the entry went into, even when it was made just now.
      const multi = this.client.multi().xadd(key, ...create, 'MAXLEN', '~', retention, '*', ...fields);
      const answers = await queueStreamEpoch(multi, key, 'keep').exec();
      if (!answers) throw new BusError('the MULTI was aborted');
      for (const [err] of answers) if (err) throw err;
      id = answers[0]![1] as string | null;
      epoch = readEpoch(answers[1]![1]);
    } catch (err) {
      const Failure = isRedisOutage(err) ? BusUnavailableError : BusError;
      throw new Failure(`redis publish to ${topic} failed: ${(err as Error).message}`, { cause: err });
    }
    // Only NOMKSTREAM answers nil: the stream was not there, and still is not.
    if (id === null) throw new TopicMissingError(topic);
    return withEpoch(id, epoch);
  }

  /** Makes an empty stream (with its epoch) without touching an existing one's entries. */
  async createTopic(topic: string): Promise<void> {
    this.assertOpen();
    try {
      await streamEpoch(this.client, this.key(topic), 'make');
    } catch (err) {
      const Failure = isRedisOutage(err) ? BusUnavailableError : BusError;
      throw new Failure(`redis create of ${topic} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async deleteTopic(topic: string): Promise<void> {
    this.assertOpen();
    try {
      await this.client.unlink(this.key(topic));
    } catch (err) {
      const Failure = isRedisOutage(err) ? BusUnavailableError : BusError;
      throw new Failure(`redis delete of ${topic} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async subscribe(
    topic: string,
    handler: MessageHandler,
    options: SubscribeOptions = {},
  ): Promise<Subscription> {
    this.assertOpen();
    if (options.group !== undefined && (options.from !== undefined || options.last !== undefined))
      throw new BusError('a group subscription cannot start from a position');
    try {
      if (options.group !== undefined) {
        await createGroup(this.client, this.key(topic), options.group, '$');
        const epoch = await streamEpoch(this.client, this.key(topic), 'keep');
        const setup = await this.readerSetup(topic, handler, options, epoch);
        return this.track(
          new GroupReader(setup, {
            group: options.group,
            consumer: `${this.consumerPrefix}-${++this.members}`,
            claimIdleMs: this.options.claimIdleMs ?? 30_000,
          }),
        );
      }
      const start = await broadcastStart(this.client, this.key(topic), options);
      const setup = await this.readerSetup(topic, handler, options, start.epoch);
      return this.track(new BroadcastReader(setup, start.startAfter), start.liveAfter, start.origin);
    } catch (err) {
      if (err instanceof BusError) throw err;
      throw new BusError(`redis subscribe to ${topic} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  comparePositions(a: Position, b: Position): number {
    return compareStreamIds(a, b);
  }

  positionEpoch(position: Position): string | undefined {
    return parsePosition(position).epoch;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const timeoutMs = this.options.pingTimeoutMs ?? 1000;
    try {
      await withTimeout(this.client.ping(), timeoutMs, 'PING');
    } catch (err) {
      throw new BusUnavailableError(`redis ping failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.readers].map((r) => r.close()));
    await closeConnection(this.client);
  }

  private async readerSetup(
    topic: string,
    handler: MessageHandler,
    options: SubscribeOptions,
    epoch: string | undefined,
  ): Promise<ReaderSetup> {
    // No command timeout: a blocking read legitimately waits for blockMs.
    const connection = duplicateConnection(this.client, {
      connectionName: 'gatehouse-bus-reader',
      commandTimeout: undefined,
    });
    connection.on('error', (err: Error) => this.options.onError?.(err));
    defineStreamEpoch(connection);
    try {
      await whenReady(connection, this.options.connectTimeoutMs ?? 10_000);
    } catch (err) {
      connection.disconnect();
      throw err;
    }
    return {
      topic,
      key: this.key(topic),
      commands: this.client,
      connection,
      handler,
      onError: options.onError,
      blockMs: this.options.blockMs ?? 5000,
      batchSize: options.group === undefined ? 100 : (this.options.groupBatchSize ?? 10),
      epoch,
    };
  }

  private track(reader: StreamReader, liveAfter?: Position, origin?: Position): Subscription {
    if (this.closed) {
      void reader.close();
      throw new BusError('redis bus is closed');
    }
    this.readers.add(reader);
    reader.start();
    return {
      liveAfter,
      origin,
      close: async () => {
        this.readers.delete(reader);
        await reader.close();
      },
    };
  }

  private key(topic: string): string {
    return (this.options.keyPrefix ?? '') + topic;
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('redis bus is closed');
  }
}
