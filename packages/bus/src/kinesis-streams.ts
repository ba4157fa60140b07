/**
 * Stream administration for the Kinesis bus: finding a stream with its shards, creating one on
 * first use (tests and development) and waiting until it is ACTIVE, and telling Kinesis errors
 * apart. A stream's creation time is its identity: a stream deleted and created again under the
 * same name (as after an emulator restart) has a new one, and its sequence numbers start over; the
 * positions carry its digest as the stream's epoch (kinesis-record.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import {
  CreateStreamCommand,
  DeleteStreamCommand,
  DescribeStreamSummaryCommand,
  type KinesisClient,
  KinesisServiceException,
  ListShardsCommand,
} from '@aws-sdk/client-kinesis';
import { BusError } from './bus.ts';
import { kinesisEpoch } from './kinesis-record.ts';

export interface StreamInfo {
  name: string;
  /** Milliseconds since the epoch; differs between two streams of the same name. */
  createdAt: number;
  /** The epoch its positions carry (kinesisEpoch of createdAt). */
  epoch: string | undefined;
  /** Open shards. Closed parents of a reshard are left out: the bus does not follow resharding. */
  shardIds: string[];
}

const READABLE_STATUSES = new Set(['ACTIVE', 'UPDATING']);

export class KinesisStreams {
  private readonly client: KinesisClient;
  /** One creation per stream name at a time, however many publishers hit the missing stream. */
  private readonly creating = new Map<string, Promise<StreamInfo>>();
  /**
   * Stream name → its epoch when it was last looked up, for the positions publish answers (PutRecord
   * tells no creation time). A stream deleted under this process is looked up again after the
   * publish that fails on it, or when any reader of this bus finds it made anew; one deleted and
   * made again by another process between two publishes is not noticed here.
   */
  private readonly epochs = new Map<string, string | undefined>();

  constructor(client: KinesisClient) {
    this.client = client;
  }

  /** The stream when it can be read and written; undefined while it is missing or not ready yet. */
  async active(name: string, signal?: AbortSignal): Promise<StreamInfo | undefined> {
    const description = await this.summary(name, signal);
    if (!description || !READABLE_STATUSES.has(description.StreamStatus ?? '')) return undefined;
    const createdAt = description.StreamCreationTimestamp?.getTime() ?? 0;
    const epoch = kinesisEpoch(createdAt);
    this.epochs.set(name, epoch);
    return { name, createdAt, epoch, shardIds: await this.openShards(name, signal) };
  }

  /**
   * The epoch of the stream as it was last looked up; looked up (one DescribeStreamSummary) when it
   * was not yet. Undefined for a missing stream, which is not remembered.
   */
  async epoch(name: string): Promise<string | undefined> {
    if (this.epochs.has(name)) return this.epochs.get(name);
    const description = await this.summary(name);
    if (!description) return undefined;
    const epoch = kinesisEpoch(description.StreamCreationTimestamp?.getTime());
    this.epochs.set(name, epoch);
    return epoch;
  }

  /** After a failure that may mean the stream is gone: its epoch is looked up again next time. */
  forget(name: string): void {
    this.epochs.delete(name);
  }

  /** Creates the stream with `shardCount` shards unless it exists, and waits until it is ACTIVE. */
  ensure(name: string, shardCount: number): Promise<StreamInfo> {
    let pending = this.creating.get(name);
    if (!pending) {
      pending = this.create(name, shardCount).finally(() => this.creating.delete(name));
      this.creating.set(name, pending);
    }
    return pending;
  }

  /** Deletes the stream and waits until it is gone, so that the next use makes it anew. */
  async delete(name: string): Promise<void> {
    this.forget(name);
    try {
      await this.client.send(new DeleteStreamCommand({ StreamName: name, EnforceConsumerDeletion: true }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const deadline = Date.now() + 30_000;
    while (await this.summary(name)) {
      if (Date.now() > deadline) throw new BusError(`kinesis stream ${name} was not deleted in 30 s`);
      await delay(50);
    }
    this.forget(name);
  }

  private async create(name: string, shardCount: number): Promise<StreamInfo> {
    const existing = await this.active(name);
    if (existing) return existing;
    try {
      await this.client.send(new CreateStreamCommand({ StreamName: name, ShardCount: shardCount }));
    } catch (err) {
      // Someone else is creating it (another replica, another bus): wait for theirs.
      if (errorName(err) !== 'ResourceInUseException') throw err;
    }
    const deadline = Date.now() + 30_000;
    for (;;) {
      const stream = await this.active(name);
      if (stream) return stream;
      if (Date.now() > deadline) throw new BusError(`kinesis stream ${name} did not become ACTIVE in 30 s`);
      await delay(50);
    }
  }

  private async summary(name: string, signal?: AbortSignal) {
    try {
      const out = await this.client.send(new DescribeStreamSummaryCommand({ StreamName: name }), {
        abortSignal: signal,
      });
      return out.StreamDescriptionSummary;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async openShards(name: string, signal?: AbortSignal): Promise<string[]> {
    const ids: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListShardsCommand(nextToken ? { NextToken: nextToken } : { StreamName: name }),
        { abortSignal: signal },
      );
      for (const shard of page.Shards ?? [])
        if (shard.ShardId && shard.SequenceNumberRange?.EndingSequenceNumber === undefined)
          ids.push(shard.ShardId);
      nextToken = page.NextToken;
    } while (nextToken);
    return ids.sort();
  }
}

export function errorName(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

export function isNotFound(err: unknown): boolean {
  return errorName(err) === 'ResourceNotFoundException';
}

/** An answer from Kinesis itself, as opposed to a connection failure or a timeout. */
export function isServiceError(err: unknown): boolean {
  return err instanceof KinesisServiceException;
}

export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
