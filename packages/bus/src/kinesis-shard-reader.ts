/**
 * Polls one shard of a Kinesis stream with GetRecords and hands its records to a handler one at a
 * time, in order. Errors never stop it: handler errors go to onError; broker errors are reported
 * and retried with backoff, keeping the iterator (valid for five minutes) so nothing is skipped.
 * Only when the stream is gone, or was replaced by a new stream of the same name, does the reader
 * stop and call onLost, so that its owner can find the new stream and decide where to go on.
 */
import { setTimeout as delay } from 'node:timers/promises';
import {
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type GetShardIteratorCommandInput,
  type KinesisClient,
  type _Record,
} from '@aws-sdk/client-kinesis';
import { BusError, isNotHandled, type Message, type MessageHandler } from './bus.ts';
import { messageFromRecord } from './kinesis-record.ts';
import {
  asError,
  errorName,
  isNotFound,
  isServiceError,
  type KinesisStreams,
  type StreamInfo,
} from './kinesis-streams.ts';

export type StartPoint =
  | { type: 'LATEST' }
  | { type: 'TRIM_HORIZON' }
  | { type: 'AFTER_SEQUENCE_NUMBER'; sequenceNumber: string }
  | { type: 'AT_TIMESTAMP'; timestamp: Date };

export interface ShardReaderOptions {
  client: KinesisClient;
  streams: KinesisStreams;
  stream: StreamInfo;
  shardId: string;
  start: StartPoint;
  pollIntervalMs: number;
  handler: MessageHandler;
  onError: (err: Error, message?: Message) => void;
  /**
   * Runs after each handled record, before the next one (group checkpoints). A group reader (one
   * with onHandled) reads a record again when its handler throws NotHandledError.
   */
  onHandled?: (sequenceNumber: string) => Promise<void>;
  /** The stream is gone or is another stream now; the reader has stopped. */
  onLost: (err: Error) => void;
}

const MAX_BACKOFF_MS = 2_000;
/** Pause before a record a group member could not handle is read again. */
const REDELIVERY_PAUSE_MS = 500;
const RECORDS_PER_CALL = 1_000;

export class ShardReader {
  readonly shardId: string;
  private readonly options: ShardReaderOptions;
  private readonly abort = new AbortController();
  private lastSequenceNumber: string | undefined;
  /** Where a fresh iterator starts when no record was handled yet. */
  private origin: StartPoint;
  private loop: Promise<void> | undefined;

  constructor(options: ShardReaderOptions) {
    this.options = options;
    this.shardId = options.shardId;
    this.origin = options.start;
  }

  /** Resolves once the reader holds its first iterator: records published from then on are read. */
  async start(): Promise<void> {
    const startedAt = new Date();
    const iterator = await this.iterator();
    // LATEST means "after what was there at start"; a later fresh iterator must mean the same.
    if (this.origin.type === 'LATEST') this.origin = { type: 'AT_TIMESTAMP', timestamp: startedAt };
    this.loop = this.run(iterator);
  }

  /** Lets the record in hand finish (and its checkpoint be written), then stops. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** Where a new reader goes on from to continue this one without gap or duplicate. */
  resumePoint(): StartPoint {
    return this.lastSequenceNumber === undefined
      ? this.origin
      : { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: this.lastSequenceNumber };
  }

  private async run(firstIterator: string): Promise<void> {
    const { signal } = this.abort;
    let iterator: string | undefined = firstIterator;
    let verifyStream = false;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (verifyStream) {
          if (!(await this.streamUnchanged())) return;
          verifyStream = false;
        }
        iterator ??= await this.iterator();
        const out: GetRecordsCommandOutput = await this.options.client.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: RECORDS_PER_CALL }),
          { abortSignal: signal },
        );
        failures = 0;
        iterator = out.NextShardIterator;
        const records = out.Records ?? [];
        let redo = false;
        for (const record of records) {
          if (signal.aborted) return;
          redo = !(await this.deliver(record));
          if (redo) break;
        }
        if (redo) {
          // Not handled: read again from after the last handled record (a fresh iterator).
          iterator = undefined;
          await pause(REDELIVERY_PAUSE_MS, signal);
          continue;
        }
        if (iterator === undefined) return this.shardClosed();
        if (records.length === 0 || out.MillisBehindLatest === 0)
          await pause(this.options.pollIntervalMs, signal);
      } catch (err) {
        if (signal.aborted) return;
        if (isNotFound(err)) return this.options.onLost(asError(err));
        if (errorName(err) === 'ExpiredIteratorException') {
          iterator = undefined;
          continue;
        }
        this.options.onError(
          new BusError(`kinesis ${this.describe()}: ${asError(err).message}`, { cause: err }),
        );
        // No answer from Kinesis: it may have restarted and lost or replaced the stream meanwhile.
        if (!isServiceError(err)) verifyStream = true;
        await pause(Math.min(this.options.pollIntervalMs * 2 ** ++failures, MAX_BACKOFF_MS), signal);
      }
    }
  }

  /** False when a group member's handler threw NotHandledError: no checkpoint, the record comes again. */
  private async deliver(record: _Record): Promise<boolean> {
    const { name, epoch } = this.options.stream;
    const message = messageFromRecord(name, this.shardId, record, epoch);
    try {
      await this.options.handler(message);
    } catch (err) {
      if (this.options.onHandled && isNotHandled(err)) return false;
      this.options.onError(asError(err), message);
    }
    this.lastSequenceNumber = record.SequenceNumber!;
    try {
      await this.options.onHandled?.(this.lastSequenceNumber);
    } catch (err) {
      this.options.onError(asError(err), message);
    }
    return true;
  }

  private async streamUnchanged(): Promise<boolean> {
    const now = await this.options.streams.active(this.options.stream.name, this.abort.signal);
    if (now?.createdAt === this.options.stream.createdAt) return true;
    this.options.onLost(
      new BusError(`kinesis stream ${this.options.stream.name} ${now ? 'was re-created' : 'is gone'}`),
    );
    return false;
  }

  private async iterator(): Promise<string> {
    const { client, stream } = this.options;
    const input = iteratorInput(stream.name, this.shardId, this.resumePoint());
    const out = await client.send(new GetShardIteratorCommand(input), { abortSignal: this.abort.signal });
    if (!out.ShardIterator) throw new BusError(`kinesis returned no iterator for ${this.describe()}`);
    return out.ShardIterator;
  }

  private shardClosed(): void {
    this.options.onError(
      new BusError(`kinesis ${this.describe()} is closed; resharding is not followed, so reading it stopped`),
    );
  }

  private describe(): string {
    return `stream ${this.options.stream.name} shard ${this.shardId}`;
  }
}

function iteratorInput(streamName: string, shardId: string, start: StartPoint): GetShardIteratorCommandInput {
  const input = { StreamName: streamName, ShardId: shardId, ShardIteratorType: start.type };
  switch (start.type) {
    case 'AFTER_SEQUENCE_NUMBER':
      return { ...input, StartingSequenceNumber: start.sequenceNumber };
    case 'AT_TIMESTAMP':
      return { ...input, Timestamp: start.timestamp };
    default:
      return input;
  }
}

/** Sleeps, waking early (without throwing) when the reader is stopped. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => {});
}
