/**
 * How Kinesis records map onto bus messages: positions name a record by shard and sequence number,
 * and keyless messages travel under a reserved random partition key that subscribers turn back
 * into "no key".
 */
import { randomUUID } from 'node:crypto';
import type { _Record } from '@aws-sdk/client-kinesis';
import { compareDecimal, type Message, type Position, PositionUnavailableError } from './bus.ts';

/**
 * Kinesis needs a partition key on every record; a message without a key gets a random one under
 * this prefix (so it lands on any shard), and subscribers report such records as keyless.
 * A caller's own key starting with this prefix would be reported as keyless too.
 */
const KEYLESS_PREFIX = '~keyless~';

export interface RecordPosition {
  shardId: string;
  sequenceNumber: string;
}

export function partitionKeyFor(key: string | undefined): string {
  return key ?? `${KEYLESS_PREFIX}${randomUUID()}`;
}

function keyOf(partitionKey: string | undefined): string | undefined {
  return partitionKey === undefined || partitionKey.startsWith(KEYLESS_PREFIX) ? undefined : partitionKey;
}

/** `<shardId>~<sequenceNumber>`: shard ids and sequence numbers are URL-safe already. */
export function encodePosition({ shardId, sequenceNumber }: RecordPosition): Position {
  return `${shardId}~${sequenceNumber}`;
}

export function decodePosition(position: Position): RecordPosition {
  const match = /^([A-Za-z0-9_.-]+)~(\d+)$/.exec(position);
  if (!match)
    throw new PositionUnavailableError(position, 'unknown', 'not a kinesis position (<shard>~<sequence>)');
  return { shardId: match[1]!, sequenceNumber: match[2]! };
}

/** Orders by shard id, then sequence number (a decimal of up to 56 digits). */
export function compareRecordPositions(a: Position, b: Position): number {
  const x = decodePosition(a);
  const y = decodePosition(b);
  if (x.shardId !== y.shardId) return x.shardId < y.shardId ? -1 : 1;
  return compareDecimal(x.sequenceNumber, y.sequenceNumber);
}

export function messageFromRecord(topic: string, shardId: string, record: _Record): Message {
  return {
    topic,
    key: keyOf(record.PartitionKey),
    value: Buffer.from(record.Data ?? new Uint8Array()),
    headers: {},
    position: encodePosition({ shardId, sequenceNumber: record.SequenceNumber! }),
  };
}
