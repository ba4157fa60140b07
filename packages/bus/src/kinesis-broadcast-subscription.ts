/**
 * A broadcast subscriber on a Kinesis stream: one ShardReader per shard, each starting after what
 * the shard held when subscribe was called (a LATEST iterator taken before subscribe resolves), or,
 * with `from`, after that record on its shard.
 *
 * A position names one shard, so on a multi-shard stream `from` replays only the position's shard;
 * the other shards go on live from subscribe time. Streams read by replaying clients (gw.events)
 * keep one shard for that reason. A `from` of another epoch than the stream's (created anew since)
 * is refused before it gets here (kinesis-bus.ts); one older than the oldest record the shard still
 * holds (retention, or a position without an epoch of a stream created anew since) or naming a
 * shard the stream lacks is refused with
 * PositionUnavailableError. Sequence numbers have gaps, so this is conservative by one record (a
 * `from` naming exactly the last record trimmed away lost nothing). A `from` naming no record of
 * the shard is refused as unknown where Kinesis refuses the iterator for it.
 *
 * When the stream vanishes (an emulator restart, a deletion) the subscription waits for a stream of
 * that name to be back. If it is a new stream, its sequence numbers have nothing to do with the old
 * ones, so every shard is read from TRIM_HORIZON and onError is told; if it is the same stream, each
 * shard goes on after its last handled record.
 */
import { GetRecordsCommand, GetShardIteratorCommand, type KinesisClient } from '@aws-sdk/client-kinesis';
import {
  BusError,
  compareDecimal,
  type Message,
  type MessageHandler,
  PositionUnavailableError,
  type Subscription,
} from './bus.ts';
import { encodePosition, type RecordPosition } from './kinesis-record.ts';
import { pause, ShardReader, type StartPoint } from './kinesis-shard-reader.ts';
import { asError, errorName, type KinesisStreams, type StreamInfo } from './kinesis-streams.ts';

export interface BroadcastSubscriptionOptions {
  client: KinesisClient;
  streams: KinesisStreams;
  pollIntervalMs: number;
  handler: MessageHandler;
  onError: (err: Error, message?: Message) => void;
}

export class KinesisBroadcastSubscription implements Subscription {
  private readonly options: BroadcastSubscriptionOptions;
  private readonly abort = new AbortController();
  private stream: StreamInfo;
  private readers: ShardReader[] = [];
  private recovering: Promise<void> | undefined;

  private constructor(options: BroadcastSubscriptionOptions, stream: StreamInfo) {
    this.options = options;
    this.stream = stream;
  }

  static async open(
    options: BroadcastSubscriptionOptions,
    stream: StreamInfo,
    from?: RecordPosition,
  ): Promise<KinesisBroadcastSubscription> {
    if (from) await assertRetained(options.client, stream, from);
    const subscription = new KinesisBroadcastSubscription(options, stream);
    const starts = new Map<string, StartPoint>(
      stream.shardIds.map((id) => [
        id,
        from?.shardId === id
          ? { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: from.sequenceNumber }
          : { type: 'LATEST' },
      ]),
    );
    try {
      await subscription.startReaders(starts);
    } catch (err) {
      await subscription.close();
      if (from && isRefusedSequenceNumber(err))
        throw new PositionUnavailableError(encodePosition(from), 'unknown', asError(err).message);
      throw new BusError(`kinesis subscribe to ${stream.name} failed: ${asError(err).message}`, {
        cause: err,
      });
    }
    return subscription;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.recovering;
    await Promise.all(this.readers.map((r) => r.stop()));
    this.readers = [];
  }

  private async startReaders(starts: Map<string, StartPoint>): Promise<void> {
    this.readers = [...starts].map(
      ([shardId, start]) =>
        new ShardReader({
          ...this.options,
          stream: this.stream,
          shardId,
          start,
          onLost: (err) => this.onLost(err),
        }),
    );
    await Promise.all(this.readers.map((r) => r.start()));
  }

  private onLost(err: Error): void {
    if (this.abort.signal.aborted || this.recovering) return;
    this.options.onError(err);
    this.recovering = this.recover().finally(() => {
      this.recovering = undefined;
    });
  }

  private async recover(): Promise<void> {
    let previous = this.readers;
    await Promise.all(previous.map((r) => r.stop()));
    const { signal } = this.abort;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        const stream = await this.options.streams.active(this.stream.name, signal);
        if (stream) {
          await this.startReaders(this.resumePoints(previous, stream));
          return;
        }
      } catch (err) {
        if (signal.aborted) return;
        // Readers that did not start still know where they were meant to start.
        await Promise.all(this.readers.map((r) => r.stop()));
        previous = this.readers;
        this.options.onError(asError(err));
      }
      await pause(Math.min(this.options.pollIntervalMs * attempt, 2_000), signal);
    }
  }

  private resumePoints(previous: ShardReader[], stream: StreamInfo): Map<string, StartPoint> {
    if (stream.createdAt === this.stream.createdAt)
      return new Map(previous.map((r) => [r.shardId, r.resumePoint()]));
    this.options.onError(
      new BusError(`kinesis stream ${stream.name} was re-created; reading the new stream from TRIM_HORIZON`),
    );
    this.stream = stream;
    return new Map(stream.shardIds.map((id) => [id, { type: 'TRIM_HORIZON' }]));
  }
}

/** Kinesis refused an iterator after a sequence number the shard does not hold. */
function isRefusedSequenceNumber(err: unknown): boolean {
  const name = errorName(err);
  return (
    name === 'InvalidArgumentException' ||
    (name === 'ResourceNotFoundException' && /sequence ?number/i.test(asError(err).message))
  );
}

/** Refuses a `from` whose shard is missing or whose successors may be gone (see the header). */
async function assertRetained(
  client: KinesisClient,
  stream: StreamInfo,
  from: RecordPosition,
): Promise<void> {
  const position = encodePosition(from);
  if (!stream.shardIds.includes(from.shardId))
    throw new PositionUnavailableError(
      position,
      'unknown',
      `stream ${stream.name} has no shard ${from.shardId}`,
    );
  let oldest: string | undefined;
  try {
    oldest = await oldestSequenceNumber(client, stream.name, from.shardId);
  } catch (err) {
    throw new BusError(`kinesis stream ${stream.name}: ${asError(err).message}`, { cause: err });
  }
  if (oldest === undefined)
    throw new PositionUnavailableError(position, 'expired', `shard ${from.shardId} holds no records`);
  if (compareDecimal(from.sequenceNumber, oldest) < 0)
    throw new PositionUnavailableError(
      position,
      'expired',
      `the oldest record of ${from.shardId} is ${oldest}`,
    );
}

/** The first record at TRIM_HORIZON; a few reads, as Kinesis may answer empty while it skips ahead. */
async function oldestSequenceNumber(
  client: KinesisClient,
  streamName: string,
  shardId: string,
): Promise<string | undefined> {
  const out = await client.send(
    new GetShardIteratorCommand({
      StreamName: streamName,
      ShardId: shardId,
      ShardIteratorType: 'TRIM_HORIZON',
    }),
  );
  let iterator = out.ShardIterator;
  for (let attempt = 0; iterator && attempt < 5; attempt++) {
    const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1 }));
    const first = page.Records?.[0]?.SequenceNumber;
    if (first !== undefined) return first;
    if (page.MillisBehindLatest === 0) return undefined;
    iterator = page.NextShardIterator;
  }
  return undefined;
}
