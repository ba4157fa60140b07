/**
 * A broadcast subscriber on a Kinesis stream: one ShardReader per shard, each starting after what
 * the shard held when subscribe was called (a LATEST iterator taken before subscribe resolves), or,
 * with `from`, after that record on its shard.
 *
 * A position names one shard, so on a multi-shard stream `from` replays only the position's shard;
 * the other shards go on live from subscribe time. Streams read by replaying clients (gw.events)
 * keep one shard for that reason.
 *
 * When the stream vanishes (an emulator restart, a deletion) the subscription waits for a stream of
 * that name to be back. If it is a new stream, its sequence numbers have nothing to do with the old
 * ones, so every shard is read from TRIM_HORIZON and onError is told; if it is the same stream, each
 * shard goes on after its last handled record.
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { BusError, type Message, type MessageHandler, type Subscription } from './bus.ts';
import type { RecordPosition } from './kinesis-record.ts';
import { pause, ShardReader, type StartPoint } from './kinesis-shard-reader.ts';
import { asError, type KinesisStreams, type StreamInfo } from './kinesis-streams.ts';

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
    if (from && !stream.shardIds.includes(from.shardId))
      throw new BusError(`kinesis stream ${stream.name} has no shard ${from.shardId} to replay from`);
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
