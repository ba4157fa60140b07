/**
 * Bus adapter for Amazon Kinesis Data Streams (and the kinesis-local emulator in tests). A topic
 * is a stream; a message is a record whose partition key is the message key (random when there is
 * none); a position is `<shardId>~<sequenceNumber>.<epoch>`, the epoch a digest of the stream's
 * creation time (kinesis-record.ts): a stream deleted and created again starts its shard ids and
 * sequence numbers over, so a `from` of another epoch is refused (reason `epoch`) instead of being
 * read against the new stream. A position without an epoch (made before epochs) is read as before.
 *
 * - Records carry no headers (`capabilities.headers` is false): a publish with headers rejects
 *   rather than dropping them.
 * - Subscribers poll every shard with GetRecords (one call per shard per poll interval; real Kinesis
 *   allows five per second per shard, shared by every reader of the stream). Records of one shard
 *   reach a handler one at a time and in order; different shards are handled concurrently.
 * - Broadcast subscribers and `from` replay: see kinesis-broadcast-subscription.ts. Groups keep
 *   their shard leases and checkpoints in the `leaseStore`: see kinesis-group-subscription.ts.
 * - Resharding is not followed: readers take the open shards at subscribe time and stop reading a
 *   shard once it is closed.
 * - With `createStreams`, a missing stream is created on first use (publish or subscribe), also when
 *   it vanished later (an emulator restart); subscribers then carry on with the new stream.
 */
import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  KinesisClient,
  type KinesisClientConfig,
  ListStreamsCommand,
  PutRecordCommand,
} from '@aws-sdk/client-kinesis';
import type { Store } from '@gatehouse/store';
import { NodeHttpHandler } from '@smithy/node-http-handler';
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
import { KinesisBroadcastSubscription } from './kinesis-broadcast-subscription.ts';
import { KinesisGroupSubscription } from './kinesis-group-subscription.ts';
import { compareRecordPositions, decodePosition, encodePosition, partitionKeyFor } from './kinesis-record.ts';
import { asError, isNotFound, KinesisStreams, type StreamInfo } from './kinesis-streams.ts';
import { assertSameEpoch } from './position-epoch.ts';

export interface KinesisBusOptions {
  /** AWS region; the SDK's own resolution (AWS_REGION, profile) when absent, us-east-1 with an endpoint. */
  region?: string;
  /** Kinesis endpoint, e.g. the emulator's http://127.0.0.1:4567; absent for AWS itself. */
  endpoint?: string;
  /** Absent: the SDK's default provider chain, or dummy credentials when an endpoint is set. */
  credentials?: KinesisClientConfig['credentials'];
  /**
   * Reuse connections between requests. Default: on for AWS, off with an `endpoint`, because the
   * kinesis-local emulator delays its shutdown by 30 s while a kept-alive connection is open.
   */
  keepAlive?: boolean;
  /** Create missing streams (and wait until ACTIVE) instead of failing: for tests and development. */
  createStreams?: boolean;
  /** Shards of a stream created by the bus. */
  shardCount?: number;
  /** Pause between GetRecords calls on a shard that had nothing new. */
  pollIntervalMs?: number;
  /** Where consumer groups keep shard leases and checkpoints; group subscriptions need it. */
  leaseStore?: Store;
  /** A member that stops renewing loses its shards after this long. */
  leaseTtlSeconds?: number;
  /** How long a group's checkpoints outlive its last activity. */
  checkpointTtlSeconds?: number;
}

const DUMMY_CREDENTIALS = { accessKeyId: 'gatehouse', secretAccessKey: 'gatehouse' };
/**
 * Attempts per request, with the SDK's jittered exponential backoff (100 ms doubling): rides out a
 * blip, and bounds how long a publish to an unreachable Kinesis takes to reject to about a second.
 */
const MAX_ATTEMPTS = 5;
const PING_TIMEOUT_MS = 2_000;

export class KinesisBus implements Bus {
  readonly kind = 'kinesis';
  readonly capabilities = { replay: true, tail: false, headers: false };
  private readonly client: KinesisClient;
  private readonly streams: KinesisStreams;
  private readonly createStreams: boolean;
  private readonly shardCount: number;
  private readonly pollIntervalMs: number;
  private readonly leaseStore: Store | undefined;
  private readonly leaseTtlSeconds: number;
  private readonly checkpointTtlSeconds: number;
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  constructor(options: KinesisBusOptions = {}) {
    const { endpoint } = options;
    this.client = new KinesisClient({
      region: options.region ?? (endpoint ? (process.env.AWS_REGION ?? 'us-east-1') : undefined),
      endpoint,
      credentials: options.credentials ?? (endpoint ? DUMMY_CREDENTIALS : undefined),
      maxAttempts: MAX_ATTEMPTS,
      requestHandler: requestHandler(endpoint, options.keepAlive ?? !endpoint),
    });
    this.streams = new KinesisStreams(this.client);
    this.createStreams = options.createStreams ?? true;
    this.shardCount = options.shardCount ?? 1;
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.leaseStore = options.leaseStore;
    this.leaseTtlSeconds = options.leaseTtlSeconds ?? 10;
    this.checkpointTtlSeconds = options.checkpointTtlSeconds ?? 7 * 24 * 3600;
  }

