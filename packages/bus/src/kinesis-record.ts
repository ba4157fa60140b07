/**
 * How Kinesis records map onto bus messages: positions name a record by shard and sequence number,
 * with the stream's epoch (kinesisEpoch), and keyless messages travel under a reserved random
 * partition key that subscribers turn back into "no key".
 */
import { randomUUID } from 'node:crypto';
import type { _Record } from '@aws-sdk/client-kinesis';
import { compareDecimal, type Message, type Position } from './bus.ts';
import { epochOf, splitEpoch, withEpoch } from './position-epoch.ts';

/**
 * Kinesis needs a partition key on every record; a message without a key gets a random one under
 * this prefix (so it lands on any shard), and subscribers report such records as keyless.
 * A caller's own key starting with this prefix would be reported as keyless too.
 */
const KEYLESS_PREFIX = '~keyless~';

export interface RecordPosition {
  shardId: string;
  sequenceNumber: string;
  /** The stream's epoch (kinesisEpoch), when the position carries one. */
  epoch?: string | undefined;
}

/**
 * The epoch of a stream created at this time (StreamCreationTimestamp, in ms): a stream deleted and
 * created again under the same name has another one, and its shard ids and sequence numbers start
 * over, so a position of the old stream is told from one of the new. None when Kinesis tells no
 * creation time.
 */
export function kinesisEpoch(createdAt: number | undefined): string | undefined {
  return createdAt ? epochOf(`kinesis-stream-created-${createdAt}`) : undefined;
}

export function partitionKeyFor(key: string | undefined): string {
  return key ?? `${KEYLESS_PREFIX}${randomUUID()}`;
}

function keyOf(partitionKey: string | undefined): string | undefined {
  return partitionKey === undefined || partitionKey.startsWith(KEYLESS_PREFIX) ? undefined : partitionKey;
}

/**
 * `<shardId>~<sequenceNumber>.<epoch>` (position-epoch.ts), or without `.<epoch>` (a position made
 * before epochs): shard ids and sequence numbers are URL-safe already, and a sequence number is
 * digits only, so the epoch suffix cannot be read as part of it.
 */
export function encodePosition({ shardId, sequenceNumber, epoch }: RecordPosition): Position {
  return withEpoch(`${shardId}~${sequenceNumber}`, epoch);
}

export function decodePosition(position: Position): RecordPosition {
  const { place, epoch } = splitEpoch(position, PLACE, 'kinesis position (<shard>~<sequence>)');
  const tilde = place.lastIndexOf('~');
  return { shardId: place.slice(0, tilde), sequenceNumber: place.slice(tilde + 1), epoch };
}

const PLACE = /^[A-Za-z0-9_.-]{1,128}~\d{1,128}$/;

/** Orders by shard id, then sequence number (a decimal of up to 56 digits). */
export function compareRecordPositions(a: Position, b: Position): number {
  const x = decodePosition(a);
  const y = decodePosition(b);
  if (x.shardId !== y.shardId) return x.shardId < y.shardId ? -1 : 1;
  return compareDecimal(x.sequenceNumber, y.sequenceNumber);
}

export function messageFromRecord(
  topic: string,
  shardId: string,
  record: _Record,
  epoch: string | undefined,
): Message {
  return {
    topic,
    key: keyOf(record.PartitionKey),
    value: Buffer.from(record.Data ?? new Uint8Array()),
    headers: {},
    position: encodePosition({ shardId, sequenceNumber: record.SequenceNumber!, epoch }),
  };
}
