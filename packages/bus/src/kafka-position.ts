/**
 * Stream positions of the Kafka adapter: `<partition>-<offset>` (e.g. `0-42`), URL-safe, and with
 * the topic's epoch where the broker tells topic ids: `0-42.6b42ad8b`, the first 8 hex digits of the
 * topic id (kafka-topic-id.ts). A topic deleted and created again has another id, so a position of
 * the old topic is told from one of the new (its offsets start over) instead of being replayed from
 * the wrong place. A position without an epoch (from before epochs, or from a broker without topic
 * ids) is read as before. Offsets are 64-bit, so they are carried as bigint, never as number. A
 * partition's origin, the place before offset 0 of a new topic, is offset -1 (`0--1`): replaying
 * from it reads the partition from offset 0.
 */
import { type Position, PositionUnavailableError } from './bus.ts';

export interface KafkaPosition {
  partition: number;
  offset: bigint;
  /** The topic's epoch (kafkaEpoch), when the position carries one. */
  epoch?: string | undefined;
}

export function formatKafkaPosition(partition: number, offset: string | bigint, epoch?: string): Position {
  return epoch === undefined ? `${partition}-${offset}` : `${partition}-${offset}.${epoch}`;
}

export function parseKafkaPosition(position: Position): KafkaPosition {
  const match = /^(\d{1,9})-(-1|\d{1,19})(?:\.([0-9a-f]{8}))?$/.exec(position);
  if (!match)
    throw new PositionUnavailableError(position, 'unknown', 'not a kafka position (<partition>-<offset>)');
  return { partition: Number(match[1]), offset: BigInt(match[2]!), epoch: match[3] };
}

/** The epoch of a topic with this id (32 hex digits) in its positions. */
export function kafkaEpoch(topicId: string | undefined): string | undefined {
  return topicId?.slice(0, 8);
}

/**
 * Orders by partition, then offset. The epoch does not take part: positions of two epochs (a topic
 * created anew) are ordered by offset, which means nothing more (see Bus.positionEpoch).
 */
export function compareKafkaPositions(a: Position, b: Position): number {
  const x = parseKafkaPosition(a);
  const y = parseKafkaPosition(b);
  if (x.partition !== y.partition) return x.partition - y.partition;
  return x.offset === y.offset ? 0 : x.offset < y.offset ? -1 : 1;
}