  async publish(topic: string, message: OutgoingMessage): Promise<Position> {
    this.assertOpen();
    if (message.headers && Object.keys(message.headers).length > 0)
      throw new BusError(`kinesis records have no headers; refusing to publish to ${topic} and drop them`);
    try {
      return await this.putRecord(topic, message);
    } catch (err) {
      if (isNotFound(err)) this.streams.forget(topic);
      if (!isNotFound(err) || !this.createStreams) throw publishError(topic, err);
    }
    try {
      await this.streams.ensure(topic, this.shardCount);
      return await this.putRecord(topic, message);
    } catch (err) {
      throw publishError(topic, err);
    }
  }

  async subscribe(
    topic: string,
    handler: MessageHandler,
    options: SubscribeOptions = {},
  ): Promise<Subscription> {
    this.assertOpen();
    const { group } = options;
    if (group !== undefined && options.from !== undefined)
      throw new BusError('kinesis bus: `from` is for broadcast subscribers, not groups');
    if (options.last !== undefined)
      throw new BusError('kinesis bus: `last` is not supported (a shard cannot be read backwards)');
    if (group !== undefined && !this.leaseStore)
      throw new BusError(
        'kinesis bus: group subscriptions need the leaseStore option (Kinesis has no groups)',
      );
    const from = options.from === undefined ? undefined : decodePosition(options.from);
    const stream = await this.stream(topic);
    if (from) assertSameEpoch(options.from!, from, stream.epoch, `kinesis stream ${topic}`);
    const common = {
      client: this.client,
      streams: this.streams,
      pollIntervalMs: this.pollIntervalMs,
      handler,
      onError: options.onError ?? (() => {}),
    };
    const subscription =
      group === undefined
        ? await KinesisBroadcastSubscription.open(common, stream, from)
        : await KinesisGroupSubscription.open(
            {
              ...common,
              store: this.leaseStore!,
              group,
              leaseTtlSeconds: this.leaseTtlSeconds,
              checkpointTtlSeconds: this.checkpointTtlSeconds,
            },
            stream,
          );
    this.subscriptions.add(subscription);
    return {
      close: async () => {
        this.subscriptions.delete(subscription);
        await subscription.close();
      },
    };
  }

  comparePositions(a: Position, b: Position): number {
    return compareRecordPositions(a, b);
  }

  positionEpoch(position: Position): string | undefined {
    return decodePosition(position).epoch;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    try {
      await this.client.send(new ListStreamsCommand({ Limit: 1 }), {
        abortSignal: AbortSignal.timeout(PING_TIMEOUT_MS),
      });
    } catch (err) {
      throw new BusUnavailableError(`kinesis ping failed: ${asError(err).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const open = [...this.subscriptions];
    this.subscriptions.clear();
    await Promise.all(open.map((s) => s.close()));
    this.client.destroy();
  }

  /** Creates the stream with `shardCount` shards unless it exists (setup and tests). */
  async ensureStream(topic: string, shardCount = this.shardCount): Promise<void> {
    this.assertOpen();
    await this.streams.ensure(topic, shardCount);
  }

  /** Deletes the stream and waits until it is gone: the next use creates it anew, in another epoch. */
  async deleteTopic(topic: string): Promise<void> {
    this.assertOpen();
    await this.streams.delete(topic);
  }

  private async putRecord(topic: string, message: OutgoingMessage): Promise<Position> {
    const epoch = await this.streams.epoch(topic);
    const out = await this.client.send(
      new PutRecordCommand({
        StreamName: topic,
        PartitionKey: partitionKeyFor(message.key),
        Data: toBuffer(message.value),
      }),
    );
    return encodePosition({ shardId: out.ShardId!, sequenceNumber: out.SequenceNumber!, epoch });
  }

  private async stream(topic: string): Promise<StreamInfo> {
    try {
      if (this.createStreams) return await this.streams.ensure(topic, this.shardCount);
      const stream = await this.streams.active(topic);
      if (stream) return stream;
    } catch (err) {
      throw new BusError(`kinesis stream ${topic}: ${asError(err).message}`, { cause: err });
    }
    throw new BusError(`kinesis stream ${topic} does not exist (or is not ACTIVE) and createStreams is off`);
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('kinesis bus is closed');
  }
}

/**
 * The client's default handler speaks HTTP/2 (for SubscribeToShard, unused here); emulators speak
 * HTTP/1.1 only, so with an endpoint (or without keep-alive) requests go through NodeHttpHandler.
 */
function requestHandler(
  endpoint: string | undefined,
  keepAlive: boolean,
): KinesisClientConfig['requestHandler'] {
  const requestTimeout = 10_000;
  if (!endpoint && keepAlive) return { requestTimeout };
  return new NodeHttpHandler({
    connectionTimeout: 2_000,
    requestTimeout,
    httpAgent: new Agent({ keepAlive }),
    httpsAgent: new HttpsAgent({ keepAlive }),
  });
}

function publishError(topic: string, err: unknown): BusError {
  return new BusUnavailableError(`kinesis publish to ${topic} failed: ${asError(err).message}`, {
    cause: err,
  });
}
